"""Compact JSON text as the CDC tools write it: `json.dumps(obj, ensure_ascii=False, separators=(",", ":"))`.

One encoder is configured once for the whole generator; `quote` renders a single string, which the
encoders use to splice names into the JSON fragments they prebuild per table.
"""

from __future__ import annotations

import json
from typing import Any

_encoder = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))


def dumps(obj: Any) -> str:
    """Compact JSON text of `obj` (str, int, float, bool, None, list, tuple, dict with str keys)."""
    return _encoder.encode(obj)


def quote(text: str) -> str:
    """`text` as a JSON string literal."""
    return _encoder.encode(text)
