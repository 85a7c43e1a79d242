"""`cdc-lake kafka`: start/stop/status of a local Kafka broker."""

from __future__ import annotations

import argparse
import sys


def run(args: argparse.Namespace) -> int:
    from cdc_lake.servers.kafka_broker import BrokerError, LocalKafka

    broker = LocalKafka()
    if args.action == "start":
        try:
            broker.start()
        except BrokerError as exc:
            print(f"kafka start failed: {exc}", file=sys.stderr)
            return 1
        print(f"kafka broker up: export CDC_LAKE_KAFKA_BOOTSTRAP={broker.bootstrap}")
        return 0
    if args.action == "stop":
        broker.stop()
        print("kafka broker stopped")
        return 0
    if broker.is_running():
        print(f"kafka broker running at {broker.bootstrap} (pid {broker.pid()}, state in {broker.folder})")
        return 0
    print(f"no kafka broker running for {broker.folder}")
    return 1


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    kafka = sub.add_parser(
        "kafka",
        help="start/stop/status of a local Kafka broker (KRaft) on 127.0.0.1",
        description=(
            "One Apache Kafka broker in KRaft mode (broker and controller in one process) on free "
            "loopback ports, from the jars `make setup` fetched; state under CDC_LAKE_DIR/kafka. "
            "`cdc-lake consume` finds it without --bootstrap-servers."
        ),
    )
    kafka.add_argument("action", choices=["start", "stop", "status"])
    kafka.set_defaults(func=run)
