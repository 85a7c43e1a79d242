"""`cdc-lake land`: kcat lines in, idempotent appends, bad lines reported with line numbers."""

from __future__ import annotations

import io
import json

import pytest

from cdc_lake.cli import EXIT_BAD_LINES, main
from cdc_lake.kcat import parse_kcat_line
from cdc_lake.landing import LandingReport, land
from cdc_lake.testing.harness import kcat_lines


def raw_rows(lake, fmt: str) -> list[dict]:
    return lake.rows(
        f"select kafka_topic, kafka_partition, kafka_offset, kafka_key, kafka_value, kafka_timestamp "
        f"from {{raw_schema}}.raw_{fmt} order by kafka_topic, kafka_partition, kafka_offset"
    )


def test_parse_kcat_line_reasons():
    assert parse_kcat_line('{"topic":"t","partition":1,"offset":5,"key":null,"payload":"x"}') == {
        "kafka_topic": "t",
        "kafka_partition": 1,
        "kafka_offset": 5,
        "kafka_timestamp_ms": None,
        "kafka_key": None,
        "kafka_value": "x",
        "kafka_headers": None,
    }
    # kcat -J prints headers as one flat list: name, value, name, value, ...
    with_headers = parse_kcat_line(
        '{"topic":"t","partition":0,"offset":1,"headers":["__debezium.oldkey","{\\"id\\":1}","h2",null],"payload":"x"}'
    )
    assert with_headers["kafka_headers"] == [
        {"key": "__debezium.oldkey", "value": '{"id":1}'},
        {"key": "h2", "value": None},
    ]
    for line, reason in [
        ("{not json", "not JSON"),
        ("[1, 2]", "not a JSON object"),
        ('{"partition":0,"offset":1}', "missing topic: not a kcat -J line .*--raw-values"),
        ('{"topic":"t","offset":1}', "missing or invalid partition"),
        ('{"topic":"t","partition":0}', "missing or invalid offset"),
        ('{"topic":"t","partition":0,"offset":"7"}', "missing or invalid offset"),
        ('{"topic":"t","partition":0,"offset":-1}', "missing or invalid offset"),
    ]:
        with pytest.raises(ValueError, match=reason):
            parse_kcat_line(line)


def test_missing_file_is_reported_before_spark_starts(tmp_path, capsys, monkeypatch):
    import cdc_lake.spark

    def no_spark(*args, **kwargs):
        raise AssertionError("Spark started for a landing that cannot run")

    monkeypatch.setattr(cdc_lake.spark, "get_spark", no_spark)
    present = tmp_path / "present.jsonl"
    present.write_text("")
    absent = tmp_path / "absent.jsonl"
    assert main(["land", "--format", "debezium", str(present), str(absent)]) == 2
    err = capsys.readouterr().err
    assert err.strip() == f"cdc-lake land: no such file: {absent}"


def test_cli_lands_reports_bad_lines_and_is_idempotent(lake, tmp_path, capsys):
    good = kcat_lines(['{"a":1}', None, '{"a":2}'], topic="orders", partition=2, keys=["k1", "k1", None])
    lines = [good[0], "this is not json", good[1], '{"topic":"orders","partition":2}', "", good[2]]
    dump = tmp_path / "dump.jsonl"
    dump.write_text("\n".join(lines) + "\n")
    lake._activate()

    # values that are no Canal messages: --force lands them anyway
    assert main(["land", "--format", "canal_flat", "--force", str(dump)]) == EXIT_BAD_LINES
    out, err = capsys.readouterr()
    assert f"{dump}:2: not JSON" in err
    assert f"{dump}:4: missing or invalid offset" in err
    assert "3 valid records, 3 landed, 0 already present, 2 bad lines" in out

    rows = raw_rows(lake, "canal_flat")
    assert [(r["kafka_partition"], r["kafka_offset"], r["kafka_key"], r["kafka_value"]) for r in rows] == [
        (2, 0, "k1", '{"a":1}'),
        (2, 1, "k1", None),  # a tombstone is landed as a null value
        (2, 2, None, '{"a":2}'),
    ]
    assert rows[0]["kafka_timestamp"] is not None

    # the same file again (plus one new record from stdin): nothing is landed twice
    # values that are no Canal messages: --force lands them anyway
    assert main(["land", "--format", "canal_flat", "--force", str(dump)]) == EXIT_BAD_LINES
    assert "0 landed, 3 already present" in capsys.readouterr().out
    extra = kcat_lines(['{"a":3}'], topic="orders", partition=2, start_offset=3)[0]
    import sys

    stdin, sys.stdin = sys.stdin, io.StringIO(extra + "\n" + good[0] + "\n")
    try:
        assert main(["land", "--format", "canal_flat", "--force", "-"]) == 0
    finally:
        sys.stdin = stdin
    assert "2 valid records, 1 landed, 1 already present, 0 bad lines" in capsys.readouterr().out
    assert len(raw_rows(lake, "canal_flat")) == 4


def test_raw_values_wrap_lines_with_stable_offsets(lake, tmp_path):
    values = tmp_path / "my-topic.txt"
    values.write_text(json.dumps({"x": 1}) + "\n\n" + json.dumps({"x": 2}) + "\n")
    first = lake.land("debezium", values, raw_values=True)
    again = lake.land("debezium", values, raw_values=True)
    assert (first.records_landed, again.records_landed) == (2, 0)
    rows = raw_rows(lake, "debezium")
    assert [(r["kafka_topic"], r["kafka_offset"]) for r in rows] == [("my-topic", 0), ("my-topic", 2)]


def test_unknown_format_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["land", "--format", "maxwell", "x.jsonl"])
    assert exc.value.code == 2


# Lines on which Spark's JSON parse and `parse_kcat_line` could disagree: the Spark read must land
# exactly what the Python reference lands and report the same bad lines, at the same line numbers.
TRICKY_LINES = [
    b'{"topic":"t","partition":0,"offset":1,"ts":1700000000000,"key":"k","payload":"plain"}',
    b'{"topic":"t","partition":0,"offset":2,"headers":["h1","v1","h2",null],"key":null,"payload":"with headers"}',
    b'{"topic":"t","partition":0,"offset":3,"headers":["odd"],"payload":"odd headers"}',
    b'{"topic":"t","partition":0,"offset":4,"headers":{"a":1},"payload":"headers not a list"}',
    b'{"topic":"t","partition":0,"offset":5,"payload":"lone surrogate a\\ud800b"}',
    b'{"topic":"t","partition":0,"offset":6,"payload":"invalid bytes a\xff\xfeb"}',
    b'{"topic":"t","partition":0,"offset":7,"payload":"truncated a\xe2\x82b"}',
    b'{"topic":"t","partition":0,"offset":8,"payload":"pair \\ud83d\\ude00 \xc3\xa9 and a real \xef\xbf\xbd"}',
    b'{"topic":"t","partition":0,"offset":9,"payload":{"x": 1.5e20, "y":[1,2]}}',
    b'{"topic":"t","partition":0,"offset":10,"payload":NaN}',
    b'{"topic":"t","partition":0,"offset":11,"payload":"x"} trailing text',
    b'{"topic":"t","partition":0,"offset":12,"payload":"first"}{"topic":"t","partition":0,"offset":13,"payload":"2nd"}',
    b'[{"topic":"t","partition":0,"offset":14,"payload":"in an array"}]',
    b'{"topic":"t","partition":"0","offset":15,"payload":"partition as text"}',
    b'{"topic":"t","partition":0.0,"offset":16,"payload":"partition as float"}',
    b'{"topic":"t","partition":0,"offset":-17,"payload":"negative offset"}',
    b'{"topic":"t","partition":0,"offset":18,"ts":"soon","payload":"ts as text"}',
    b"{'topic':'t','partition':0,'offset':19,'payload':'single quotes'}",
    b'{"topic":7,"partition":0,"offset":20,"payload":"topic a number"}',
    b'{"topic":"","partition":0,"offset":21,"payload":"empty topic"}',
    b'   {"topic":"t","partition":0,"offset":22,"payload":"spaces around"}   ',
    b'{"topic":"t","partition":0,"offset":23,"payload":"tab\tinside"}',
    b'{"topic":"t","partition":0,"offset":24,"key":true,"payload":"key not a string"}',
    b'{"topic":"t","partition":0,"offset":25,"payload":"a question? and \\u00e9\\/"}',
    b'{"topic":"t","partition":0,"offset":26,"payload":"x",}',
    b"",
    b"   ",
    b"not json at all",
    b'{"topic":"t","partition":0,"offset":1,"payload":"offset 1 again: the first wins"}',
    b'{"topic":"t","partition":0,"offset":27,"payload":"crlf line end"}\r',
    b'{"topic":"t","partition":0,"offset":28,"payload":null}',
]


def _python_reference(paths: list[str]) -> tuple[set[tuple], list[tuple]]:
    from cdc_lake.kcat import read_records

    report = LandingReport("debezium")
    first: dict[tuple, tuple] = {}
    for r in read_records(paths, report):
        coordinates = (r["kafka_topic"], r["kafka_partition"], r["kafka_offset"])
        headers = None if r["kafka_headers"] is None else tuple((h["key"], h["value"]) for h in r["kafka_headers"])
        record = (*coordinates, r["kafka_timestamp_ms"], r["kafka_key"], r["kafka_value"], headers)
        first.setdefault(coordinates, record)
    return set(first.values()), [(b.source, b.line_no, b.reason) for b in report.bad_lines]


# Lines whose records `from_json` can place by their coordinates, each offset once: the second read
# uses Spark's JSON reader, leaving out the records of the lines parse_kcat_line decides about. It
# fails over to the text lines on a line it cannot parse whole: bytes that are not UTF-8, a field
# of the wrong type (both of which parse_kcat_line lands).
UNPLACED = [b"again", b'"x",}', b"\t"]  # an offset twice; no coordinates from `from_json`
PLACED_LINES = [line for line in TRICKY_LINES if (line.startswith(b'{"topic":"t","partition":0,"offset":')
                and not any(m in line for m in UNPLACED)) or not line.strip()]
UNPARSABLE_FOR_THE_JSON_READER = [b"\xff", b"\xe2\x82b", b'"ts":"soon"', b'"headers":{']
CLEAN_PLACED_LINES = [line for line in PLACED_LINES if not any(m in line for m in UNPARSABLE_FOR_THE_JSON_READER)]
LINE_SETS = {
    # reader of the second read, and whether the JSON reader fails over to the text lines
    "every tricky line": (TRICKY_LINES, "text", False),
    "placed lines": (CLEAN_PLACED_LINES, "json", False),
    "placed lines, bytes that are not UTF-8": (PLACED_LINES, "json", True),
}


@pytest.mark.parametrize("split_bytes", [None, 400], ids=["one split", "many splits"])
@pytest.mark.parametrize("line_set", list(LINE_SETS))
def test_spark_read_lands_what_the_python_reference_lands(lake, tmp_path, monkeypatch, split_bytes, line_set):
    import cdc_lake.landing
    from cdc_lake.kcat import spark_records

    lines, reader, fails_over = LINE_SETS[line_set]
    first, second = tmp_path / "first.jsonl", tmp_path / "second.jsonl"
    first.write_bytes(b"\n".join(lines) + b"\n")
    # a second file: its lines are numbered from 1 again, and its offsets follow the first's
    second.write_bytes(b"\n".join([b"  ", TRICKY_LINES[0].replace(b'"offset":1,', b'"offset":99,')]))
    paths = [str(first), str(second)]
    expected_rows, expected_bad = _python_reference(paths)
    lake._activate()
    spark = lake.spark
    table = f"{lake.raw_schema}.raw_debezium"
    spark.sql(f"drop table if exists {table}")
    failed_over = []

    def unparsed_line(exc: BaseException) -> bool:
        failed_over.append(exc)
        return True

    monkeypatch.setattr(cdc_lake.landing, "unparsed_line", unparsed_line)
    if split_bytes:
        spark.conf.set("spark.sql.files.maxPartitionBytes", str(split_bytes))
    try:
        with spark_records(spark, paths, LandingReport("debezium")) as records:
            assert records is not None
            assert ("json" if records.fallback is not None else "text") == reader
        report = land(spark, "debezium", paths)
    finally:
        spark.conf.unset("spark.sql.files.maxPartitionBytes")
    assert bool(failed_over) == fails_over, failed_over
    rows = {
        (r.kafka_topic, r.kafka_partition, r.kafka_offset,
         None if r.kafka_timestamp is None else int(r.kafka_timestamp.timestamp() * 1000),
         r.kafka_key, r.kafka_value,
         None if r.kafka_headers is None else tuple((h.key, h.value) for h in r.kafka_headers))
        for r in spark.sql(f"select * from {table}").collect()
    }
    assert rows == expected_rows
    assert [(b.source, b.line_no, b.reason) for b in report.bad_lines] == expected_bad
    assert report.lines_read == len(lines) + 2
    assert report.records_landed == len(expected_rows)


def _staged_batch(spark, name: str, offsets: range) -> str:
    spark.sql(
        f"""select 'orders' as kafka_topic, 0 as kafka_partition, cast(id as bigint) as kafka_offset,
                   current_timestamp() as kafka_timestamp, cast(null as string) as kafka_key,
                   cast(id as string) as kafka_value,
                   cast(null as array<struct<key: string, value: string>>) as kafka_headers,
                   cast(0 as bigint) as batch_order
            from range({offsets.start}, {offsets.stop})"""
    ).createOrReplaceGlobalTempView(name)
    return f"global_temp.{name}"


def test_an_older_raw_table_gets_the_settings_it_lacks(lake, spark):
    """A raw table created by an older version (no staged landings, Iceberg's row groups) gets the
    settings it lacks when next landed; a setting already there is a user's and stays, but for
    `write.wap.enabled`, which a staged landing needs."""
    from cdc_lake.landing import RAW_COLUMNS, ensure_raw_table, raw_schema, raw_table

    lake._activate()
    table = raw_table("lindorm")
    spark.sql(f"create database if not exists {raw_schema()}")
    spark.sql(f"drop table if exists {table}")
    spark.sql(
        f"create table {table} ({RAW_COLUMNS}) using iceberg tblproperties ('format-version' = '2', "
        "'write.wap.enabled' = 'false', 'write.parquet.row-group-size-bytes' = '16777216')"
    )
    try:
        before = {row[0]: row[1] for row in spark.sql(f"show tblproperties {table}").collect()}
        ensure_raw_table(spark, "lindorm")
        settings = {row[0]: row[1] for row in spark.sql(f"show tblproperties {table}").collect()}
    finally:
        spark.sql(f"drop table if exists {table}")
    assert settings["write.wap.enabled"] == "true"
    assert settings["write.parquet.row-group-size-bytes"] == "16777216"
    assert settings["read.split.target-size"] == "4194304"
    # Iceberg writes its own codec (zstd) into a table it creates: that one is kept too
    assert settings["write.parquet.compression-codec"] == before["write.parquet.compression-codec"] == "zstd"


def test_a_staged_landing_is_seen_only_once_its_check_passed(lake, spark):
    """`merge_batch(before_publish=...)` (consume's topic-id check after the read): while the
    check runs, no reader sees the batch; a failed check lands nothing; a passed one publishes
    the batch, on top of a compaction committed meanwhile."""
    from cdc_lake.landing import ensure_raw_table, merge_batch, raw_table

    lake._activate()
    table = raw_table("debezium")
    spark.sql(f"drop table if exists {table}")  # a table dropped with its schema stays in Iceberg's cache
    ensure_raw_table(spark, "debezium")
    merge_batch(spark, "debezium", _staged_batch(spark, "staged_b", range(100, 102)), unique_coordinates=True)

    def landed() -> int:
        return spark.table(table).count()

    class Refused(Exception):
        pass

    def refuse() -> None:
        assert landed() == 2  # written and staged, unseen
        raise Refused

    with pytest.raises(Refused):
        merge_batch(spark, "debezium", _staged_batch(spark, "staged_a", range(0, 5)), unique_coordinates=True,
                    bounds=(0, 4), before_publish=refuse)
    assert landed() == 2

    def compact_meanwhile() -> None:
        assert landed() == 2
        spark.sql(f"call spark_catalog.system.rewrite_data_files(table => '{table.replace('`', '')}', "
                  "options => map('rewrite-all', 'true'))")

    added = merge_batch(spark, "debezium", _staged_batch(spark, "staged_a", range(0, 5)), unique_coordinates=True,
                        bounds=(0, 4), before_publish=compact_meanwhile)
    assert added == 5
    assert [r["kafka_offset"] for r in raw_rows(lake, "debezium")] == [0, 1, 2, 3, 4, 100, 101]
    operations = [r[0] for r in spark.sql(f"select operation from {table}.history h join {table}.snapshots s "
                                          "using (snapshot_id) order by made_current_at").collect()]
    assert operations == ["append", "replace", "append"]  # landing, compaction, the published batch
    # and once published, its records count as landed
    again = merge_batch(spark, "debezium", _staged_batch(spark, "staged_a", range(0, 6)), unique_coordinates=True,
                        bounds=(0, 5), before_publish=lambda: None)
    assert again == 1 and landed() == 8
    # a batch of landed offsets adds nothing, and is checked all the same (read from a topic
    # recreated meanwhile, its records would otherwise be passed over as landed)
    checks: list[str] = []
    nothing = merge_batch(spark, "debezium", _staged_batch(spark, "staged_a", range(0, 6)), unique_coordinates=True,
                          bounds=(0, 5), before_publish=lambda: checks.append("checked"))
    assert (nothing, checks, landed()) == (0, ["checked"], 8)


@pytest.mark.integration  # ten landings: 32-109 s on 2 busy cores
def test_the_thrift_executor_lands_what_the_embedded_one_lands(lake, spark, tmp_path, monkeypatch):
    """Issue 70: one landing behind two executors. The Thrift executor's SQL, answered here by
    this session (`SparkCursor`; test_cluster runs the same on a Thrift Server), lands the same
    files into the same rows with the same reports as the embedded session."""
    from cdc_lake.landing import SparkExecutor
    from cdc_lake.testing.landing_parity import SparkCursor, land_run, parity_files, raw_rows, report_facts
    from cdc_lake.thrift import ThriftExecutor

    files = parity_files(tmp_path)
    sides = {}
    try:
        for name, target in {"embedded": spark, "thrift": ThriftExecutor(SparkCursor(spark))}.items():
            monkeypatch.setenv("CDC_LAKE_RAW_SCHEMA", f"{lake.raw_schema}_{name}")
            reports = land_run(target, files)
            sides[name] = [report_facts(r) for r in reports], raw_rows(SparkExecutor(spark).query)
    finally:
        for name in ("embedded", "thrift"):
            spark.sql(f"drop database if exists {lake.raw_schema}_{name} cascade")
    assert sides["thrift"] == sides["embedded"]
    reports, rows = sides["embedded"]
    # what the run is meant to show: bad lines, a repeated offset, nothing twice, conflicts, a new life
    assert [r["counts"][3:] for r in reports] == [(5, 0), (0, 0), (1, 1), (3, 0), (2, 0)]
    assert [line_no for _, line_no, _ in reports[0]["bad_lines"]] == [4, 5]
    assert len(rows) == 11 and {row[-2] for row in rows} == {1, 2, 3, 4}
