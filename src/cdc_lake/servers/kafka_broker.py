"""One local Apache Kafka broker in KRaft mode (broker and controller in one process), on 127.0.0.1.

For `cdc-lake kafka start|stop|status`, `make demo-kafka` and the tests. The broker runs from the
jars `make setup` copied from Maven Central (jvm/kafka/pom.xml) with the machine's Java; its
state (configuration, log directories, pid, the ports it got) lives in one folder, by default
`$CDC_LAKE_DIR/kafka`, and survives a restart. Ports are free ones chosen at the first start.

    with LocalKafka(folder) as broker:        # starts, and stops whatever happens
        broker.create_topic("orders", partitions=3)
        broker.bootstrap                        # "127.0.0.1:<port>"
"""

from __future__ import annotations

import base64
import json
import subprocess
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from cdc_lake.env import jvm_dir, lake_dir
from cdc_lake.servers.ports import free_port, port_open
from cdc_lake.servers.processes import is_alive
from cdc_lake.servers.supervisor import START_TIMEOUT, LocalServer


class BrokerError(Exception):
    """The broker could not be started or reached."""


def new_cluster_id(random_bytes: Callable[[], bytes] = lambda: uuid.uuid4().bytes) -> str:
    """A KRaft cluster id: a random UUID in URL-safe base64 without padding, as Kafka writes them.

    One in 64 of those starts with `-`, which Kafka's command-line tools read as an option
    (`kafka-storage format -t -abc...` fails with "expected one argument"); Kafka's own
    `Uuid.randomUuid` draws again in that case, and so does this.
    """
    while True:
        cluster_id = base64.urlsafe_b64encode(random_bytes()).decode().rstrip("=")
        if not cluster_id.startswith("-"):
            return cluster_id


class LocalKafka(LocalServer):
    """A KRaft broker whose state lives in `folder`; detached: it runs until stopped, and another
    command finds it again by the pid and ports in `state.json`."""

    name = "broker"
    error = BrokerError

    def __init__(self, folder: Path | None = None, heap: str = "512m") -> None:
        super().__init__(folder or lake_dir() / "kafka")
        self.heap = heap
        self.state_file = self.folder / "state.json"

    @property
    def log_file(self) -> Path:
        return self.folder / "broker.log"

    # ------------------------------------------------------------------ state

    def _state(self) -> dict:
        return json.loads(self.state_file.read_text()) if self.state_file.exists() else {}

    def _save(self, **values: object) -> None:
        state = {**self._state(), **values}
        self.state_file.write_text(json.dumps(state))

    @property
    def bootstrap(self) -> str:
        port = self._state().get("broker_port")
        if port is None:
            raise BrokerError(f"no broker was ever started in {self.folder}")
        return f"127.0.0.1:{port}"

    def pid(self) -> int | None:
        pid = self._state().get("pid")
        return int(pid) if pid and is_alive(int(pid)) else None

    def record(self, pid: int) -> None:
        self._save(pid=pid)

    def forget(self) -> None:
        if self.state_file.exists():
            self._save(pid=None)

    def is_running(self) -> bool:
        return self.pid() is not None and self._accepts()

    def _accepts(self) -> bool:
        port = self._state().get("broker_port")
        return port is not None and port_open(int(port))

    # ------------------------------------------------------------------ lifecycle

    def _classpath(self) -> str:
        jars = jvm_dir("kafka")
        if not any(jars.glob("kafka_2.13-*.jar")):
            raise BrokerError(f"Kafka jars not found in {jars}: run `make setup`")
        return str(jars / "*")

    def _java(self, main: str, *args: str, log: Path | None = None) -> list[str]:
        return [
            "java", f"-Xmx{self.heap}", "-XX:+UseG1GC", "-Djava.awt.headless=true",
            f"-Dlog4j2.configurationFile={self.folder / 'log4j2.properties'}",
            f"-Dkafka.logs.dir={self.folder / 'logs'}",
            "-cp", self._classpath(), main, *args,
        ]

    def _configure(self) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        state = self._state()
        if "broker_port" not in state:
            self._save(broker_port=free_port(), controller_port=free_port(), cluster_id=new_cluster_id())
            state = self._state()
        broker, controller = state["broker_port"], state["controller_port"]
        (self.folder / "server.properties").write_text(
            "\n".join([
                "process.roles=broker,controller",
                "node.id=1",
                f"controller.quorum.voters=1@127.0.0.1:{controller}",
                f"listeners=PLAINTEXT://127.0.0.1:{broker},CONTROLLER://127.0.0.1:{controller}",
                f"advertised.listeners=PLAINTEXT://127.0.0.1:{broker}",
                "controller.listener.names=CONTROLLER",
                "inter.broker.listener.name=PLAINTEXT",
                "listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
                f"log.dirs={self.folder / 'data'}",
                "num.partitions=1",
                "auto.create.topics.enable=false",
                "offsets.topic.replication.factor=1",
                "offsets.topic.num.partitions=3",
                "transaction.state.log.replication.factor=1",
                "transaction.state.log.min.isr=1",
                "share.coordinator.state.topic.replication.factor=1",
                "share.coordinator.state.topic.min.isr=1",
                "group.initial.rebalance.delay.ms=0",
                # records keep their source timestamps (often old, as in dumps and the simulator):
                # nothing ages out unless a topic asks for it
                "log.retention.ms=-1",
                "log.retention.check.interval.ms=5000",
                "log.cleaner.backoff.ms=1000",
                "",
            ])
        )
        (self.folder / "log4j2.properties").write_text(
            "\n".join([
                "status = warn",
                "appender.file.type = File",
                "appender.file.name = FILE",
                f"appender.file.fileName = {self.folder / 'broker.log'}",
                "appender.file.layout.type = PatternLayout",
                "appender.file.layout.pattern = [%d] %p %m (%c)%n",
                "rootLogger.level = WARN",
                "rootLogger.appenderRef.file.ref = FILE",
                "",
            ])
        )
        if not (self.folder / "data" / "meta.properties").exists():
            result = subprocess.run(
                self._java("kafka.tools.StorageTool", "format", f"--cluster-id={state['cluster_id']}",
                           "-c", str(self.folder / "server.properties")),
                capture_output=True, text=True, check=False,
            )
            if result.returncode != 0:
                raise BrokerError(f"formatting the broker's storage failed: {result.stderr or result.stdout}")

    def command(self) -> list[str]:
        return self._java("kafka.Kafka", str(self.folder / "server.properties"))

    def ready(self) -> bool:
        from confluent_kafka.admin import AdminClient

        if not self._accepts():
            return False
        try:
            AdminClient({"bootstrap.servers": self.bootstrap}).list_topics(timeout=2)
        except Exception:  # noqa: BLE001 - any failure means "not yet"
            return False
        return True

    def start(self, timeout: float = START_TIMEOUT) -> LocalKafka:
        """Start the broker unless it runs already; wait until it accepts connections."""
        if self.is_running():
            return self
        self._configure()
        return super().start(timeout)

    def restart(self) -> None:
        self.stop()
        self.start()

    # ------------------------------------------------------------------ topics

    def create_topic(self, name: str, partitions: int = 1, config: dict[str, str] | None = None) -> None:
        from confluent_kafka.admin import AdminClient, NewTopic

        admin = AdminClient({"bootstrap.servers": self.bootstrap})
        futures = admin.create_topics([NewTopic(name, partitions, 1, config=config or {})])
        futures[name].result(timeout=30)

    def delete_topic(self, name: str) -> None:
        from confluent_kafka.admin import AdminClient

        admin = AdminClient({"bootstrap.servers": self.bootstrap})
        admin.delete_topics([name])[name].result(timeout=30)

    def recreate_topic(self, name: str, partitions: int = 1, timeout: float = 60.0) -> None:
        """Delete `name` and create it again (new topic id, offsets from 0); the creation is
        retried while the broker still finishes the deletion."""
        from confluent_kafka import KafkaException

        self.delete_topic(name)
        deadline = time.monotonic() + timeout
        while True:
            try:
                self.create_topic(name, partitions)
                return
            except KafkaException:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.5)


def running_bootstrap() -> str | None:
    """The bootstrap address of the broker `cdc-lake kafka start` runs for this lake, if it runs."""
    broker = LocalKafka()
    return broker.bootstrap if broker.is_running() else None


def wait_for_message(
    bootstrap: str,
    topic: str,
    matches: Callable[[dict], bool],
    *,
    timeout: float,
    while_alive: Callable[[], None] = lambda: None,
) -> bool:
    """Read partition 0 of `topic` from its start until a JSON value satisfies `matches`: True, or
    False after `timeout` seconds. `while_alive` runs before every poll, to raise when the producer
    being waited for has died. Null values and values that are not JSON objects are skipped."""
    from confluent_kafka import Consumer, TopicPartition

    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": f"cdc-lake-wait-{uuid.uuid4().hex}",
                         "enable.auto.commit": False, "log_level": 3})
    consumer.assign([TopicPartition(topic, 0, 0)])
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            while_alive()
            message = consumer.poll(1.0)
            if message is None or message.error() or message.value() is None:
                continue
            value = json.loads(message.value())
            if isinstance(value, dict) and matches(value):
                return True
    finally:
        consumer.close()
    return False


def produce_dump(bootstrap: str, paths: list[Path], create_topics: bool = True) -> int:
    """Produce the records of `kcat -C -J` dumps into a broker, each to its topic and partition,
    with its key, value (null: a tombstone), timestamp and headers; topics are created with as
    many partitions as the dumps use. Offsets are the broker's own. Returns the records sent."""
    from confluent_kafka import Producer

    records = read_dump(paths)
    if create_topics:
        create_dump_topics(bootstrap, records)
    # log_level 3: errors only (librdkafka prints retries while a new broker loads its coordinators)
    producer = Producer({"bootstrap.servers": bootstrap, "enable.idempotence": True, "linger.ms": 20, "log_level": 3})
    for record in records:
        send_record(producer, record)
    if producer.flush(60) != 0:
        raise BrokerError("some records were not delivered within 60 s")
    return len(records)


def read_dump(paths: list[Path]) -> list[dict[str, Any]]:
    """The records of `kcat -C -J` dumps, in file order."""
    from cdc_lake.kcat import parse_kcat_line

    records = []
    for path in paths:
        with open(path, encoding="utf-8", errors="surrogateescape") as handle:
            records += [parse_kcat_line(line) for line in handle if line.strip()]
    return records


def create_dump_topics(bootstrap: str, records: list[dict[str, Any]]) -> None:
    """Create the records' topics that are missing, with as many partitions as the records use."""
    partitions: dict[str, int] = {}
    for record in records:
        topic = record["kafka_topic"]
        partitions[topic] = max(partitions.get(topic, 0), record["kafka_partition"] + 1)
    broker = _Admin(bootstrap)
    for topic, count in sorted(partitions.items()):
        broker.ensure_topic(topic, count)


def send_record(producer: Any, record: dict[str, Any], keep_timestamp: bool = True,
                on_delivery: Callable[[Any, Any], None] | None = None) -> None:
    """Produce one dump record to its topic and partition (waiting while the producer's queue is
    full); without `keep_timestamp` the broker stamps it with the time of sending."""
    headers = [(h["key"], h["value"]) for h in record["kafka_headers"] or []]
    extra: dict[str, Any] = {"on_delivery": on_delivery} if on_delivery else {}
    if keep_timestamp:
        extra["timestamp"] = record["kafka_timestamp_ms"] or 0
    while True:
        try:
            producer.produce(record["kafka_topic"], value=record["kafka_value"], key=record["kafka_key"],
                             partition=record["kafka_partition"], headers=headers or None, **extra)
            break
        except BufferError:
            producer.poll(0.5)
    producer.poll(0)


class _Admin:
    def __init__(self, bootstrap: str) -> None:
        from confluent_kafka.admin import AdminClient

        self.client = AdminClient({"bootstrap.servers": bootstrap})

    def ensure_topic(self, name: str, partitions: int) -> None:
        from confluent_kafka.admin import NewTopic

        if name in self.client.list_topics(timeout=10).topics:
            return
        self.client.create_topics([NewTopic(name, partitions, 1)])[name].result(timeout=30)
