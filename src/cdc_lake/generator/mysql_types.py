"""MySQL column types of the simulated workload and the two text renderings every encoder builds on.

A value is held in its *native* form, chosen so that every tool's encoding can be derived from it
exactly and cheaply:

| kind      | native value                                   |
|-----------|------------------------------------------------|
| int       | Python int (signed or unsigned range)          |
| decimal   | the unscaled Python int (12.50 in scale 2 -> 1250) |
| varchar, text, json | str (JSON is held as MySQL prints it)  |
| date      | days since 1970-01-01 (may be negative)        |
| datetime, timestamp | microseconds since 1970-01-01 00:00:00 (timestamps are UTC) |
| time      | signed microseconds (hours may exceed 24)      |
| enum      | 1-based index into the labels                  |
| set       | bit mask over the labels (bit 0 = first label) |
| bit       | unsigned int                                   |
| blob      | bytes                                          |
| geometry  | bytes of MySQL's internal value: SRID (4 bytes little-endian), then the WKB |

`canonical()` gives the text of docs/canonical_values.md; `mysql_text()` gives the text MySQL (and the
binlog readers that print values like MySQL: Canal, KafkaRiverCanal, Tencent DTS) would print.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date
from functools import lru_cache
from typing import Any

EPOCH_ORDINAL = date(1970, 1, 1).toordinal()
MICROS = 1_000_000
DAY_SECONDS = 86_400

# Kinds of column types.
INT = "int"
DECIMAL = "decimal"
VARCHAR = "varchar"
TEXT = "text"
JSON = "json"
DATE = "date"
DATETIME = "datetime"
TIMESTAMP = "timestamp"
TIME = "time"
ENUM = "enum"
SET = "set"
BIT = "bit"
BLOB = "blob"
GEOMETRY = "geometry"

_INT_NAMES = {8: "tinyint", 16: "smallint", 32: "int", 64: "bigint"}
# MySQL 5.7 display widths (SHOW CREATE TABLE prints them; Canal and DTS copy them).
_INT_WIDTH_SIGNED = {8: 4, 16: 6, 32: 11, 64: 20}
_INT_WIDTH_UNSIGNED = {8: 3, 16: 5, 32: 10, 64: 20}


@dataclass(frozen=True)
class ColType:
    """One MySQL column type. Only the parameters that matter for its kind are set."""

    kind: str
    bits: int = 0  # int: 8/16/32/64; bit: n
    unsigned: bool = False
    precision: int = 0
    scale: int = 0
    length: int = 0  # varchar
    fsp: int = 0  # datetime / timestamp / time
    labels: tuple[str, ...] = field(default=())  # enum / set
    spatial: str = ""  # geometry: the MySQL type name (point, polygon, geometry, ...)
    # text and blob: the MySQL type name when not the kind's own (longtext, longblob, mediumtext, ...)
    variant: str = ""

    @property
    def mysql_type(self) -> str:
        """The column type as MySQL 5.7 prints it (`int(11)`, `bigint(20) unsigned`, `enum('a','b')`)."""
        k = self.kind
        if k == INT:
            if self.unsigned:
                return f"{_INT_NAMES[self.bits]}({_INT_WIDTH_UNSIGNED[self.bits]}) unsigned"
            return f"{_INT_NAMES[self.bits]}({_INT_WIDTH_SIGNED[self.bits]})"
        if k == DECIMAL:
            return f"decimal({self.precision},{self.scale})"
        if k == VARCHAR:
            return f"varchar({self.length})"
        if k in (DATETIME, TIMESTAMP, TIME):
            return f"{k}({self.fsp})" if self.fsp else k
        if k in (ENUM, SET):
            inner = ",".join("'" + label.replace("'", "''") + "'" for label in self.labels)
            return f"{k}({inner})"
        if k == BIT:
            return f"bit({self.bits})"
        if k == GEOMETRY:
            return self.spatial
        if self.variant:
            return self.variant  # longtext, longblob
        return k  # text, json, date, blob

    def canonical(self, v: object) -> str:
        """Canonical text of a native value (docs/canonical_values.md)."""
        return _CANONICAL[self.kind](self, v)

    def mysql_text(self, v: object) -> str:
        """The value as MySQL prints it (fsp digits kept); blobs as their ISO-8859-1 characters."""
        return _MYSQL_TEXT[self.kind](self, v)

    def canonical_fn(self) -> Callable[[Any], str]:
        """`canonical` as a one-argument function (hot loops call it per value)."""
        render = _CANONICAL[self.kind]
        return lambda v: render(self, v)

    def mysql_text_fn(self) -> Callable[[Any], str]:
        render = _MYSQL_TEXT[self.kind]
        return lambda v: render(self, v)


def int_type(bits: int, unsigned: bool = False) -> ColType:
    return ColType(INT, bits=bits, unsigned=unsigned)


def decimal_type(precision: int, scale: int) -> ColType:
    return ColType(DECIMAL, precision=precision, scale=scale)


def varchar_type(length: int) -> ColType:
    return ColType(VARCHAR, length=length)


def temporal_type(kind: str, fsp: int = 0) -> ColType:
    return ColType(kind, fsp=fsp)


def enum_type(*labels: str) -> ColType:
    return ColType(ENUM, labels=labels)


def set_type(*labels: str) -> ColType:
    return ColType(SET, labels=labels)


def bit_type(n: int) -> ColType:
    return ColType(BIT, bits=n)


def geometry_type(name: str = "geometry") -> ColType:
    return ColType(GEOMETRY, spatial=name)


TEXT_TYPE = ColType(TEXT)
JSON_TYPE = ColType(JSON)
DATE_TYPE = ColType(DATE)
BLOB_TYPE = ColType(BLOB)
LONGTEXT_TYPE = ColType(TEXT, variant="longtext")
LONGBLOB_TYPE = ColType(BLOB, variant="longblob")


# ---------------------------------------------------------------------------------------------
# Renderers shared by the encoders


def decimal_text(unscaled: int, scale: int) -> str:
    """Plain decimal text with exactly `scale` fraction digits."""
    if scale == 0:
        return str(unscaled)
    sign = "-" if unscaled < 0 else ""
    whole, frac = divmod(-unscaled if unscaled < 0 else unscaled, 10**scale)
    return f"{sign}{whole}.{frac:0{scale}d}"


@lru_cache(maxsize=1 << 16)
def date_text(days: int) -> str:
    return date.fromordinal(days + EPOCH_ORDINAL).isoformat()


def _fraction(us: int, fsp: int | None) -> str:
    """`.ffffff` trimmed of trailing zeros (fsp None) or padded to fsp digits; '' when nothing to show."""
    if fsp is None:
        if not us:
            return ""
        return "." + f"{us:06d}".rstrip("0")
    if not fsp:
        return ""
    return "." + f"{us:06d}"[:fsp]


def datetime_parts(micros: int) -> tuple[str, str, int]:
    """(`yyyy-MM-dd`, `HH:mm:ss`, microseconds) of an epoch-microsecond value."""
    secs, us = divmod(micros, MICROS)
    days, sod = divmod(secs, DAY_SECONDS)
    hours, rem = divmod(sod, 3600)
    minutes, seconds = divmod(rem, 60)
    return date_text(days), f"{hours:02d}:{minutes:02d}:{seconds:02d}", us


def datetime_text(micros: int, fsp: int | None = None) -> str:
    """`yyyy-MM-dd HH:mm:ss[.f]`: trimmed fraction when fsp is None, else exactly fsp digits."""
    day, clock, us = datetime_parts(micros)
    return f"{day} {clock}{_fraction(us, fsp)}"


def iso_instant(micros: int) -> str:
    """ISO-8601 UTC instant as Java's ISO_OFFSET_DATE_TIME prints it (`2024-01-01T10:00:00.5Z`)."""
    day, clock, us = datetime_parts(micros)
    return f"{day}T{clock}{_fraction(us, None)}Z"


def time_text(micros: int, fsp: int | None = None) -> str:
    """`[-]HH:mm:ss[.f]` of signed microseconds; hours may exceed 24."""
    sign = "-" if micros < 0 else ""
    secs, us = divmod(-micros if micros < 0 else micros, MICROS)
    hours, rem = divmod(secs, 3600)
    minutes, seconds = divmod(rem, 60)
    return f"{sign}{hours:02d}:{minutes:02d}:{seconds:02d}{_fraction(us, fsp)}"


def set_labels(t: ColType, mask: int) -> str:
    return ",".join(label for i, label in enumerate(t.labels) if mask >> i & 1)


_CANONICAL = {
    INT: lambda t, v: str(v),
    DECIMAL: lambda t, v: decimal_text(v, t.scale),
    VARCHAR: lambda t, v: v,
    TEXT: lambda t, v: v,
    JSON: lambda t, v: v,
    DATE: lambda t, v: date_text(v),
    DATETIME: lambda t, v: datetime_text(v),
    TIMESTAMP: lambda t, v: datetime_text(v),
    TIME: lambda t, v: time_text(v),
    ENUM: lambda t, v: t.labels[v - 1],
    SET: set_labels,
    BIT: lambda t, v: str(v),
    BLOB: lambda t, v: v.hex(),
    GEOMETRY: lambda t, v: v.hex(),
}

_MYSQL_TEXT = {
    **_CANONICAL,
    DATETIME: lambda t, v: datetime_text(v, t.fsp),
    TIMESTAMP: lambda t, v: datetime_text(v, t.fsp),
    TIME: lambda t, v: time_text(v, t.fsp),
    BLOB: lambda t, v: v.decode("latin-1"),
    GEOMETRY: lambda t, v: v.decode("latin-1"),
}
