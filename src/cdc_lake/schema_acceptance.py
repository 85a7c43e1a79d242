"""Schema changes accepted: `cdc-lake accept-schema <database>.<table>` (docs/table_options.md,
"Schema changes").

A table whose option `schema_changes` is `fail` keeps the columns it was accepted with: after a
DDL statement the lake has not accepted, or from a change that brings a column it has not
accepted, cdc_changelog holds the table's changes back and cdc_rejected_messages shows each of
their records with a reason that starts with `hold_prefix(database, table)`. The acceptance:

1. reads those records (their Kafka coordinates and landing) from cdc_rejected_messages, the
   columns of their changes from int_changes_unioned (those cdc_source_columns does not list
   yet), and the table's ALTER / RENAME TABLE statements from cdc_schema_changes;
2. writes one row to the raw schema's register `cdc_schema_acceptances` (those columns, those
   statements, and any `--column` given): the change log accepts them from its next build on;
3. releases the held records the way `cdc-lake set-aside --release` releases set-aside ones: each
   gets a new landing sequence in its raw table, so the next build stages it again; its staged
   messages of the old landing (the base model's rows) and its reject row go. The change log then
   takes its changes, and cdc_history places them as late changes.

Nothing is lost: the raw table keeps every record throughout. Run again after a crash, it finishes
what was left (the register row first, then the records; a record already moved to its new landing
is not moved again, its old staged rows and reject row still go). Every statement is SQL through
an Executor, so it works on the embedded session and on a Thrift Server.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from cdc_lake.formats import FORMATS
from cdc_lake.landing import Executor, as_executor, raw_schema, table_exists
from cdc_lake.set_aside import reland
from cdc_lake.sqltext import qualified_name, quote_identifier, sql_string

ACCEPTANCES_TABLE = "cdc_schema_acceptances"
# The register (the dbt macro create_raw_tables creates the same table; test_project_rules checks
# that the two agree).
ACCEPTANCES_COLUMNS = """
    database_name string not null,
    table_name string not null,
    accepted_columns array<string> not null,
    accepted_schema_changes array<string> not null,
    released_records bigint not null,
    accepted_at timestamp not null
"""
HELD_VIEW = "cdc_schema_held_records"  # the table's held records, while an acceptance runs
COORDINATES = ("source_format", "kafka_topic", "kafka_partition", "kafka_offset", "landing_seq")


def hold_prefix(database: str, table: str) -> str:
    """How the reject reason of a held record starts (macro schema_change_screen writes it)."""
    return f"schema change of {database}.{table} not accepted"


def acceptances_table() -> str:
    return qualified_name(raw_schema(), ACCEPTANCES_TABLE)


def ensure_acceptances_table(executor: Executor) -> None:
    executor.execute(f"create database if not exists {quote_identifier(raw_schema())}")
    executor.execute(f"create table if not exists {acceptances_table()} ({ACCEPTANCES_COLUMNS}) using iceberg")


@dataclass
class Acceptance:
    """What one acceptance wrote and released."""

    database: str
    table: str
    columns: list[str]
    schema_changes: list[str]
    released: int

    def summary(self) -> str:
        columns = ", ".join(self.columns) or "none"
        return (f"accepted {self.database}.{self.table}: columns {columns}; "
                f"{len(self.schema_changes)} DDL statements; released {self.released} held records, "
                "which the next build takes in")


def _array(values: Iterable[str]) -> str:
    items = ", ".join(sql_string(v) for v in values)
    return f"cast(array({items}) as array<string>)"


def accept_schema(
    target: object, database: str, table: str, model_schema: str, columns: Iterable[str] = (),
) -> Acceptance:
    """Accept the schema changes of `database`.`table` and release its held records (see above).
    `model_schema` is the schema of the models (cdc_rejected_messages, int_changes_unioned,
    cdc_schema_changes, the base models); `columns` are accepted besides those of the held changes."""
    executor = as_executor(target)
    ensure_acceptances_table(executor)
    rejects = qualified_name(model_schema, "cdc_rejected_messages")
    where_table = f"database_name = {sql_string(database)} and table_name = {sql_string(table)}"
    executor.execute(
        f"create or replace temporary view {HELD_VIEW} as select distinct {', '.join(COORDINATES)} "
        f"from {rejects} where startswith(reject_reason, {sql_string(hold_prefix(database, table))})"
    )
    try:
        held = int(executor.query(f"select count(*) from {HELD_VIEW}")[0][0])
        found: set[str] = {c for c in columns if c}
        if held:
            # the columns of the held changes that the change log does not hold yet
            same = " and ".join(f"changes.{c} = held.{c}" for c in COORDINATES)
            known = qualified_name(model_schema, "cdc_source_columns")
            known_columns = (f" except select column_name from {known} where {where_table}"
                             if table_exists(executor, known) else "")
            found |= {str(row[0]) for row in executor.query(
                "select distinct column_name from ("
                "select explode(map_keys(coalesce(changes.after, changes.before))) as column_name "
                f"from {qualified_name(model_schema, 'int_changes_unioned')} as changes "
                f"left semi join {HELD_VIEW} as held on {same} "
                f"where changes.database_name = {sql_string(database)} "
                f"and changes.table_name = {sql_string(table)}){known_columns}"
            )}
        statements = sorted(str(row[0]) for row in executor.query(
            f"select schema_change_id from {qualified_name(model_schema, 'cdc_schema_changes')} "
            f"where {where_table} and ddl_type in ('ALTER', 'RENAME')"
        )) if table_exists(executor, qualified_name(model_schema, "cdc_schema_changes")) else []
        accepted = Acceptance(database, table, sorted(found), statements, held)
        executor.execute(
            f"insert into {acceptances_table()} select {sql_string(database)}, {sql_string(table)}, "
            f"{_array(accepted.columns)}, {_array(accepted.schema_changes)}, {held}, current_timestamp()"
        )
        if held:
            _release(executor, model_schema, rejects)
        return accepted
    finally:
        executor.execute(f"drop view if exists {HELD_VIEW}")


def _release(executor: Executor, model_schema: str, rejects: str) -> None:
    """Each held record to a new landing in its raw table; its staged rows of the old landing and
    its reject row out."""
    same = " and ".join(f"{{t}}.{c} = held.{c}" for c in COORDINATES[1:])
    formats = [str(row[0]) for row in executor.query(f"select distinct source_format from {HELD_VIEW}")]
    for fmt in formats:
        if fmt not in FORMATS:
            continue
        chosen = f"(select * from {HELD_VIEW} where source_format = {sql_string(fmt)}) as held"
        reland(executor, fmt, chosen, same.format(t="raw"))
        base = qualified_name(model_schema, f"base_{fmt}__messages")
        if table_exists(executor, base):
            executor.execute(
                f"merge into {base} as staged using {chosen} on {same.format(t='staged')} "
                "when matched then delete"
            )
    executor.execute(
        f"merge into {rejects} as rejected using {HELD_VIEW} as held "
        f"on {' and '.join(f'rejected.{c} = held.{c}' for c in COORDINATES)} "
        "when matched then delete"
    )
