"""Everyday mistakes, caught (issue 20): each test shows the message a user gets.

- a dump landed under the wrong `--format` is stopped before Spark starts (exit 4), unless `--force`;
- several formats land in one command (`FORMAT=FILE`), one Spark session;
- a record arriving again at a landed offset with other content is reported, not landed (exit 5);
  a recreated topic lands with `--topic-incarnation N` and reconciles;
- `cdc-lake unland` removes what was landed by mistake, and the printed full-refresh leaves the
  models as if it had never been landed;
- the `new_rejects` test warns on the build that quarantined new records (error by a var).

The CLI checks before Spark run `cdc-lake land` as a real process on an empty lake folder; the rest
run the CLI in-process on the module's lake (one Spark session, a handful of small builds).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from cdc_lake.cli import EXIT_CONFLICTS, EXIT_WRONG_FORMAT, main
from cdc_lake.testing.conformance import CONFORMANCE
from cdc_lake.testing.harness import canal_item, kcat_lines

pytestmark = pytest.mark.integration

BIN = Path(sys.executable).parent
DTLE = CONFORMANCE / "dtle" / "dtle-messages.jsonl"
TOPIC = "mistakes.shop"
# what the builds here need; tests of models left out are left out too
MODELS = ("+cdc_rejected_messages", "+cdc_reconciliation", "+cdc_current", "--indirect-selection", "cautious")


def debezium_value() -> tuple[str, str]:
    """A dtle (Debezium) DML record: key and value, as the conformance corpus holds them."""
    key, value = DTLE.read_text(encoding="utf-8").splitlines()[:2]
    return key, value


def write(path: Path, lines: list[str]) -> Path:
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def run_cli(args: list[str], lake_dir: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "CDC_LAKE_DIR": str(lake_dir)}
    return subprocess.run(
        [str(BIN / "cdc-lake"), *args], env=env, capture_output=True, text=True, timeout=120, check=False
    )


# ---------------------------------------------------------------------------------------------
# Before Spark starts (real processes, an empty lake folder that must stay empty)


def test_wrong_format_is_stopped_before_spark(tmp_path):
    key, value = debezium_value()
    dump = write(tmp_path / "orders.jsonl", kcat_lines([value] * 3, topic="dbserver1.shop.orders", keys=[key] * 3))
    lake_dir = tmp_path / "lake"
    lake_dir.mkdir()
    began = time.monotonic()
    result = run_cli(["land", "--format", "canal_flat", str(dump)], lake_dir)
    seconds = time.monotonic() - began
    assert result.returncode == EXIT_WRONG_FORMAT, result.stderr
    lines = result.stderr.splitlines()
    assert lines[0] == (
        f"cdc-lake land: {dump} does not look like canal_flat: 3 of the first 3 values do not; "
        "they look like debezium."
    )
    assert lines[1].startswith(f'  {dump}:1: {{"schema":')  # the sample record, cut at 300 characters
    assert lines[1].endswith("...")
    assert lines[2] == "Land it with --format debezium (or debezium=FILE); --force lands it as canal_flat anyway."
    assert result.stdout == ""
    assert list(lake_dir.iterdir()) == []  # nothing opened, nothing landed
    assert seconds < 15  # no JVM


def test_format_pairs_are_checked_each_and_a_file_needs_a_format(tmp_path):
    key, value = debezium_value()
    dbz = write(tmp_path / "dbz.jsonl", kcat_lines([value], topic="dbserver1.shop.orders", keys=[key]))
    flat = write(tmp_path / "flat.jsonl", kcat_lines([canal_item("INSERT", 1, "a", 1_700_000_000_000, 1)], topic=TOPIC))
    lake_dir = tmp_path / "lake"
    lake_dir.mkdir()
    # the pairs swapped: both are reported, nothing is landed
    result = run_cli(["land", f"canal_flat={dbz}", f"debezium={flat}"], lake_dir)
    assert result.returncode == EXIT_WRONG_FORMAT
    assert f"{dbz} does not look like canal_flat: 1 of the first 1 values do not; they look like debezium." in (
        result.stderr
    )
    assert f"{flat} does not look like debezium: 1 of the first 1 values do not; they look like canal_flat." in (
        result.stderr
    )
    # a value no tool writes
    odd = write(tmp_path / "odd.jsonl", kcat_lines(['{"a":1}'], topic="t"))
    result = run_cli(["land", "--format", "lindorm", str(odd)], lake_dir)
    assert result.returncode == EXIT_WRONG_FORMAT
    assert "does not look like lindorm: 1 of the first 1 values do not (nor like any other format)." in result.stderr
    # a file without a format
    result = run_cli(["land", str(flat)], lake_dir)
    assert result.returncode == 2
    assert result.stderr.strip() == (
        f"cdc-lake land: which format is {flat}? give --format FORMAT or write FORMAT={flat}"
    )
    result = run_cli(["land", "--format", "canal_flat", "--topic-incarnation", "-1", str(flat)], lake_dir)
    assert (result.returncode, result.stderr.strip()) == (
        2, "cdc-lake land: --topic-incarnation counts a topic's lives from 0"
    )
    assert list(lake_dir.iterdir()) == []


# ---------------------------------------------------------------------------------------------
# In the module's lake: landing, builds, unland


def raw_offsets(lake, fmt: str, topic: str) -> list[tuple]:
    return [
        (r["kafka_partition"], r["kafka_offset"], r["kafka_topic_incarnation"], r["kafka_value"])
        for r in lake.rows(
            "select kafka_partition, kafka_offset, kafka_topic_incarnation, kafka_value "
            f"from {{raw_schema}}.raw_{fmt} where kafka_topic = '{topic}' "
            "order by kafka_topic_incarnation, kafka_partition, kafka_offset"
        )
    ]


def test_several_formats_in_one_command(lake, tmp_path, capsys):
    key, value = debezium_value()
    dbz = write(tmp_path / "dbz.jsonl", kcat_lines([value], topic="dbserver1.inventory.customers", keys=[key]))
    flat = write(
        tmp_path / "flat.jsonl",
        kcat_lines([canal_item("INSERT", i, f"n{i}", 1_700_000_000_000 + i, i) for i in (1, 2, 3)], topic=TOPIC),
    )
    lake._activate()
    assert main(["land", f"debezium={dbz}", f"canal_flat={flat}"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("debezium: 1 lines read, 1 valid records, 1 landed, 0 already present, 0 bad lines")
    assert out[1].startswith("canal_flat: 3 lines read, 3 valid records, 3 landed, 0 already present, 0 bad lines")
    assert len(raw_offsets(lake, "debezium", "dbserver1.inventory.customers")) == 1
    assert [r[:3] for r in raw_offsets(lake, "canal_flat", TOPIC)] == [(0, 0, 0), (0, 1, 0), (0, 2, 0)]


def test_a_reject_warns_in_the_build_that_brought_it(lake):
    bogus = canal_item("BOGUS", 9, "x", 1_700_000_000_009, 9)
    lake.land("canal_flat", kcat_lines([bogus], topic=TOPIC, start_offset=3))
    # the one full build (every model and seed), as a lake in use has had: later builds select
    result = lake.build()
    statuses = {r.node.name: str(r.status) for r in result.result.results}
    [new_rejects] = [name for name in statuses if name.startswith("new_rejects")]
    assert statuses[new_rejects] == "warn"
    [warned] = [r for r in result.result.results if r.node.name == new_rejects]
    assert warned.failures == 1
    # the next build quarantines nothing new: the test passes, the reject stays in the quarantine
    result = lake.build("--select", "cdc_rejected_messages")
    assert {str(r.status) for r in result.result.results if r.node.name == new_rejects} == {"pass"}
    assert lake.count("cdc_rejected_messages") == 1


def test_changed_content_at_a_landed_offset_is_reported_and_a_recreated_topic_lands(lake, tmp_path, capsys):
    # the topic was deleted and created again: offsets 0 and 1 hold new changes
    recreated = write(
        tmp_path / "recreated.jsonl",
        kcat_lines(
            [
                canal_item("UPDATE", 1, "renamed", 1_700_000_100_000, 20, old={"name": "n1"}),
                canal_item("DELETE", 2, "n2", 1_700_000_100_001, 21),
            ],
            topic=TOPIC,
        ),
    )
    before = raw_offsets(lake, "canal_flat", TOPIC)
    lake._activate()
    assert main(["land", "--format", "canal_flat", str(recreated)]) == EXIT_CONFLICTS
    out, err = capsys.readouterr()
    assert "canal_flat: 2 lines read, 2 valid records, 0 landed, 0 already present, 2 conflicting, 0 bad lines" in out
    err_lines = err.splitlines()
    assert err_lines[0] == (
        "canal_flat: 2 records arrived again at offsets already landed, with another key or value; "
        "they were not landed (the first landing of an offset wins):"
    )
    assert err_lines[1].startswith(f"  {TOPIC} partition 0 offset 0: landed at ")
    assert err_lines[1].endswith(" with another key or value")
    assert err_lines[3] == (
        f"If topic {TOPIC} was deleted and created again (its offsets started again at 0), land its new "
        "records with --topic-incarnation 1; if the dump belongs to another topic or format, land it there instead."
    )
    assert raw_offsets(lake, "canal_flat", TOPIC) == before

    assert main(["land", "--format", "canal_flat", "--topic-incarnation", "1", str(recreated)]) == 0
    assert "2 landed, 0 already present, 0 bad lines" in capsys.readouterr().out
    # landing the new incarnation again is idempotent, as any landing
    assert main(["land", "--format", "canal_flat", "--topic-incarnation", "1", str(recreated)]) == 0
    assert "0 landed, 2 already present, 0 bad lines" in capsys.readouterr().out
    assert [r[:3] for r in raw_offsets(lake, "canal_flat", TOPIC)] == [
        (0, 0, 0), (0, 1, 0), (0, 2, 0), (0, 3, 0), (0, 0, 1), (0, 1, 1)
    ]

    lake.build("--select", *MODELS)
    [recon] = lake.rows(
        "select * from {schema}.cdc_reconciliation "
        f"where source_format = 'canal_flat' and kafka_topic = '{TOPIC}'"
    )
    assert (recon["raw_records"], recon["dml_messages"], recon["rejected_messages"]) == (6, 5, 1)
    assert (recon["unaccounted_records"], recon["offset_gaps"], recon["kafka_topic_incarnation"]) == (0, 0, 1)
    assert (recon["first_offset"], recon["last_offset"]) == (0, 1)
    current = {
        r["row_key"]: (r["is_deleted"], r["image"]["name"])
        for r in lake.rows("select row_key, is_deleted, image from {schema}.cdc_current where table_name = 'items'")
    }
    assert current == {"1": (False, "renamed"), "2": (True, "n2"), "3": (False, "n3")}


def test_unland_removes_a_mistake_and_the_full_refresh_forgets_it(lake, tmp_path, capsys):
    mistaken = "mistakes.other_team"
    lake.land(
        "canal_flat",
        kcat_lines([canal_item("INSERT", 7, "not ours", 1_700_000_200_000, 30), canal_item("NOPE", 8, "x", 1, 31)],
                   topic=mistaken, partition=1),
    )
    # with error severity, the build that quarantines the new reject fails on it
    result = lake.dbt(
        "build", "--select", *MODELS, "--exclude", "test_type:unit",
        "--vars", "{cdc_new_rejects_severity: error}", expect_success=False,
    )
    assert not result.success
    statuses = {r.node.name: str(r.status) for r in result.result.results}
    assert [status for name, status in statuses.items() if status != "success" and status != "pass"] == ["fail"]
    assert {status for name, status in statuses.items() if name.startswith("new_rejects")} == {"fail"}
    assert lake.count("cdc_rejected_messages") == 2
    changes_before = lake.count("cdc_changelog")

    lake._activate()
    assert main(["unland", "--format", "canal_flat", "--topic", "nobody"]) == 1
    assert "cdc-lake unland: no landed record of" in capsys.readouterr().err
    assert main(["unland", "--format", "canal_flat", "--topic", mistaken, "--partition", "1",
                 "--from-offset", "0", "--to-offset", "1"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith(
        f"removed 2 records from `{lake.raw_schema}`.`raw_canal_flat` where kafka_topic = '{mistaken}'"
    )
    assert out[-1] == "  dbt build --full-refresh --select base_canal_flat__messages+"
    assert raw_offsets(lake, "canal_flat", mistaken) == []
    # before the full refresh, the reconciliation (a view) says the models hold removed records
    [stale] = lake.rows(f"select * from {{schema}}.cdc_reconciliation where kafka_topic = '{mistaken}'")
    assert (stale["raw_records"], stale["unaccounted_records"]) == (0, -2)
    result = lake.dbt("test", "--select", "cdc_reconciliation", expect_success=False)
    assert {r.node.name: str(r.status) for r in result.result.results}[
        "accepted_values_cdc_reconciliation_unaccounted_records__0"
    ] == "fail"

    lake.build("--full-refresh", "--select", "base_canal_flat__messages+")
    assert lake.rows(f"select * from {{schema}}.cdc_changelog where kafka_topic = '{mistaken}'") == []
    assert lake.count("cdc_changelog") == changes_before - 1
    assert lake.rows("select * from {schema}.cdc_current where row_key = '7'") == []
    assert lake.count("cdc_rejected_messages") == 1
    assert lake.rows(f"select * from {{schema}}.cdc_reconciliation where kafka_topic = '{mistaken}'") == []
    assert {r["unaccounted_records"] for r in lake.rows("select * from {schema}.cdc_reconciliation")} == {0}


def test_the_thrift_path_reports_conflicts_with_the_same_sql(lake, tmp_path):
    """The Thrift executor's SQL, answered by this process's Spark session (`SparkCursor`)."""
    from cdc_lake.landing import land
    from cdc_lake.testing.landing_parity import SparkCursor
    from cdc_lake.thrift import ThriftExecutor

    changed = write(tmp_path / "changed.jsonl", kcat_lines([canal_item("INSERT", 1, "other", 1, 99)], topic=TOPIC))
    lake._activate()
    report = land(ThriftExecutor(SparkCursor(lake.spark)), "canal_flat", [str(changed)])
    assert (report.records_landed, report.conflicts) == (0, 1)
    assert [(c.topic, c.partition, c.offset, c.topic_incarnation) for c in report.conflict_samples] == [
        (TOPIC, 0, 0, 1)
    ]
    report = land(ThriftExecutor(SparkCursor(lake.spark)), "canal_flat", [str(changed)], incarnation=2)
    assert (report.records_landed, report.conflicts) == (1, 0)


def test_what_a_value_looks_like():
    from cdc_lake.sniff import looks_like

    _, value = debezium_value()
    krc = '{"binlog":"6816@mysql-bin.000070","time":1,"canalTime":2,"db":"d","table":"t","event":"i","columns":[]}'
    dts = '{"id":1,"version":1,"messageType":"INSERT","fileName":"mysql-bin.000002","schemaName":"s","tableName":"t"}'
    lindorm = '{"schema":{},"payload":{"op":"c","after":{},"source":{"db":"ld-1","namespace":"shop","table":"t"}}}'
    cases = {
        value: "debezium",
        '{"schema":null,"payload":null}': "debezium",  # a Connect envelope of nothing
        '{"before":null,"after":{"id":1},"source":{"name":"s"},"op":"c"}': "debezium",  # schemaless
        '{"source":{"server":"mysql2"},"databaseName":"a","ddl":"CREATE TABLE a (id int)"}': "debezium",
        '{"ts_ms":1700000000000}': "debezium",  # heartbeat
        lindorm: "lindorm",
        canal_item("INSERT", 1, "a", 1, 1): "canal_flat",
        f"[{canal_item('INSERT', 1, 'a', 1, 1)}]": "canal_flat",  # an array of FlatMessages
        krc: "kafka_river_canal",
        dts: "tencent_dts",
        '{"database":"d","table":"t","type":"insert","ts":1,"data":{"id":1}}': None,  # Maxwell
        '{"a":1}': None,
        "not json": None,
        "[]": None,
        None: None,
    }
    assert {text: looks_like(text) for text in cases} == cases
