"""Compact JSON text, fast: the C encoder built once instead of once per call (as `json.dumps` does).

Output is exactly `json.dumps(obj, ensure_ascii=False, separators=(",", ":"))`.
"""

from __future__ import annotations

import json
from json import encoder as _json_encoder
from typing import Any

quote = _json_encoder.encode_basestring  # str -> JSON string literal (C implementation in CPython)

_slow = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode


def _default(obj: Any) -> Any:
    raise TypeError(f"Object of type {type(obj).__name__} is not JSON serializable")


_c_make_encoder = getattr(_json_encoder, "c_make_encoder", None)
if _c_make_encoder is not None:
    _c_encoder = _c_make_encoder(None, _default, quote, None, ":", ",", False, False, True)

    def dumps(obj: Any) -> str:
        """Compact JSON text of `obj` (str, int, float, bool, None, list, tuple, dict with str keys)."""
        if obj.__class__ is str:
            return quote(obj)
        return "".join(_c_encoder(obj, 0))

else:  # pragma: no cover - Python implementations without the C accelerator
    dumps = _slow
