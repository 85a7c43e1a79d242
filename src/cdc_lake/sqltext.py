"""Spark SQL text built from values: the one place that quotes names and writes string literals.

Names that come from data (databases, tables, columns) and values are never pasted into SQL as
they are: a name goes through `quote_identifier`, a value through `sql_string`. The dbt macros
`quote_identifier` and `sql_string_literal` do the same inside the project's SQL.
"""

from __future__ import annotations

# Spark SQL string literals (spark.sql.parser.escapedStringLiterals=false, the default) unescape
# backslash sequences: send backslash and quote escaped, control characters as \uXXXX.
_SQL_ESCAPES = {ord("\\"): "\\\\", ord("'"): "\\'"}
_SQL_ESCAPES.update({c: f"\\u{c:04x}" for c in [*range(0x20), 0x7F]})
_SQL_ESCAPES.update({c: "\ufffd" for c in range(0xD800, 0xE000)})


def sql_string(value: str | None) -> str:
    """A Spark SQL literal that parses back to exactly `value` (NULL for None).

    Text read with errors="surrogateescape" holds undecodable bytes as lone surrogates; they
    cannot travel over Thrift (UTF-8) and become U+FFFD, one per byte.
    """
    if value is None:
        return "null"
    return "'" + value.translate(_SQL_ESCAPES) + "'"


def quote_identifier(name: str) -> str:
    """A Spark SQL identifier for any name: back-quoted, embedded backticks doubled."""
    if not name:
        raise ValueError("an identifier must be a non-empty string")
    return "`" + name.replace("`", "``") + "`"


def qualified_name(*parts: str) -> str:
    """`a`.`b`: a multi-part name with every part quoted."""
    return ".".join(quote_identifier(part) for part in parts)
