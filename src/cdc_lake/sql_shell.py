"""`cdc-lake sql`: Spark SQL on the lake, with the `local` target's settings from profiles/profiles.yml.

An interactive shell (statements end with `;`), or `-e "STATEMENTS"` / `-f FILE` for scripts.
Results print as a table (or tab-separated values, or JSON lines for scripts). The session is the
one `cdc-lake land` and the tests open (`cdc_lake.spark.get_spark`), so it sees exactly what dbt
built, through the shared metastore server: it may run while `dbt build` or a landing runs.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import IO, TYPE_CHECKING

from cdc_lake.env import model_schema

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession

OUTPUTS = ("table", "tsv", "json")
NULL = "NULL"


def split_statements(text: str) -> tuple[list[str], str]:
    """Split SQL text at `;` outside quotes and comments: (complete statements, unfinished rest)."""
    statements: list[str] = []
    start = i = 0
    quote = ""  # the open quote character, if inside a quoted string or identifier
    while i < len(text):
        char = text[i]
        if quote:
            if char == "\\" and quote != "`":
                i += 1  # Spark string literals take backslash escapes
            elif char == quote:
                quote = ""
        elif char in "'\"`":
            quote = char
        elif text.startswith("--", i):
            end = text.find("\n", i)
            i = len(text) if end < 0 else end
            continue
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            i = len(text) if end < 0 else end + 2
            continue
        elif char == ";":
            statement = text[start:i].strip()
            if statement:
                statements.append(statement)
            start = i + 1
        i += 1
    return statements, text[start:]


def _is_blank(sql: str) -> bool:
    """True for text that holds nothing but whitespace and comments."""
    statements, _ = split_statements(sql + "\n;")
    return not statements


def as_text(frame: DataFrame) -> DataFrame:
    """Every column cast to Spark's own text of it (maps as `{k -> v}`, timestamps in the session
    time zone), under positional names so that duplicate column names do not clash."""
    from pyspark.sql import functions as F

    positional = frame.toDF(*[f"c{i}" for i in range(len(frame.columns))])
    return positional.select([F.col(name).cast("string") for name in positional.columns])


def format_table(columns: Sequence[str], rows: Iterable[Sequence[str | None]], max_width: int) -> list[str]:
    """Rows as an aligned text table; cells longer than `max_width` are cut with `...`."""

    def cell(value: str | None) -> str:
        text = NULL if value is None else value.replace("\n", "\\n").replace("\t", "\\t")
        return text if len(text) <= max_width else text[: max_width - 3] + "..."

    body = [[cell(value) for value in row] for row in rows]
    header = [cell(name) for name in columns]
    widths = [max([len(header[i]), *(len(row[i]) for row in body)]) for i in range(len(header))]
    rule = "+" + "+".join("-" * (w + 2) for w in widths) + "+"

    def line(values: Sequence[str]) -> str:
        return "| " + " | ".join(v.ljust(w) for v, w in zip(values, widths, strict=True)) + " |"

    return [rule, line(header), rule, *(line(row) for row in body), rule]


class Shell:
    """Runs statements on one Spark session and prints their results to `out`."""

    def __init__(self, spark: SparkSession, output: str, max_rows: int, max_width: int, out: IO[str]) -> None:
        self.spark = spark
        self.output = output
        self.max_rows = max_rows
        self.max_width = max_width
        self.out = out

    def run(self, statement: str) -> None:
        """Run one statement; Spark's errors propagate."""
        frame = self.spark.sql(statement)
        if not frame.columns:  # DDL, INSERT, MERGE, ...: Spark ran it already
            if self.output == "table":
                print("OK", file=self.out)
            return
        if self.output == "json":
            for line in frame.toJSON().collect():
                print(line, file=self.out)
            return
        rows = [list(row) for row in as_text(frame).limit(self.max_rows + 1).collect()]
        more = len(rows) > self.max_rows
        rows = rows[: self.max_rows]
        if self.output == "tsv":
            print("\t".join(frame.columns), file=self.out)
            for row in rows:
                print("\t".join(NULL if v is None else v.replace("\t", "\\t").replace("\n", "\\n") for v in row),
                      file=self.out)
            return
        for text in format_table(frame.columns, rows, self.max_width):
            print(text, file=self.out)
        count = f"first {self.max_rows} rows shown (--max-rows)" if more else f"{len(rows)} row{'s' * (len(rows) != 1)}"
        print(f"({count})", file=self.out)

    def run_script(self, text: str) -> int:
        """Run every statement of `text` (the last may lack its `;`); stop at the first error."""
        statements, rest = split_statements(text)
        if not _is_blank(rest):
            statements.append(rest.strip())
        for statement in statements:
            try:
                self.run(statement)
            except Exception as exc:  # noqa: BLE001 - Spark's errors print as one message, not a trace
                print(f"error: {error_text(exc)}", file=sys.stderr)
                return 1
        return 0

    def interactive(self) -> int:
        """Read statements from the terminal until end of input; errors print and the shell goes on."""
        history = Path(os.environ.get("CDC_LAKE_SQL_HISTORY", Path.home() / ".cdc_lake_sql_history"))
        try:
            import readline  # line editing and history for input()
        except ImportError:
            readline = None  # type: ignore[assignment]
        if readline is not None and history.exists():
            try:
                readline.read_history_file(history)
            except OSError:
                pass
        print("cdc-lake sql: statements end with ';'. Ctrl-D quits.", file=sys.stderr)
        buffer = ""
        try:
            while True:
                try:
                    line = input("cdc-lake> " if not buffer.strip() else "       -> ")
                except KeyboardInterrupt:
                    print(file=sys.stderr)
                    buffer = ""
                    continue
                except EOFError:
                    print(file=sys.stderr)
                    break
                statements, buffer = split_statements(buffer + line + "\n")
                for statement in statements:
                    try:
                        self.run(statement)
                    except KeyboardInterrupt:
                        print("(interrupted)", file=sys.stderr)
                    except Exception as exc:  # noqa: BLE001
                        print(f"error: {error_text(exc)}", file=sys.stderr)
                if _is_blank(buffer):
                    buffer = ""
        finally:
            if readline is not None:
                try:
                    readline.write_history_file(history)
                except OSError:
                    pass
        return 0


def error_text(exc: Exception) -> str:
    """Spark's message without the JVM stack trace that PySpark appends."""
    text = str(exc).strip().split("\nJVM stacktrace:", 1)[0]
    # an analysis error ends with the unresolved plan ("; line 1 pos 7;\n'Project ..."): not for users
    return text.split(";\n'", 1)[0].strip()


def main(args: argparse.Namespace) -> int:
    """`cdc-lake sql` (its parser: cdc_lake.cli.sql)."""
    from cdc_lake.spark import get_spark

    if args.execute is not None and args.file is not None:
        print("cdc-lake sql: give -e or -f, not both", file=sys.stderr)
        return 2
    script = args.execute
    if args.file is not None:
        try:
            script = sys.stdin.read() if args.file == "-" else Path(args.file).read_text(encoding="utf-8")
        except OSError as exc:
            print(f"cdc-lake sql: {exc}", file=sys.stderr)
            return 2
    spark = get_spark("cdc-lake sql")
    schema = model_schema()
    if spark.catalog.databaseExists(schema):
        spark.catalog.setCurrentDatabase(schema)  # unqualified names mean the models' schema
    shell = Shell(spark, args.output, args.max_rows, args.max_width, sys.stdout)
    if script is not None:
        return shell.run_script(script)
    return shell.interactive()
