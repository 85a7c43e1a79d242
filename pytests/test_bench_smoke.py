"""The benchmark harness works end to end at a tiny size (issue 7); speed is not checked here.

Runs `python -m cdc_lake.bench`'s code in-process with the suite's Spark session (its lake is
this test run's), one repetition, no cold start-up processes and no `dbt test` phases, and
writes the JSON result, the report and the plot to a temporary folder. It checks the benchmark
tool, not the pipeline (whose every step it runs many times over), so it runs in a target of its own,
`make test-tools`. CI's integration run includes the size bench's test (`-m bench`), not the
schedule-scale bench's (`-m bench_tools`, about 4 minutes there): CI's time is the tighter limit.
"""

from __future__ import annotations

import json
import os

import pytest

from cdc_lake.bench import build_parser, run, schedule_scale
from cdc_lake.bench.schedule_scale import BEGIN, STEPS


@pytest.mark.bench
def test_bench_harness_writes_a_report(spark, tmp_path):
    args = build_parser().parse_args(
        [
            "--size", "600", "--runs", "1", "--startup-runs", "0", "--no-tests",
            "--work", str(tmp_path / "work"), "--results", str(tmp_path / "results"),
            "--report", str(tmp_path / "benchmarks.md"), "--plot", str(tmp_path / "benchmarks.png"),
        ]
    )  # fmt: skip
    written = run(args, spark=spark)

    assert [p.name for p in written] == ["600.json"]
    result = json.loads(written[0].read_text())
    steps = ("limit", "staging_full", "changelog_only_full", "current_history_full", "incremental_run")
    for step in (*steps, "peer_snapshot_incremental", "merge_1pct_cow", "merge_1pct_mor", "read_history_files"):
        assert result["steps"][step], step
    # Spark's work per model, from the job groups of the queries each node sent, and the files each
    # model's table committed
    full, incremental = result["profile"]["changelog_only_full"], result["profile"]["incremental_run"]
    assert full["cdc_changelog"]["jobs"] > 0 and full["cdc_changelog"]["data_files"] > 0
    assert incremental["cdc_history"]["stages"] > 0 and incremental["cdc_history"]["tasks"] > 0
    assert result["counts"]["raw_history"] > 0
    # the increment is landed and built: every version the simulator produced is in cdc_history
    assert result["counts"]["history_after_increment"] == result["counts"]["truth_versions"]
    # the peer only sees the latest image at each snapshot, so it keeps fewer versions
    assert 0 < result["peer"]["versions_incremental"] < result["counts"]["history_after_increment"]

    report = (tmp_path / "benchmarks.md").read_text()
    assert "### Targets" in report and "(a) limit" in report and "600 changes" in report
    assert "| cdc_history |" in report  # the table of Spark work per model
    assert not (tmp_path / "work" / "workload_600").exists() or not list(
        (tmp_path / "work" / "workload_600").glob("*.jsonl")
    )


@pytest.mark.bench_tools  # make test-tools only: 218 s of CI's integration run on 12-07
def test_schedule_scale_times_every_step_and_renders_its_section(spark, tmp_path, monkeypatch):
    # in the suite's session and lake, as the size bench above; the bench points dbt at its schemas
    for name in ("CDC_LAKE_SCHEMA", "CDC_LAKE_RAW_SCHEMA"):  # put back when the test ends
        if name in os.environ:
            monkeypatch.setenv(name, os.environ[name])
        else:
            monkeypatch.delenv(name, raising=False)
    report = tmp_path / "benchmarks.md"
    result = schedule_scale.measure(600, tmp_path / "work", runs=1, spark=spark)
    schedule_scale.record(result, "in-process", tmp_path / "results", report)

    result = json.loads((tmp_path / "results" / "schedule_600.json").read_text())
    assert set(STEPS) <= set(result["seconds"])
    assert all(len(result["seconds"][step]) == 1 for step in ("noop_build", "small_batch_build", "incremental_build"))
    assert 0 < result["small_batch_records"] <= result["increment_records"]
    assert "cdc_history" in result["nodes"]["small_batch_build"]
    # the statements each build sent to Spark, counted from dbt's events: a batch costs more than none
    assert 0 < result["statements"]["noop_build"] < result["statements"]["small_batch_build"]
    cpu = result["cpu"]["small_batch_build"]  # the build's CPU by where it went
    assert cpu["python"] > 0 and cpu["tasks"] > 0 and cpu["jit"] + cpu["gc"] + cpu["other"] > 0
    section = report.read_text()
    assert BEGIN in section and "`dbt build` of the small batch" in section
    assert "| 600 | `dbt build` of the small batch |" in section  # the CPU table
    assert "target 4 (the increment at 5M against 1M): not measured" in section


def test_the_report_renders_the_size_results_beside_the_other_benchmarks_files(tmp_path):
    # bench/results holds every benchmark's JSON; the report is made of the per-size ones only
    from cdc_lake.bench import report as bench_report
    from cdc_lake.env import PROJECT_DIR

    stored = PROJECT_DIR / "bench" / "results"
    results = tmp_path / "results"
    results.mkdir()
    for name in ("100k.json", "scheduled.json", "increment.json", "schedule_1m.json"):
        (results / name).write_text((stored / name).read_text())
    page = tmp_path / "benchmarks.md"
    bench_report.render(results, page, tmp_path / "benchmarks.png")

    size = json.loads((stored / "100k.json").read_text())
    text = page.read_text()
    assert "(a) limit" in text and size["started_at"] in text


def test_target_4_is_not_judged_across_days():
    """The increment's 5M/1M ratio (issue 40, target 4) compares two runs: only of the same day,
    since this machine's speed changes from one day to the next."""
    from cdc_lake.bench.schedule_scale import verdicts

    def result(label: str, day: str, seconds: float) -> dict:
        steps = ("dbt_noop", "noop_build", "small_batch_build", "incremental_run", "incremental_build")
        return {"label": label, "finished_at": f"{day} 10:00 UTC", "small_batch_records": 1000,
                "seconds": {step: [seconds] for step in steps}}  # fmt: skip

    same_day = verdicts({"1m": result("1m", "2026-11-30", 10.0), "5m": result("5m", "2026-11-30", 11.0)})
    assert any("target 4" in line and "1.10×" in line and "**met**" in line for line in same_day)
    across = verdicts({"1m": result("1m", "2026-11-30", 10.0), "5m": result("5m", "2026-11-29", 11.0)})
    assert [line for line in across if "target 4" in line] == [
        "- target 4 (the increment at 5M against 1M): not comparable, 1M measured on 2026-11-30, 5M on 2026-11-29"
    ]


def test_a_model_is_cut_after_each_of_its_ctes():
    """bench.per_record times each model's query cut after every CTE: the cut must keep every CTE
    up to it, select all of its columns, and refuse a model whose last select is not `final`."""
    from cdc_lake.bench.per_record import cte_names, cut_at

    sql = "-- a base model\nwith source as (\n    select 1 as a\n),\n\nparsed as (\n    select a from source\n),\n\n"
    sql += "final as (\n    select a as b from parsed\n)\n\nselect * from final\n"
    assert cte_names(sql) == ["source", "parsed", "final"]
    cut = cut_at(sql, "parsed")
    assert cut.endswith("select * from parsed") and "final as (" in cut
    with pytest.raises(ValueError, match="final"):
        cut_at(sql.replace("select * from final", "select b from final"), "parsed")
