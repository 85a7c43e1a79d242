"""A Kafka Connect worker in standalone mode with Debezium's MariaDB and PostgreSQL connectors, for
the end-to-end tests.

The worker runs from the jars `make setup` copied from Maven Central (jvm/connect/pom.xml: Apache
Kafka's connect-runtime and connect-json 4.1.1, `io.debezium:debezium-connector-mariadb` and
`debezium-connector-postgres`); the connectors sit on the worker's classpath. Offsets go to a
file in the worker's folder, the REST API listens on a free loopback port (status only), and the
process is stopped whatever happens.

    with KafkaConnect(folder, bootstrap, [debezium_mariadb("cdclake", server, ...)]) as worker:
        worker.wait_running()
"""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from cdc_lake.env import jvm_dir
from cdc_lake.servers.ports import free_port
from cdc_lake.servers.supervisor import LocalServer

START_TIMEOUT = 180.0
JSON_CONVERTER = "org.apache.kafka.connect.json.JsonConverter"
MAX_RECORD_BYTES = 32 * 1024 * 1024


class ConnectError(Exception):
    """The worker or a connector could not be started or failed."""


@dataclass
class Connector:
    """One connector's configuration (`name` + properties)."""

    name: str
    config: Mapping[str, str] = field(default_factory=dict)


def initial_snapshot_as_json(schemas_enable: bool) -> dict[str, str]:
    """What every Debezium connector of the tests shares: an initial snapshot, the connector's
    topics created by Connect (the broker creates none by itself), and JSON converters for key and
    value, with or without schemas."""
    schemas = "true" if schemas_enable else "false"
    return {
        "snapshot.mode": "initial",
        "topic.creation.default.replication.factor": "1",
        "topic.creation.default.partitions": "1",
        "topic.creation.default.max.message.bytes": str(MAX_RECORD_BYTES),
        "key.converter": JSON_CONVERTER,
        "value.converter": JSON_CONVERTER,
        "key.converter.schemas.enable": schemas,
        "value.converter.schemas.enable": schemas,
    }


def debezium_mariadb(
    name: str,
    *,
    topic_prefix: str,
    port: int,
    user: str,
    password: str,
    server_id: int,
    databases: Sequence[str],
    bootstrap: str,
    schemas_enable: bool = True,
    settings: Mapping[str, str] | None = None,
) -> Connector:
    """Debezium's MariaDB connector reading a local server, JSON converters for key and value
    (with or without schemas), DDL in the `<topic_prefix>` topic, schema history in a topic."""
    return Connector(name, {
        "connector.class": "io.debezium.connector.mariadb.MariaDbConnector",
        "tasks.max": "1",
        "database.hostname": "127.0.0.1",
        "database.port": str(port),
        "database.user": user,
        "database.password": password,
        # each connector reads the binlog as a replica of its own id
        "database.server.id": str(server_id),
        "topic.prefix": topic_prefix,
        "database.include.list": ",".join(databases),
        "include.schema.changes": "true",
        "schema.history.internal.kafka.bootstrap.servers": bootstrap,
        "schema.history.internal.kafka.topic": f"_schema_history.{topic_prefix}",
        **initial_snapshot_as_json(schemas_enable),
        **(settings or {}),
    })


def debezium_postgres(
    name: str,
    *,
    topic_prefix: str,
    port: int,
    user: str,
    password: str,
    database: str,
    schemas: Sequence[str],
    schemas_enable: bool = True,
    publication_mode: str = "filtered",
    settings: Mapping[str, str] | None = None,
) -> Connector:
    """Debezium's PostgreSQL connector reading `database` of a local server through the built-in
    logical decoding plugin `pgoutput` (no server extension needed), JSON converters for key and
    value (with or without schemas), topics `<topic_prefix>.<schema>.<table>`.

    Each connector holds a replication slot and a publication of its own, both named after it: two
    connectors on one slot would steal each other's changes, and a publication of another's could
    list other tables. `publication_mode` is Debezium's `publication.autocreate.mode`: `filtered`
    publishes the tables of `schemas` that exist when the connector starts, `all_tables` every
    table, later ones too. The settings matrix (`decimal.handling.mode`, `time.precision.mode`,
    `hstore.handling.mode`, ...) comes through `settings`; without it every setting is Debezium's
    default. Replica identity (DEFAULT or FULL) is a table's, set by the workload."""
    slot = "".join(c if c.isalnum() else "_" for c in name.lower())
    return Connector(name, {
        "connector.class": "io.debezium.connector.postgresql.PostgresConnector",
        "tasks.max": "1",
        "database.hostname": "127.0.0.1",
        "database.port": str(port),
        "database.user": user,
        "database.password": password,
        "database.dbname": database,
        "plugin.name": "pgoutput",
        "slot.name": f"{slot}_slot",
        "publication.name": f"{slot}_publication",
        "publication.autocreate.mode": publication_mode,
        "schema.include.list": ",".join(schemas),
        "topic.prefix": topic_prefix,
        **initial_snapshot_as_json(schemas_enable),
        **(settings or {}),
    })


def iceberg_sink(name: str, *, topic: str, table: str, warehouse: Path, control_topic: str, tasks: int) -> Connector:
    """Apache Iceberg's Kafka Connect sink landing `topic` as it comes into `table` of a Hadoop
    catalog in `warehouse`: each record's value as the text column `kafka_value` (key and value
    read as strings, the value wrapped by Connect's HoistField), with its topic, partition, offset
    and timestamp (InsertField); a commit every second through `control_topic`."""
    return Connector(name, {
        "connector.class": "org.apache.iceberg.connect.IcebergSinkConnector",
        "tasks.max": str(tasks),
        "topics": topic,
        "iceberg.tables": table,
        "iceberg.tables.auto-create-enabled": "true",
        "iceberg.catalog.catalog-impl": "org.apache.iceberg.hadoop.HadoopCatalog",
        "iceberg.catalog.warehouse": warehouse.resolve().as_uri(),
        "iceberg.control.topic": control_topic,
        "iceberg.control.commit.interval-ms": "1000",
        "key.converter": "org.apache.kafka.connect.storage.StringConverter",
        "value.converter": "org.apache.kafka.connect.storage.StringConverter",
        "transforms": "value,coordinates",
        "transforms.value.type": "org.apache.kafka.connect.transforms.HoistField$Value",
        "transforms.value.field": "kafka_value",
        "transforms.coordinates.type": "org.apache.kafka.connect.transforms.InsertField$Value",
        "transforms.coordinates.topic.field": "kafka_topic",
        "transforms.coordinates.partition.field": "kafka_partition",
        "transforms.coordinates.offset.field": "kafka_offset",
        "transforms.coordinates.timestamp.field": "kafka_timestamp",
        "consumer.override.auto.offset.reset": "earliest",
    })


def hadoop_table_records(warehouse: Path, table: str) -> int:
    """Records in the current snapshot of a Hadoop-catalog Iceberg table (0 before its first
    commit), read from its metadata files: no engine needed."""
    metadata = warehouse.joinpath(*table.split("."), "metadata")
    hint = metadata / "version-hint.text"
    if not hint.exists():
        return 0
    document = json.loads((metadata / f"v{hint.read_text().strip()}.metadata.json").read_text())
    current = document.get("current-snapshot-id")
    for snapshot in document.get("snapshots", []):
        if snapshot.get("snapshot-id") == current:
            return int(snapshot.get("summary", {}).get("total-records", 0))
    return 0


class KafkaConnect(LocalServer):
    """A standalone Connect worker running `connectors`, its state in `folder`. It counts as started
    once its process runs; `wait_running` waits for the connectors."""

    name = "connect"
    error = ConnectError

    def __init__(
        self,
        folder: Path,
        bootstrap: str,
        connectors: Sequence[Connector],
        heap: str = "768m",
        plugin_path: Path | None = None,
    ) -> None:
        super().__init__(folder)
        self.bootstrap = bootstrap
        self.connectors = list(connectors)
        self.heap = heap
        # a folder of connector plugins, each loaded in its own class loader (Iceberg's sink)
        self.plugin_path = plugin_path
        self.rest_port = 0
        self.connector_files: list[Path] = []

    @property
    def log_file(self) -> Path:
        return self.folder / "connect.log"

    def _classpath(self) -> str:
        jars = jvm_dir("connect")
        if not any(jars.glob("debezium-connector-mariadb-*.jar")):
            raise ConnectError(f"Kafka Connect / Debezium jars not found in {jars}: run `make setup`")
        return str(jars / "*")

    def _configure(self) -> list[Path]:
        self.folder.mkdir(parents=True, exist_ok=True)
        self.rest_port = free_port()
        worker = {
            "bootstrap.servers": self.bootstrap,
            "key.converter": JSON_CONVERTER,
            "value.converter": JSON_CONVERTER,
            "offset.storage.file.filename": str(self.folder / "connect.offsets"),
            "offset.flush.interval.ms": "1000",
            "listeners": f"http://127.0.0.1:{self.rest_port}",
            # a row with a 1 MB text is a ~5 MB JSON record (schema, escapes)
            "producer.max.request.size": str(MAX_RECORD_BYTES),
            "plugin.discovery": "only_scan",
            **({"plugin.path": str(self.plugin_path)} if self.plugin_path else {}),
        }
        (self.folder / "worker.properties").write_text(_properties(worker))
        (self.folder / "log4j2.properties").write_text(
            "\n".join([
                "status = warn",
                "appender.file.type = File",
                "appender.file.name = FILE",
                f"appender.file.fileName = {self.folder / 'connect.log'}",
                "appender.file.layout.type = PatternLayout",
                "appender.file.layout.pattern = [%d] %p %m (%c)%n",
                "rootLogger.level = INFO",
                "rootLogger.appenderRef.file.ref = FILE",
                "logger.reflections.name = org.reflections",
                "logger.reflections.level = ERROR",
                "",
            ])
        )
        files = []
        for connector in self.connectors:
            path = self.folder / f"{connector.name}.properties"
            path.write_text(_properties({"name": connector.name, **connector.config}))
            files.append(path)
        return files

    def command(self) -> list[str]:
        return [
            "java", f"-Xmx{self.heap}", "-XX:+UseG1GC", "-Djava.awt.headless=true",
            f"-Dlog4j2.configurationFile={self.folder / 'log4j2.properties'}",
            "-cp", self._classpath(), "org.apache.kafka.connect.cli.ConnectStandalone",
            str(self.folder / "worker.properties"), *map(str, self.connector_files),
        ]

    def start(self, timeout: float = START_TIMEOUT) -> KafkaConnect:
        self.connector_files = self._configure()
        return super().start(timeout)

    def _get(self, path: str) -> object | None:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.rest_port}{path}", timeout=5) as response:
                return json.loads(response.read())
        except (urllib.error.URLError, OSError, ValueError):
            return None

    def status(self, name: str) -> dict:
        found = self._get(f"/connectors/{name}/status")
        return found if isinstance(found, dict) else {}

    def check_alive(self) -> None:
        super().check_alive()
        for connector in self.connectors:
            for task in self.status(connector.name).get("tasks", []):
                if task.get("state") == "FAILED":
                    raise ConnectError(f"connector {connector.name} failed: {task.get('trace', '')[:3000]}")

    def wait_running(self, timeout: float = START_TIMEOUT) -> None:
        """Until every connector and its task say RUNNING."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            self.check_alive()
            states = [self.status(c.name) for c in self.connectors]
            if all(
                s.get("connector", {}).get("state") == "RUNNING"
                and s.get("tasks") and all(t.get("state") == "RUNNING" for t in s["tasks"])
                for s in states
            ):
                return
            time.sleep(1.0)
        raise ConnectError(f"connectors not running within {timeout:.0f}s: {self.log_tail()}")


def _properties(values: Mapping[str, str]) -> str:
    # Java properties: backslashes and separators in values would need escaping; ours hold none
    return "".join(f"{key}={value}\n" for key, value in values.items())
