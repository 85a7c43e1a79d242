"""Shared fixtures: one Spark session for the whole run, one lake per test run, schemas per module."""

from __future__ import annotations

import os
import re
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

# The conformance corpus written by others (../shared/conformance), kept in the repo with its
# licence notes (fixtures/conformance/README.md) so a clone anywhere runs the same tests.
CONFORMANCE = Path(os.environ.get("CDC_LAKE_CONFORMANCE", Path(__file__).parent / "fixtures" / "conformance"))

# A test run gets its own lake, never the developer's `.lake`.
os.environ["CDC_LAKE_DIR"] = os.environ.get("CDC_LAKE_TEST_DIR") or tempfile.mkdtemp(prefix="cdc_lake_test_")
os.environ.setdefault("DBT_SEND_ANONYMOUS_USAGE_STATS", "false")


@pytest.fixture(scope="session")
def spark():
    from cdc_lake.spark import get_spark

    session = get_spark("cdc_lake tests")
    yield session
    session.stop()


@pytest.fixture(scope="module")
def lake(spark, request) -> Iterator[Lake]:  # noqa: F821
    """A fresh pair of schemas named after the test module."""
    from cdc_lake.harness import Lake

    name = "t_" + re.sub(r"\W", "_", request.module.__name__.rsplit(".", 1)[-1]).lower()
    lake = Lake(spark, name)
    lake.drop()
    yield lake
    lake.drop()


@pytest.fixture(scope="session")
def kafka_broker(tmp_path_factory) -> Iterator[Any]:
    """A KRaft broker on free loopback ports in a temporary folder, stopped whatever happens."""
    from cdc_lake.kafka_broker import LocalKafka

    with LocalKafka(tmp_path_factory.mktemp("kafka")) as broker:
        yield broker
