"""The PostgreSQL end-to-end test's truth about values: what cdc_lake's canonical text should be
for a value PostgreSQL's own `SELECT` printed, per PostgreSQL type, and which values a
Debezium setting cannot carry.

One place on purpose: docs/canonical_values.md fixes the MySQL types (integers, decimals with
their scale, floats as Java prints them, dates, datetimes in UTC, lowercase hex bytes, bits as
unsigned integers, JSON text, enum labels); the PostgreSQL-only types are being added there, and
`canonical` follows each rule as written. Where the document says nothing yet, the rule chosen
here is marked PROVISIONAL with its reason; change it here when the document decides.

The truth's text comes from `pg_workload.Recorder.select`: PostgreSQL's output functions' text in UTC with
`IntervalStyle = iso_8601`, and money as its numeric (its own text is locale-formatted).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal

from cdc_lake.testing.mysql_values import float32, java_text

# Debezium's pgoutput connector writes this for an unchanged TOASTed value (default placeholder)
UNAVAILABLE = "__debezium_unavailable_value"
UNAVAILABLE_BASE64 = "X19kZWJleml1bV91bmF2YWlsYWJsZV92YWx1ZQ=="  # the same in a bytea column
MICROS_PER_DAY = 86_400_000_000
# Debezium's MicroDuration (interval.handling.mode=numeric) counts a month as 365.25 / 12 days
MICROS_PER_MONTH = 2_629_800_000_000
INT64 = 2**63


@dataclass(frozen=True)
class PgType:
    """A column's type as the truth knows it: `format_type` text, and pg_type's typtype/typcategory
    (an enum is typtype `e`, an array typcategory `A`)."""

    name: str
    typtype: str = "b"
    category: str = ""

    @property
    def base(self) -> str:
        """The type without its modifier: `numeric(20,5)` -> `numeric`, `integer[]` stays."""
        return re.sub(r"\(.*\)", "", self.name)

    @property
    def is_enum(self) -> bool:
        return self.typtype == "e"

    @property
    def is_array(self) -> bool:
        return self.category == "A" or self.name.endswith("[]")


# ----------------------------------------------------------------------------- civil dates


def days_from_civil(year: int, month: int, day: int) -> int:
    """Days since 1970-01-01 of a proleptic Gregorian date (astronomical year: 1 BC is 0), for any
    year (Python's `date` stops at 9999)."""
    year -= month <= 2
    era = (year if year >= 0 else year - 399) // 400
    year_of_era = year - era * 400
    day_of_year = (153 * (month + (-3 if month > 2 else 9)) + 2) // 5 + day - 1
    day_of_era = year_of_era * 365 + year_of_era // 4 - year_of_era // 100 + day_of_year
    return era * 146_097 + day_of_era - 719_468


DATE_TEXT = re.compile(r"^(\d{4,})-(\d\d)-(\d\d)( BC)?$")
TIMESTAMP_TEXT = re.compile(r"^(\d{4,})-(\d\d)-(\d\d) (\d\d):(\d\d):(\d\d)(\.\d+)?(\+00)?( BC)?$")


def iso_year(digits: str, bc: bool) -> int:
    """PostgreSQL's year (`4713 BC`) as an astronomical year (-4712)."""
    return 1 - int(digits) if bc else int(digits)


def year_text(year: int) -> str:
    """ISO 8601 / java.time: four digits at least, `-` before years before 1 AD, `+` after 9999."""
    if year < 0:
        return f"-{-year:04d}"
    return f"+{year}" if year > 9999 else f"{year:04d}"


def date_text(text: str) -> str:
    """PROVISIONAL beyond 0001..9999: `yyyy-MM-dd` with java.time's signed years (`-4712-01-01` for
    PostgreSQL's `4713-01-01 BC`, `+5874897-12-31`); `infinity`/`-infinity` as PostgreSQL prints."""
    if text in ("infinity", "-infinity"):
        return text
    match = DATE_TEXT.match(text)
    if not match:
        raise ValueError(f"not a PostgreSQL date: {text!r}")
    year = iso_year(match[1], bool(match[4]))
    return f"{year_text(year)}-{match[2]}-{match[3]}"


def timestamp_text(text: str) -> str:
    """`yyyy-MM-dd HH:mm:ss[.f]` (trailing zeros trimmed), UTC for timestamptz (read in UTC,
    `+00` dropped); years and infinities as `date_text`."""
    if text in ("infinity", "-infinity"):
        return text
    match = TIMESTAMP_TEXT.match(text)
    if not match:
        raise ValueError(f"not a PostgreSQL timestamp: {text!r}")
    year = iso_year(match[1], bool(match[9]))
    fraction = (match[7] or "").rstrip("0").rstrip(".")
    return f"{year_text(year)}-{match[2]}-{match[3]} {match[4]}:{match[5]}:{match[6]}{fraction}"


def timestamp_micros(text: str) -> int | None:
    """Microseconds since 1970-01-01 00:00:00 of a timestamp's text; None for the infinities."""
    match = TIMESTAMP_TEXT.match(text)
    if not match:
        return None
    days = days_from_civil(iso_year(match[1], bool(match[9])), int(match[2]), int(match[3]))
    seconds = days * 86_400 + int(match[4]) * 3600 + int(match[5]) * 60 + int(match[6])
    return seconds * 1_000_000 + int(((match[7] or ".")[1:] + "000000")[:6])


def micros_timestamp_text(micros: int) -> str:
    days, rest = divmod(micros, MICROS_PER_DAY)
    # the civil date of a day number, for any year (inverse of days_from_civil)
    z = days + 719_468
    era = (z if z >= 0 else z - 146_096) // 146_097
    day_of_era = z - era * 146_097
    year_of_era = (day_of_era - day_of_era // 1460 + day_of_era // 36_524 - day_of_era // 146_096) // 365
    day_of_year = day_of_era - (365 * year_of_era + year_of_era // 4 - year_of_era // 100)
    mp = (5 * day_of_year + 2) // 153
    day = day_of_year - (153 * mp + 2) // 5 + 1
    month = mp + (3 if mp < 10 else -9)
    year = year_of_era + era * 400 + (month <= 2)
    seconds, fraction = divmod(rest, 1_000_000)
    clock = f"{seconds // 3600:02d}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"
    return f"{year_text(year)}-{month:02d}-{day:02d} {clock}" + (f".{fraction:06d}".rstrip("0") if fraction else "")


def time_text(text: str) -> str:
    """`HH:mm:ss[.f]` as PostgreSQL prints a time (`24:00:00` included)."""
    return text


def timetz_text(text: str) -> str:
    """docs/canonical_values.md: a time with zone as the UTC time of day with `Z`, `HH:mm:ss[.f]Z`
    (Debezium's ZonedTime); 24:00:00 in UTC is 00:00:00 (a time of day wraps)."""
    match = re.match(r"^(\d\d):(\d\d):(\d\d)(\.\d+)?([+-])(\d\d)(?::?(\d\d))?(?::?(\d\d))?$", text)
    if not match:
        raise ValueError(f"not a PostgreSQL timetz: {text!r}")
    seconds = int(match[1]) * 3600 + int(match[2]) * 60 + int(match[3])
    offset = int(match[6]) * 3600 + int(match[7] or 0) * 60 + int(match[8] or 0)
    seconds = (seconds - (offset if match[5] == "+" else -offset)) % 86_400
    fraction = (match[4] or "").rstrip("0").rstrip(".")
    return f"{seconds // 3600:02d}:{seconds // 60 % 60:02d}:{seconds % 60:02d}{fraction}Z"


# ----------------------------------------------------------------------------- intervals

ISO_INTERVAL = re.compile(
    r"^P(?:(-?\d+)Y)?(?:(-?\d+)M)?(?:(-?\d+)D)?(?:T(?:(-?\d+)H)?(?:(-?\d+)M)?(?:(-?[\d.]+)S)?)?$"
)


def interval_parts(text: str) -> tuple[int, int, int]:
    """(months, days, microseconds) of an interval printed with IntervalStyle iso_8601."""
    match = ISO_INTERVAL.match(text)
    if not match:
        raise ValueError(f"not an ISO 8601 interval: {text!r}")
    years, months, days, hours, minutes = (int(match[i] or 0) for i in range(1, 6))
    seconds = match[6] or "0"
    negative = seconds.startswith("-")
    whole, _, fraction = seconds.lstrip("-").partition(".")
    micros = int(whole) * 1_000_000 + int((fraction + "000000")[:6])
    micros = -micros if negative else micros
    return years * 12 + months, days, (hours * 3600 + minutes * 60) * 1_000_000 + micros


def interval_micros(text: str) -> int:
    """Debezium's MicroDuration of an interval: months of 365.25 / 12 days (2,629,800 s), days of 24 hours."""
    months, days, micros = interval_parts(text)
    return months * MICROS_PER_MONTH + days * MICROS_PER_DAY + micros


def interval_text(text: str) -> str:
    """docs/canonical_values.md: the interval as Debezium's default (interval.handling.mode=numeric)
    carries it, its microseconds (months of 365.25 / 12 days), as sent."""
    return str(interval_micros(text))


def json_text(text: str) -> str:
    """docs/canonical_values.md: JSON as MySQL prints it, one space after every `:` and `,` outside
    strings and no other blanks (jsonb's own output form; a json column's blanks normalised)."""
    parts = re.findall(r'"(?:[^"\\]|\\.)*"|[^"]+', text)
    return "".join(
        part if part.startswith('"') else re.sub(r"([:,])", r"\1 ", re.sub(r"\s+", "", part)) for part in parts
    )


# ----------------------------------------------------------------------------- arrays and hstore


def parse_array(text: str) -> list[str | None]:
    """The elements of a one-dimensional PostgreSQL array literal (`{1,NULL,"a b"}`), NULL as None."""
    if not (text.startswith("{") and text.endswith("}")):
        raise ValueError(f"not a PostgreSQL array: {text!r}")
    body, items, i = text[1:-1], [], 0
    while i < len(body):
        if body[i] == '"':
            i += 1
            value = []
            while body[i] != '"':
                if body[i] == "\\":
                    i += 1
                value.append(body[i])
                i += 1
            items.append("".join(value))
            i += 2  # the closing quote and the comma
        else:
            end = body.find(",", i)
            end = len(body) if end < 0 else end
            raw = body[i:end]
            items.append(None if raw == "NULL" else raw)
            i = end + 1
    return items


def array_text(text: str, element: PgType) -> str:
    """PROVISIONAL: a JSON array of the elements (numbers for numeric element types, strings
    otherwise, null for NULL), compact, as Spark's `to_json` prints it; Debezium sends the array
    as a JSON array."""
    numeric = element.base in ("smallint", "integer", "bigint")
    return json.dumps([None if v is None else (int(v) if numeric else v) for v in parse_array(text)],
                      ensure_ascii=False, separators=(",", ":"))


def parse_hstore(text: str) -> dict[str, str | None]:
    """The pairs of hstore's text output (`"a"=>"1", "b"=>NULL`)."""
    pairs: dict[str, str | None] = {}
    token = re.compile(r'\s*"((?:[^"\\]|\\.)*)"\s*=>\s*(NULL|"((?:[^"\\]|\\.)*)")\s*,?')
    position = 0
    while position < len(text):
        match = token.match(text, position)
        if not match:
            raise ValueError(f"not hstore text: {text!r}")
        unescape = lambda s: re.sub(r"\\(.)", r"\1", s)  # noqa: E731
        pairs[unescape(match[1])] = None if match[2] == "NULL" else unescape(match[3])
        position = match.end()
    return pairs


def hstore_text(text: str) -> str:
    """PROVISIONAL: a JSON object of the pairs as the lake prints JSON (MySQL's style: `", "` and
    `": "` between items), in hstore's own key order (length, then bytes: MySQL's JSON order too).
    Debezium's default hstore.handling.mode=json sends one."""
    return json.dumps(parse_hstore(text), ensure_ascii=False, separators=(", ", ": "))


# ----------------------------------------------------------------------------- the rule per type


def canonical(text: str | None, pg_type: PgType) -> str | None:
    """The lake's canonical text of a value PostgreSQL printed as `text` (None: SQL NULL)."""
    if text is None:
        return None
    base = pg_type.base
    if pg_type.is_array:
        return array_text(text, PgType(base.removesuffix("[]")))
    if base in ("real", "double precision"):
        # Java's Float/Double.toString, as Spark casts a float to string; NaN and infinities as Java prints them
        special = {"NaN": "NaN", "Infinity": "Infinity", "-Infinity": "-Infinity"}
        if text in special:
            return special[text]
        return java_text(float32(float(text)) if base == "real" else float(text), base == "real")
    if base == "boolean":
        # docs/canonical_values.md: a Connect boolean is `1`/`0` (MySQL's BIT(1)); PROVISIONAL for PostgreSQL
        return "1" if text in ("t", "true") else "0"
    if base == "bit" and pg_type.name == "bit(1)":
        return text
    if base in ("bit", "bit varying"):
        # docs/canonical_values.md: bit(n) is the bit string's unsigned integer value
        return str(int(text, 2)) if text else "0"
    if base == "bytea":
        return text.removeprefix("\\x").lower()
    if base == "date":
        return date_text(text)
    if base in ("timestamp without time zone", "timestamp with time zone"):
        return timestamp_text(text)
    if base == "time without time zone":
        return time_text(text)
    if base == "time with time zone":
        return timetz_text(text)
    if base == "interval":
        return interval_text(text)
    if base == "hstore":
        return hstore_text(text)
    if base in ("json", "jsonb"):
        return json_text(text)
    # integers, numeric with its scale (PostgreSQL prints it so), money (read as numeric), text,
    # varchar, char (blank-padded as stored), uuid, xml, inet, cidr, macaddr, enum labels: PostgreSQL's own text
    return text


# ----------------------------------------------------------------------------- what Debezium carries


def cannot_carry(text: str | None, pg_type: PgType, settings: Mapping[str, str]) -> str | None:
    """Why Debezium 3.5's PostgreSQL connector, with `settings`, cannot send this value so that any
    consumer gets it back (None when it can). Measured in pytests/fixtures/postgres/: these cells
    are left out of the comparison and listed, never silently."""
    if text is None:
        return None
    base = pg_type.base
    if base == "date" and text.endswith(" BC"):
        return "Debezium sends a wrong epoch day for a BC date (Julian calendar through java.sql.Date)"
    if base.startswith("timestamp") and text.endswith(" BC"):
        return "Debezium shifts a BC timestamp (Julian calendar: 4713-01-01 BC arrives as -4713-11-24)"
    if base == "timestamp without time zone" and settings.get("time.precision.mode", "adaptive") != "connect":
        micros = timestamp_micros(text)
        if micros is not None and not -INT64 <= micros < INT64:
            return "beyond 2^63 microseconds since 1970: Debezium's MicroTimestamp (int64) overflows"
    if base == "interval" and settings.get("interval.handling.mode", "numeric") == "numeric":
        if not -INT64 <= interval_micros(text) < INT64:
            return "beyond 2^63 microseconds: Debezium's MicroDuration saturates"
    if base == "money" and settings.get("decimal.handling.mode") == "string" and len(text.replace("-", "")) > 16:
        return "decimal.handling.mode=string sends money through a double (17 significant digits at most)"
    return None


def carried(text: str | None, pg_type: PgType, settings: Mapping[str, str]) -> str | None:
    """A value as a Debezium setting carries it (the documented tolerances, applied to the truth,
    never to the lake), measured in pytests/fixtures/postgres/:
    - time.precision.mode=connect keeps milliseconds of time and timestamp (not of timestamptz, a
      ZonedTimestamp text, nor of timetz);
    - money goes through a Java double in precise mode (the Decimal's unscaled value is the
      double's shortest decimal at scale 2: -92233720368547758.08 arrives as -92233720368547760.00);
    - an unconstrained numeric in precise mode arrives with its trailing fraction zeros dropped
      (VariableScaleDecimal's scale is the stripped value's: ...890 at scale 30 arrives at scale 29)."""
    if text is None:
        return None
    base = pg_type.base
    decimals = settings.get("decimal.handling.mode", "precise")
    if settings.get("time.precision.mode") == "connect" and base in (
            "time without time zone", "timestamp without time zone"):
        # milliseconds, written as the lake writes a fraction: without trailing zeros
        return re.sub(r"\.(\d{1,3})\d*", lambda m: ("." + m[1]).rstrip("0").rstrip("."), text)
    if base == "money" and decimals == "precise":
        return str(Decimal(repr(float(text))).quantize(Decimal("0.01")))
    if base == "numeric" and pg_type.name == "numeric" and decimals == "precise" and "." in text:
        return text.rstrip("0").rstrip(".")
    return text


# Without schemas (value.converter.schemas.enable=false) a value stays as sent: only the types
# whose JSON form is already their canonical text are compared (docs/formats.md)
# (not json: a json column is kept as written, blanks and all, where the canonical text normalises them)
AS_SENT_TYPES = {
    "smallint", "integer", "bigint", "text", "character varying", "character", "uuid", "jsonb", "xml",
    "inet", "cidr", "macaddr",
}
# with decimal.handling.mode=string a numeric is its exact text too
AS_SENT_DECIMAL_TYPES = {"numeric"}


def sent_as_canonical(pg_type: PgType, settings: Mapping[str, str]) -> bool:
    """True when a schema-less record carries this type's canonical text as it is."""
    if pg_type.is_enum or pg_type.base in AS_SENT_TYPES:
        return True
    return settings.get("decimal.handling.mode") == "string" and pg_type.base in AS_SENT_DECIMAL_TYPES
