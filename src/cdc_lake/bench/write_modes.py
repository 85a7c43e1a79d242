"""Copy-on-write against merge-on-read for the MERGEs that change rows in place.

A table shaped like cdc_current (a text key, an image map, a few scalars) of `rows` rows, once per
Iceberg write mode; each repetition puts the table back to its loaded snapshot, MERGEs 1 % of
its keys (scattered over the key space, as CDC updates are) with new images, then reads the whole
table back (the cost merge-on-read moves to readers). The choice in docs/design_choices.md ("Iceberg
and dbt choices") rests on these figures.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

MODES = {"cow": "copy-on-write", "mor": "merge-on-read"}
# a step prime coprime with every benchmark size, so `id * STEP % rows` hits distinct, scattered keys
STEP = 7919


def _create(spark: SparkSession, table: str, mode: str, rows: int) -> int:
    spark.sql(f"drop table if exists {table}")
    modes = ", ".join(f"'write.{op}.mode' = '{mode}'" for op in ("merge", "update", "delete"))
    spark.sql(
        f"create table {table} (row_key string, image map<string, string>, change_order string, is_deleted boolean) "
        f"using iceberg tblproperties ('format-version' = '2', {modes})"
    )
    spark.sql(
        f"""
        insert into {table}
        select
            cast(id as string),
            map('id', cast(id as string), 'name', concat('customer ', id), 'note', repeat('x', 120),
                'balance', cast(id % 1000 as string)),
            lpad(cast(id as string), 19, '0'),
            false
        from range({rows})
        """
    )
    return int(spark.sql(f"select snapshot_id from {table}.refs where name = 'main'").first()[0])


def _merge_sql(table: str, rows: int) -> str:
    updates = max(rows // 100, 1)
    return f"""
        merge into {table} as target
        using (
            select
                cast(id * {STEP} % {rows} as string) as row_key,
                map('id', cast(id * {STEP} % {rows} as string), 'name', 'updated', 'note', '',
                    'balance', '0') as image,
                lpad(cast({rows} + id as string), 19, '0') as change_order,
                false as is_deleted
            from range({updates})
        ) as source
        on target.row_key = source.row_key
        when matched then update set *
        when not matched then insert *
    """


def measure(
    spark: SparkSession, schema: str, rows: int, runs: int, timed: Callable[[str, Callable[[], object]], object]
) -> None:
    """Time, per mode and repetition, the scattered 1 % MERGE and a full read after it.

    `timed(label, action)` records one measurement (the bench's probe).
    """
    spark.sql(f"create database if not exists {schema}")
    for short, mode in MODES.items():
        table = f"{schema}.write_mode_{short}"
        loaded = _create(spark, table, mode, rows)
        try:
            for _ in range(runs):
                spark.sql(f"call spark_catalog.system.rollback_to_snapshot('{table}', {loaded})")
                timed(f"merge_1pct_{short}", lambda t=table: spark.sql(_merge_sql(t, rows)))
                timed(
                    f"read_after_merge_{short}",
                    lambda t=table: spark.sql(f"select count(*), sum(size(image)) from {t}").collect(),
                )
        finally:
            spark.sql(f"drop table if exists {table}")
