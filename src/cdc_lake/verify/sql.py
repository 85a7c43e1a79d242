"""The SQL both sides of a verification run: a source column's text in MariaDB's dialect, the
same column's text from a lake image in Spark's, and the row and key hashes built from them.
(PostgreSQL's column texts are in postgres_sql.py; the hashes and the lake's side are here.)

docs/canonical_values.md is the contract: MariaDB renders each type into the lake's canonical text
(decimals with their scale, lowercase hex of bytes, ...) with one conversion per value, the
cheapest it can do. Where that text differs from the canonical one, Spark rewrites the lake's side
instead, since Spark evaluates a repeated piece once and MariaDB again at each use:
- fractions of seconds: MariaDB prints all the column's digits, the lake trims trailing zeros;
- floats: MariaDB prints a double as `1e20` where Java (the lake's text) prints `1.0E20`, and a
  FLOAT with six digits: MariaDB's text of the double (a FLOAT widened first) is kept, and Spark
  lays the lake's digits out as MariaDB does (`e` notation outside 1e-15 <= |x| < 1e15).
Where the two still disagree (Java 17's `Double.toString` is not always the shortest), the rows'
values are compared as numbers once bisection has found them, so such a column costs a narrower
search, never a wrong answer.
"""

from __future__ import annotations

from dataclasses import dataclass

from cdc_lake.sqltext import quote_identifier, sql_string

# the characters joining a row's values: the ASCII unit separator, 'v' before a value, 'n' for NULL
NULL_MARK = "n"
VALUE_MARK = "v"
# A row's checksum is the CRC-32 of its text (as pt-table-checksum's default), summed per bucket: a
# sum, not an XOR, so two equal keyless rows do not cancel out; a changed row goes unseen with odds
# of 1 in 2^32. Buckets are prefixes of the key text's CRC-32 in 8 hex digits. Both are the
# cheapest hashes the two engines share (md5 doubled Spark's scan). PostgreSQL (before 18) has no
# CRC-32: against it both sides use the first 8 hex digits of the text's MD5 instead, for the
# checksum (as a 32-bit number) and for the buckets alike.
BUCKET_HEX_DIGITS = 8
CRC32 = "crc32"
MD5 = "md5"

FLOAT_TYPES = {"float"}
DOUBLE_TYPES = {"double", "real"}
# PostgreSQL's names (pg_type.typname)
POSTGRES_FLOAT_TYPES = {"float4", "float8"}
FRACTION_TYPES = {"datetime", "timestamp", "time"}
HEX_TYPES = {
    "binary", "varbinary", "tinyblob", "blob", "mediumblob", "longblob", "geometry", "point", "linestring",
    "polygon", "multipoint", "multilinestring", "multipolygon", "geometrycollection",
}
TEXT_TYPES = {"char", "varchar", "tinytext", "text", "mediumtext", "longtext", "enum", "set", "json"}


@dataclass(frozen=True)
class Column:
    """A source column: its name, MariaDB's `information_schema.columns.data_type`, and for
    temporal types the digits of the fraction (`datetime_precision`), for text its character set."""

    name: str
    data_type: str
    precision: int = 0
    charset: str | None = None

    @property
    def is_number(self) -> bool:
        """Floats and doubles: the rows pulled after bisection compare them as numbers."""
        return self.data_type in FLOAT_TYPES | DOUBLE_TYPES | POSTGRES_FLOAT_TYPES


@dataclass(frozen=True)
class Dialect:
    name: str
    separator: str
    # CRC32 (MariaDB, and Spark against it) or MD5 (PostgreSQL, and Spark against it)
    hash: str = CRC32

    def quote(self, name: str) -> str:
        if self.name == "postgresql":
            return '"' + name.replace('"', '""') + '"'
        return quote_identifier(name)

    def literal(self, value: str) -> str:
        """Spark's literals come from cdc_lake.sqltext, the one place that writes them; MariaDB's
        (backslash escapes on, its default) escape backslash and quote; PostgreSQL's (with
        standard_conforming_strings, which its source sets) double the quote."""
        if self.name == "spark":
            return sql_string(value)
        if self.name == "postgresql":
            return "'" + value.replace("'", "''") + "'"
        return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"

    def row_text(self, values: list[str]) -> str:
        """One text per row: every column's text marked as a value or a NULL, in order.
        (PostgreSQL's concat() skips a NULL, its || operator gives NULL as the others' concat.)"""
        if self.name == "postgresql":
            parts = [f"coalesce('{VALUE_MARK}' || {value}, '{NULL_MARK}')" for value in values]
        else:
            parts = [f"coalesce(concat('{VALUE_MARK}', {value}), '{NULL_MARK}')" for value in values]
        return f"concat_ws({self.separator}, {', '.join(parts)})"

    def digest(self, text: str) -> str:
        """MD5 dialects: the text's MD5 in lowercase hex (UTF-8 bytes on both sides)."""
        return f"md5({self.binary(text)})"

    def digest_number(self, digest: str) -> str:
        """A row's checksum from its MD5: the first 32 bits, as a non-negative number."""
        if self.name == "postgresql":
            return f"('x' || left({digest}, 8))::bit(32)::bigint"
        return f"cast(conv(left({digest}, 8), 16, 10) as bigint)"

    def checksum(self, text: str) -> str:
        if self.hash == MD5:
            return self.digest_number(self.digest(text))
        return f"crc32({self.binary(text)})"

    def binary(self, text: str) -> str:
        return f"cast({text} as binary)" if self.name == "spark" else text

    def key_hash(self, key_text: str) -> str:
        if self.hash == MD5:
            return f"left({self.digest(key_text)}, {BUCKET_HEX_DIGITS})"
        return f"lpad(hex(crc32({self.binary(key_text)})), {BUCKET_HEX_DIGITS}, '0')"

    def bucket(self, key_hash: str, width: int) -> str:
        """The bucket of a row: the first `width` hex digits of its key's hash (no hash at all for
        the whole table's one bucket)."""
        return f"left({key_hash}, {width})" if width else "''"

    def in_buckets(self, key_hash: str, width: int, buckets: list[str]) -> str:
        if width == 0:
            return "true"
        return f"{self.bucket(key_hash, width)} in ({', '.join(self.literal(b) for b in buckets)})"


MARIADB = Dialect("mariadb", separator="char(31 using utf8mb4)")
SPARK = Dialect("spark", separator="char(31)")
POSTGRES = Dialect("postgresql", separator="chr(31)", hash=MD5)
SPARK_MD5 = Dialect("spark", separator="char(31)", hash=MD5)


@dataclass(frozen=True)
class FloatLayout:
    """How a source database prints a float or double: plainly (`0.0001`, `123`) while the
    decimal point's place after the first significant digit (dtoa's `decpt`) is between
    `min_point` and `max_point`, else as `d.ddd`, `e`, and the exponent, with a `+` before a
    positive one when `signed`, and at least `digits` digits."""

    min_point: int
    max_point: int
    signed: bool = False
    digits: int = 1


# MariaDB's `cast(d as char)`: plain for 1e-15 <= |x| < 1e15, else `1e20`, `1.5e-16`
MARIADB_DOUBLE = FloatLayout(-14, 15)
# PostgreSQL's float8out/float4out (extra_float_digits >= 1, shortest digits): plain for
# 1e-4 <= |x| < 1e15 (float4: < 1e6), else `1e+20`, `1.5e-07`
POSTGRES_FLOAT8 = FloatLayout(-3, 15, signed=True, digits=2)
POSTGRES_FLOAT4 = FloatLayout(-3, 6, signed=True, digits=2)


@dataclass(frozen=True)
class LakeTexts:
    """How the lake's side (Spark) writes a column's text for one kind of source database, so
    that it is the text that source writes: the dialect (and so the hashes), whether fractions
    of seconds are padded to the column's digits, each float type's layout, and the float types
    widened to double first."""

    dialect: Dialect
    pad_fractions: bool
    float_layouts: dict[str, FloatLayout]
    widened: frozenset[str] = frozenset()


MARIADB_LAKE = LakeTexts(SPARK, pad_fractions=True,
                         float_layouts=dict.fromkeys(FLOAT_TYPES | DOUBLE_TYPES, MARIADB_DOUBLE),
                         widened=frozenset(FLOAT_TYPES))
POSTGRES_LAKE = LakeTexts(SPARK_MD5, pad_fractions=False,
                          float_layouts={"float4": POSTGRES_FLOAT4, "float8": POSTGRES_FLOAT8})


def source_value(column: Column) -> str:
    """MariaDB: the column's text, one conversion each: canonical text (docs/canonical_values.md),
    except that floats are MariaDB's shortest digits of the double (a FLOAT widened first: MariaDB
    prints a FLOAT with 6 digits) and fractions of seconds keep all the column's digits; the lake's
    side is rewritten to match both (lake_value)."""
    name = MARIADB.quote(column.name)
    data_type = column.data_type
    if data_type in FLOAT_TYPES:
        return f"cast(cast({name} as double) as char)"
    if data_type == "bit":
        return f"cast({name} + 0 as char)"
    if data_type in HEX_TYPES:
        return f"lower(hex({name}))"
    if data_type in TEXT_TYPES:
        return name if column.charset in (None, "utf8mb4") else f"convert({name} using utf8mb4)"
    return f"cast({name} as char)"


def lake_value(column: Column, image: str = "image", texts: LakeTexts = MARIADB_LAKE) -> str:
    """Spark: the column's text in a `cdc_current` image as source_value writes it: against
    MariaDB, fractions of seconds padded to the column's digits. Floats and doubles need
    double_layers (lake.py)."""
    value = f"{image}[{SPARK.literal(column.name)}]"
    if texts.pad_fractions and column.data_type in FRACTION_TYPES and column.precision:
        fraction = f"if(instr({value}, '.') > 0, substring_index({value}, '.', -1), '')"
        return f"concat(substring_index({value}, '.', 1), '.', rpad({fraction}, {column.precision}, '0'))"
    return value


def lake_number_text(column: Column, image: str = "image", texts: LakeTexts = MARIADB_LAKE) -> str:
    """Spark: a float's or double's Java text, a float widened to double where the source side
    widens it (MariaDB)."""
    value = f"{image}[{SPARK.literal(column.name)}]"
    if column.data_type in texts.widened:
        return f"cast(cast(cast({value} as float) as double) as string)"
    return value


def exponent_text(exponent: str, layout: FloatLayout) -> str:
    """Spark: an exponent (an int expression) as the layout writes it after the `e`."""
    if not layout.signed and layout.digits <= 1:
        return f"cast({exponent} as string)"
    digits = f"cast(abs({exponent}) as string)"
    sign = f"if({exponent} < 0, '-', '+')" if layout.signed else f"if({exponent} < 0, '-', '')"
    return f"concat({sign}, lpad({digits}, greatest(length({digits}), {layout.digits}), '0'))"


def double_layers(text: str, name: str, layout: FloatLayout = MARIADB_DOUBLE) -> list[list[tuple[str, str]]]:
    """Spark projections, each over the one before, that rewrite a double's Java text (`1.0E20`,
    `1.5E-7`, `123.0`) into the source's layout of the same digits (MariaDB's by default), as
    column `name`: plain inside the layout's range (MariaDB: 1e-15 <= |x| < 1e15, `0.00000015`,
    `123`), else `d.ddde<exponent>` (`1e20`; PostgreSQL `1e+20`); zero as `0`; `NaN` and the
    infinities as Java and PostgreSQL both spell them.
    One projection per step, so that Spark computes each piece once: written as one expression,
    the pieces repeat, the generated code outgrows Java's method limit and Spark falls back to
    evaluating every repetition (40 s for 1M rows instead of a few)."""
    t, m, w, neg, dg, idg, sig, point = (f"{name}__{x}" for x in ("t", "m", "w", "neg", "dg", "idg", "sig", "point"))
    size = f"length({sig})"
    return [
        [(t, text)],
        [
            (m, f"substring_index(lower({t}), 'e', 1)"),
            # '1.5e-7' + 'e0' -> '-7'; '123.4' + 'e0' -> '0'
            (w, f"cast(substring_index(substring_index(concat(lower({t}), 'e0'), 'e', 2), 'e', -1) as int)"),
            (neg, f"if(left({t}, 1) = '-', '-', '')"),
        ],
        [
            (dg, f"replace(replace({m}, '.', ''), '-', '')"),
            (idg, f"length(substring_index(replace({m}, '-', ''), '.', 1))"),
        ],
        [
            (sig, f"trim(trailing '0' from trim(leading '0' from {dg}))"),
            # the decimal point's place after the first significant digit: dtoa's `decpt`
            (point, f"{w} + {idg} - length(regexp_extract({dg}, '^(0*)', 1))"),
        ],
        [(name, f"""case
            when {t} is null then null
            when {t} in ('NaN', 'Infinity', '-Infinity') then {t}
            when {sig} = '' then '0'
            when {point} > {layout.max_point} or {point} < {layout.min_point} then concat({neg}, left({sig}, 1),
                if({size} > 1, concat('.', substr({sig}, 2)), ''), 'e', {exponent_text(f"{point} - 1", layout)})
            when {point} <= 0 then concat({neg}, '0.', repeat('0', -{point}), {sig})
            when {point} >= {size} then concat({neg}, {sig}, repeat('0', {point} - {size}))
            else concat({neg}, left({sig}, {point}), '.', substr({sig}, {point} + 1))
        end""")],
    ]


def layered(query: str, layers: list[list[tuple[str, str]]]) -> str:
    """`query` with each layer's columns added by one projection over the previous one."""
    for depth, layer in enumerate(layers):
        columns = ", ".join(f"{expression} as {alias}" for alias, expression in layer)
        query = f"select *, {columns} from ({query}) as layer_{depth}"
    return query
