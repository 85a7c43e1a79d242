"""The SQL both sides of a verification run: a source column's canonical text in MariaDB's
dialect, the same column's text from a lake image in Spark's, and the row and key hashes built
from them.

docs/canonical_values.md is the contract: MariaDB renders each type into the lake's canonical text
(decimals with their scale, trimmed fractions of datetimes, lowercase hex of bytes, ...). Floats are
the exception: MariaDB prints a double as `1e20` where Java prints `1.0E20`, and prints a FLOAT with
six digits, so a float/double is compared as the double's shortest digits rewritten into one
neutral form (`sign digits 'e' exponent`) on both sides. Where the two printers still disagree
(Java 17's `Double.toString` is not always the shortest), the rows' values are compared as numbers
once bisection has found them, so such a column costs a narrower search, never a wrong answer.
"""

from __future__ import annotations

from dataclasses import dataclass

# the characters joining a row's values: the ASCII unit separator, 'v' before a value, 'n' for NULL
NULL_MARK = "n"
VALUE_MARK = "v"
# row checksums: the first 60 bits of the md5 of the row's text, summed per bucket (a sum, not an
# XOR, so two equal keyless rows do not cancel out)
HASH_HEX_DIGITS = 15

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
    """A source column: its name and MariaDB's `information_schema.columns.data_type`."""

    name: str
    data_type: str

    @property
    def is_number(self) -> bool:
        """Floats and doubles: compared as numbers, hashed in the neutral number form."""
        return self.data_type in FLOAT_TYPES | DOUBLE_TYPES


@dataclass(frozen=True)
class Dialect:
    name: str
    integer: str
    text: str
    separator: str
    checksum_type: str

    def quote(self, name: str) -> str:
        return "`" + name.replace("`", "``") + "`"

    def literal(self, value: str) -> str:
        return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"

    def trimmed_fraction(self, text: str) -> str:
        """`12:00:01.250000` -> `12:00:01.25`, `12:00:01.000000` -> `12:00:01`; no fraction: as is."""
        return f"if(instr({text}, '.') > 0, trim(trailing '.' from trim(trailing '0' from {text})), {text})"

    def number_form(self, text: str) -> str:
        """A float's text in the neutral form: sign, significant digits, `e`, the exponent of the
        first digit. `1.0E20`, `1e20` and `100000000000000000000` all give `1e20`; zero gives `0`."""
        unsigned = f"trim(leading '-' from lower({text}))"
        mantissa = f"substring_index({unsigned}, 'e', 1)"
        written_exponent = (
            f"if(instr({unsigned}, 'e') > 0, cast(substring_index({unsigned}, 'e', -1) as {self.integer}), 0)"
        )
        integer_part = f"substring_index({mantissa}, '.', 1)"
        fraction = f"if(instr({mantissa}, '.') > 0, substring_index({mantissa}, '.', -1), '')"
        digits = f"concat({integer_part}, {fraction})"
        no_leading = f"trim(leading '0' from {digits})"
        significant = f"trim(trailing '0' from {no_leading})"
        exponent = (
            f"{written_exponent} + length({integer_part}) - 1 - (length({digits}) - length({no_leading}))"
        )
        return (
            f"if({significant} = '', '0', concat(if(left({text}, 1) = '-', '-', ''), {significant}, 'e', "
            f"cast({exponent} as {self.text})))"
        )

    def row_text(self, values: list[tuple[Column, str]]) -> str:
        """One text per row: every column's hashed form marked as a value or a NULL, in order."""
        parts = []
        for column, value in values:
            hashed = self.number_form(value) if column.is_number else value
            parts.append(f"coalesce(concat('{VALUE_MARK}', {hashed}), '{NULL_MARK}')")
        return f"concat_ws({self.separator}, {', '.join(parts)})"

    def checksum(self, text: str) -> str:
        return f"cast(conv(left(md5({text}), {HASH_HEX_DIGITS}), 16, 10) as {self.checksum_type})"

    def bucket(self, key_md5: str, width: int) -> str:
        """The bucket of a row: the first `width` hex digits of its key's md5 (no md5 at all for
        the whole table's one bucket)."""
        return f"left({key_md5}, {width})" if width else "''"

    def in_buckets(self, key_md5: str, width: int, buckets: list[str]) -> str:
        if width == 0:
            return "true"
        return f"{self.bucket(key_md5, width)} in ({', '.join(self.literal(b) for b in buckets)})"


MARIADB = Dialect("mariadb", integer="signed", text="char", separator="char(31 using utf8mb4)",
                  checksum_type="unsigned")
SPARK = Dialect("spark", integer="int", text="string", separator="char(31)", checksum_type="decimal(38, 0)")


def source_value(column: Column) -> str:
    """MariaDB: the column's canonical text (docs/canonical_values.md); floats as the double's
    shortest digits (a FLOAT widened to double first: MariaDB prints a FLOAT with 6 digits)."""
    name = MARIADB.quote(column.name)
    data_type = column.data_type
    if data_type in FLOAT_TYPES:
        text = f"cast(cast({name} as double) as char)"
    elif data_type in FRACTION_TYPES:
        text = MARIADB.trimmed_fraction(f"cast({name} as char)")
    elif data_type == "bit":
        text = f"cast({name} + 0 as char)"
    elif data_type in HEX_TYPES:
        text = f"lower(hex({name}))"
    elif data_type in TEXT_TYPES:
        text = name
    else:
        text = f"cast({name} as char)"
    return f"convert({text} using utf8mb4)"


def lake_value(column: Column, image: str = "image") -> str:
    """Spark: the column's text in a `cdc_current` image; a float widened to double as MariaDB's is."""
    value = f"{image}[{SPARK.literal(column.name)}]"
    if column.data_type in FLOAT_TYPES:
        return f"cast(cast(cast({value} as float) as double) as string)"
    return value
