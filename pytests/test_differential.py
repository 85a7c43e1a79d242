"""Differential test (issue 5): one simulated workload, five formats, one truth.

`cdc-lake generate` plays a random MySQL workload, writes it as each CDC tool would, and writes
the true final state and history. Every format, landed and built, must give exactly that truth;
the canonical before/after images must agree across formats; every malformed record must be in
the quarantine. The workload has duplicates, out-of-order landing and malformed records switched
on, and lands in three batches with a build after each (in the batched lake); a full refresh
of everything landed must give the same tables. The concurrency test reuses the checks
(cdc_lake.testing.truth). Part of `make test-integration`: `make test` proves the same rules on the
history and table-reset scenarios and the conformance corpora.
"""

from __future__ import annotations

import functools
import tempfile
from collections import defaultdict
from pathlib import Path

import pytest

from cdc_lake.formats import FORMATS
from cdc_lake.testing.harness import Lake
from cdc_lake.testing.truth import (
    Truth,
    check_against_truth,
    check_changelog_against_truth,
    generate,
    land_all,
    text_ts,
)

pytestmark = pytest.mark.integration

# The faulty scenario lands in the batched lake (conftest `batched_lake`): its three batches beside
# the history and table-reset scenarios', with one build after each (dbt's data tests on the last).
BATCHES = 3
_workloads = tempfile.TemporaryDirectory(prefix="cdc_lake_faulty_")


@functools.cache
def faulty_workload() -> Path:
    return generate(
        Path(_workloads.name), "--duplicates", "0.05", "--out-of-order", "--malformed", "0.03", "--batches", "3",
    )


@functools.cache
def faulty_truth() -> Truth:
    return Truth(faulty_workload())


def land_batch(lake: Lake, batch: int) -> None:
    land_all(lake, faulty_workload(), batch)


def observe(part: Lake) -> None:
    """Checked once, after the last build (below)."""


def test_faults_duplicates_out_of_order_and_malformed(batches):
    part, _ = batches
    truth = faulty_truth()
    assert truth.malformed, "the workload should contain malformed records"
    check_against_truth(part, truth)
    rejected = {
        (r["source_format"], r["kafka_topic"], r["kafka_partition"], r["kafka_offset"])
        for r in part.rows("select * from {schema}.cdc_rejected_messages")
    }
    expected = {(m["format"], m["topic"], m["partition"], m["offset"]) for m in truth.malformed}
    assert rejected == expected
    assert part.rows("select * from {schema}.cdc_reconciliation where unaccounted_records != 0") == []


def test_changelog_equals_the_truth_row_by_row(batches):
    """Duplicates collapse and out-of-order landings take their place: the change log is the
    truth's changes, no more, no fewer."""
    part, _ = batches
    check_changelog_against_truth(part, faulty_truth())


def test_ddl_of_the_formats_that_carry_it(batches):
    """ALTER, TRUNCATE, DROP TABLE and CREATE TABLE, in Canal's vocabulary, in every format that
    carries DDL (a Debezium TRUNCATE is an op `t` record, its statement rebuilt from the table)."""
    part, _ = batches
    truth = faulty_truth()
    rows = part.rows(
        "select source_format, database_name, table_name, ddl_type, ddl_statement, commit_ts "
        "from {schema}.cdc_schema_changes order by source_format, change_order"
    )
    carriers = sorted(f for f in FORMATS if truth.formats[f]["ddl"])
    assert {d["kind"] for d in truth.ddl} == {"ALTER", "TRUNCATE", "ERASE", "CREATE"}
    assert [(r["source_format"], r["database_name"], r["table_name"], r["ddl_type"], r["ddl_statement"],
             text_ts(r["commit_ts"])) for r in rows] == [
        (fmt, d["database"], d["table"], d["kind"], d["sql"], d["commit_time"]) for fmt in carriers for d in truth.ddl
    ]


def test_canonical_images_agree_across_formats(batches):
    part, _ = batches
    truth = faulty_truth()
    rows = part.rows(
        "select source_format, database_name, table_name, row_key, op, before, after "
        "from {schema}.cdc_changelog order by change_order, change_id"
    )
    sequences: dict[tuple, dict[str, list]] = defaultdict(lambda: defaultdict(list))
    for r in rows:
        key = (r["database_name"], r["table_name"], r["row_key"])
        sequences[key][r["source_format"]].append((
            r["op"].replace("r", "c"),
            truth.normal(*key[:2], r["before"]),
            truth.normal(*key[:2], r["after"]),
        ))
    compared = 0
    for key, by_format in sequences.items():
        formats = [f for f in FORMATS if key[:2] in truth.carried_by(f)]
        reference = by_format[formats[0]]
        for fmt in formats[1:]:
            assert by_format[fmt] == reference, (key, fmt)
            compared += 1
    assert compared > 100


@pytest.mark.after_full_refresh
def test_full_refresh_gives_the_same_tables_and_the_truth(batches, batched_lake):
    """The incremental builds' tables, every column, equal a rebuild from scratch of everything
    landed, and that rebuild (now the lake's state) equals the truth too."""
    part, _ = batches
    incremental, refreshed = batched_lake.full_refresh(__name__)
    assert refreshed == incremental
    check_against_truth(part, faulty_truth())
