"""The simulator's truth and the checks against it: the differential test's workload (`cdc-lake
generate`, every format), what the lake should hold for each format (`Truth`, read from the
generator's truth files), and the checks of a lake's current state, history and change log against
it. Shared by the differential, Kafka landing and landing concurrency tests."""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from pathlib import Path

from cdc_lake.formats import FORMATS
from cdc_lake.testing.harness import Lake

SEED, CHANGES = 20261122, 400


def generate(out: Path, *extra: str) -> Path:
    """`cdc-lake generate` of the differential workload (seed SEED, CHANGES changes) into `out`."""
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
    def __init__(self, out: Path, lake_view: bool = False) -> None:
        """`lake_view`: the current state and history the lake can know of a workload whose stream
        lost records (`--snapshot-after-gap`: lake_current.jsonl, lake_history.jsonl), instead of
        the source's."""
        truth = out / "truth"
        prefix = "lake_" if lake_view else ""
        self.current = read_jsonl(truth / f"{prefix}current.jsonl")
        self.history = read_jsonl(truth / f"{prefix}history.jsonl")
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
            (
                (v["database"], v["table"], row_key(v["key"]), self.normal(v["database"], v["table"], v["image"]),
                 v["valid_from"], v["valid_to"], v["closed_by_delete"], v.get("row_count", 1))
                for v in self.history if (v["database"], v["table"]) in tables
            ),
            key=none_first,
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
        (
            (db, table, KEYLESS if r["is_keyless"] else r["row_key"], truth.normal(db, table, r["image"]),
             text_ts(r["valid_from"]), text_ts(r["valid_to"]), r["closed_by_delete"], r["row_count"])
            for r in rows
            for db, table in [(r["database_name"], r["table_name"])]
        ),
        key=none_first,
    )


def none_first(row: tuple) -> list[tuple[bool, str]]:
    """A sort key for rows whose values may be None (two versions that differ only in a None
    value would not compare otherwise)."""
    return [(value is not None, str(value)) for value in row]


def land_all(lake: Lake, out: Path, batch: int | None = None) -> None:
    for fmt in FORMATS:
        pattern = f"{fmt}.jsonl" if batch is None else f"{fmt}-{batch}.jsonl"
        for path in sorted(out.glob(pattern)):
            report = lake.land(fmt, path)
            assert not report.bad_lines, report.bad_lines[:3]


def build_in_batches(lake: Lake, out: Path, batches: int, *build_args: str) -> Lake:
    """Each batch of the workload in `out` landed (every format it holds) and built incrementally
    (`dbt build` with `build_args`); the data tests run on the last build."""
    for batch in range(1, batches + 1):
        land_all(lake, out, batch)
        lake.build(*build_args, data_tests=batch == batches)
    return lake


def check_against_truth(lake: Lake, truth: Truth) -> None:
    for fmt in FORMATS:
        assert actual_current(lake, truth, fmt) == truth.expected_current(fmt), fmt
        actual, expected = actual_history(lake, truth, fmt), truth.expected_history(fmt)
        if actual != expected:
            extra, missing = Counter(actual) - Counter(expected), Counter(expected) - Counter(actual)
            raise AssertionError(
                f"{fmt}: cdc_history differs from the truth: {sum(extra.values())} versions not in it, e.g. "
                f"{sorted(extra, key=none_first)[:3]}; {sum(missing.values())} missing, e.g. "
                f"{sorted(missing, key=none_first)[:3]}"
            )


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
