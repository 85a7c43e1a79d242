"""A `dbt build` killed with SIGKILL in the middle of a model, then run again, must leave exactly
the tables of an uninterrupted run: every model commits atomically (one Iceberg snapshot) and the
incremental models resume from their own landing watermarks.

The interrupted builds are real `dbt build` processes, each killed with SIGKILL, on schemas of
their own in the test run's lake (its metastore server serves several processes, as a user's
does). The uninterrupted run is the same records landed and built in the test session's warm
Spark (the module's own schemas): it is the reference, not what is under test. What is not under
test either, the interrupted side's landing and the reading of its tables, is done in that session
too: a cold process for each cost more than a build. Every build selects what the comparison reads
(the five models and everything they read, with their data tests), not the typed views and
monitoring models.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from cdc_lake.env import PROJECT_DIR
from cdc_lake.testing.conformance import CONFORMANCE
from cdc_lake.testing.harness import Lake, kcat_lines, run_checked

pytestmark = pytest.mark.integration

BIN = Path(sys.executable).parent
MODELS = ["cdc_changelog", "cdc_current", "cdc_history", "cdc_schema_changes", "cdc_rejected_messages"]
LANDING_COLUMNS = {"landing_seq", "last_landing_seq", "landed_at"}  # differ between two lakes by design
# the five models and what they read (cdc_current reads cdc_history, which reads the change log),
# with the data tests of those models alone (cautious: none that also reads a model left out);
# not the typed views and monitoring models, which the comparison does not read
SELECT = [
    "--select", "+cdc_current", "+cdc_schema_changes", "+cdc_rejected_messages", "--indirect-selection", "cautious",
]
# a selection replaces the default selector, which leaves the dbt unit tests out of a plain build
NO_UNIT_TESTS = ["--exclude", "test_type:unit"]


@pytest.fixture
def crashed(spark) -> Iterator[Lake]:
    """The interrupted lake's schemas in the test run's lake, dropped before and after."""
    lake = Lake(spark, "t_crash_safety_killed")
    lake.drop()
    yield lake
    lake.drop()


def lake_env(lake: Lake) -> dict[str, str]:
    """The environment of a command on `lake`'s schemas (the run's metastore server is found by the
    lake's folder, as every process of the venv finds it)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("CDC_LAKE_METASTORE")}
    env.update(CDC_LAKE_SCHEMA=lake.schema, CDC_LAKE_RAW_SCHEMA=lake.raw_schema)
    return env



def flink_sample(folder: Path) -> Path:
    """Flink's Canal sample as kcat records: its bare values on topic `canal-data`, as `--raw-values`
    names them, so that one landing takes it with the demo's records."""
    values = (CONFORMANCE / "flink" / "canal-data.txt").read_text(encoding="utf-8").splitlines()
    sample = folder / "canal-data.jsonl"
    sample.write_text("".join(line + "\n" for line in kcat_lines(values, topic="canal-data")), encoding="utf-8")
    return sample


def land_inputs(lake: Lake, sample: Path) -> None:
    """The demo's Canal records and Flink's sample, in one landing."""
    records = lake._tmp / "inputs.jsonl"
    records.write_bytes((PROJECT_DIR / "demo" / "canal_flat.jsonl").read_bytes() + sample.read_bytes())
    lake.land("canal_flat", records)


def reference_tables(lake: Lake, sample: Path) -> dict[str, list[str]]:
    """The same records landed (one landing, as for the interrupted lake) and built without
    interruption in the test session."""
    land_inputs(lake, sample)
    lake.build(*SELECT, data_tests=False)
    return dump(lake)


def dump(lake: Lake) -> dict[str, list[str]]:
    """Every row of the five models, without the landing columns, as sorted JSON."""
    out = {}
    for model in MODELS:
        table = lake.spark.table(f"{lake.schema}.{model}")
        rows = table.drop(*[c for c in table.columns if c in LANDING_COLUMNS]).toJSON().collect()
        out[model] = sorted(json.dumps(json.loads(r), sort_keys=True) for r in rows)
    return out


def build_killed_during(model: str, env: dict[str, str]) -> None:
    """Start `dbt build`, SIGKILL it a moment after `model` starts."""
    proc = subprocess.Popen(
        [str(BIN / "dbt"), "build", *SELECT, *NO_UNIT_TESTS], env=env, cwd=PROJECT_DIR, stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT, text=True, start_new_session=True,
    )
    try:
        assert proc.stdout is not None
        for line in proc.stdout:
            if "START" in line and f".{model} " in line:
                time.sleep(1.5)
                break
        else:
            pytest.fail(f"dbt build ended before {model} started")
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=60)
    assert proc.returncode == -signal.SIGKILL


@pytest.mark.slow
@pytest.mark.parametrize("victim", ["cdc_history"])
def test_killed_build_then_rerun_equals_uninterrupted_run(lake, crashed, tmp_path, victim):
    sample = flink_sample(tmp_path)
    reference = reference_tables(lake, sample)
    assert len(reference["cdc_changelog"]) == 30

    crashed_env = lake_env(crashed)
    land_inputs(crashed, sample)
    build_killed_during("cdc_changelog", crashed_env)
    build_killed_during(victim, crashed_env)
    run_checked([str(BIN / "dbt"), "build", *SELECT, *NO_UNIT_TESTS], crashed_env)
    assert dump(crashed) == reference
