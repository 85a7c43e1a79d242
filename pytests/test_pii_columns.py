"""Excluded and hashed columns (issue 79 item 2; docs/table_options.md "Excluded and hashed
columns") through the simulator, and the checks dbt makes of them when it parses.

The workload's shop.customers holds a PII column, `email`, which the lake must never keep
(`exclude_columns`); its `name` and its key `id` are hashed (`hash_columns`: HMAC-SHA-256 with the
secret of CDC_LAKE_HASH_SECRET), and so is `order_id`, the key of shop.orders and one of the two
key columns of shop.order_items, so items still join their orders; shop.audit_log (no key: a row
is its image) has its `note` hashed. The records of
shop.customers spell the column names in mixed case (generator option `mixed_case_columns`):
`Email` and `EMAIL` are the column too. Landed in Canal's and Debezium's formats in one batch
with duplicates, in a lake of its own. The truth is the simulator's, with the
options applied here in Python (hmac, hashlib): the excluded column absent, a hashed value the HMAC
of the truth's value; an update that changed only the excluded column changes nothing the lake
keeps, so its version is the one before it.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import zlib
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from cdc_lake.env import PROJECT_DIR
from cdc_lake.generator.runner import Options, generate
from cdc_lake.testing.harness import Lake, invoke_dbt, table_options_parse_error
from cdc_lake.testing.truth import (
    KEYLESS,
    SEED,
    Truth,
    actual_current,
    actual_history,
    land_all,
    none_first,
    row_key,
)

pytestmark = pytest.mark.integration

# The lake's JVM reads the secret from its environment when a query runs: set before the test
# session's Spark starts (pytest imports every module first); a secret already set is kept.
os.environ.setdefault("CDC_LAKE_HASH_SECRET", "test secret of test_pii_columns")
SECRET = os.environ["CDC_LAKE_HASH_SECRET"].encode()

FORMATS = ("canal_flat", "debezium")
EXCLUDED = {("shop", "customers"): {"email"}}
HASHED = {
    ("shop", "customers"): {"id", "name"},
    ("shop", "order_items"): {"order_id"},
    ("shop", "orders"): {"order_id"},
    ("shop", "audit_log"): {"note"},
}
TABLE_OPTIONS = {
    r"shop\.customers": {"exclude_columns": ["email"], "hash_columns": ["name", "id"]},
    r"shop\.order_items": {"hash_columns": ["order_id"]},
    r"shop\.orders": {"hash_columns": ["order_id"]},
    r"shop\.audit_log": {"hash_columns": ["note"]},
}
VARS = ("--vars", json.dumps({"cdc_table_options": TABLE_OPTIONS}))
CODEC = "spark.sql.iceberg.compression-codec"


def hashed(value: str | None) -> str | None:
    return None if value is None else hmac.new(SECRET, value.encode(), hashlib.sha256).hexdigest()


def protected(db: str, table: str, image: dict | None) -> dict | None:
    """An image of the truth as the lake must keep it."""
    if image is None:
        return None
    excluded, to_hash = EXCLUDED.get((db, table), set()), HASHED.get((db, table), set())
    return {k: hashed(v) if k in to_hash else v for k, v in image.items() if k not in excluded}


def protected_key(db: str, table: str, key: dict) -> str:
    return row_key({k: hashed(v) if k in HASHED.get((db, table), set()) else v for k, v in key.items()})


@pytest.fixture(scope="module")
def workload(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("pii_columns")
    generate(Options(
        seed=SEED, changes=240, out=out, formats=FORMATS, duplicates=0.05,
        mixed_case_columns=("shop.customers",),
    ))
    return out


@pytest.fixture(scope="module")
def truth(workload: Path) -> Truth:
    return Truth(workload)


@pytest.fixture(scope="module")
def emails(truth: Truth) -> set[str]:
    """Every email the source ever held."""
    return {
        image["email"]
        for c in truth.changes if (c["database"], c["table"]) == ("shop", "customers")
        for image in (c["before"], c["after"]) if image and image.get("email")
    }


@pytest.fixture(scope="module")
def built(lake: Lake, workload: Path) -> Iterator[Lake]:
    """The workload landed and built (one build: the options apply alike to every batch); the
    lake's Parquet files written uncompressed (Iceberg's session setting, over the tables' own), so
    that their bytes hold every value in clear."""
    previous = lake.spark.conf.get(CODEC, None)
    lake.spark.conf.set(CODEC, "uncompressed")
    try:
        land_all(lake, workload)
        lake.build(*VARS)
        yield lake
    finally:
        if previous is None:
            lake.spark.conf.unset(CODEC)
        else:
            lake.spark.conf.set(CODEC, previous)


def expected_history(truth: Truth, fmt: str) -> list[tuple]:
    """The truth's versions with the options applied; a version that differs from the one it
    follows only in the excluded column is that version (the lake sees no change)."""
    tables = truth.carried_by(fmt)
    versions: dict[tuple, list[dict]] = {}
    for v in sorted(truth.history, key=lambda v: (v["valid_from"], v["valid_to"] or "~")):
        db, table = v["database"], v["table"]
        if (db, table) not in tables:
            continue
        image = protected(db, table, v["image"])
        key = row_key(v["key"])
        identity = (db, table, protected_key(db, table, v["key"]) if key != KEYLESS else KEYLESS)
        runs = versions.setdefault(identity if key != KEYLESS else (*identity, json.dumps(image)), [])
        last = runs[-1] if runs else None
        if (
            last and key != KEYLESS and not last["closed_by_delete"] and last["valid_to"] == v["valid_from"]
            and last["image"] == image
        ):
            last.update(valid_to=v["valid_to"], closed_by_delete=v["closed_by_delete"])
            continue
        runs.append({**v, "image": image, "identity": identity})
    return sorted(
        (
            (*r["identity"], truth.normal(r["database"], r["table"], r["image"]), r["valid_from"], r["valid_to"],
             r["closed_by_delete"], r.get("row_count", 1))
            for runs in versions.values() for r in runs
        ),
        key=none_first,
    )


def expected_current(truth: Truth, fmt: str) -> Counter:
    tables = truth.carried_by(fmt)
    return Counter(
        (r["database"], r["table"],
         protected_key(r["database"], r["table"], r["key"]) if r["key"] else KEYLESS,
         truth.normal(r["database"], r["table"], protected(r["database"], r["table"], r["image"])))
        for r in truth.current if (r["database"], r["table"]) in tables
    )


def test_the_workload_holds_the_clear_values(workload: Path, emails: set[str]):
    """The checks below can fail: the records carry emails, in columns spelled in mixed case."""
    text = "".join(path.read_text() for path in workload.glob("*.jsonl"))
    assert len(emails) >= 10
    assert sum(email in text for email in emails) == len(emails)
    assert "Email" in text and "EMAIL" in text


@pytest.mark.parametrize("fmt", FORMATS)
def test_history_and_current_equal_the_truth_with_the_options(built: Lake, truth: Truth, fmt: str):
    actual, expected = actual_history(built, truth, fmt), expected_history(truth, fmt)
    missing = sorted(set(expected) - set(actual), key=none_first)[:3]
    extra = sorted(set(actual) - set(expected), key=none_first)[:3]
    assert actual == expected, f"missing {missing}; not in the truth {extra}"
    assert actual_current(built, truth, fmt) == expected_current(truth, fmt)


def test_hashed_values_still_join(built: Lake, truth: Truth):
    """Equal values give equal hashes: an order item's hashed order_id (one of its two key
    columns) is its order's hashed key, and one source row has one key in both formats."""
    joined = built.rows(
        "select count(*) as n from {schema}.cdc_current i join {schema}.cdc_current o"
        " on o.source_format = i.source_format and o.table_name = 'orders' and o.row_key = i.image['order_id']"
        " and not o.is_deleted where i.table_name = 'order_items' and not i.is_deleted"
    )[0]["n"]
    orders = {row_key(r["key"]) for r in truth.current if (r["database"], r["table"]) == ("shop", "orders")}
    carried = [fmt for fmt in FORMATS if {("shop", "orders"), ("shop", "order_items")} <= truth.carried_by(fmt)]
    assert carried == list(FORMATS)
    expected = sum(
        1 for r in truth.current
        if (r["database"], r["table"]) == ("shop", "order_items") and r["image"]["order_id"] in orders
    ) * len(carried)
    assert joined == expected > 0
    keys = built.rows(
        "select source_format, collect_set(row_key) as keys from {schema}.cdc_current"
        " where table_name = 'customers' group by source_format"
    )
    assert len(keys) == 2 and set(keys[0]["keys"]) == set(keys[1]["keys"])
    assert all(len(k) == 64 for r in keys for k in r["keys"])


def test_no_model_holds_an_email(built: Lake, emails: set[str]):
    """Not in the change log, the history, the current state or the typed views (which have no
    email column, and a string for the hashed key), in no column."""
    tables = ["cdc_changelog", "cdc_history", "cdc_current", "shop__customers_current", "shop__customers_history",
              "cdc_source_columns", "cdc_typed_columns"]
    for table in tables:
        text = "\n".join(r["j"] for r in built.rows(f"select to_json(struct(*)) as j from {{schema}}.{table}"))
        assert text, table
        found = [email for email in emails if email in text]
        assert not found, (table, found[:3])
    columns = dict(built.spark.table(f"{built.schema}.shop__customers_current").dtypes)
    assert "email" not in columns and columns["id"] == "string" and columns["name"] == "string", columns
    types = built.rows(
        "select column_name, spark_type from {schema}.cdc_typed_columns"
        " where database_name = 'shop' and table_name = 'customers' and column_name in ('email', 'id', 'name')"
    )
    assert sorted((r["column_name"], r["spark_type"]) for r in types) == [("id", "string"), ("name", "string")]


def test_a_missing_secret_fails_the_query(built: Lake):
    """Never a hash with an empty key: without the secret, reading a staging view fails and says
    which variable to set (here the tests-only var gives an empty secret)."""
    result = built.dbt(
        "show", "--select", "stg_canal_flat__changes", "--vars",
        json.dumps({"cdc_table_options": TABLE_OPTIONS, "cdc_hash_secret_for_tests": ""}),
        expect_success=False,
    )
    assert not result.success
    assert "CDC_LAKE_HASH_SECRET is not set" in str(result.exception or result.result), result


def test_a_changed_option_is_warned_about(built: Lake):
    """The build cache keeps the options the change log was first built under; a build under
    other exclude_columns or hash_columns warns that the stored changes keep their values and
    names the full refresh that rebuilds them."""
    recorded = built.rows(
        "show tblproperties {schema}.cdc_build_cache ('cdc_lake.protected_columns')"
    )[0]["value"]
    assert json.loads(recorded) == [
        [pattern, sorted(o.get("exclude_columns", [])), sorted(o.get("hash_columns", []))]
        for pattern, o in TABLE_OPTIONS.items()
    ]
    messages: list[str] = []
    options = {**TABLE_OPTIONS, r"shop\.customers": {"exclude_columns": ["email", "notes"], "hash_columns": ["name"]}}
    built._activate()
    invoke_dbt(
        PROJECT_DIR,
        ["compile", "--select", "stg_canal_flat__changes", "--vars", json.dumps({"cdc_table_options": options})],
        callbacks=[lambda event: messages.append(event.info.msg)],
    )
    warned = [m for m in messages if "differ from those the changes in cdc_changelog were decoded under" in m]
    assert warned and "dbt build --full-refresh --select cdc_changelog+" in warned[0], messages[-5:]


def _varint(data: bytes, at: int) -> tuple[int, int]:
    """An Avro long (zig-zag varint) at `at`: its value and the position after it."""
    shift = result = 0
    while True:
        byte = data[at]
        at += 1
        result |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            return (result >> 1) ^ -(result & 1), at


def avro_blocks(data: bytes) -> bytes:
    """The decompressed blocks of an Avro container file (Iceberg's manifests: deflate or none)."""
    at, codec = 4, b"null"
    while True:  # the header's metadata map: blocks of (key, value) pairs, then 0
        count, at = _varint(data, at)
        if count == 0:
            break
        if count < 0:
            count = -count
            _, at = _varint(data, at)
        for _ in range(count):
            size, at = _varint(data, at)
            key = data[at:at + size]
            at += size
            size, at = _varint(data, at)
            if key == b"avro.codec":
                codec = data[at:at + size]
            at += size
    at += 16  # sync marker
    if codec not in (b"null", b"deflate"):
        raise ValueError(f"Avro codec {codec!r}: its blocks cannot be searched here")
    out = []
    while at < len(data):
        _, at = _varint(data, at)
        size, at = _varint(data, at)
        block = data[at:at + size]
        out.append(zlib.decompress(block, -15) if codec == b"deflate" else block)
        at += size + 16
    return b"".join(out)


def warehouse_bytes(lake: Lake) -> dict[str, bytes]:
    """Every file of the lake's two schemas' folders in the warehouse, by path: Parquet data
    files as written (uncompressed), Avro manifests decompressed, the rest as they are."""
    files = {}
    for schema in (lake.schema, lake.raw_schema):
        rows = lake.spark.sql(f"describe schema extended {schema}").collect()
        location = next(r[1] for r in rows if r[0] == "Location")
        for path in Path(location.removeprefix("file:")).rglob("*"):
            if path.is_file():
                data = path.read_bytes()
                files[str(path)] = avro_blocks(data) if data[:4] == b"Obj\x01" else data
    return files


def test_raw_retention_leaves_no_clear_value_in_the_warehouse(built: Lake, emails: set[str]):
    """Last (it removes the records as landed). Before the retention, the raw tables' and base
    models' files hold the emails (the search can fail); `cdc_raw_retention` with 0 days removes
    every built record and expires the snapshots that held them: no file under the lake's
    folders holds an email any more, every reject keeps its reason, and cdc_reconciliation finds
    nothing missing."""
    before = warehouse_bytes(built)
    holding = {path for path, data in before.items() for email in emails if email.encode() in data}
    assert any("_raw.db/raw_canal_flat" in path for path in holding), sorted(holding)[:5]
    assert any("base_debezium__messages" in path for path in holding), sorted(holding)[:5]
    assert not any("cdc_changelog" in path or "cdc_history" in path for path in holding), sorted(holding)[:5]
    built.dbt("run-operation", "cdc_raw_retention", "--args", "{days: 0}", *VARS)
    after = warehouse_bytes(built)
    assert any(path.endswith(".parquet") for path in after)
    found = sorted((path, email) for path, data in after.items() for email in emails if email.encode() in data)
    assert not found, found[:5]
    assert built.count("cdc_changelog") > 0
    assert built.rows(
        "select count(*) as n from {schema}.cdc_reconciliation where unaccounted_records != 0 or offset_gaps != 0"
    )[0]["n"] == 0




def test_the_options_are_checked_when_the_project_parses():
    assert table_options_parse_error(TABLE_OPTIONS) == ""
    cases = {
        "unknown option 'hash_column'": {r"shop\.customers": {"hash_column": ["name"]}},
        "option 'exclude_columns' must be a list of column names": {r"shop\.customers": {"exclude_columns": "email"}},
        "option 'hash_columns' must list non-empty column names": {r"shop\.customers": {"hash_columns": [""]}},
        "column 'Email' is in both exclude_columns and hash_columns": {
            r"shop\.customers": {"exclude_columns": ["Email"], "hash_columns": ["email"]},
        },
    }
    for expected, options in cases.items():
        message = table_options_parse_error(options)
        assert expected in message, message
        assert f"cdc_table_options['{next(iter(options))}']" in message, message
