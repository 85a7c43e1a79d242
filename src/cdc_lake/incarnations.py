"""Which life of a Kafka topic `cdc-lake consume` reads: a topic deleted and created again restarts
its offsets at 0, and its records must not be taken for those already landed at the same offsets.

Kafka gives a topic a unique id when it is created (KIP-516); the same name created again gets a
new one. The consumer keeps each topic's ids in `<raw schema>.kafka_topic_ids` in the order it met
them: the n-th id (from 0) is incarnation n, what the raw tables keep in `kafka_topic_incarnation`.
A topic met for the first time takes the highest incarnation already landed for it (0 on a new
lake), so lakes landed before this table existed keep their numbering.

Three rules make a recreation safe at any moment:
- a batch read from Kafka is checked after the read: when its topics still carry the ids on
  record, every record of it came from those incarnations (an id is never reused, so the topic
  cannot have been replaced in between); a changed id stops the batch before anything lands;
- the format's streaming query then restarts from a new checkpoint (`checkpoint_dir`, numbered by
  the recreations of its topics so that a restarted consumer finds the same one), starting each
  partition where the old checkpoint's last finished batch ended, and a recreated topic's partitions
  at their earliest offset;
- records land with their topic's incarnation (`merge_batch` per incarnation), so offsets of two
  lives never meet.
The window left: a topic met for the first time (no id on record) that is recreated between the
read and the look-up of its id is taken for its new life.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cdc_lake.landing import raw_schema, raw_table
from cdc_lake.sqltext import qualified_name, sql_string

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

TOPIC_IDS_COLUMNS = (
    "kafka_topic string not null, kafka_topic_incarnation int not null, kafka_topic_id string not null, "
    "first_seen_at timestamp not null"
)
ADMIN_TIMEOUT_SECONDS = 30


class TopicRecreated(RuntimeError):
    """A batch read records of a topic whose id changed since it was recorded: not landed."""

    def __init__(self, topics: Iterable[str]) -> None:
        self.topics = sorted(topics)
        super().__init__(f"topic(s) deleted and created again: {', '.join(self.topics)}")


def topic_ids_table() -> str:
    return qualified_name(raw_schema(), "kafka_topic_ids")


class TopicIncarnations:
    """The topics' ids on the broker (through Kafka's Java admin client, in the Spark session's JVM,
    with the consumer's own connection options) against the ones on record."""

    def __init__(self, spark: SparkSession, bootstrap_servers: str, kafka_options: Mapping[str, str]) -> None:
        self.spark = spark
        jvm = spark.sparkContext._jvm  # type: ignore[attr-defined]
        self._jvm = jvm
        properties = jvm.java.util.Properties()
        properties.setProperty("bootstrap.servers", bootstrap_servers)
        for key, value in kafka_options.items():
            properties.setProperty(key.removeprefix("kafka."), str(value))
        self._admin = jvm.org.apache.kafka.clients.admin.Admin.create(properties)
        spark.sql(f"create table if not exists {topic_ids_table()} ({TOPIC_IDS_COLUMNS}) using iceberg")
        self.known: dict[str, tuple[int, str]] = {}
        for row in spark.sql(
            f"select kafka_topic, kafka_topic_incarnation, kafka_topic_id from {topic_ids_table()}"
        ).collect():
            if row[0] not in self.known or row[1] > self.known[row[0]][0]:
                self.known[row[0]] = (int(row[1]), str(row[2]))

    def close(self) -> None:
        self._admin.close()

    def _get(self, future: Any) -> Any:
        return future.get(ADMIN_TIMEOUT_SECONDS, self._jvm.java.util.concurrent.TimeUnit.SECONDS)

    def matching_topics(self, pattern: str) -> list[str]:
        """Topics on the broker whose whole name matches the Java regex `pattern`."""
        compiled = self._jvm.java.util.regex.Pattern.compile(pattern)
        return sorted(t for t in self._get(self._admin.listTopics().names()) if compiled.matcher(t).matches())

    def describe(self, topics: Iterable[str]) -> dict[str, tuple[str, list[int]]]:
        """Each topic's id and partitions, for those that exist now."""
        wanted = sorted(set(topics))
        if not wanted:
            return {}
        try:  # one request for all of them, the usual case
            found = dict(self._get(self._admin.describeTopics(self._java_list(wanted)).allTopicNames()).items())
        except Exception:  # noqa: BLE001 - py4j wraps UnknownTopicOrPartitionException: one of them is gone
            found = {}
            for topic in wanted:
                try:
                    found.update(self._get(self._admin.describeTopics(self._java_list([topic])).allTopicNames()).items())
                except Exception:  # noqa: BLE001 - this one is gone now
                    continue
        return {
            str(topic): (str(d.topicId().toString()), sorted(int(p.partition()) for p in d.partitions()))
            for topic, d in found.items()
        }

    def _java_list(self, values: list[str]) -> Any:
        java = self._jvm.java.util.ArrayList()
        for value in values:
            java.add(value)
        return java

    def incarnation(self, topic: str) -> int:
        return self.known[topic][0] if topic in self.known else 0

    def observe(self, fmt: str, topics: Iterable[str]) -> set[str]:
        """Put the current ids of `topics` on record; returns the topics recreated since their id
        was recorded (each moves to its next incarnation)."""
        current = {topic: described[0] for topic, described in self.describe(topics).items()}
        first_met = [t for t in current if t not in self.known]
        landed = self._landed_incarnations(fmt, first_met) if first_met else {}
        rows, recreated = [], set()
        for topic, topic_id in sorted(current.items()):
            if topic not in self.known:
                self.known[topic] = (landed.get(topic, 0), topic_id)
            elif self.known[topic][1] != topic_id:
                self.known[topic] = (self.known[topic][0] + 1, topic_id)
                recreated.add(topic)
            else:
                continue
            rows.append(f"({sql_string(topic)}, {self.known[topic][0]}, {sql_string(topic_id)}, current_timestamp())")
        if rows:
            self.spark.sql(f"insert into {topic_ids_table()} values {', '.join(rows)}")
        return recreated

    def _landed_incarnations(self, fmt: str, topics: list[str]) -> dict[str, int]:
        names = ", ".join(sql_string(t) for t in topics)
        return {
            row[0]: int(row[1])
            for row in self.spark.sql(
                f"select kafka_topic, max(coalesce(kafka_topic_incarnation, 0)) from {raw_table(fmt)} "
                f"where kafka_topic in ({names}) group by kafka_topic"
            ).collect()
        }

    def generation(self, pattern: str) -> int:
        """How many times the topics matching `pattern` were recreated: the incarnations on record
        summed, topics deleted for good included, so that the number never goes back to that of
        an older checkpoint."""
        compiled = self._jvm.java.util.regex.Pattern.compile(pattern)
        return sum(n for topic, (n, _) in self.known.items() if compiled.matcher(topic).matches())


def checkpoint_dir(root: Path, fmt: str, generation: int) -> Path:
    """The format's checkpoint: `<fmt>` until one of its topics is recreated, then `<fmt>.<n>`."""
    return root / fmt if generation == 0 else root / f"{fmt}.{generation}"


def resume_offsets(checkpoint: Path) -> dict[str, dict[str, int]]:
    """Where the query of `checkpoint` would go on: the end offsets of its last finished batch
    (Spark's offset log: a version line, a metadata line, then one JSON line per source)."""
    commits = [int(p.name) for p in (checkpoint / "commits").glob("[0-9]*") if p.name.isdigit()]
    if not commits:
        return {}
    finished = offset_log(checkpoint, max(commits))
    if finished is None:
        raise ValueError(f"{checkpoint}: the offset log of batch {max(commits)} cannot be read")
    return finished


def offset_log(checkpoint: Path, batch_id: int) -> dict[str, dict[str, int]] | None:
    """A batch's end offsets (exclusive) per topic and partition, from the query's offset log,
    which Spark writes before it runs the batch (a version line, a metadata line, then one JSON
    line per source); None if it cannot be read."""
    try:
        lines = (checkpoint / "offsets" / str(batch_id)).read_text(encoding="utf-8").splitlines()
        return {topic: {str(p): int(o) for p, o in parts.items()} for topic, parts in json.loads(lines[2]).items()}
    except (OSError, IndexError, ValueError, AttributeError):
        return None


def starting_offsets(
    previous: Mapping[str, Mapping[str, int]],
    partitions: Mapping[str, list[int]],
    recreated: Iterable[str],
) -> str:
    """The `startingOffsets` of a new checkpoint: every partition of the topics that exist now (Spark
    wants them all), where the previous checkpoint left it, or earliest (-2) for a recreated
    topic and for partitions the previous checkpoint never read."""
    fresh = set(recreated)
    offsets = {
        topic: {str(p): (-2 if topic in fresh else int(previous.get(topic, {}).get(str(p), -2))) for p in parts}
        for topic, parts in sorted(partitions.items())
    }
    return json.dumps(offsets, separators=(",", ":"))
