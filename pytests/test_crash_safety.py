"""A `dbt build` killed with SIGKILL in the middle of a model, then run again, must leave exactly
the tables of an uninterrupted run: every model commits atomically (one Iceberg snapshot) and the
incremental models resume from their own landing watermarks.

The interrupted lake is a private one, with real processes (`cdc-lake land`, `dbt build`, each
killed with SIGKILL). The uninterrupted run is the same records landed and built in the test
session's warm Spark (the module's own schemas): it is the reference, not what is under test, and
a cold process for each of its three steps cost more than the rest of the module.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from cdc_lake.env import PROJECT_DIR
from cdc_lake.testing.conformance import CONFORMANCE
from cdc_lake.testing.harness import Lake, kcat_lines, private_lake_env, run_checked

pytestmark = pytest.mark.integration

BIN = Path(sys.executable).parent
MODELS = ["cdc_changelog", "cdc_current", "cdc_history", "cdc_schema_changes", "cdc_rejected_messages"]
LANDING_COLUMNS = {"landing_seq", "last_landing_seq", "landed_at"}  # differ between two lakes by design
DUMP = """
import json, sys
from cdc_lake.spark import get_spark

spark = get_spark("dump")
out = {}
landing = {"landing_seq", "last_landing_seq", "landed_at"}
for model in sys.argv[1:]:
    table = spark.table(f"cdc_lake.{model}")
    rows = table.drop(*[c for c in table.columns if c in landing]).toJSON().collect()
    out[model] = sorted(json.dumps(json.loads(r), sort_keys=True) for r in rows)
print("DUMP " + json.dumps(out))
"""




def flink_sample(folder: Path) -> Path:
    """Flink's Canal sample as kcat records: its bare values on topic `canal-data`, as `--raw-values`
    names them, so that one `cdc-lake land` (one Spark start) takes it with the demo's records."""
    values = (CONFORMANCE / "flink" / "canal-data.txt").read_text(encoding="utf-8").splitlines()
    sample = folder / "canal-data.jsonl"
    sample.write_text("".join(line + "\n" for line in kcat_lines(values, topic="canal-data")), encoding="utf-8")
    return sample


def land_inputs(env: dict[str, str], sample: Path) -> None:
    demo = PROJECT_DIR / "demo" / "canal_flat.jsonl"
    run_checked([str(BIN / "cdc-lake"), "land", "--format", "canal_flat", str(demo), str(sample)], env)


def dump(env: dict[str, str]) -> dict[str, list[str]]:
    out = run_checked([str(BIN / "python"), "-c", DUMP, *MODELS], env)
    return json.loads(out.split("DUMP ", 1)[1])


def reference_tables(lake: Lake, sample: Path) -> dict[str, list[str]]:
    """The same records landed (one landing, as `land_inputs` makes) and built without interruption
    in the test session, dumped as DUMP dumps a private lake."""
    records = lake._tmp / "inputs.jsonl"
    records.write_bytes((PROJECT_DIR / "demo" / "canal_flat.jsonl").read_bytes() + sample.read_bytes())
    lake.land("canal_flat", records)
    lake.build(data_tests=False)
    out = {}
    for model in MODELS:
        table = lake.spark.table(f"{lake.schema}.{model}")
        rows = table.drop(*[c for c in table.columns if c in LANDING_COLUMNS]).toJSON().collect()
        out[model] = sorted(json.dumps(json.loads(r), sort_keys=True) for r in rows)
    return out


def build_killed_during(model: str, env: dict[str, str]) -> None:
    """Start `dbt build`, SIGKILL it a moment after `model` starts."""
    proc = subprocess.Popen(
        [str(BIN / "dbt"), "build"], env=env, cwd=PROJECT_DIR, stdout=subprocess.PIPE,
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
def test_killed_build_then_rerun_equals_uninterrupted_run(lake, tmp_path, victim):
    sample = flink_sample(tmp_path)
    reference = reference_tables(lake, sample)
    assert len(reference["cdc_changelog"]) == 30

    crashed_env = private_lake_env(tmp_path / "crashed")
    land_inputs(crashed_env, sample)
    build_killed_during("cdc_changelog", crashed_env)
    build_killed_during(victim, crashed_env)
    run_checked([str(BIN / "dbt"), "build"], crashed_env)
    assert dump(crashed_env) == reference
