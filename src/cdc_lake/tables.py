"""`cdc-lake add-table`: expose a source table as typed dbt models in one command.

For DATABASE.TABLE it
1. lists the table in `seeds/cdc_tables.csv` (with optional Spark type overrides),
2. writes `models/marts/tables/<database>__<table>_current.sql` and `..._history.sql`, each one line
   calling the `typed_current` / `typed_history` macro,
3. writes `models/marts/tables/_<database>__<table>__models.yml`: descriptions and tests of both
   models, with one entry per source column when the lake already knows the table's columns
   (`cdc_typed_columns`); run the command again later to refresh that list.

The typed models find their columns themselves at build time, so the yml is documentation and tests,
never a list that must be kept in step by hand.
"""

from __future__ import annotations

import argparse
import csv
import difflib
import hashlib
import io
import re
import shlex
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import yaml

from cdc_lake.env import PROJECT_DIR, model_schema
from cdc_lake.sqltext import qualified_name, sql_string

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

MODEL_NAME_RE = re.compile(r"^[a-z0-9_]+$")
# dbt renders Jinja in model files and yml: a name with braces or control characters cannot be written safely
UNWRITABLE_NAME_RE = re.compile(r"[{}\x00-\x1f\x7f]")
PLAIN_COLUMN_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
# Spark SQL atomic types by name, and how many parameters each takes
SPARK_TYPE_PARAMS: dict[str, set[int]] = {
    **dict.fromkeys(
        (
            "boolean tinyint byte smallint short int integer bigint long float real double string binary date "
            "timestamp timestamp_ntz timestamp_ltz"
        ).split(),
        {0},
    ),
    **dict.fromkeys(("decimal", "dec", "numeric"), {0, 1, 2}),
    **dict.fromkeys(("varchar", "char"), {1}),
}
SPARK_TYPE_RE = re.compile(r"^[A-Za-z_]+( *\( *[0-9]+ *(, *[0-9]+ *)?\))?$")
SEED_HEADER = ["database_name", "table_name", "column_types"]
TABLES_DIR = Path("models") / "marts" / "tables"
SEED_PATH = Path("seeds") / "cdc_tables.csv"
MAX_FILE_NAME_BYTES = 255  # Linux's; a model's yml is the longest of its files (`_<base>__models.yml`)
# Keep in step with the _typed_metadata_columns macro.
METADATA_COLUMNS = {
    "version_id",
    "source_system",
    "row_key",
    "op",
    "commit_ts",
    "change_order",
    "change_id",
    "valid_from",
    "valid_to",
    "is_current",
    "closed_by_delete",
    "last_landing_seq",
}


@dataclass
class SourceColumn:
    """One column of the source table as `cdc_typed_columns` shows it."""

    name: str
    mysql_type: str | None
    spark_type: str
    is_primary_key: bool


TableColumns = dict[tuple[str, str], list[SourceColumn]]  # by (database, table)


@dataclass
class AddTableResult:
    seed_changed: bool
    written: list[Path]
    columns: list[SourceColumn] | None


def model_base(database: str, table: str) -> str:
    """`<database>__<table>` in lower case; names with other characters than letters, digits and _
    (dots, quotes, spaces, ...) give their letters and digits plus a short hash of the exact names,
    so two tables never share a model name."""
    plain = f"{database.lower()}__{table.lower()}"
    if MODEL_NAME_RE.match(plain):
        return plain
    slug = re.sub(r"[^a-z0-9]+", "_", plain).strip("_") or "table"
    digest = hashlib.sha256(f"{database}\x1f{table}".encode()).hexdigest()[:8]
    return f"{slug}_{digest}"


def jinja_string(text: str) -> str:
    """A Jinja string literal that reads back exactly as `text`."""
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def check_spark_type(spark_type: str) -> None:
    """Raise ValueError unless `spark_type` is a Spark SQL atomic type a typed column can be cast to
    (checked here, so a typo fails when `add-table` runs, not at the next build)."""
    name, _, rest = spark_type.partition("(")
    name = name.strip()
    params = [int(p) for p in rest.rstrip(") ").split(",")] if rest else []
    if name not in SPARK_TYPE_PARAMS:
        close = difflib.get_close_matches(name, SPARK_TYPE_PARAMS, n=1)
        hint = f" (did you mean {close[0]}?)" if close else ""
        raise ValueError(f"unknown Spark type {spark_type!r}{hint}; known: {', '.join(sorted(SPARK_TYPE_PARAMS))}")
    allowed = SPARK_TYPE_PARAMS[name]
    if len(params) not in allowed:
        counts = " or ".join(map(str, sorted(allowed)))
        raise ValueError(f"Spark type {name} takes {counts} parameter(s): {spark_type!r}")
    if (
        name in ("decimal", "dec", "numeric")
        and params
        and not (1 <= params[0] <= 38 and (len(params) == 1 or params[1] <= params[0]))
    ):
        raise ValueError(f"Spark decimals have 1 to 38 digits and a scale at most the precision: {spark_type!r}")


def parse_column_types(text: str | None) -> dict[str, str]:
    """`a:int;b:decimal(12,2)` -> {'a': 'int', 'b': 'decimal(12,2)'}; raises ValueError if malformed."""
    result: dict[str, str] = {}
    for part in (text or "").split(";"):
        if not part.strip():
            continue
        column, sep, spark_type = part.partition(":")
        if not sep or not column.strip() or not SPARK_TYPE_RE.match(spark_type.strip()):
            raise ValueError(f"bad column type {part.strip()!r}: expected column:spark_type, e.g. amount:decimal(12,2)")
        spark_type = re.sub(r"\s+", "", spark_type).lower()
        check_spark_type(spark_type)
        result[column.strip()] = spark_type
    return result


def format_column_types(types: dict[str, str]) -> str:
    return ";".join(f"{column}:{spark_type}" for column, spark_type in types.items())


def seed_rows(path: Path) -> list[dict[str, str]]:
    """The rows of the cdc_tables seed at `path` (an empty value as ''); none if the file is missing."""
    if not path.exists():
        return []
    with path.open(newline="", encoding="utf-8") as handle:
        return [{k: (v or "") for k, v in row.items()} for row in csv.DictReader(handle)]


def update_seed(path: Path, database: str, table: str, column_types: dict[str, str] | None) -> bool:
    """List the table in the cdc_tables seed; with `column_types`, replace its overrides. True if changed."""
    rows = seed_rows(path)
    for row in rows:
        if row["database_name"] == database and row["table_name"] == table:
            if column_types is None or parse_column_types(row.get("column_types")) == column_types:
                return False
            row["column_types"] = format_column_types(column_types)
            break
    else:
        rows.append(
            {"database_name": database, "table_name": table, "column_types": format_column_types(column_types or {})}
        )
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=SEED_HEADER, lineterminator="\n", extrasaction="ignore")
    writer.writeheader()
    writer.writerows(rows)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(out.getvalue(), encoding="utf-8")
    return True


def typed_columns(spark: SparkSession, databases: Iterable[str] | None = None) -> TableColumns | None:
    """The columns of the lake's tables from `cdc_typed_columns` (of `databases` only, when given),
    by (database, table), in column order; None when the lake has no such view yet."""
    relation = qualified_name(model_schema(), "cdc_typed_columns")
    if not spark.catalog.tableExists(relation):
        return None
    frame = spark.table(relation)
    if databases is not None:
        listed = ", ".join(sql_string(database) for database in sorted(set(databases)))
        frame = frame.where(f"database_name in ({listed})" if listed else "false")
    result: TableColumns = {}
    for r in frame.orderBy("database_name", "table_name", "column_position").collect():
        result.setdefault((r.database_name, r.table_name), []).append(
            SourceColumn(r.column_name, r.mysql_type, r.spark_type, bool(r.is_primary_key))
        )
    return result


def lake_columns(database: str, table: str) -> list[SourceColumn] | None:
    """The table's columns from the lake's `cdc_typed_columns`, or None when the lake cannot tell."""
    try:
        from cdc_lake.spark import get_spark

        by_table = typed_columns(get_spark("cdc-lake add-table"), [database])
    except Exception as exc:  # noqa: BLE001 - any failure only means "no column list"
        print(f"cdc-lake add-table: could not read the lake ({type(exc).__name__}); columns not listed")
        return None
    return None if by_table is None else by_table.get((database, table), [])


class _Flow(list[str]):
    """A short list written inline (`[a, b]`), as in the project's hand-written yml."""


class _YmlDumper(yaml.SafeDumper):
    def increase_indent(self, flow: bool = False, indentless: bool = False) -> None:
        # indent lists under their key (`columns:` then `  - name: ...`), like models/**/*.yml
        return super().increase_indent(flow, False)

    def choose_scalar_style(self) -> str:
        # "{{ doc('row_key') }}" rather than '{{ doc(''row_key'') }}'
        style = super().choose_scalar_style()
        return '"' if style == "'" and "'" in self.event.value else style

    def ignore_aliases(self, data: object) -> bool:
        return True  # both models share column entries: write them out twice, not as &anchor / *alias


def _represent_str(dumper: yaml.SafeDumper, text: str) -> yaml.ScalarNode:
    # prose longer than fits after `        description: ` in 100 columns reads best as a folded block (`>`)
    style = ">" if len(text) > 79 and " " in text else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", text, style=style)


_YmlDumper.add_representer(str, _represent_str)
_YmlDumper.add_representer(_Flow, lambda d, s: d.represent_sequence("tag:yaml.org,2002:seq", s, flow_style=True))

_KEY = _Flow(["source_system", "row_key"])
LAST_LANDING_SEQ = "{{ doc('last_landing_seq') }}"


def _column_name(column: SourceColumn) -> str:
    return column.name + ("_src" if column.name.lower() in METADATA_COLUMNS else "")


def _source_column_entries(columns: list[SourceColumn]) -> list[dict[str, object]]:
    entries: list[dict[str, object]] = []
    for column in columns:
        name = _column_name(column)
        mysql = f"MySQL `{column.mysql_type}`" if column.mysql_type else "MySQL type not carried by the format"
        renamed = f" (renamed: `{column.name}` is also a metadata column)" if name != column.name else ""
        key = " Part of the primary key." if column.is_primary_key else ""
        entry: dict[str, object] = {"name": name}
        if not PLAIN_COLUMN_RE.match(name):
            entry["quote"] = True  # dbt must quote the name in SQL
        entry["description"] = f"Source column `{column.name}`{renamed}: {mysql}, Spark `{column.spark_type}`.{key}"
        entries.append(entry)
        # no per-column tests: a lake that has not seen the table yet has no such column, and
        # row_key (not null, built only from complete keys) already guards the primary key
    return entries


def _col(name: str, description: str, *tests: str | dict[str, object]) -> dict[str, object]:
    listed = _Flow(tests) if all(isinstance(test, str) for test in tests) else list(tests)
    return {"name": name, "description": description, **({"data_tests": listed} if tests else {})}


def _test(name: str, *, per_key: bool = False, **arguments: object) -> dict[str, object]:
    """A data test entry. `per_key`: the test compares the rows of one key, so a scheduled build
    reads every row of the keys its batch touched (`__cdc_batch_keys__`); any other test of the
    marts reads the rows the batch wrote (dbt_project.yml's `__cdc_batch__`)."""
    entry: dict[str, object] = {"arguments": arguments} if arguments else {}
    if per_key:
        entry["config"] = {"where": "__cdc_batch_keys__"}
    return {name: entry}


def models_yml(database: str, table: str, columns: list[SourceColumn] | None) -> str:
    base = model_base(database, table)
    command = f"cdc-lake add-table {shlex.quote(database)} {shlex.quote(table)}"
    note = (
        f"The column list below was read from the lake by `{command}`; run it again after the source table changes."
        if columns
        else f"Run `{command}` again after a build to list the source columns here."
    )
    source_columns = _source_column_entries(columns or [])
    names = {"database_name": database, "table_name": table}
    keys = [
        _col("source_system", "{{ doc('source_system') }}", "not_null"),
        _col("row_key", "{{ doc('row_key') }}", "not_null"),
    ]
    current = {
        "name": f"{base}_current",
        # ends with a newline: the text the `>` block of earlier versions loaded as
        "description": (
            f"Live rows of the source table `{database}.{table}` (rows whose last change is a delete are left "
            "out), one typed column per source column, from cdc_current. Column types: cdc_typed_columns (the "
            "`column_types` of seeds/cdc_tables.csv, else the MySQL type mapped by seeds/mysql_spark_types.csv). "
            f"A view: always in step with cdc_current; a column added at the source appears at the next build. {note}\n"
        ),
        "data_tests": [
            # once per key, or row_count times for a keyless table's identical rows
            _test("rows_per_key_match_current", per_key=True, source_model="ref('cdc_current')", **names),
            _test("typed_values_preserved", source_model="ref('cdc_current')", **names, join_columns=_KEY),
        ],
        "columns": [
            *keys,
            *source_columns,
            _col("op", "Op of the row's latest change (`c` insert, `u` update, `r` snapshot read)."),
            _col("commit_ts", "Commit time of the row's latest change (UTC)."),
            _col("change_order", "{{ doc('change_order') }}"),
            _col("change_id", "The change that produced the row's current state."),
            _col("last_landing_seq", LAST_LANDING_SEQ),
        ],
    }
    history = {
        "name": f"{base}_history",
        "description": (
            f"Every version of every row of the source table `{database}.{table}` (SCD type 2, valid over "
            "[valid_from, valid_to)), one typed column per source column, from cdc_history. Types as in "
            f"{base}_current. A view over cdc_history. {note}\n"
        ),
        "data_tests": [
            _test("one_open_version_per_key", per_key=True, key_columns=_KEY),
            _test("contiguous_versions", per_key=True, key_columns=_KEY),
            _test(
                "typed_values_preserved", source_model="ref('cdc_history')", **names, join_columns=_Flow(["version_id"])
            ),
        ],
        "columns": [
            _col(
                "version_id",
                "Id of the version (the change_id of the change that opened it).",
                _test("unique", per_key=True),
                "not_null",
            ),
            *keys,
            *source_columns,
            _col("valid_from", "Commit time of the change that opened the version (inclusive).", "not_null"),
            _col("valid_to", "Commit time of the change that closed it (exclusive); null while open."),
            _col("is_current", "True for the open version of a row that exists now."),
            _col("closed_by_delete", "True when a delete closed the version."),
            _col("op", "Op of the change that opened the version (`c`, `u` or `r`)."),
            _col("change_id", "The change that opened the version."),
            _col("change_order", "{{ doc('change_order') }} Of the opening change."),
            _col("last_landing_seq", LAST_LANDING_SEQ),
        ],
    }
    header = (
        f"# Written by `{command}`. The typed models find their columns at build time\n"
        "# (cdc_typed_columns); this file documents and tests them. Edits are overwritten by the command.\n\n"
    )
    document = {"version": 2, "models": [current, history]}
    return header + yaml.dump(
        document, Dumper=_YmlDumper, sort_keys=False, allow_unicode=True, width=100, default_flow_style=False
    )


def model_sql(kind: str, database: str, table: str) -> str:
    return f"{{{{ typed_{kind}({jinja_string(database)}, {jinja_string(table)}) }}}}\n"


def name_problem(database: str, table: str, listed: Iterable[tuple[str, str]]) -> str | None:
    """Why DATABASE.TABLE cannot have typed models beside the tables in `listed` (those of the
    cdc_tables seed), or None: a name dbt cannot take, a file name too long, or a model name that is
    already another table's (`Shop.Orders` and `shop.orders` are both `shop__orders`)."""
    for label, name in (("DATABASE", database), ("TABLE", table)):
        if not name or UNWRITABLE_NAME_RE.search(name):
            return f"{label} {name!r}: must be non-empty, without braces or control characters"
    base = model_base(database, table)
    if len(f"_{base}__models.yml".encode()) > MAX_FILE_NAME_BYTES:
        return f"the model name {base} is too long for a file name"
    for other in listed:
        if other != (database, table) and model_base(*other) == base:
            return f"the model name {base} is already {other[0]}.{other[1]}'s"
    return None


def add_table(
    database: str,
    table: str,
    project_dir: Path = PROJECT_DIR,
    column_types: dict[str, str] | None = None,
    read_lake: bool = True,
    columns: list[SourceColumn] | None = None,
) -> AddTableResult:
    """List DATABASE.TABLE in the config and write its typed models and their yml. `columns`: the
    table's columns when the caller has read them already (`cdc-lake add-tables` reads every new
    table's in one query); the lake is then not read again. Raises ValueError (see name_problem)."""
    seed = project_dir / SEED_PATH
    problem = name_problem(database, table, ((r["database_name"], r["table_name"]) for r in seed_rows(seed)))
    if problem:
        raise ValueError(problem)
    seed_changed = update_seed(seed, database, table, column_types)
    tables_dir = project_dir / TABLES_DIR
    tables_dir.mkdir(parents=True, exist_ok=True)
    base = model_base(database, table)
    if columns is None and read_lake:
        columns = lake_columns(database, table)
    files = {
        tables_dir / f"{base}_current.sql": model_sql("current", database, table),
        tables_dir / f"{base}_history.sql": model_sql("history", database, table),
        tables_dir / f"_{base}__models.yml": models_yml(database, table, columns),
    }
    written = []
    for path, text in files.items():
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")
            written.append(path)
    return AddTableResult(seed_changed, written, columns)


def main(args: argparse.Namespace) -> int:
    """`cdc-lake add-table` (its parser: cdc_lake.cli.add_table)."""
    try:
        overrides = parse_column_types(args.column_types) if args.column_types is not None else None
        result = add_table(
            args.database,
            args.table,
            project_dir=Path(args.project_dir),
            column_types=overrides,
            read_lake=not args.no_lake,
        )
    except ValueError as exc:
        print(f"cdc-lake add-table: {exc}", file=sys.stderr)
        return 2
    where = f"{args.database}.{args.table}"
    print(f"{where}: {'listed in' if result.seed_changed else 'already in'} seeds/cdc_tables.csv")
    for path in result.written:
        print(f"  wrote {path}")
    if result.columns is None:
        print("  columns not listed (the lake has no cdc_typed_columns yet): run this again after `dbt build`")
    else:
        print(f"  {len(result.columns)} source columns documented")
    print("next: dbt build")
    return 0
