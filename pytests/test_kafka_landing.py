"""Landing straight from a real Kafka broker (issue 17), with `cdc-lake consume`.

A KRaft broker from Maven Central's Apache Kafka runs on free loopback ports in a temporary folder
(fixture `kafka_broker`), and records reach it through a real producer (confluent-kafka). The
truth is the workload simulator's: what the broker held, landed and built, must equal it.
Marked `kafka`: `make test-kafka` runs these (CI does).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from cdc_lake.consume import ConsumeSettings, TopicRule, consume, load_rules
from cdc_lake.env import PROJECT_DIR
from cdc_lake.landing import raw_table
from cdc_lake.servers.kafka_broker import produce_dump
from cdc_lake.testing.harness import Lake
from cdc_lake.testing.truth import Truth, check_against_truth, generate

pytestmark = pytest.mark.kafka


def settings(broker, lake_folder: Path, rules: list[TopicRule], **extra) -> ConsumeSettings:
    return ConsumeSettings(
        bootstrap_servers=broker.bootstrap, rules=rules, checkpoint_root=lake_folder / "checkpoints",
        # new topics matching a pattern are seen within a second
        kafka_options={"metadata.max.age.ms": "1000"}, **extra,
    )


def test_the_workload_through_a_broker_equals_the_truth(spark, kafka_broker, tmp_path):
    out = generate(tmp_path / "workload")
    sent = produce_dump(kafka_broker.bootstrap, sorted(out.glob("*.jsonl")))
    lake = Lake(spark, "t_kafka_workload")
    lake.drop()
    try:
        lake._activate()
        counts = consume(spark, settings(kafka_broker, tmp_path, load_rules(PROJECT_DIR / "kafka_topics.yml")))
        assert sum(counts.values()) == sent
        # a micro-batch lands as one data file, not one per topic-partition it read
        for fmt in counts:
            files, commits = (spark.sql(f"select count(*) from {raw_table(fmt)}.{what}").first()[0]
                              for what in ("files", "snapshots"))
            assert files == commits, fmt
        # what the checks read (current state, history, reconciliation, consumer lag), with the data
        # tests of those models (cautious: none that also reads a model left out)
        lake.build("--select", "+cdc_current", "+cdc_reconciliation", "+cdc_consumer_lag",
                   "--indirect-selection", "cautious")
        check_against_truth(lake, Truth(out))
        assert lake.rows("select * from {schema}.cdc_reconciliation where unaccounted_records != 0") == []
        # consumer lag: every partition read to its end
        lag = lake.rows("select records_behind from {schema}.cdc_consumer_lag")
        assert lag and {row["records_behind"] for row in lag} == {0}
        # a second run finds nothing new and lands nothing twice
        counts = consume(spark, settings(kafka_broker, tmp_path, load_rules(PROJECT_DIR / "kafka_topics.yml")))
        assert sum(counts.values()) == 0
        assert sum(lake_count(spark, fmt) for fmt in counts) == sent
    finally:
        lake.drop()


def test_tombstones_headers_new_topics_and_a_broker_restart(spark, kafka_broker, tmp_path):
    from confluent_kafka import Producer

    kafka_broker.create_topic("hdr.first", partitions=2, config={"cleanup.policy": "compact"})
    producer = Producer({"bootstrap.servers": kafka_broker.bootstrap})
    producer.produce("hdr.first", key='{"id":1}', value='{"x":1}', partition=0,
                     headers=[("__debezium.oldkey", '{"id":0}'), ("trace", "a")])
    producer.produce("hdr.first", key='{"id":1}', value=None, partition=1)  # a tombstone
    producer.flush(30)
    lake = Lake(spark, "t_kafka_follow")
    lake.drop()
    lake._activate()
    run = settings(kafka_broker, tmp_path, [TopicRule("debezium", patterns=[r"hdr\..*"])], follow=True,
                   trigger_seconds=1.0)
    consumer = threading.Thread(target=consume, args=(spark, run), kwargs={"progress": None})
    consumer.start()
    try:
        wait_for(lambda: lake_count(spark, "debezium") == 2)
        # a topic created after the consumer started, matched by the pattern
        kafka_broker.create_topic("hdr.second", partitions=1)
        producer.produce("hdr.second", key=None, value='{"y":2}')
        producer.flush(30)
        wait_for(lambda: lake_count(spark, "debezium") == 3)
        # the broker goes away and comes back: the consumer resumes
        kafka_broker.restart()
        producer = Producer({"bootstrap.servers": kafka_broker.bootstrap})
        producer.produce("hdr.second", key=None, value='{"y":3}')
        producer.flush(30)
        wait_for(lambda: lake_count(spark, "debezium") == 4, timeout=120)
    finally:
        run.stop.set()
        consumer.join(timeout=60)
    rows = {
        (r["kafka_topic"], r["kafka_partition"], r["kafka_offset"]): r
        for r in spark.sql(f"select * from {lake.raw_schema}.raw_debezium").collect()
    }
    assert [h.asDict() for h in rows[("hdr.first", 0, 0)]["kafka_headers"]] == [
        {"key": "__debezium.oldkey", "value": '{"id":0}'}, {"key": "trace", "value": "a"}
    ]
    assert rows[("hdr.first", 1, 0)]["kafka_value"] is None
    assert rows[("hdr.first", 1, 0)]["kafka_key"] == '{"id":1}'
    assert sorted(k for k in rows if k[0] == "hdr.second") == [("hdr.second", 0, 0), ("hdr.second", 0, 1)]
    lake.drop()


def test_a_10_mb_message_through_a_topic_that_allows_it(spark, kafka_broker, tmp_path):
    """Issue 76: a record of 10 MB (a Debezium PostgreSQL change with a 10 MB text value), on a topic
    whose max.message.bytes a team raised to 16 MB, lands from the broker untouched and builds to
    its change with the whole value."""
    from confluent_kafka import Producer
    from test_connect_decoding import PG_SERVER, named, pg_envelope

    topic, value = f"{PG_SERVER}.public.big_docs", "ü" * (5 << 20)  # 5 M characters, 10 MB of UTF-8
    kafka_broker.create_topic(topic, partitions=1, config={"max.message.bytes": str(16 << 20)})
    record = pg_envelope("big_docs", {"body": named("string")}, {"id": 1, "body": value}, 7000)
    assert len(record.encode()) > 10 << 20
    producer = Producer({"bootstrap.servers": kafka_broker.bootstrap, "message.max.bytes": str(16 << 20)})
    producer.produce(topic, key='{"id":1}', value=record)
    assert producer.flush(60) == 0
    lake = Lake(spark, "t_kafka_big")
    lake.drop()
    lake._activate()
    try:
        counts = consume(spark, settings(kafka_broker, tmp_path, [TopicRule("debezium", patterns=[r"pgtypes\..*"])]))
        assert sum(counts.values()) == 1
        assert spark.sql(f"select kafka_value from {lake.raw_schema}.raw_debezium").first().kafka_value == record
        # the decoding is the base model's (the change log only unions what it decoded)
        lake.dbt("build", "--select", "base_debezium__messages", "--exclude", "test_type:data", "test_type:unit")
        rows = lake.rows("select record_kind, after_image from {schema}.base_debezium__messages")
        assert [(r["record_kind"], len(r["after_image"]["body"])) for r in rows] == [("dml", len(value))]
        assert rows[0]["after_image"]["body"] == value
    finally:
        lake.drop()


def test_a_topic_deleted_and_created_again_lands_as_its_next_incarnation(spark, kafka_broker, tmp_path):
    """A recreated topic starts its offsets at 0 again (issue 44's soak fault). Once between two
    runs and once under a --follow consumer, its records must land as its next incarnation, none
    taken for the first life's records at the same offsets, and the format's other topic must go
    on exactly where it was (nothing read twice, nothing skipped)."""
    from confluent_kafka import Producer

    kafka_broker.create_topic("life.a", partitions=2)
    kafka_broker.create_topic("life.b", partitions=1)
    producer = Producer({"bootstrap.servers": kafka_broker.bootstrap})

    def send(topic: str, values: list[str], partitions: int = 1) -> None:
        for i, value in enumerate(values):
            producer.produce(topic, value=json.dumps({"v": value}), partition=i % partitions)
        assert producer.flush(30) == 0

    lake = Lake(spark, "t_kafka_lives")
    lake.drop()
    lake._activate()
    rules = [TopicRule("debezium", patterns=[r"life\..*"])]
    send("life.a", [f"first-{i}" for i in range(6)], partitions=2)
    send("life.b", ["b-0", "b-1", "b-2"])
    assert consume(spark, settings(kafka_broker, tmp_path, rules), progress=None) == {"debezium": 9}
    # between two runs: recreated with one partition, its offsets 0 and 1 used again
    kafka_broker.recreate_topic("life.a", partitions=1)
    producer = Producer({"bootstrap.servers": kafka_broker.bootstrap})
    send("life.a", ["second-0", "second-1"])
    send("life.b", ["b-3"])
    assert consume(spark, settings(kafka_broker, tmp_path, rules), progress=None) == {"debezium": 3}
    # under a running consumer
    run = settings(kafka_broker, tmp_path, rules, follow=True, trigger_seconds=1.0)
    consumer = threading.Thread(target=consume, args=(spark, run), kwargs={"progress": None})
    consumer.start()
    try:
        send("life.b", ["b-4"])
        wait_for(lambda: lake_count(spark, "debezium") == 13)
        kafka_broker.recreate_topic("life.a", partitions=1)
        producer = Producer({"bootstrap.servers": kafka_broker.bootstrap})
        send("life.a", ["third-0", "third-1", "third-2"])
        send("life.b", ["b-5"])
        wait_for(lambda: lake_count(spark, "debezium") == 17, timeout=120)
        time.sleep(3)  # a few more batches: nothing more may land
    finally:
        run.stop.set()
        consumer.join(timeout=60)
    rows = spark.sql(
        f"select kafka_topic, kafka_topic_incarnation, kafka_partition, kafka_offset, "
        f"get_json_object(kafka_value, '$.v') as v from {lake.raw_schema}.raw_debezium"
    ).collect()
    landed = sorted((r[0], r[1], r[4]) for r in rows)
    assert landed == sorted(
        [("life.a", 0, f"first-{i}") for i in range(6)] + [("life.a", 1, f"second-{i}") for i in range(2)]
        + [("life.a", 2, f"third-{i}") for i in range(3)] + [("life.b", 0, f"b-{i}") for i in range(6)]
    )
    assert len({(r[0], r[1], r[2], r[3]) for r in rows}) == len(rows) == 17
    ids = spark.sql(f"select kafka_topic, kafka_topic_incarnation from {lake.raw_schema}.kafka_topic_ids").collect()
    assert sorted(tuple(r) for r in ids) == [("life.a", 0), ("life.a", 1), ("life.a", 2), ("life.b", 0)]
    lake.drop()


def test_kill_9_mid_batch_then_rerun_lands_every_record_once(spark, kafka_broker, tmp_path):
    """The consumer runs in its own process, on a raw schema of its own in the test run's lake
    (its metastore server serves several processes), and is killed with SIGKILL after its first
    batches; a rerun lands the rest. Every offset must be there exactly once (counted in the test
    session, not in a third cold process). Six batches of 200: two or more land before the kill,
    the rest in the rerun."""
    topic = "kill.records"
    kafka_broker.create_topic(topic, partitions=3)
    lines = [
        json.dumps({"topic": topic, "partition": i % 3, "offset": i, "ts": 1_700_000_000_000 + i,
                    "key": json.dumps({"id": i}), "payload": json.dumps({"n": i})})
        for i in range(1200)
    ]
    dump = tmp_path / "records.jsonl"
    dump.write_text("\n".join(lines) + "\n")
    sent = produce_dump(kafka_broker.bootstrap, [dump])
    lake = Lake(spark, "t_kafka_kill")
    lake.drop()
    # the checkpoint is the lake's (CDC_LAKE_DIR/checkpoints/<format>): this test's alone in the run
    checkpoints = Path(os.environ["CDC_LAKE_DIR"]) / "checkpoints" / "debezium"
    shutil.rmtree(checkpoints, ignore_errors=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith("CDC_LAKE_METASTORE")}
    env["CDC_LAKE_RAW_SCHEMA"] = lake.raw_schema
    command = [sys.executable, "-m", "cdc_lake.cli", "consume", "--bootstrap-servers", kafka_broker.bootstrap,
               "--format", "debezium", "--topic", topic, "--max-offsets-per-trigger", "200"]
    first = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                             start_new_session=True)
    commits = checkpoints / "commits"
    try:
        try:
            wait_for(lambda: commits.exists() and len(list(commits.glob("[0-9]*"))) >= 2, timeout=240)
        finally:
            os.killpg(first.pid, signal.SIGKILL)
            first.wait()
        # the kill came before the last batch: the rerun has batches to land
        assert len(list(commits.glob("[0-9]*"))) < 6, "every batch was committed before the kill"
        rerun = subprocess.run(command, env=env, capture_output=True, text=True, timeout=600)
        assert rerun.returncode == 0, rerun.stderr[-2000:]
        counted = spark.sql(
            "select count(*) as n, count(distinct kafka_partition, kafka_offset) as d "
            f"from {lake.raw_schema}.raw_debezium"
        ).first()
        assert (counted.n, counted.d) == (sent, sent)
    finally:
        lake.drop()
        shutil.rmtree(checkpoints, ignore_errors=True)


def lake_count(spark, fmt: str) -> int:
    schema = os.environ["CDC_LAKE_RAW_SCHEMA"]
    if not spark.catalog.tableExists(f"{schema}.raw_{fmt}"):
        return 0
    return int(spark.sql(f"select count(*) as n from {schema}.raw_{fmt}").first().n)


def wait_for(condition, timeout: float = 90.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(1.0)
    raise AssertionError(f"condition not met within {timeout:.0f}s")
