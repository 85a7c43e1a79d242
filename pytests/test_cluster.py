"""Issue 8: the same project on a Spark standalone cluster, through the Spark Thrift Server.

The test starts a master, a worker and a Thrift Server (`cdc-lake cluster start`, a subprocess, on
free loopback ports, in a temporary cluster dir), lands a small workload over thrift in two runs
(`cdc-lake land --target thrift`), runs dbt with `--target thrift` after each (real subprocesses:
every seed and model without tests, then an incremental `dbt build` with all data tests), and
checks that every compared model equals what the embedded target builds from the same data in one
go. The embedded side is the in-process `lake` fixture: its own lake and Derby metastore, so no
second process opens the cluster's metastore; it builds the compared models and what they read.

Every process the cluster fixture started is stopped in its finalizer, also when the test fails.
Run with `make test-cluster` (pytest -m cluster); durations are printed with `-s` and in the report.
"""

from __future__ import annotations

import importlib.util
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from cdc_lake.env import PROJECT_DIR
from cdc_lake.testing.conformance import CONFORMANCE

pytestmark = pytest.mark.cluster

BIN = Path(sys.executable).parent
CANAL_DATA = CONFORMANCE / "flink" / "canal-data.txt"
DEMO_CANAL = PROJECT_DIR / "demo" / "canal_flat.jsonl"
MODELS = ["cdc_changelog", "cdc_current", "cdc_history", "cdc_schema_changes", "cdc_rejected_messages"]
# When each run landed differs between the two lakes; everything else must be equal.
LANDING_COLUMNS = {"landing_seq", "last_landing_seq", "landed_at"}
START_TIMEOUT = 420
DBT_TIMEOUT = 1200


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@dataclass
class Cluster:
    env: dict[str, str]
    work: Path
    durations: dict[str, float] = field(default_factory=dict)

    def run(
        self, *args: str, timeout: float, step: str | None = None, env: dict[str, str] | None = None
    ) -> subprocess.CompletedProcess:
        """Run a command of the venv against the cluster; fail with its output if it fails."""
        began = time.monotonic()
        proc = subprocess.run(
            [str(BIN / args[0]), *args[1:]],
            env=env or self.env,
            cwd=PROJECT_DIR,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        if step:
            self.durations[step] = round(time.monotonic() - began, 1)
        if proc.returncode != 0:
            pytest.fail(
                f"{' '.join(args)} exited {proc.returncode}\n--- stdout\n{proc.stdout[-6000:]}"
                f"\n--- stderr\n{proc.stderr[-6000:]}"
            )
        return proc

    def dbt(self, command: str, *args: str, step: str) -> None:
        paths = ["--target-path", str(self.work / "target"), "--log-path", str(self.work / "logs")]
        self.run("dbt", command, *args, "--target", "thrift", *paths, timeout=DBT_TIMEOUT, step=step)

    def land(self, files: list[tuple[str, Path]], *options: str, step: str) -> str:
        """One `cdc-lake land` of every file, each named with its format (FORMAT=FILE)."""
        args = ["land", "--target", "thrift", *options, *(f"{fmt}={path}" for fmt, path in files)]
        return self.run("cdc-lake", *args, timeout=600, step=step).stdout


def _stop_everything(cluster: Cluster) -> None:
    """`cdc-lake cluster stop`, then the same in-process for anything its pid files still name."""
    from cdc_lake.servers import cluster as cluster_mod

    began = time.monotonic()
    try:
        subprocess.run(
            [str(BIN / "cdc-lake"), "cluster", "stop"], env=cluster.env, timeout=300, capture_output=True
        )
    finally:
        saved = dict(os.environ)
        try:
            os.environ.update({k: v for k, v in cluster.env.items() if k.startswith("CDC_LAKE_")})
            settings = cluster_mod.Settings.from_env()
            cluster_mod.stop(settings, echo=lambda _line: None)
            left = [d.name for d in cluster_mod.daemons(settings) if d.pid() is not None]
        finally:
            os.environ.clear()
            os.environ.update(saved)
    cluster.durations["stop"] = round(time.monotonic() - began, 1)
    assert not left, f"still running after stop: {left}"


@pytest.fixture(scope="module")
def cluster(lake, tmp_path_factory) -> Iterator[Cluster]:
    work = tmp_path_factory.mktemp("cluster")
    env = dict(os.environ)
    env.update(
        {
            "CDC_LAKE_CLUSTER_DIR": str(work / "lake"),
            "CDC_LAKE_CLUSTER_MASTER_PORT": str(free_port()),
            "CDC_LAKE_CLUSTER_MASTER_UI_PORT": str(free_port()),
            "CDC_LAKE_CLUSTER_WORKER_UI_PORT": str(free_port()),
            "CDC_LAKE_THRIFT_HOST": "127.0.0.1",
            "CDC_LAKE_THRIFT_PORT": str(free_port()),
            "CDC_LAKE_TARGET": "thrift",
            # the same schema names as the embedded side, so nothing differs but the engine
            "CDC_LAKE_SCHEMA": lake.schema,
            "CDC_LAKE_RAW_SCHEMA": lake.raw_schema,
        }
    )
    handle = Cluster(env, work)
    try:
        handle.run("cdc-lake", "cluster", "start", timeout=START_TIMEOUT, step="start")
        yield handle
    finally:
        _stop_everything(handle)
        print(f"\ncluster durations (s): {handle.durations}")


def normalised_select(spark, table: str) -> str:
    """A select that renders every column as comparable text, the same SQL on both engines."""
    from pyspark.sql.types import ArrayType, MapType, StructType

    columns = []
    for f in spark.table(table).schema.fields:
        if f.name in LANDING_COLUMNS:
            continue
        if isinstance(f.dataType, MapType):
            expr = f"to_json(array_sort(map_entries({f.name})))"
        elif isinstance(f.dataType, (ArrayType, StructType)):
            expr = f"to_json({f.name})"
        else:
            expr = f"cast({f.name} as string)"
        columns.append(f"{expr} as {f.name}")
    return f"select {', '.join(columns)} from {table}"


def sorted_rows(rows) -> list[tuple]:
    return sorted((tuple(r) for r in rows), key=repr)


def generated_workload(work: Path) -> list[tuple[str, Path]]:
    """A small `cdc-lake generate` workload, in the formats this project has staging models for.

    Empty while the generator is not part of the project.
    """
    if importlib.util.find_spec("cdc_lake.generator") is None:
        return []
    from cdc_lake.formats import FORMATS

    modelled = [fmt for fmt in FORMATS if (PROJECT_DIR / "models" / "staging" / fmt).is_dir()]
    out = work / "generated"
    options = ["--seed", "8", "--changes", "300", "--quiet", "--formats", ",".join(modelled)]
    subprocess.run([str(BIN / "cdc-lake"), "generate", *options, "--out", str(out)], check=True, timeout=300)
    return [(fmt, out / f"{fmt}.jsonl") for fmt in modelled if (out / f"{fmt}.jsonl").exists()]


def test_cluster_builds_what_the_embedded_target_builds(cluster, lake):
    from cdc_lake.thrift import ThriftTarget, connect

    # Run 1: the Flink canal-json corpus (bare values), then a full run on the cluster (the data
    # tests run once, in the build below, to keep this test to a few minutes on 2 cores).
    first = cluster.land([("canal_flat", CANAL_DATA)], "--raw-values", step="land 1")
    assert "11 landed" in first, first
    # Every seed and model, as `dbt seed` then `dbt run` would make them (the typed per-table
    # views read the seeds), in one dbt command: no data tests yet.
    cluster.dbt("build", "--exclude", "test_type:data", "test_type:unit", step="dbt seed + run 1 (full)")

    # Run 2: the demo dump, a generated workload if the project has the generator, and the corpus
    # again (already landed: nothing new), then an incremental build. One command lands the
    # files of every format (one process; the embedded side below lands them one by one).
    second = [("canal_flat", DEMO_CANAL), *generated_workload(cluster.work)]
    cluster.land(second, step=f"land 2 ({len(second)} files)")
    again = cluster.land([("canal_flat", CANAL_DATA)], "--raw-values", step="land 2 again")
    assert "0 landed, 11 already present" in again, again
    cluster.dbt("build", step="dbt build 2 (incremental + tests)")

    # The embedded target, same data, one build of the compared models and what they read (its
    # data tests ran on the same records in the cluster's build above; the typed views and
    # monitoring models, built and tested there too, are not compared).
    began = time.monotonic()
    lake.land("canal_flat", CANAL_DATA, raw_values=True)
    for fmt, path in second:
        lake.land(fmt, path)
    lake.build("--select", *(f"+{model}" for model in MODELS), data_tests=False)
    cluster.durations["embedded land + build"] = round(time.monotonic() - began, 1)

    target = ThriftTarget("127.0.0.1", int(cluster.env["CDC_LAKE_THRIFT_PORT"]), "cdc_lake", "NONE")
    conn = connect(target)
    try:
        cursor = conn.cursor()
        for model in MODELS:
            sql = normalised_select(lake.spark, f"{lake.schema}.{model}")
            embedded = sorted_rows(lake.spark.sql(sql).collect())
            cursor.execute(sql)
            on_cluster = sorted_rows(cursor.fetchall())
            assert on_cluster == embedded, f"{model} differs between the thrift and the local target"
            if model in ("cdc_current", "cdc_history"):
                assert len(embedded) > 0
    finally:
        conn.close()


def test_consume_on_the_cluster_survives_kill_9_and_lands_every_record_once(cluster, kafka_broker):
    """`cdc-lake consume --cluster`: the Kafka read and the MERGEs run on the cluster's executors,
    beside the Thrift Server's, in the cluster's lake. Killed with SIGKILL after its first batches
    and run again, it lands every offset once, and the Thrift Server reads what it landed."""
    import json
    import signal
    import urllib.request

    from cdc_lake.servers.kafka_broker import produce_dump
    from cdc_lake.thrift import ThriftTarget, connect

    topic = "cluster.records"
    kafka_broker.create_topic(topic, partitions=3)
    dump = cluster.work / "kafka_records.jsonl"
    dump.write_text("".join(
        json.dumps({"topic": topic, "partition": i % 3, "offset": i // 3, "ts": 1_700_000_000_000 + i,
                    "key": json.dumps({"id": i}), "payload": json.dumps({"n": i})}) + "\n"
        for i in range(1500)  # five batches of 300: two or more before the kill, the rest in the rerun
    ))
    sent = produce_dump(kafka_broker.bootstrap, [dump], create_topics=False)
    raw_schema = f"{cluster.env['CDC_LAKE_RAW_SCHEMA']}_kafka"  # not the models' comparison above
    env = {**cluster.env, "CDC_LAKE_RAW_SCHEMA": raw_schema}
    consume = ["consume", "--cluster", "--bootstrap-servers", kafka_broker.bootstrap, "--format", "debezium",
               "--topic", topic, "--max-offsets-per-trigger", "300"]
    commits = Path(cluster.env["CDC_LAKE_CLUSTER_DIR"]) / "checkpoints" / "debezium" / "commits"
    began = time.monotonic()
    first = subprocess.Popen([str(BIN / "cdc-lake"), *consume], env=env, cwd=PROJECT_DIR, stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.monotonic() + 300
        while not (commits.exists() and len(list(commits.glob("[0-9]*"))) >= 2):
            assert first.poll() is None, "the consumer ended before it was killed"
            assert time.monotonic() < deadline, "no second batch committed within 300 s"
            time.sleep(1.0)
    finally:
        os.killpg(first.pid, signal.SIGKILL)
        first.wait()
    cluster.durations["consume until killed"] = round(time.monotonic() - began, 1)
    # the kill came before the last batch: the rerun has batches to land
    assert len(list(commits.glob("[0-9]*"))) < 5, "every batch was committed before the kill"
    cluster.run("cdc-lake", *consume, timeout=900, step="consume again", env=env)

    # the read ran on the executors: the consumer application got executors from the worker, and
    # their logs hold the Kafka consumer's start
    master_ui = cluster.env["CDC_LAKE_CLUSTER_MASTER_UI_PORT"]
    with urllib.request.urlopen(f"http://127.0.0.1:{master_ui}/json/", timeout=10) as response:
        status = json.load(response)
    apps = [a["id"] for a in status["completedapps"] + status["activeapps"] if a["name"] == "cdc-lake consume"]
    assert len(apps) == 2, status
    for app in apps:
        logs = list((Path(cluster.env["CDC_LAKE_CLUSTER_DIR"]) / "work" / app).glob("*/stderr"))
        assert logs, f"no executor of {app}"
        assert any("ConsumerConfig values" in log.read_text(errors="replace") for log in logs), app

    target = ThriftTarget("127.0.0.1", int(cluster.env["CDC_LAKE_THRIFT_PORT"]), "cdc_lake", "NONE")
    conn = connect(target)
    try:
        cursor = conn.cursor()
        cursor.execute(f"select count(*), count(distinct kafka_partition, kafka_offset) from {raw_schema}.raw_debezium")
        assert tuple(cursor.fetchall()[0]) == (sent, sent)
    finally:
        conn.close()


def test_landing_over_thrift_lands_what_the_embedded_landing_lands(cluster, lake, tmp_path, monkeypatch):
    """Issue 70: one landing behind two executors. The same files, landed in this process's
    session and over the cluster's Thrift Server in the same order, give the same raw table (every
    column; `landing_seq` and `landed_at` by their order) and the same reports. Over the Thrift
    Server too, a staged landing (write-audit-publish) is unseen while its check runs, lands
    nothing when the check fails, and is published when it passes."""
    from cdc_lake.landing import SparkExecutor, merge_batch, raw_table
    from cdc_lake.testing.landing_parity import FORMAT, land_run, parity_files, raw_rows, report_facts
    from cdc_lake.thrift import ThriftExecutor, ThriftTarget, connect

    files = parity_files(tmp_path)
    raw_schema = f"{lake.raw_schema}_parity"  # each lake has its own metastore: the same name twice
    monkeypatch.setenv("CDC_LAKE_RAW_SCHEMA", raw_schema)
    target = ThriftTarget("127.0.0.1", int(cluster.env["CDC_LAKE_THRIFT_PORT"]), "cdc_lake", "NONE")
    conn = connect(target)
    try:
        thrift = ThriftExecutor(conn.cursor())
        began = time.monotonic()
        try:
            sides = {
                name: ([report_facts(r) for r in land_run(executor, files)], raw_rows(executor.query))
                for name, executor in (("embedded", SparkExecutor(lake.spark)), ("thrift", thrift))
            }
        finally:
            lake.spark.sql(f"drop database if exists {raw_schema} cascade")
        cluster.durations["land both ways"] = round(time.monotonic() - began, 1)
        assert sides["thrift"] == sides["embedded"]
        assert len(sides["thrift"][1]) == 11

        table = raw_table(FORMAT)
        records = [
            {"kafka_topic": "parity.staged", "kafka_partition": 0, "kafka_offset": offset, "kafka_timestamp_ms": None,
             "kafka_key": None, "kafka_value": str(offset), "kafka_headers": None}
            for offset in range(3)
        ]

        def landed() -> int:
            return int(thrift.query(f"select count(*) from {table} where kafka_topic = 'parity.staged'")[0][0])

        class Refused(Exception):
            pass

        def refuse() -> None:
            assert landed() == 0  # written and staged, unseen
            raise Refused

        with thrift.stage_records(records) as batch:
            with pytest.raises(Refused):
                merge_batch(thrift, FORMAT, batch, before_publish=refuse)
            assert landed() == 0
            assert merge_batch(thrift, FORMAT, batch, before_publish=lambda: None) == 3
        assert landed() == 3
    finally:
        conn.close()
