"""`cdc-lake land`: kcat lines in, idempotent appends, bad lines reported with line numbers."""

from __future__ import annotations

import io
import json

import pytest

from cdc_lake.cli import EXIT_BAD_LINES, main
from cdc_lake.landing import parse_kcat_line
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
