"""One verification run: the source's snapshot, each table compared, the results recorded in
`<raw schema>.verification_results` (the `cdc_verification` model shows each table's last run)."""

from __future__ import annotations

import json
import time
import uuid
from typing import TYPE_CHECKING, Any
from urllib.parse import urlparse

from cdc_lake.sqltext import qualified_name, sql_string
from cdc_lake.verify.compare import TableResult, verify_tables
from cdc_lake.verify.lake import LakeSide
from cdc_lake.verify.postgres import SCHEMES, PostgresUrl
from cdc_lake.verify.report import Verification
from cdc_lake.verify.source import SourceError, SourceLocation, SourceUrl

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

# also created by the on-run-start hook create_raw_tables (a project rule checks they agree)
RESULTS_COLUMNS = (
    "verification_id string not null, verified_at timestamp not null, source string not null, "
    "source_system string, database_name string not null, table_name string not null, status string not null, "
    "source_rows bigint, lake_rows bigint, differing_keys bigint, differences string, "
    "source_position string, lake_position string, changes_in_flight bigint, seconds double"
)


def parse_source_url(url: str) -> SourceLocation:
    """`mysql://` or `mariadb://` (MariaDB/MySQL), `postgresql://` or `postgres://`."""
    if urlparse(url).scheme in SCHEMES:
        return PostgresUrl.parse(url)
    try:
        return SourceUrl.parse(url)
    except SourceError as exc:
        if "expected mysql://" in str(exc):
            raise SourceError(f"{url!r}: expected mysql://user@host:port/database or "
                              "postgresql://user@host:port/database") from exc
        raise


def verify(spark: SparkSession, url: SourceLocation, schema: str, raw_schema: str, tables: list[str] | None = None,
           source_system: str | None = None, password: str | None = None, record: bool = True) -> Verification:
    """Compare `tables` (the source's names, `url.table_names`; default: every base table of the
    source database) with the lake."""
    started = time.monotonic()
    source = url.open(password)
    try:
        lake = LakeSide(spark, schema, source_system or "", url.database, source.texts)
        names = source.tables()
        unknown = sorted(set(tables or []) - set(names))
        if unknown:
            raise SourceError(f"not tables of {url.database} in the source: {', '.join(unknown)}")
        if not source_system:
            systems = lake.source_systems([source.lake_database(n) for n in tables or names])
            if len(systems) != 1:
                raise SourceError(
                    f"the lake holds database {url.database} from {len(systems)} source systems "
                    f"({', '.join(systems) or 'none'}): name one with --source-system"
                )
            lake.source_system = systems[0]
        results = verify_tables(source, lake, tables or names)
    finally:
        source.close()
    verification = Verification(uuid.uuid4().hex, str(url), f"{schema}.cdc_current", lake.source_system,
                                results, time.monotonic() - started, source.changes_noun)
    if record:
        record_results(spark, raw_schema, verification.verification_id, verification.source, results)
    return verification


def results_table(raw_schema: str) -> str:
    return qualified_name(raw_schema, "verification_results")


def record_results(spark: SparkSession, raw_schema: str, verification_id: str, source: str,
                   results: list[TableResult]) -> None:
    """Append one row per verified table (one commit)."""
    spark.sql(f"create database if not exists {qualified_name(raw_schema)}")
    spark.sql(f"create table if not exists {results_table(raw_schema)} ({RESULTS_COLUMNS}) using iceberg")
    rows = []
    for r in results:
        values: list[Any] = [
            sql_string(verification_id), "current_timestamp()", sql_string(source), sql_string(r.source_system),
            sql_string(r.database), sql_string(r.table), sql_string(r.status), str(r.source_rows),
            str(r.lake_rows), str(r.differing_keys), sql_string(json.dumps(r.samples_json())),
            sql_string(r.source_position), sql_string(r.lake_position),
            "null" if r.in_flight is None else str(r.in_flight), f"{r.seconds:.3f}",
        ]
        rows.append(f"({', '.join(values)})")
    if rows:
        spark.sql(f"insert into {results_table(raw_schema)} values {', '.join(rows)}")
