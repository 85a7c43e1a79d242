"""The parts of `cdc-lake set-aside` that need no lake (issue 76, item 2): which failed nodes are base
models and their SQL, the probe that replaces the raw table in a model's query, the reason kept
from Spark's error. The search itself runs in test_set_aside.py (integration)."""

from __future__ import annotations

import json

import pytest

from cdc_lake.set_aside import (
    REASON_PREFIX,
    base_model_format,
    error_reason,
    failed_base_models,
    failed_base_models_of_last_run,
    probe_query,
)


def test_only_failed_base_models_are_searched(tmp_path, monkeypatch) -> None:
    results = [
        {"unique_id": "model.cdc_lake.base_debezium__messages", "status": "error", "compiled_code": "select 1"},
        {"unique_id": "model.cdc_lake.base_canal_flat__messages", "status": "success", "compiled_code": "select 2"},
        {"unique_id": "model.cdc_lake.cdc_history", "status": "error", "compiled_code": "select 3"},
        {"unique_id": "model.cdc_lake.base_lindorm__messages", "status": "error", "compiled_code": None},
    ]
    assert failed_base_models(results) == {"debezium": "select 1"}
    (tmp_path / "target").mkdir()
    (tmp_path / "target" / "run_results.json").write_text(json.dumps({"results": results}))
    assert failed_base_models_of_last_run(tmp_path) == {"debezium": "select 1"}
    assert failed_base_models_of_last_run(tmp_path / "elsewhere") == {}
    assert base_model_format("base_tencent_dts__messages") == "tencent_dts"
    assert base_model_format("stg_debezium__changes") is None


def test_the_probe_reads_the_part_instead_of_the_raw_table(monkeypatch) -> None:
    monkeypatch.setenv("CDC_LAKE_RAW_SCHEMA", "lake_raw")
    sql = ("with source as (select * from lake_raw.raw_debezium where landing_seq > 5), "
           "other as (select * from lake_raw.raw_debezium_old) select * from source")
    probe = probe_query(sql, "debezium")
    assert "from cdc_set_aside_probe where landing_seq > 5" in probe
    assert "lake_raw.raw_debezium_old" in probe  # another table, left alone
    assert probe.startswith("select count(*), sum(length(to_json(struct(*)))) from (")
    with pytest.raises(ValueError, match="does not read"):
        probe_query("select 1", "debezium")


def test_the_reason_is_the_cause_spark_names() -> None:
    error = RuntimeError(
        "An error occurred while calling o68.sql.\n: org.apache.spark.SparkException: Job aborted due to stage "
        "failure: Task 0 in stage 57.0 failed 1 times, most recent failure: Lost task 0.0 in stage 57.0 (TID 37) "
        "(localhost executor driver): java.lang.RuntimeException: injected fault\n\tat org.apache.Foo.bar"
    )
    assert error_reason(error) == REASON_PREFIX + "java.lang.RuntimeException: injected fault"
    assert error_reason(ValueError("\n[CAST_INVALID_INPUT] no\nmore")) == REASON_PREFIX + "[CAST_INVALID_INPUT] no"
