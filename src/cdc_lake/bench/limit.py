"""The limit: a bare `from_json` of the landed raw values, written to Spark's `noop` sink.

The schema is not retyped here: it is read from the compiled SQL of each format's base model
(`base_<format>__messages`), so the limit parses exactly what the model parses. Where a model has
several `from_json` calls on `kafka_value` (Canal: one for a JSON array of messages, one for a
single message), the one for a single message is used, which is what the landed records hold.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

RAW_VALUE = "kafka_value"


def _unquoted(text: str, start: int = 0) -> Iterator[tuple[int, str]]:
    """(index, character) of every character of `text` from `start` that is outside a quoted
    string or backticked name (the quote characters themselves excluded)."""
    i, quote = start, None
    while i < len(text):
        ch = text[i]
        if quote:
            if ch == "\\":
                i += 1
            elif ch == quote:
                quote = None
        elif ch in "'\"`":
            quote = ch
        else:
            yield i, ch
        i += 1


def _call_end(sql: str, open_paren: int) -> int:
    """Index of the parenthesis closing the one at `open_paren`."""
    depth = 0
    for i, ch in _unquoted(sql, open_paren):
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth == 0:
                return i
    raise ValueError("unbalanced parentheses in compiled SQL")


def _top_level_args(text: str) -> list[str]:
    """The comma-separated arguments of a call's argument text (schemas are quoted strings, so
    `<` / `>` are comparisons here, not type brackets)."""
    args, depth, start = [], 0, 0
    for i, ch in _unquoted(text):
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif ch == "," and depth == 0:
            args.append(text[start:i].strip())
            start = i + 1
    args.append(text[start:].strip())
    return args


def from_json_calls(sql: str) -> list[str]:
    """Every `from_json` call on `kafka_value` in `sql`, rewritten as a bare
    `from_json(kafka_value, <schema>, <options>)`: the model may wrap the value first (parse_json
    guards against trailing text after the JSON value), and that guard is part of the model's
    cost, not of the limit."""
    calls, lowered, pos = [], sql.lower(), 0
    while (found := lowered.find("from_json(", pos)) >= 0:
        open_paren = found + len("from_json")
        end = _call_end(sql, open_paren)
        args = _top_level_args(sql[open_paren + 1 : end])
        if args and RAW_VALUE in args[0]:
            calls.append(f"from_json({', '.join([RAW_VALUE, *args[1:]])})")
        pos = end
    return calls


def limit_expression(base_model_sql: str) -> str:
    """The `from_json` call of a base model that parses one raw value."""
    calls = from_json_calls(base_model_sql)
    if not calls:
        raise ValueError("no from_json(kafka_value, ...) in the base model")
    singles = [c for c in calls if not _top_level_args(c[len("from_json(") : -1])[1].lstrip("'").startswith("array<")]
    return (singles or calls)[0]


def run_limit(spark: SparkSession, raw_tables: dict[str, str], expressions: dict[str, str]) -> None:
    """Parse every raw value of every format into the noop sink."""
    for fmt, table in raw_tables.items():
        frame = spark.sql(f"select {expressions[fmt]} as parsed from {table}")
        frame.write.format("noop").mode("overwrite").save()
