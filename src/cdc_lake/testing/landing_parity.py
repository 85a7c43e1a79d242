"""One landing, two executors: a run of landings done on each, and what must come out the same.

`land_run` lands the same files in the same order through an executor (the embedded session, or
`ThriftExecutor` on a Spark Thrift Server or on `SparkCursor`); `raw_rows` reads a raw table as
comparable rows, whatever engine answers; `report_facts` is what of a `LandingReport` must agree
(not its seconds, nor when the conflicting records were landed).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cdc_lake.landing import Executor, LandingReport, land, raw_table

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

FORMAT = "debezium"
TOPIC = "parity.shop"


class SparkCursor:
    """The DB-API calls `ThriftExecutor` makes, answered by a Spark session: the Thrift path's own
    SQL on real Spark, without a Thrift Server."""

    def __init__(self, spark: SparkSession) -> None:
        self.spark = spark
        self.rows: list[tuple[Any, ...]] = []

    def execute(self, sql: str) -> None:
        self.rows = [tuple(row) for row in self.spark.sql(sql).collect()]

    def fetchall(self) -> list[tuple[Any, ...]]:
        return self.rows


def _kcat(offset: int, payload: str | None, partition: int = 0, **fields: Any) -> str:
    record = {"topic": TOPIC, "partition": partition, "offset": offset, **fields, "payload": payload}
    return json.dumps(record, separators=(",", ":"))  # as kcat prints it


def parity_files(folder: Path) -> dict[str, Path]:
    """kcat dumps and a file of bare values: headers, keys, timestamps, an offset twice in one dump,
    bad lines, bytes that are not UTF-8; `changed` holds offsets of `first` with other values."""
    lines = {
        "first": [
            _kcat(0, "v0", ts=1700000000000, key="k0"),
            _kcat(1, "v1", headers=["h1", "x", "h2", None]),
            _kcat(0, "v0 again, other value: the first wins", key="k0"),
            "not json",
            '{"topic":"t","partition":0,"payload":"no offset"}',
            "",
            _kcat(0, "partition 1", partition=1, key=None, headers=[]),
            _kcat(2, '{"after":{"id":2}}', ts=1700000000123),
        ],
        "changed": [_kcat(1, "v1 changed"), _kcat(2, '{"after":{"id":2}}', ts=1700000000123), _kcat(3, "new")],
        "values": ['{"op":"c","after":{"id":1}}', "", '{"op":"u","after":{"id":1}}'],
    }
    paths = {name: folder / f"{name}.jsonl" for name in lines}
    for name, path in paths.items():
        path.write_text("".join(line + "\n" for line in lines[name]), encoding="utf-8")
    with paths["first"].open("ab") as out:  # a value that is not UTF-8: one U+FFFD a byte
        out.write(_kcat(4, "bytes").replace('"bytes"', '"a\udcff\udcfeb"').encode("utf-8", "surrogateescape") + b"\n")
    return paths


def land_run(target: SparkSession | Executor, files: dict[str, Path]) -> list[LandingReport]:
    """The same landings on any executor: a dump, the same again (all present), one with other
    values at landed offsets (conflicts), the same as the topic's next incarnation, bare values."""
    first, changed = [str(files["first"])], [str(files["changed"])]
    return [
        land(target, FORMAT, first),
        land(target, FORMAT, first),
        land(target, FORMAT, changed),
        land(target, FORMAT, changed, incarnation=1),
        land(target, FORMAT, [str(files["values"])], raw_values=True, topic="parity.values", partition=2),
    ]


def report_facts(report: LandingReport) -> dict[str, Any]:
    return {
        "counts": (report.fmt, report.lines_read, report.records_valid, report.records_landed, report.conflicts),
        "bad_lines": [(bad.source, bad.line_no, bad.reason) for bad in report.bad_lines],
        "conflicts": [(c.topic, c.partition, c.offset, c.topic_incarnation) for c in report.conflict_samples],
        "incarnation": report.incarnation,
    }


def raw_rows(query: Callable[[str], list[tuple[Any, ...]]]) -> list[tuple[Any, ...]]:
    """Every column of the raw table as comparable values, sorted. `landing_seq` and `landed_at`
    differ between two lakes; what must not is their order: each landing's number among the
    landings (one per commit, in commit order) and its time's number among the landing times."""
    rows = query(
        f"""
        select
            kafka_topic, kafka_partition, kafka_offset, cast(kafka_timestamp as string), kafka_key, kafka_value,
            to_json(kafka_headers), kafka_topic_incarnation,
            dense_rank() over (order by landing_seq) as landing_number,
            dense_rank() over (order by landed_at) as landed_at_number
        from {raw_table(FORMAT)}
        """
    )
    return sorted((tuple(row) for row in rows), key=repr)
