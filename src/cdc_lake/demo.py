"""`make demo`: generate the demo workload, land it in all five formats, run `dbt build`, and
show what was built. `make demo-kafka` (`--kafka`) takes the road production takes instead: a
local Kafka broker, the workload produced into its topics by a real producer, `cdc-lake consume`,
then the same build and summary; the broker is stopped at the end.

Runs in one process: landing, dbt (in-process, session method) and the summary share one Spark
session, so the JVM starts once.
"""

from __future__ import annotations

import sys
from pathlib import Path

from cdc_lake.env import PROJECT_DIR, apply_defaults, model_schema
from cdc_lake.formats import FORMATS

MODELS = ["cdc_changelog", "cdc_current", "cdc_history", "cdc_schema_changes", "cdc_rejected_messages"]


def demo_files(folder: Path) -> dict[str, list[Path]]:
    """The demo workload (`cdc-lake generate --demo`) written to `folder`, by format."""
    from cdc_lake.cli import main as cli

    if cli(["generate", "--demo", "--quiet", "--out", str(folder)]) != 0:
        raise RuntimeError("cdc-lake generate --demo failed")
    return {fmt: sorted(folder.glob(f"{fmt}*.jsonl")) for fmt in FORMATS}


def land_through_kafka(spark, files: dict[str, list[Path]]) -> None:  # noqa: ANN001 - a SparkSession
    from cdc_lake.consume import DEFAULT_CONFIG, ConsumeSettings, consume, load_rules
    from cdc_lake.servers.kafka_broker import LocalKafka, produce_dump

    with LocalKafka() as broker:
        print(f"== a Kafka broker at {broker.bootstrap}; producing the demo data into its topics")
        sent = produce_dump(broker.bootstrap, [p for paths in files.values() for p in paths])
        print(f"  {sent} records produced")
        print("== cdc-lake consume (topics of kafka_topics.yml)")
        counts = consume(spark, ConsumeSettings(broker.bootstrap, load_rules(DEFAULT_CONFIG)))
        for fmt, count in counts.items():
            print(f"  {fmt}: {count} records landed")
        print("== stopping the broker")


def print_rejects(spark, schema: str) -> None:  # noqa: ANN001 - a SparkSession
    """Point to the quarantine when it holds anything: the reasons, and the query that shows them."""
    reasons = spark.sql(
        f"select source_format, reject_reason, count(*) as records from {schema}.cdc_rejected_messages "
        "group by source_format, reject_reason order by records desc, source_format, reject_reason limit 10"
    ).collect()
    if not reasons:
        print("== no rejected records")
        return
    total = spark.table(f"{schema}.cdc_rejected_messages").count()
    print(f"== {total} records were rejected (cdc_rejected_messages), by reason:")
    for row in reasons:
        print(f"  {row.records:>6}  {row.source_format}: {row.reject_reason[:100]}")
    print(
        "  see them with: select source_format, kafka_topic, kafka_partition, kafka_offset, reject_reason, "
        f"raw_value from {schema}.cdc_rejected_messages"
    )


def main() -> int:
    apply_defaults()
    from dbt.cli.main import dbtRunner

    from cdc_lake.landing import land
    from cdc_lake.spark import get_spark

    spark = get_spark("cdc_lake demo")
    from cdc_lake.env import lake_dir

    files = demo_files(lake_dir() / "demo_input")
    if "--kafka" in sys.argv[1:]:
        land_through_kafka(spark, files)
    else:
        print("== landing the demo data")
        for fmt, paths in files.items():
            print("  " + land(spark, fmt, [str(p) for p in paths]).summary())
    print("== dbt build")
    result = dbtRunner().invoke(["build", "--project-dir", str(PROJECT_DIR)])
    if not result.success:
        print("dbt build failed", file=sys.stderr)
        return 1
    schema = model_schema()
    print("== rows per model")
    for model in MODELS:
        count = spark.table(f"{schema}.{model}").count()
        print(f"  {model:<24} {count:>8}")
    print("== changes per source system (the capturing server as each tool names it; docs/formats.md)")
    spark.sql(
        f"select source_format, source_system, count(*) as changes from {schema}.cdc_changelog "
        "group by source_format, source_system order by source_format, source_system"
    ).show(truncate=60)
    print_rejects(spark, schema)
    print("== a few current rows: the first two keys of each source system (the same key comes from each)")
    spark.sql(
        "select source_format, source_system, database_name, table_name, row_key, is_deleted, image from ("
        "  select *, row_number() over ("
        "    partition by source_system order by database_name, table_name, row_key) as key_number"
        f"  from {schema}.cdc_current"
        ") where key_number <= 2 order by source_format, source_system, database_name, table_name, row_key"
    ).show(n=20, truncate=60)
    print("== a typed table (models/marts/tables; add yours with `cdc-lake add-table DATABASE TABLE`)")
    typed = spark.sql(f"select * from {schema}.shop__orders_current order by row_key limit 5")
    typed.drop("change_order").show(truncate=40)
    print("== next: `.venv/bin/cdc-lake sql` to query the lake; its metastore server keeps running for later")
    print("   commands (`.venv/bin/cdc-lake metastore stop` stops it)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
