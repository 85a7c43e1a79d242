"""`cdc-lake add-tables`: expose every table the lake has seen that matches glob patterns, as
`cdc-lake add-table` would one by one (cdc_lake.tables.add_table does each).

The lake's tables are the distinct (database_name, table_name) of `cdc_source_columns`, every table
whose changes showed columns; a pattern matches `database.table` as the lake spells it (case
included), with fnmatch's `*`, `?` and `[...]`. A table already exposed (listed in
seeds/cdc_tables.csv, its two model files there) is left as it is, its `column_types` overrides
included, so a second run writes nothing. A table whose name cannot make a model (braces, control
characters, a model name that another table already has, a file name too long) is skipped with
the reason. The new tables' columns are read in one query of `cdc_typed_columns` for their yml.

`cdc-lake build --add-tables PATTERN` does the same before each build (cdc_lake.build_loop), so a
table that appears in the stream gets its typed views at the build after the one that brought it.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from pathlib import Path
from typing import TYPE_CHECKING

from cdc_lake import tables
from cdc_lake.env import model_schema
from cdc_lake.sqltext import qualified_name

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

Table = tuple[str, str]  # (database_name, table_name)
ALREADY_EXPOSED = "already exposed"


def check_pattern(pattern: str) -> str:
    """A pattern as given, if it can match `database.table` (argparse's type for the options)."""
    if pattern != "*" and "." not in pattern:
        raise argparse.ArgumentTypeError(
            f"{pattern!r}: a pattern matches DATABASE.TABLE, e.g. {pattern + '.*'!r} or {'*.' + pattern!r}"
        )
    return pattern


@dataclass(frozen=True)
class TablePatterns:
    """Which tables to expose: those matching an `include` pattern (every table when none is
    given) and no `exclude` pattern; globs on `database.table`, case-sensitive."""

    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()

    def matches(self, table: Table) -> bool:
        name = f"{table[0]}.{table[1]}"
        included = not self.include or any(fnmatchcase(name, p) for p in self.include)
        return included and not any(fnmatchcase(name, p) for p in self.exclude)

    def unused_includes(self, seen: Iterable[Table]) -> list[str]:
        """The include patterns that match no table of `seen` (a typo, or a name's case)."""
        names = [f"{database}.{table}" for database, table in seen]
        return [p for p in self.include if not any(fnmatchcase(name, p) for name in names)]


@dataclass
class Outcome:
    """What a run exposed (`added`, with each model's base name) and left (`skipped`, with why)."""

    seen: int  # tables in the lake
    unused_includes: list[str] = field(default_factory=list)  # include patterns that matched no table
    added: dict[Table, str] = field(default_factory=dict)
    skipped: dict[Table, str] = field(default_factory=dict)
    columns: dict[Table, int | None] = field(default_factory=dict)  # source columns listed in each yml


def is_exposed(project_dir: Path, table: Table, listed: set[Table]) -> bool:
    """True when the seed lists the table (`listed`: the seed's tables) and both its model files exist."""
    base = tables.model_base(*table)
    return table in listed and all(
        (project_dir / tables.TABLES_DIR / f"{base}_{kind}.sql").exists() for kind in ("current", "history")
    )


def add_tables(
    project_dir: Path,
    patterns: TablePatterns,
    seen: Iterable[Table],
    columns_of: Callable[[list[Table]], tables.TableColumns | None],
    dry_run: bool = False,
) -> Outcome:
    """Expose the tables of `seen` (the lake's) that match `patterns` and are not exposed yet, in
    name order, each through tables.add_table; `columns_of(new_tables)` gives their columns (one
    read of the lake for all). With `dry_run`, only say what would be added."""
    lake = sorted(set(seen))
    outcome = Outcome(len(lake), patterns.unused_includes(lake))
    listed = [(r["database_name"], r["table_name"]) for r in tables.seed_rows(project_dir / tables.SEED_PATH)]
    exposed = set(listed)
    new: list[Table] = []
    for table in filter(patterns.matches, lake):
        if is_exposed(project_dir, table, exposed):
            outcome.skipped[table] = ALREADY_EXPOSED
        elif problem := tables.name_problem(*table, [*listed, *new]):
            outcome.skipped[table] = problem
        else:
            new.append(table)
    if dry_run:
        outcome.added = {table: tables.model_base(*table) for table in new}
        return outcome
    columns = (columns_of(new) if new else None) or {}
    for table in new:
        try:
            tables.add_table(*table, project_dir=project_dir, read_lake=False, columns=columns.get(table))
        except ValueError as error:  # add_table's own checks have the last word
            outcome.skipped[table] = str(error)
            continue
        outcome.added[table] = tables.model_base(*table)
        outcome.columns[table] = len(columns[table]) if table in columns else None
    return outcome


def seen_tables(spark: SparkSession) -> list[Table] | None:
    """The lake's tables: distinct (database_name, table_name) of cdc_source_columns (a null name as
    ''); None when the lake has not built it yet."""
    relation = qualified_name(model_schema(), "cdc_source_columns")
    if not spark.catalog.tableExists(relation):
        return None
    rows = spark.table(relation).select("database_name", "table_name").distinct().collect()
    return [(r.database_name or "", r.table_name or "") for r in rows]


def add_lake_tables(
    spark: SparkSession, project_dir: Path, patterns: TablePatterns, dry_run: bool = False
) -> Outcome | None:
    """add_tables on the lake of `spark` (the schema of CDC_LAKE_SCHEMA); None when it has no
    cdc_source_columns yet (no build)."""
    seen = seen_tables(spark)
    if seen is None:
        return None

    def columns_of(new: list[Table]) -> tables.TableColumns | None:
        return tables.typed_columns(spark, {database for database, _ in new})

    return add_tables(project_dir, patterns, seen, columns_of, dry_run=dry_run)


def report(outcome: Outcome, dry_run: bool = False) -> list[str]:
    """The lines `cdc-lake add-tables` prints: each table it added, then each it skipped and why."""
    matched = len(outcome.added) + len(outcome.skipped)
    lines = [f"{outcome.seen} tables in the lake, {matched} matching"]
    verb = "would add" if dry_run else "added"
    for (database, table), base in outcome.added.items():
        count = outcome.columns.get((database, table))
        listed = "" if dry_run else (f" ({count} columns)" if count is not None else " (columns not listed)")
        lines.append(f"{verb} {database}.{table}: {base}_current, {base}_history{listed}")
    for (database, table), why in outcome.skipped.items():
        lines.append(f"skipped {database}.{table}: {why}")
    return lines


def main(args: argparse.Namespace) -> int:
    """`cdc-lake add-tables` (its parser: cdc_lake.cli.add_tables)."""
    from cdc_lake.spark import get_spark

    patterns = TablePatterns(tuple(args.include or ()), tuple(args.exclude or ()))
    outcome = add_lake_tables(get_spark("cdc-lake add-tables"), Path(args.project_dir), patterns, args.dry_run)
    if outcome is None:
        print(f"cdc-lake add-tables: the lake ({model_schema()}) has no cdc_source_columns yet: run dbt build first",
              file=sys.stderr)
        return 1
    for line in report(outcome, args.dry_run):
        print(line)
    for pattern in outcome.unused_includes:
        print(f"note: --include {pattern!r} matched no table of the lake (patterns are case-sensitive)")
    if outcome.added and not args.dry_run:
        print("next: dbt build")
    return 0

