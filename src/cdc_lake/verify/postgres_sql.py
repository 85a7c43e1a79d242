"""PostgreSQL's side of the canonical text: one expression per type that makes PostgreSQL write a
column's value as the lake holds it after Debezium's PostgreSQL connector (default settings)
carried it. This table is the one place to align with docs/canonical_values.md and with the
end-to-end test's truth, cdc_lake.testing.pg_values.canonical (which marks the rules the page
does not fix yet PROVISIONAL): change both together.

The expressions assume the session settings PostgresDatabase.begin_snapshot makes: `DateStyle
ISO, YMD`, `IntervalStyle postgres`, `TimeZone UTC`, `extra_float_digits 1` (shortest digits)
and `standard_conforming_strings on`. Where PostgreSQL's text differs from the lake's only in
layout (floats: `1e+20` against Java's `1.0E20`), the lake's side is rewritten instead
(sql.POSTGRES_LAKE), and the rows' numbers decide after bisection, as against MariaDB.

Checked value by value against a lake in pytests/test_verify_postgres.py (the integers, numeric,
text/varchar/char, boolean, date, timestamp, timestamptz, time, bytea, uuid, jsonb, float4/float8)
and end to end, through Debezium, in pytests/test_e2e_postgres.py (every type of its `types`
table: money, json, hstore, arrays, bit strings, interval, timetz, inet/cidr, ... at both ends of
what Debezium carries, and NULL). BC dates and timestamps are not: Debezium cannot carry them.
"""

from __future__ import annotations

from cdc_lake.verify.sql import POSTGRES, Column

# pg_type.typname of the column's type (a domain's base type) -> its canonical text; {} is the column
# JSON text (the template's {0}) split into string literals, kept, and the parts between them,
# blanks removed and separators spaced: MySQL's print form, which the lake's canonical text is
JSON_TEXT = (
    "(select string_agg(case when part[1] like '\"%' then part[1] else regexp_replace("
    "regexp_replace(part[1], '\\s+', '', 'g'), '([:,])', '\\1 ', 'g') end, '' order by n) "
    "from regexp_matches({0}, '\"(?:[^\"\\\\]|\\\\.)*\"|[^\"]+', 'g') with ordinality as parts(part, n))"
)
POSTGRES_TEXT: dict[str, str] = {
    # integers, numeric (the column's scale, as Debezium's Decimal carries it), money (a Decimal of
    # scale 2), floats (shortest digits; the lake's Java text is laid out as PostgreSQL's)
    **dict.fromkeys(("int2", "int4", "int8", "oid", "numeric", "float4", "float8"), "{}::text"),
    "money": "{}::numeric::text",
    # Debezium sends a boolean as a Connect boolean; the lake's text of it is 1/0
    "bool": "{}::int::text",
    # text as it is; char(n) with its padding, as pgoutput sends it (a cast to text would trim it)
    **dict.fromkeys(("text", "varchar", "name", "citext", "uuid", "macaddr", "macaddr8", "xml", "ltree"), "{}::text"),
    # inet and cidr as their output function writes them (Debezium sends that text): a cast to
    # text would add an inet's full-length mask (`::/128` for `::`)
    # (format gives '' for NULL)
    **dict.fromkeys(("inet", "cidr"), "case when {0} is not null then format('%s', {0}) end"),
    # JSON as the lake prints it (docs/canonical_values.md): one space after every `:` and `,`
    # outside strings, no other blanks (jsonb's own output; a json column's blanks normalised);
    # hstore as Debezium's JSON object of it
    **dict.fromkeys(("json", "jsonb"), JSON_TEXT.format("{0}::text")),
    "hstore": JSON_TEXT.format("hstore_to_json({0})::text"),
    "bpchar": "bpcharout({})::text",
    # ISO dates and times, fractions of seconds without trailing zeros (PostgreSQL's own output);
    # a year past 9999 with java.time's `+`; the infinities as PostgreSQL writes them
    "date": "case when {0} > '9999-12-31' and isfinite({0}) then '+' || {0}::text else {0}::text end",
    "timestamp": (
        "case when {0} >= '10000-01-01' and isfinite({0}) then '+' || {0}::text else {0}::text end"
    ),
    "timestamptz": (
        "case when {0} >= '10000-01-01 00:00:00+00' and isfinite({0}) then '+' else '' end"
        " || ({0} at time zone 'UTC')::text"
    ),
    "time": "{}::text",
    # Debezium's ZonedTime: the time of day in UTC
    "timetz": "regexp_replace(({} at time zone 'UTC')::text, '[+]00$', '') || 'Z'",
    "bytea": "encode({}, 'hex')",
    # Debezium's Bits (bit(1) is a boolean): the bit string as an unsigned number
    **dict.fromkeys(("bit", "varbit"), (
        "case when {0} is null then null "
        "when length({0}) <= 63 then lpad({0}::text, 64, '0')::bit(64)::bigint::text else "
        "(select trunc(coalesce(sum(2::numeric ^ (length({0}) - i)), 0))::text "
        "from generate_series(1, length({0})) as i where substring({0}::text, i, 1) = '1') end"
    )),
    # Debezium's MicroDuration as sent: microseconds, a month as 365.25 / 12 days
    "interval": (
        "((extract(year from {0}) * 12 + extract(month from {0})) * 2629800000000"
        " + extract(day from {0}) * 86400000000 + extract(hour from {0}) * 3600000000"
        " + extract(minute from {0}) * 60000000 + extract(microseconds from {0}))::bigint::text"
    ),
}
# an array (typname `_<element>`): Debezium sends a JSON array, which the lake writes compact,
# integers as numbers, other elements as their text
INTEGER_ARRAYS = {"_int2", "_int4", "_int8"}
ARRAY_TEXT = "array_to_json({}::text[])::text"
INTEGER_ARRAY_TEXT = "array_to_json({})::text"
DEFAULT_TEXT = "{}::text"


def postgres_value(column: Column) -> str:
    """PostgreSQL: the column's canonical text."""
    name = POSTGRES.quote(column.name)
    if column.data_type in INTEGER_ARRAYS:
        template = INTEGER_ARRAY_TEXT
    elif column.data_type.startswith("_"):
        template = ARRAY_TEXT
    else:
        template = POSTGRES_TEXT.get(column.data_type, DEFAULT_TEXT)
    return "(" + template.format(name) + ")"
