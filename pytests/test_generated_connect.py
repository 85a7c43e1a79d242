"""debezium and lindorm end to end against the workload simulator's ground truth.

`cdc-lake generate` writes the MySQL workload as dtle/Debezium records (Connect envelopes with
logical types, tombstones of both kinds, a schema-change topic) and as Lindorm records (plus its
HBase-style table), with producer retries, records landed a batch late and broken records. Two
landing batches, a build after each; then, per format, the change log must hold exactly the
truth's changes (canonical values, full images, commit times) in the truth's order for every row,
the current state and the SCD2 history must equal the truth's, every broken record must be in the
quarantine, and the reconciliation must account for every raw record. Same checks as
test_generated_mysql_text.py, whose helpers are reused.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import pytest
from test_generated_mysql_text import canonical_json, read_jsonl, row_key, ts_text

from cdc_lake.generator import Options, generate

FORMATS = ["debezium", "lindorm"]
MYSQL_DATABASES = ("shop", "crm")


@pytest.fixture(scope="module")
def workload(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("gen_connect")
    generate(Options(
        seed=11, changes=300, out=out, batches=2, duplicates=0.03, out_of_order=True, malformed=0.02,
        formats=tuple(FORMATS),
    ))
    return out


@pytest.fixture(scope="module")
def built(lake, workload):
    for batch in (1, 2):
        for fmt in FORMATS:
            lake.land(fmt, workload / f"{fmt}-{batch}.jsonl")
        lake.build()
    return lake


@pytest.fixture(scope="module")
def truth(workload) -> dict[str, list[dict]]:
    return {name: read_jsonl(workload / "truth" / f"{name}.jsonl")
            for name in ("changes", "current", "history", "malformed", "ddl")}


def carried(records: list[dict], fmt: str) -> list[dict]:
    """Debezium carries the MySQL tables; Lindorm also its HBase-style table."""
    return [r for r in records if fmt == "lindorm" or r["database"] in MYSQL_DATABASES]


@pytest.mark.parametrize("fmt", FORMATS)
def test_changelog_equals_the_truth_row_by_row(built, truth, fmt):
    rows = built.rows(
        "select database_name, table_name, row_key, op, before, after, commit_ts from {schema}.cdc_changelog "
        f"where source_format = '{fmt}' order by change_order, change_id"
    )
    actual = defaultdict(list)
    for r in rows:
        actual[(r["database_name"], r["table_name"], r["row_key"])].append(
            (r["op"], canonical_json(r["before"]), canonical_json(r["after"]), ts_text(r["commit_ts"]))
        )
    expected = defaultdict(list)
    for c in carried(truth["changes"], fmt):
        expected[(c["database"], c["table"], row_key(c["key"]))].append(
            (c["op"], canonical_json(c["before"]), canonical_json(c["after"]), c["commit_time"])
        )
    mismatched = [k for k in expected if actual.get(k) != expected[k]]
    assert not mismatched, (
        f"{len(mismatched)} rows differ, first {mismatched[0]}:\n"
        f"actual   {actual.get(mismatched[0])}\nexpected {expected[mismatched[0]]}"
    )
    assert set(actual) == set(expected)
    assert len(rows) == len(carried(truth["changes"], fmt))


@pytest.mark.parametrize("fmt", FORMATS)
def test_current_and_history_equal_the_truth(built, truth, fmt):
    current = built.rows(
        "select database_name, table_name, row_key, image from {schema}.cdc_current "
        f"where source_format = '{fmt}' and not is_deleted"
    )
    got = sorted((r["database_name"], r["table_name"], r["row_key"], canonical_json(r["image"])) for r in current)
    assert got == sorted(
        (c["database"], c["table"], row_key(c["key"]), canonical_json(c["image"]))
        for c in carried(truth["current"], fmt)
    )
    history = built.rows(
        "select database_name, table_name, row_key, image, valid_from, valid_to, op, closed_by_delete "
        f"from {{schema}}.cdc_history where source_format = '{fmt}'"
    )
    assert sorted(
        (r["database_name"], r["table_name"], r["row_key"], canonical_json(r["image"]), ts_text(r["valid_from"]),
         ts_text(r["valid_to"]) or "", r["op"], r["closed_by_delete"]) for r in history
    ) == sorted(
        (h["database"], h["table"], row_key(h["key"]), canonical_json(h["image"]), h["valid_from"],
         h["valid_to"] or "", h["op"], h["closed_by_delete"]) for h in carried(truth["history"], fmt)
    )


def test_broken_records_are_quarantined_and_nothing_is_lost(built, truth):
    rejected = built.rows(
        "select source_format, kafka_topic, kafka_partition, kafka_offset from {schema}.cdc_rejected_messages"
    )
    got = sorted((r["source_format"], r["kafka_topic"], r["kafka_partition"], r["kafka_offset"]) for r in rejected)
    assert got == sorted((m["format"], m["topic"], m["partition"], m["offset"]) for m in truth["malformed"])
    unaccounted = built.rows(
        "select source_format, kafka_topic, kafka_partition, unaccounted_records from {schema}.cdc_reconciliation "
        "where unaccounted_records != 0"
    )
    assert unaccounted == []


def test_debezium_carries_the_alter(built, truth):
    rows = built.rows(
        "select source_format, database_name, table_name, ddl_type, ddl_statement, commit_ts "
        "from {schema}.cdc_schema_changes"
    )
    [alter] = truth["ddl"]
    assert [(r["source_format"], r["database_name"], r["table_name"], r["ddl_type"], r["ddl_statement"],
             ts_text(r["commit_ts"])) for r in rows] == [
        ("debezium", alter["database"], alter["table"], "ALTER", alter["sql"], alter["commit_time"])
    ]
