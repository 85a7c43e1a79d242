"""`cdc-lake consume`: land Kafka topics from a broker (Spark Structured Streaming)."""

from __future__ import annotations

import argparse
import os
import sys
import time

from cdc_lake.formats import FORMATS


def _consume_spark_conf(args: argparse.Namespace) -> dict[str, str]:
    """Where the consumer's Spark runs: the profile's local master by default; `--cluster` puts it
    on the local standalone cluster (its master, its lake dir), `--master` on another one."""
    from cdc_lake.consume import ConsumeError

    conf: dict[str, str] = {}
    if args.cluster:
        from cdc_lake.servers import cluster

        settings = cluster.Settings.from_env()
        down = [d.name for d in cluster.daemons(settings)[:2] if d.pid() is None]
        if down:
            raise ConsumeError(f"the local cluster is not running ({', '.join(down)} down): `cdc-lake cluster start`")
        os.environ["CDC_LAKE_DIR"] = str(settings.cluster_dir)  # the Thrift Server's lake and metastore
        conf.update(cluster.consumer_conf(settings))
    if args.master:
        conf["spark.master"] = args.master
    conf.update(_key_values(args.spark_conf, "--spark-conf"))
    return conf


def _key_values(items: list[str] | None, flag: str) -> dict[str, str]:
    """The KEY=VALUE items of a repeatable option."""
    from cdc_lake.consume import ConsumeError

    pairs = {}
    for item in items or []:
        key, sep, value = item.partition("=")
        if not sep:
            raise ConsumeError(f"{flag} {item!r}: expected KEY=VALUE")
        pairs[key] = value
    return pairs


def run(args: argparse.Namespace) -> int:
    import json as json_module
    from pathlib import Path

    from cdc_lake.consume import DEFAULT_CONFIG, ConsumeError, ConsumeSettings, TopicRule, consume, load_rules

    bootstrap = args.bootstrap_servers or os.environ.get("CDC_LAKE_KAFKA_BOOTSTRAP")
    if not bootstrap:
        from cdc_lake.servers import kafka_broker

        bootstrap = kafka_broker.running_bootstrap()
    if not bootstrap:
        print("no broker: give --bootstrap-servers, set CDC_LAKE_KAFKA_BOOTSTRAP, or `cdc-lake kafka start`",
              file=sys.stderr)
        return 2
    try:
        spark_conf = _consume_spark_conf(args)  # first: --cluster moves the lake, and its checkpoints
        if args.topic or args.pattern:
            if not args.format:
                raise ConsumeError("--topic/--pattern need --format")
            rules = [TopicRule(args.format, list(args.topic or []), list(args.pattern or []))]
        else:
            rules = load_rules(Path(args.config) if args.config else DEFAULT_CONFIG)
        options = json_module.loads(os.environ.get("CDC_LAKE_KAFKA_OPTIONS", "{}"))
        options.update(_key_values(args.kafka_option, "--kafka-option"))
        settings = ConsumeSettings(
            bootstrap_servers=bootstrap,
            rules=rules,
            follow=args.follow,
            trigger_seconds=args.trigger_seconds,
            starting_offsets=args.starting_offsets,
            max_offsets_per_trigger=args.max_offsets_per_trigger,
            kafka_options=options,
        )
        from cdc_lake.spark import get_spark

        began = time.monotonic()
        counts = consume(get_spark("cdc-lake consume", extra=spark_conf), settings)
    except ConsumeError as exc:
        print(f"consume: {exc}", file=sys.stderr)
        return 1
    seconds = time.monotonic() - began
    for fmt, count in counts.items():
        print(f"{fmt}: {count} records read in {seconds:.1f}s")
    return 0


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    consume = sub.add_parser(
        "consume",
        help="land Kafka topics from a broker into the raw tables (Spark Structured Streaming)",
        description=(
            "Land the topics of kafka_topics.yml (topic names or patterns -> format), or of --topic/"
            "--pattern with --format, into the raw tables, exactly once: the offsets live in a "
            "checkpoint under CDC_LAKE_DIR/checkpoints. By default lands what the broker holds at the "
            "start, then stops (for a scheduler); --follow keeps running. Kafka consumer settings "
            "(security.protocol, sasl.*, ...) pass through --kafka-option or the JSON object in "
            "CDC_LAKE_KAFKA_OPTIONS (keep secrets in the environment)."
        ),
    )
    consume.add_argument("--bootstrap-servers", help="default: $CDC_LAKE_KAFKA_BOOTSTRAP, else the local broker")
    consume.add_argument("--config", help="topic file (default: kafka_topics.yml in the project)")
    consume.add_argument("--topic", action="append", help="a topic name (repeatable); needs --format")
    consume.add_argument("--pattern", action="append", help="a topic regex (repeatable); needs --format")
    consume.add_argument("--format", choices=FORMATS, help="format of --topic/--pattern")
    consume.add_argument("--follow", action="store_true", help="keep running, one batch per trigger interval")
    consume.add_argument("--trigger-seconds", type=float, default=10.0, help="trigger interval with --follow")
    consume.add_argument(
        "--starting-offsets", default="earliest",
        help="where a new checkpoint starts: earliest (default), latest, or Spark's JSON per partition",
    )
    consume.add_argument("--max-offsets-per-trigger", type=int, help="cap on records per batch")
    consume.add_argument("--kafka-option", action="append", metavar="KEY=VALUE", help="Kafka consumer setting")
    consume.add_argument(
        "--cluster", action="store_true",
        help="run on the local standalone cluster (`cdc-lake cluster start`): its master and lake; the Kafka "
             "reads and MERGEs run on its executors",
    )
    consume.add_argument("--master", help="a Spark master URL (the lake must be on storage its executors reach)")
    consume.add_argument("--spark-conf", action="append", metavar="KEY=VALUE", help="a Spark setting of the consumer")
    consume.set_defaults(func=run)
