"""Differential test (issue 5): one simulated workload, five formats, one truth.

`cdc-lake generate` plays a random MySQL workload, writes it as each CDC tool would, and writes
the true final state and history. Every format, landed and built, must give exactly that truth;
the canonical before/after images must agree across formats; every malformed record must be in
the quarantine. The workload has duplicates, out-of-order landing and malformed records switched
on, and lands in three batches with a build after each (in the batched lake); a full refresh
of everything landed must give the same tables. The concurrency test reuses the checks.
"""

from __future__ import annotations

import functools
import json
import tempfile
from collections import Counter, defaultdict
from pathlib import Path

import pytest

from cdc_lake.formats import FORMATS
from cdc_lake.harness import Lake

SEED, CHANGES = 20261122, 400


def generate(out: Path, *extra: str) -> Path:
    from cdc_lake.cli import main

    assert main(["generate", "--seed", str(SEED), "--changes", str(CHANGES), "--out", str(out), "--quiet", *extra]) == 0
    return out


def read_jsonl(path: Path) -> list[dict]:
    with path.open(encoding="utf-8", newline="\n") as handle:
        return [json.loads(line) for line in handle if line.strip()]


KEYLESS = "<keyless: identified by its image>"


def row_key(key: dict[str, str]) -> str:
    """The change log's canonical row key: the value, or a JSON array in key-name order. A keyless
    table's rows are compared by their images (the pipeline's key is a hash of the image)."""
    if not key:
        return KEYLESS
    if len(key) == 1:
        return next(iter(key.values()))
    return json.dumps([key[k] for k in sorted(key)], separators=(",", ":"), ensure_ascii=False)


class Truth:
    def __init__(self, out: Path) -> None:
        truth = out / "truth"
        self.current = read_jsonl(truth / "current.jsonl")
        self.history = read_jsonl(truth / "history.jsonl")
        self.malformed = read_jsonl(truth / "malformed.jsonl")
        self.changes = read_jsonl(truth / "changes.jsonl")
        self.ddl = read_jsonl(truth / "ddl.jsonl")
        meta = json.loads((truth / "tables.json").read_text())
        self.tables = meta["tables"]
        self.formats = meta["formats"]
        self.json_columns = {
            (t["database"], t["table"], c["name"]) for t in self.tables for c in t["columns"]
            if (c["mysql_type"] or "").startswith("json")
        }

    def carried_by(self, fmt: str) -> set[tuple[str, str]]:
        return {(t["database"], t["table"]) for t in self.tables if fmt in t["formats"]}

    def normal(self, db: str, table: str, image: dict | None) -> str | None:
        """An image as comparable text; JSON column values compared parsed (Debezium sends compact JSON)."""
        if image is None:
            return None
        out = {}
        for column, value in image.items():
            if value is not None and (db, table, column) in self.json_columns:
                value = json.dumps(json.loads(value), sort_keys=True)
            out[column] = value
        return json.dumps(out, sort_keys=True, ensure_ascii=False)

    def expected_current(self, fmt: str) -> Counter:
        """Live rows as a multiset: a keyless table may hold identical rows."""
        tables = self.carried_by(fmt)
        return Counter(
            (r["database"], r["table"], row_key(r["key"]), self.normal(r["database"], r["table"], r["image"]))
            for r in self.current if (r["database"], r["table"]) in tables
        )

    def expected_history(self, fmt: str) -> list[tuple]:
        tables = self.carried_by(fmt)
        return sorted(
            (v["database"], v["table"], row_key(v["key"]), self.normal(v["database"], v["table"], v["image"]),
             v["valid_from"], v["valid_to"], v["closed_by_delete"], v.get("row_count", 1))
            for v in self.history if (v["database"], v["table"]) in tables
        )


def text_ts(value) -> str | None:
    return None if value is None else value.strftime("%Y-%m-%d %H:%M:%S")


def actual_current(lake: Lake, truth: Truth, fmt: str) -> Counter:
    rows = lake.rows(
        f"select database_name, table_name, row_key, image, is_keyless, row_count from {{schema}}.cdc_current "
        f"where source_format = '{fmt}' and not is_deleted"
    )
    return Counter({
        (db, table, KEYLESS if r["is_keyless"] else r["row_key"], truth.normal(db, table, r["image"])): r["row_count"]
        for r in rows
        for db, table in [(r["database_name"], r["table_name"])]
    })


def actual_history(lake: Lake, truth: Truth, fmt: str) -> list[tuple]:
    rows = lake.rows(
        f"select database_name, table_name, row_key, image, valid_from, valid_to, closed_by_delete, is_keyless, "
        f"row_count from {{schema}}.cdc_history where source_format = '{fmt}'"
    )
    return sorted(
        (db, table, KEYLESS if r["is_keyless"] else r["row_key"], truth.normal(db, table, r["image"]),
         text_ts(r["valid_from"]), text_ts(r["valid_to"]), r["closed_by_delete"], r["row_count"])
        for r in rows
        for db, table in [(r["database_name"], r["table_name"])]
    )


def land_all(lake: Lake, out: Path, batch: int | None = None) -> None:
    for fmt in FORMATS:
        pattern = f"{fmt}.jsonl" if batch is None else f"{fmt}-{batch}.jsonl"
        for path in sorted(out.glob(pattern)):
            report = lake.land(fmt, path)
            assert not report.bad_lines, report.bad_lines[:3]


def check_against_truth(lake: Lake, truth: Truth) -> None:
    for fmt in FORMATS:
        assert actual_current(lake, truth, fmt) == truth.expected_current(fmt), fmt
        assert actual_history(lake, truth, fmt) == truth.expected_history(fmt), fmt


def check_changelog_against_truth(lake: Lake, truth: Truth) -> None:
    """Per format and row: the same changes, in the same order, with the same images and commit times."""
    rows = lake.rows(
        "select source_format, database_name, table_name, row_key, is_keyless, op, before, after, commit_ts "
        "from {schema}.cdc_changelog order by change_order, change_id"
    )

    def identity(db: str, table: str, key: str, before: dict | None, after: dict | None) -> tuple:
        # a keyless row is its image
        return (db, table, key) if key != KEYLESS else (db, table, truth.normal(db, table, after or before))

    for fmt in FORMATS:
        tables = truth.carried_by(fmt)
        actual, expected = defaultdict(list), defaultdict(list)
        for r in rows:
            if r["source_format"] == fmt:
                db, table = r["database_name"], r["table_name"]
                key = KEYLESS if r["is_keyless"] else r["row_key"]
                actual[identity(db, table, key, r["before"], r["after"])].append(
                    (r["op"], truth.normal(db, table, r["before"]), truth.normal(db, table, r["after"]),
                     text_ts(r["commit_ts"]))
                )
        for c in truth.changes:
            if (c["database"], c["table"]) in tables:
                expected[identity(c["database"], c["table"], row_key(c["key"]), c["before"], c["after"])].append(
                    (c["op"], truth.normal(c["database"], c["table"], c["before"]),
                     truth.normal(c["database"], c["table"], c["after"]), c["commit_time"])
                )
        assert dict(actual) == dict(expected), fmt


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
