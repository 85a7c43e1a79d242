"""The end-to-end tests' truth about MariaDB's values: what cdc_lake's canonical text and typed
views should hold for a value MariaDB's own `SELECT` returned (docs/canonical_values.md,
docs/design_choices.md "Types"), and comparisons of row multisets that tolerate what a format cannot
carry exactly.
Shared by the Debezium and the Canal end-to-end tests."""

from __future__ import annotations

import math
import struct
from collections import Counter
from datetime import date, datetime, timedelta
from decimal import Decimal
from typing import Any

from cdc_lake.testing.e2e_workload import DATABASE


def mysql_columns(state: Any, table: str) -> dict[str, tuple[str, str]]:
    """column -> (data_type, column_type) as MariaDB reports them now."""
    with state.server.connect() as conn, conn.cursor() as cursor:
        cursor.execute(
            "select column_name, data_type, column_type from information_schema.columns "
            f"where table_schema = '{DATABASE}' and table_name = '{table}' order by ordinal_position"
        )
        return {name: (data_type.lower(), column_type.lower()) for name, data_type, column_type in cursor.fetchall()}


def float32(value: float) -> float:
    return struct.unpack("f", struct.pack("f", value))[0]


def java_text(value: float, single: bool) -> str:
    """Java's Float/Double.toString (what Spark prints): shortest digits, plain for 1e-3 <= |v| < 1e7,
    else `d.dddE±n`."""
    if value == 0:
        return "-0.0" if math.copysign(1, value) < 0 else "0.0"
    if single:
        for precision in range(1, 10):
            text = f"{value:.{precision - 1}e}"
            if float32(float(text)) == value:
                break
    else:
        text = repr(value)
    digits = Decimal(text).normalize()
    sign, numerals, exponent = digits.as_tuple()
    head = "-" if sign else ""
    if 1e-3 <= abs(value) < 1e7:
        plain = format(abs(digits), "f")
        return head + (plain if "." in plain else plain + ".0")
    mantissa = "".join(map(str, numerals))
    power = len(numerals) - 1 + int(exponent)
    return f"{head}{mantissa[0]}.{mantissa[1:] or '0'}E{power}"


def time_text(value: timedelta) -> str:
    micros = value.days * 86_400_000_000 + value.seconds * 1_000_000 + value.microseconds
    sign = "-" if micros < 0 else ""
    micros = abs(micros)
    seconds, fraction = divmod(micros, 1_000_000)
    text = f"{sign}{seconds // 3600:02d}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"
    return text + (f".{fraction:06d}".rstrip("0") if fraction else "")


def canonical(value: Any, data_type: str) -> str | None:
    """docs/canonical_values.md, from the value MariaDB returned."""
    if value is None:
        return None
    if data_type == "bit":
        return str(int.from_bytes(value, "big"))
    if data_type in ("float", "double"):
        return java_text(float32(value) if data_type == "float" else value, data_type == "float")
    if isinstance(value, float):
        return java_text(value, False)  # a decimal carried as a double
    if isinstance(value, Decimal):
        return format(value, "f")
    if isinstance(value, datetime):
        text = value.strftime("%Y-%m-%d %H:%M:%S")
        return text + (f".{value.microsecond:06d}".rstrip("0") if value.microsecond else "")
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, timedelta):
        return time_text(value)
    if isinstance(value, (bytes, bytearray)):
        return bytes(value).hex()
    return str(value)


def typed_truth(value: Any, data_type: str) -> Any:
    """A MariaDB value as the typed view should hold it (docs/design_choices.md "Types")."""
    if value is None:
        return None
    if data_type == "bit":
        number = int.from_bytes(value, "big")
        return bool(number) if len(value) == 1 and number in (0, 1) else Decimal(number)
    if data_type == "float":
        return float32(value)
    if data_type in ("time",):
        return time_text(value)
    if data_type in ("geometry", "point", "linestring", "polygon"):
        return bytes(value).hex()
    if isinstance(value, (bytes, bytearray)):
        return bytes(value)
    if isinstance(value, Decimal):
        return value
    return value


def typed_lake(value: Any, data_type: str) -> Any:
    """A typed view's value in the same Python form as `typed_truth`."""
    if value is None:
        return None
    if data_type == "bit":
        return value if isinstance(value, bool) else Decimal(value)
    if data_type == "decimal" or data_type == "bigint" and isinstance(value, (Decimal, str)):
        return Decimal(value)
    if isinstance(value, (bytes, bytearray)):
        return bytes(value)
    return value


def same_typed(truth: Any, lake: Any, data_type: str) -> bool:
    if data_type == "decimal" and isinstance(truth, float):
        return lake is not None and float(lake) == truth
    if isinstance(truth, Decimal) and isinstance(lake, Decimal):
        return truth == lake
    if data_type == "bit" and isinstance(truth, bool):
        return lake is truth or (isinstance(lake, Decimal) and int(lake) == int(truth))
    if isinstance(truth, int) and isinstance(lake, Decimal):
        return Decimal(truth) == lake
    return type(truth) is type(lake) and truth == lake if not isinstance(truth, int) else truth == lake


def rows_match(truth: Counter, lake: Counter, columns: dict[str, tuple[str, str]]) -> bool:
    """The two multisets pair up row by row under `same_typed`. Rows are first grouped by a
    coarse key that `same_typed` cannot tell apart (numbers as floats), so a 100k-row table
    costs a pass, not a pairwise search."""
    if sum(truth.values()) != sum(lake.values()):
        return False
    candidates: dict[tuple, list[tuple]] = {}
    for row in lake.elements():
        candidates.setdefault(coarse_key(row), []).append(row)
    for row in truth.elements():
        bucket = candidates.get(coarse_key(row), [])
        for i, candidate in enumerate(bucket):
            if all(same_typed(a[1], b[1], columns[a[0]][0]) for a, b in zip(row, candidate, strict=True)):
                del bucket[i]
                break
        else:
            return False
    return True


def coarse_key(row: tuple) -> tuple:
    """Equal for any two rows `same_typed` may pair: numbers (bool, int, Decimal, float) as floats,
    every other value as itself."""
    return tuple(float(v) if isinstance(v, (int, float, Decimal)) else v for _, v in row)


def diff(a: Counter, b: Counter) -> list:
    return [short(row) for row in (a - b).elements()][:5]


def short(row: tuple) -> tuple:
    return tuple((c, f"{v[:60]!r}...({len(v)})" if isinstance(v, (str, bytes)) and len(v) > 60 else v) for c, v in row)


def canonical_key(value: Any) -> str:
    return str(value)


def ddl_text(statement: str) -> str:
    """DDL compared without case, quoting, spacing or the comment MariaDB adds to DROP TABLE."""
    statement = statement.replace("/* generated by server */", "").replace("`", "").replace(f"{DATABASE}.", "")
    return " ".join(statement.lower().split())
