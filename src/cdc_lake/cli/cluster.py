"""`cdc-lake cluster`: start/stop/status of a local Spark standalone cluster with a Thrift Server."""

from __future__ import annotations

import argparse
import sys
import time


def run(args: argparse.Namespace) -> int:
    from cdc_lake.servers import cluster

    settings = cluster.Settings.from_env()
    if args.action == "start":
        began = time.monotonic()
        try:
            cluster.start(settings, timeout=args.timeout or cluster.START_TIMEOUT)
        except cluster.ClusterError as exc:
            print(f"cluster start failed: {exc}", file=sys.stderr)
            return 1
        print(f"cluster up in {time.monotonic() - began:.1f}s; point dbt and cdc-lake land at it with:")
        print("export " + " ".join(f"{k}={v}" for k, v in cluster.client_env(settings).items()))
        print("and land from Kafka on it with: cdc-lake consume --cluster [--follow]")
        return 0
    if args.action == "stop":
        began = time.monotonic()
        cluster.stop(settings, timeout=args.timeout or cluster.STOP_TIMEOUT)
        print(f"cluster down in {time.monotonic() - began:.1f}s")
        return 0
    if args.action == "status":
        return 0 if cluster.status(settings) else 1
    print(cluster.submit_command(settings))
    return 0


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    cluster = sub.add_parser(
        "cluster",
        help="start/stop/status of a local Spark standalone cluster with a Thrift Server",
        description=(
            "A Spark standalone master, one worker and a Spark Thrift Server submitted to it, bound to "
            "127.0.0.1, with Iceberg and a Derby metastore owned by the Thrift Server, all under "
            "CDC_LAKE_CLUSTER_DIR (default .lake-cluster/). Ports: CDC_LAKE_CLUSTER_MASTER_PORT (7077), "
            "CDC_LAKE_CLUSTER_MASTER_UI_PORT (8080), CDC_LAKE_CLUSTER_WORKER_UI_PORT (8081), "
            "CDC_LAKE_THRIFT_PORT (10000). Size: CDC_LAKE_CLUSTER_CORES (2), "
            "CDC_LAKE_CLUSTER_WORKER_MEMORY (3g), CDC_LAKE_CLUSTER_EXECUTOR_MEMORY (2g), "
            "CDC_LAKE_CLUSTER_DRIVER_MEMORY (2g). Then use `--target thrift` (or CDC_LAKE_TARGET=thrift) "
            "with dbt and `cdc-lake land`."
        ),
    )
    cluster.add_argument(
        "action",
        choices=["start", "stop", "status", "command"],
        help=(
            "start: start what is not running and wait until healthy; stop: stop the processes in the "
            "pid files; status: exit 0 only when all three are running and healthy; command: print the "
            "Thrift Server's spark-submit command line"
        ),
    )
    cluster.add_argument(
        "--timeout", type=float, default=None, help="seconds to wait per process (start 180, stop 60)"
    )
    cluster.set_defaults(func=run)
