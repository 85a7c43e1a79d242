"""The SQL both sides of a verification run: a source column's text in MariaDB's dialect, the
same column's text from a lake image in Spark's, and the row and key hashes built from them.

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
# cheapest hashes the two engines share (md5 doubled Spark's scan).
BUCKET_HEX_DIGITS = 8

FLOAT_TYPES = {"float"}
DOUBLE_TYPES = {"double", "real"}
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
        return self.data_type in FLOAT_TYPES | DOUBLE_TYPES


@dataclass(frozen=True)
class Dialect:
    name: str
    separator: str

    def quote(self, name: str) -> str:
        return quote_identifier(name)

    def literal(self, value: str) -> str:
        """Spark's literals come from cdc_lake.sqltext, the one place that writes them; MariaDB's
        (backslash escapes on, its default) escape backslash and quote."""
        if self.name == "spark":
            return sql_string(value)
        return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"

    def row_text(self, values: list[str]) -> str:
        """One text per row: every column's text marked as a value or a NULL, in order."""
        parts = [f"coalesce(concat('{VALUE_MARK}', {value}), '{NULL_MARK}')" for value in values]
        return f"concat_ws({self.separator}, {', '.join(parts)})"

    def checksum(self, text: str) -> str:
        return f"crc32({self.binary(text)})"

    def binary(self, text: str) -> str:
        return f"cast({text} as binary)" if self.name == "spark" else text

    def key_hash(self, key_text: str) -> str:
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


def lake_value(column: Column, image: str = "image") -> str:
    """Spark: the column's text in a `cdc_current` image as source_value writes it: fractions of
    seconds padded to the column's digits. Floats and doubles need double_layers (lake.py)."""
    value = f"{image}[{SPARK.literal(column.name)}]"
    if column.data_type in FRACTION_TYPES and column.precision:
        fraction = f"if(instr({value}, '.') > 0, substring_index({value}, '.', -1), '')"
        return f"concat(substring_index({value}, '.', 1), '.', rpad({fraction}, {column.precision}, '0'))"
    return value


def lake_number_text(column: Column, image: str = "image") -> str:
    """Spark: a float's or double's Java text, a float widened to double as the source side does."""
    value = f"{image}[{SPARK.literal(column.name)}]"
    if column.data_type in FLOAT_TYPES:
        return f"cast(cast(cast({value} as float) as double) as string)"
    return value


def double_layers(text: str, name: str) -> list[list[tuple[str, str]]]:
    """Spark projections, each over the one before, that rewrite a double's Java text (`1.0E20`,
    `1.5E-7`, `123.0`) into MariaDB's layout of the same digits, as column `name`: plain for
    1e-15 <= |x| < 1e15 (`0.00000015`, `123`), else `d.ddde<exponent>` (`1e20`); zero as `0`.
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
            when {sig} = '' then '0'
            when {point} > 15 or {point} < -14 then concat({neg}, left({sig}, 1),
                if({size} > 1, concat('.', substr({sig}, 2)), ''), 'e', cast({point} - 1 as string))
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
