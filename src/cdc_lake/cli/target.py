"""Where a command's SQL runs: `local`, the embedded Spark session on the lake in CDC_LAKE_DIR, or
`thrift`, the Spark Thrift Server of dbt's `thrift` target (CDC_LAKE_THRIFT_HOST/PORT/USER/AUTH, see
cdc_lake.thrift). `--target` picks one, by default $CDC_LAKE_TARGET, else local; `on_target` is the
one place that branches on it (`cdc-lake land` and `unland`)."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

TARGETS = ("local", "thrift")
T = TypeVar("T")


def add_target_argument(parser: argparse.ArgumentParser, help_text: str) -> None:
    parser.add_argument(
        "--target", choices=TARGETS, default=os.environ.get("CDC_LAKE_TARGET", "local"), help=help_text
    )


def on_target(
    target: str, app_name: str, local: Callable[[SparkSession], T], thrift: Callable[[Any], T]
) -> T | None:
    """`local(spark)` on the embedded session (named `app_name`), or `thrift(connection)` on a DB-API
    connection to the Thrift Server, closed after. None, the reason on stderr, when the server cannot
    be reached."""
    if target != "thrift":
        from cdc_lake.spark import get_spark

        return local(get_spark(app_name))
    from cdc_lake.thrift import ThriftTarget, connect

    server = ThriftTarget.from_profile()
    try:
        conn = connect(server)
    except Exception as exc:  # noqa: BLE001 - thrift/SASL raise many types; all mean "not reached"
        print(f"cannot reach the Spark Thrift Server {server}: {exc}", file=sys.stderr)
        return None
    try:
        return thrift(conn)
    finally:
        conn.close()
