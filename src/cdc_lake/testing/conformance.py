"""The conformance corpus written by others (pytests/fixtures/conformance, with its licence notes),
and the replay of change-log rows as Flink row kinds, to compare with the Flink tests' expected rows.

Flink's CDC decoders turn a change into row kinds: an insert or snapshot read is `+I(after)`, an
update `-U(before)` then `+U(after)`, a delete `-D(before)`; a row prints as `KIND(v1,v2,...)`
with `null` for SQL NULL. The expected files under conformance/ hold those strings.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

from cdc_lake.env import PROJECT_DIR

# kept in the repo so a clone anywhere runs the same tests; CDC_LAKE_CONFORMANCE points elsewhere
CONFORMANCE = Path(os.environ.get("CDC_LAKE_CONFORMANCE", PROJECT_DIR / "pytests" / "fixtures" / "conformance"))

ROW_KIND = re.compile(r"^[+-][IUD]\(")


def expected_rows(path: Path) -> list[str]:
    """The row-kind lines of an `*.expected.txt` file, in order."""
    return [line.strip() for line in path.read_text(encoding="utf-8").splitlines() if ROW_KIND.match(line.strip())]


def flink_row(
    kind: str,
    image: dict[str, str | None],
    columns: Sequence[str],
    convert: Callable[[str, str | None], str | None] | None = None,
) -> str:
    """One row kind; a column absent from the image prints as null, like a NULL value."""
    values = []
    for column in columns:
        value = image.get(column)
        if convert is not None:
            value = convert(column, value)
        values.append("null" if value is None else value)
    return f"{kind}({','.join(values)})"


def replay(
    changes: Iterable[dict],
    columns: Sequence[str],
    convert: Callable[[str, str | None], str | None] | None = None,
) -> list[str]:
    """Change-log rows (op, before, after) in order -> Flink row kinds."""
    rows: list[str] = []
    for change in changes:
        if change["op"] in ("c", "r"):
            rows.append(flink_row("+I", change["after"], columns, convert))
        elif change["op"] == "u":
            rows.append(flink_row("-U", change["before"], columns, convert))
            rows.append(flink_row("+U", change["after"], columns, convert))
        else:
            rows.append(flink_row("-D", change["before"], columns, convert))
    return rows
