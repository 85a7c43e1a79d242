"""`cdc-lake metastore`: start/stop/status of the lake's metastore server."""

from __future__ import annotations

import argparse
import sys


def run(args: argparse.Namespace) -> int:
    from cdc_lake.servers.metastore import HOST, MetastoreError, MetastoreServer, embedded_holder

    server = MetastoreServer.for_lake()
    if args.action == "start":
        try:
            started = server.start()
        except MetastoreError as exc:
            print(f"metastore start failed: {exc}", file=sys.stderr)
            return 1
        print(f"metastore server {'started' if started else 'already running'} on {HOST}:{server.port()} "
              f"(pid {server.pid()}) for {server.lake}")
        return 0
    if args.action == "stop":
        print("metastore server stopped" if server.stop() else f"no metastore server running for {server.lake}")
        return 0
    if server.is_running():
        print(f"metastore server running on {HOST}:{server.port()} (pid {server.pid()}), "
              f"database {server.lake / 'metastore_db'}, log {server.log_file}")
        return 0
    holder = embedded_holder(server.lake)
    if holder is not None:
        print(f"no metastore server; {server.lake / 'metastore_db'} is open in embedded Derby by pid {holder[0]}")
    else:
        print(f"no metastore server running for {server.lake} (the next dbt or cdc-lake command starts it)")
    return 1


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    metastore = sub.add_parser(
        "metastore",
        help="start/stop/status of the lake's metastore server (Derby network server on 127.0.0.1)",
        description=(
            "The lake's Hive metastore database (CDC_LAKE_DIR/metastore_db) is served by a Derby network "
            "server on a free loopback port, so that dbt, cdc-lake land/consume/sql and tests can use "
            "the lake at the same time. The first command that needs it starts it; it keeps running "
            "until `stop` (port and pid in CDC_LAKE_DIR/metastore/server.json, log in "
            "CDC_LAKE_DIR/metastore/server.log). Stop it before deleting or moving the lake. "
            "CDC_LAKE_METASTORE=embedded opens the database in-process instead (one process at a time)."
        ),
    )
    metastore.add_argument(
        "action", choices=["start", "stop", "status"],
        help="status exits 0 when the server runs and answers",
    )
    metastore.set_defaults(func=run)
