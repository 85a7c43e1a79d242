"""Analyst experience (issue 6): typed per-table models from one config line, and the docs site.

The module works on a copy of the dbt project (the add-table command writes files into it), lands
the demo data plus a `shop.payments` table with one column of every common MySQL type, and builds
twice: once followed by every dbt unit test (run here for the whole suite), and once after the
source table gained a column. Then `dbt docs generate`, and headless Chromium opens the generated site.
"""

from __future__ import annotations

import argparse
import functools
import http.server
import json
import os
import shutil
import subprocess
import tempfile
import threading
from collections.abc import Iterator
from datetime import date, datetime
from decimal import Decimal
from pathlib import Path

import pytest
from PIL import Image

from cdc_lake import cli
from cdc_lake.env import PROJECT_DIR
from cdc_lake.tables import parse_column_types
from cdc_lake.testing.harness import copy_project, kcat_lines

pytestmark = pytest.mark.integration

PAYMENT_TYPES = {
    "id": "bigint(20) unsigned",
    "amount": "decimal(12,2)",
    "rate": "decimal(65,30)",
    "paid_at": "datetime(6)",
    "created": "timestamp(3)",
    "day": "date",
    "duration": "time",
    "flag": "tinyint(1)",
    "level": "tinyint(1)",
    "bit1": "bit(1)",
    "state": "enum('new','paid')",
    "tags": "set('a','b','c')",
    "doc": "json",
    "raw": "varbinary(16)",
    "qty": "int(10) unsigned",
    "ratio": "double",
    "yr": "year(4)",
}
EXPECTED_TYPES = {
    "id": "decimal(20,0)",
    "amount": "decimal(12,2)",
    "rate": "string",
    "paid_at": "timestamp",
    "created": "timestamp",
    "day": "date",
    "duration": "string",
    "flag": "boolean",  # configured in cdc_tables: tinyint(1) is a number otherwise
    "level": "int",
    "bit1": "boolean",
    "state": "string",
    "tags": "string",
    "doc": "string",
    "raw": "binary",
    "qty": "bigint",
    "ratio": "double",
    "yr": "int",
}
BIG_ID = "18446744073709551615"
RATE = "12345678901234567890123456789012345.123456789012345678901234567890"
ROW_1 = {
    "id": "1",
    "amount": "1234567890.12",
    "rate": RATE,
    "paid_at": "2025-03-01 12:34:56.123456",
    "created": "2025-03-01 10:00:00.5",
    "day": "2024-02-29",
    "duration": "-838:59:59",
    "flag": "1",
    "level": "7",
    "bit1": "1",
    "state": "paid",
    "tags": "a,c",
    "doc": '{"a": 1}',
    "raw": "AB",
    "qty": "4294967295",
    "ratio": "0.5",
    "yr": "2024",
}
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--hide-scrollbars",
]


def canal_message(msg_id: int, kind: str, rows: list[dict], old: list[dict] | None = None, types=None) -> str:
    es = 1_740_000_000_000 + msg_id * 1000
    return json.dumps(
        {
            "data": rows,
            "database": "shop",
            "es": es,
            "id": msg_id,
            "isDdl": False,
            "mysqlType": types or PAYMENT_TYPES,
            "old": old,
            "pkNames": ["id"],
            "sql": "",
            "sqlType": None,
            "table": "payments",
            "ts": es + 100,
            "type": kind,
        }
    )


@pytest.fixture(scope="module")
def project(lake) -> Iterator[Path]:
    """A copy of the dbt project that this module's dbt runs use (add-table writes into it)."""
    folder = Path(tempfile.mkdtemp(prefix="cdc_lake_analyst_project_"))
    lake.project_dir = copy_project(folder)
    yield folder
    lake.project_dir = PROJECT_DIR
    shutil.rmtree(folder, ignore_errors=True)


def add_table(project: Path, *args: str) -> None:
    assert cli.main(["add-table", *args, "--project-dir", str(project)]) == 0


def column_types(lake, model: str) -> dict[str, str]:
    return {r["col_name"]: r["data_type"] for r in lake.rows(f"describe {{schema}}.{model}")}


def statuses(result) -> dict[str, str]:
    """Node name -> status of a dbt run's results; a unit test's name is prefixed `unit_test:`."""
    return {
        ("unit_test:" if str(r.node.resource_type) == "unit_test" else "") + r.node.name: str(r.status)
        for r in result.result.results
    }


@pytest.fixture(scope="module")
def first_build(lake, project):
    """The demo workload (Canal) and shop.payments landed, payments added with one command, then `dbt build`."""
    demo = Path(tempfile.mkdtemp(prefix="cdc_lake_analyst_demo_"))
    assert cli.main(["generate", "--demo", "--quiet", "--formats", "canal_flat", "--out", str(demo)]) == 0
    lake.land("canal_flat", demo / "canal_flat.jsonl")
    shutil.rmtree(demo, ignore_errors=True)
    row_big = {**ROW_1, "id": BIG_ID, "amount": "0.01", "flag": "0", "raw": "00", "state": "new"}
    lake.land(
        "canal_flat",
        kcat_lines(
            [
                canal_message(1, "INSERT", [ROW_1, row_big]),
                canal_message(2, "UPDATE", [{**ROW_1, "amount": "5.00"}], old=[{"amount": "1234567890.12"}]),
            ],
            topic="payments",
        ),
    )
    add_table(project, "shop", "payments", "--column-types", "flag:boolean", "--no-lake")
    # the dbt unit tests run in `make test` (test_dbt_unit_tests), not again here
    return statuses(lake.build())


@pytest.fixture(scope="module")
def second_build(lake, project, first_build):
    """The source table gained a column `note`; a row is deleted. Plain `dbt build`, no full refresh."""
    types = {**PAYMENT_TYPES, "note": "varchar(32)"}
    lake.land(
        "canal_flat",
        kcat_lines(
            [
                canal_message(3, "UPDATE", [{**ROW_1, "amount": "5.00", "note": "hello"}], [{"note": None}], types),
                canal_message(4, "INSERT", [{**ROW_1, "id": "2", "note": None}], types=types),
                canal_message(5, "DELETE", [{**ROW_1, "id": BIG_ID, "amount": "0.01", "raw": "00"}]),
            ],
            topic="payments",
            start_offset=2,
        ),
    )
    return statuses(lake.build())


def test_add_table_writes_config_line_models_and_yml(project, first_build):
    seed = (project / "seeds" / "cdc_tables.csv").read_text().splitlines()
    assert seed[0] == "database_name,table_name,column_types"
    assert "shop,payments,flag:boolean" in seed
    tables = project / "models" / "marts" / "tables"
    assert (tables / "shop__payments_current.sql").read_text() == "{{ typed_current('shop', 'payments') }}\n"
    assert (tables / "shop__payments_history.sql").read_text() == "{{ typed_history('shop', 'payments') }}\n"
    assert (tables / "_shop__payments__models.yml").exists()
    # a second run changes nothing
    before = {p.name: p.read_text() for p in tables.iterdir()}
    add_table(project, "shop", "payments", "--no-lake")
    assert {p.name: p.read_text() for p in tables.iterdir()} == before
    assert (project / "seeds" / "cdc_tables.csv").read_text().splitlines() == seed
    assert parse_column_types("a: int; b:decimal(12,2)") == {"a": "int", "b": "decimal(12,2)"}
    with pytest.raises(ValueError):
        parse_column_types("a:int); drop table x")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("x:timestmp", "unknown Spark type 'timestmp' (did you mean timestamp?)"),
        ("x:decimal(40,2)", "1 to 38 digits"),
        ("x:decimal(5,6)", "scale at most the precision"),
        ("x:varchar", "varchar takes 1 parameter(s)"),
        ("x:int(3)", "int takes 0 parameter(s)"),
    ],
)
def test_add_table_rejects_a_type_spark_does_not_have(tmp_path, capsys, text, message):
    # checked when add-table runs, before anything is written
    from cdc_lake.cli.add_table import register

    parser = argparse.ArgumentParser()
    register(parser.add_subparsers())
    args = parser.parse_args(["add-table", "shop", "payments", "--column-types", text, "--no-lake",
                              "--project-dir", str(tmp_path)])
    assert args.func(args) == 2
    assert message in capsys.readouterr().err
    assert not any(tmp_path.iterdir())


def test_typed_model_tests_pass(project, first_build):
    payments = {name: status for name, status in first_build.items() if "shop__payments" in name}
    assert payments["shop__payments_current"] == "success"
    assert payments["shop__payments_history"] == "success"
    models = ("shop__payments_current", "shop__payments_history")
    tests = {name: status for name, status in payments.items() if name not in models}
    assert any(name.startswith("typed_values_preserved") for name in tests)
    assert any(name.startswith("contiguous_versions") for name in tests)
    assert set(tests.values()) == {"pass"}, tests


def test_typed_current_has_spark_types_and_values(lake, first_build):
    types = column_types(lake, "shop__payments_current")
    assert {c: types[c] for c in EXPECTED_TYPES} == EXPECTED_TYPES
    assert list(types)[:3] == ["source_system", "row_key", "id"]
    rows = {r["row_key"]: r for r in lake.rows("select * from {schema}.shop__payments_current")}
    assert sorted(rows) == ["1", BIG_ID]
    one, big = rows["1"], rows[BIG_ID]
    assert big["id"] == Decimal(BIG_ID)
    assert one["amount"] == Decimal("5.00") and big["amount"] == Decimal("0.01")
    assert one["rate"] == RATE
    assert one["paid_at"] == datetime(2025, 3, 1, 12, 34, 56, 123456)
    assert one["created"] == datetime(2025, 3, 1, 10, 0, 0, 500000)
    assert one["day"] == date(2024, 2, 29)
    assert one["duration"] == "-838:59:59"
    assert one["flag"] is True and big["flag"] is False
    assert one["level"] == 7
    assert one["bit1"] is True
    assert (one["state"], one["tags"], one["doc"]) == ("paid", "a,c", '{"a": 1}')
    assert (one["qty"], one["ratio"], one["yr"]) == (4294967295, 0.5, 2024)
    assert one["op"] == "u"
    # binary: the bytes of the canonical hex text
    image = lake.rows(
        "select image['raw'] as raw from {schema}.cdc_current where table_name = 'payments' and row_key = '1'"
    )[0]
    assert bytes(one["raw"]) == bytes.fromhex(image["raw"])


def set_image_values(lake, where: str, values: dict[str, str]) -> None:
    """Overwrite some values of cdc_current's images: of the latest versions in cdc_history, which
    cdc_current shows (the typed models are views over it)."""
    cases = " ".join(f"when '{column}' then '{value}'" for column, value in values.items())
    lake.rows(f"update {{schema}}.cdc_history set image = transform_values(image, (k, v) -> case k {cases} else v end) "
              f"where is_latest and {where}")


def test_typed_values_preserved_reports_each_value_that_does_not_cast(lake, first_build):
    """The typed models' guard: a source value its typed column cannot hold (the try_cast gives
    null) fails the test, one row per lost value, naming the column, its Spark type and the text."""
    where = "table_name = 'payments' and row_key = '1'"
    [row] = lake.rows(f"select source_system, image from {{schema}}.cdc_current where {where}")
    original = {column: row["image"][column] for column in ("amount", "day")}
    set_image_values(lake, where, {"amount": "12a", "day": "yesterday"})
    try:
        result = lake.dbt("test", "--select", "shop__payments_current,test_name:typed_values_preserved",
                          expect_success=False)
        [test] = [r for r in result.result.results if str(r.node.resource_type) == "test"]
        assert (str(test.status), test.failures) == ("fail", 2)
        lost = lake.rows(f"select * from ({test.node.compiled_code}) order by column_name")
    finally:
        set_image_values(lake, where, original)
    assert lost == [
        {"source_system": row["source_system"], "row_key": "1", "column_name": "amount",
         "spark_type": "decimal(12,2)", "source_value": "12a"},
        {"source_system": row["source_system"], "row_key": "1", "column_name": "day",
         "spark_type": "date", "source_value": "yesterday"},
    ]


def test_typed_history_has_versions(lake, first_build):
    types = column_types(lake, "shop__payments_history")
    assert {c: types[c] for c in EXPECTED_TYPES} == EXPECTED_TYPES
    versions = lake.rows(
        "select id, amount, valid_from, valid_to, is_current, closed_by_delete "
        "from {schema}.shop__payments_history where row_key = '1' order by valid_from"
    )
    assert [v["amount"] for v in versions] == [Decimal("1234567890.12"), Decimal("5.00")]
    assert versions[0]["valid_to"] == versions[1]["valid_from"]
    assert [v["is_current"] for v in versions] == [False, True]


def test_demo_tables_are_typed(lake, first_build):
    """The committed demo tables (shop.orders, shop.customers of the demo workload) are typed too."""
    types = column_types(lake, "shop__orders_current")
    assert (types["order_id"], types["total"], types["placed_at"], types["is_gift"]) == (
        "decimal(20,0)",
        "decimal(10,2)",
        "timestamp",
        "boolean",
    )
    assert list(types)[-6:-5] == ["coupon_code"]  # added by an ALTER TABLE in the workload: last
    live = lake.rows(
        "select count(*) as n from {schema}.cdc_current "
        "where database_name = 'shop' and table_name = 'orders' and not is_deleted"
    )[0]["n"]
    assert live > 0 and lake.count("shop__orders_current") == live
    sample = lake.rows(
        "select typed.total, typed.placed_at, current.image from {schema}.shop__orders_current as typed "
        "join {schema}.cdc_current as current using (source_system, row_key) "
        "where current.database_name = 'shop' and current.table_name = 'orders' and typed.total is not null "
        "order by row_key limit 1"
    )[0]
    assert sample["total"] == Decimal(sample["image"]["total"])
    assert sample["placed_at"] == datetime.fromisoformat(sample["image"]["placed_at"])


def test_added_column_appears_without_full_refresh(lake, second_build):
    assert set(second_build.values()) <= {"success", "pass"}, second_build
    types = column_types(lake, "shop__payments_current")
    assert types["note"] == "string"
    assert list(types).index("note") == list(types).index("yr") + 1  # a new column comes last
    rows = {r["row_key"]: r for r in lake.rows("select row_key, note, amount from {schema}.shop__payments_current")}
    assert sorted(rows) == ["1", "2"]  # the deleted row is gone
    assert rows["1"]["note"] == "hello" and rows["2"]["note"] is None
    history = lake.rows(
        "select row_key, note, is_current, closed_by_delete from {schema}.shop__payments_history "
        "order by row_key, valid_from"
    )
    by_key: dict[str, list] = {}
    for version in history:
        by_key.setdefault(version["row_key"], []).append(version)
    assert [v["note"] for v in by_key["1"]] == [None, None, "hello"]
    assert [(v["is_current"], v["closed_by_delete"]) for v in by_key[BIG_ID]] == [(False, True)]


def test_a_scheduled_check_of_typed_values_reads_the_rows_the_last_build_wrote(lake, second_build):
    """typed_values_preserved checks a scheduled build's batch by default (`where: __cdc_batch__`,
    through the typed view to cdc_history's last batch): a value lost in a version the last build
    wrote fails it; one lost in an older version is left to the full check (`cdc_check_all`), and
    the cut test does not read it (the floor of the batch's landing sequences skips older files)."""
    select = "shop__payments_history,test_name:typed_values_preserved"
    versions = {"old": "row_key = '1' and op = 'c'", "batch": "row_key = '2'"}
    amounts = {name: lake.rows(f"select image['amount'] as amount from {{schema}}.cdc_history "
                               f"where table_name = 'payments' and {where}")[0]["amount"]
               for name, where in versions.items()}

    def set_amount(name: str, amount: str) -> None:
        lake.rows("update {schema}.cdc_history set image = transform_values(image, (k, v) -> "
                  f"if(k = 'amount', '{amount}', v)) where table_name = 'payments' and {versions[name]}")

    def outcome(check_all: bool) -> tuple[str, str]:
        [test] = lake.data_tests(select, check_all=check_all).values()
        return str(test.status), test.node.compiled_code

    # every test of the typed views, cut: per key (through the view to cdc_history's batch keys,
    # on the key columns the view has) or to the batch's rows
    tests = lake.data_tests("shop__payments_current", "shop__payments_history", check_all=False)
    compiled = {name: r.node.compiled_code for name, r in tests.items()}
    assert len(compiled) >= 8 and {str(r.status) for r in tests.values()} == {"pass"}
    per_key = [sql for name, sql in compiled.items() if name.startswith(("one_open", "contiguous", "rows_per_key"))]
    assert len(per_key) == 3 and all("cdc_batch_keys" in sql for sql in per_key)
    try:
        set_amount("old", "12a")
        status, sql = outcome(check_all=False)
        assert status == "pass" and "last_landing_seq >= " in sql
        assert outcome(check_all=True)[0] == "fail"
        set_amount("batch", "12b")
        assert outcome(check_all=False)[0] == "fail"
    finally:
        for name, amount in amounts.items():
            set_amount(name, amount)


@pytest.fixture(scope="module")
def docs_site(lake, project, second_build) -> Path:
    """`cdc-lake add-table` again (now it lists the columns from the lake), then `dbt docs generate`."""
    add_table(project, "shop", "payments")
    yml = (project / "models" / "marts" / "tables" / "_shop__payments__models.yml").read_text()
    assert "Source column `paid_at`: MySQL `datetime(6)`, Spark `timestamp`." in yml
    assert "Source column `note`: MySQL `varchar(32)`, Spark `string`." in yml
    lake.dbt("docs", "generate")
    return project / "target"


def test_everything_is_documented(docs_site):
    manifest = json.loads((docs_site / "manifest.json").read_text())
    catalog = json.loads((docs_site / "catalog.json").read_text())
    missing = []
    for unique_id, node in manifest["nodes"].items():
        if node["package_name"] != "cdc_lake" or node["resource_type"] not in ("model", "seed"):
            continue
        if not node["description"].strip():
            missing.append(unique_id)
        documented = {name.lower() for name, c in node["columns"].items() if c["description"].strip()}
        for column in catalog["nodes"].get(unique_id, {}).get("columns", {}):
            if column.lower() not in documented:
                missing.append(f"{unique_id}.{column}")
    for unique_id, source in manifest["sources"].items():
        if not source["description"].strip():
            missing.append(unique_id)
    for unique_id, macro in manifest["macros"].items():
        if macro["package_name"] == "cdc_lake" and not macro["description"].strip():
            missing.append(unique_id)
    assert missing == []
    assert manifest["docs"]["doc.cdc_lake.__overview__"]["block_contents"].lstrip().startswith("# cdc_lake")


def chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.fixture(scope="module")
def site_url(docs_site) -> Iterator[str]:
    """The generated site served on localhost by a tiny http.server thread."""
    handler = functools.partial(QuietHandler, directory=str(docs_site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/index.html"
    server.shutdown()
    server.server_close()


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format, *args):  # noqa: A002 - the base class's signature
        pass


def run_chromium(*args: str) -> subprocess.CompletedProcess:
    browser = chromium()
    if browser is None:
        if os.environ.get("CI"):
            pytest.fail("chromium is missing: .ci/run installs it with apt-get install -y chromium")
        pytest.skip("chromium is not installed (apt-get install -y chromium)")
    with tempfile.TemporaryDirectory(prefix="cdc_lake_chromium_") as profile:
        return subprocess.run(
            [browser, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", "--virtual-time-budget=20000", *args],
            capture_output=True,
            timeout=180,
            check=True,
        )


@pytest.mark.docs_site
def test_docs_site_renders_model_page(site_url, tmp_path):
    page = f"{site_url}#!/model/model.cdc_lake.shop__payments_current"
    dom = run_chromium("--dump-dom", page).stdout.decode("utf-8", "replace")
    assert "shop__payments_current" in dom
    assert "Live rows of the source table" in dom
    for column in ("paid_at", "note", "decimal(20,0)"):
        assert column in dom, column
    shot = tmp_path / "model.png"
    run_chromium("--window-size=1400,1000", f"--screenshot={shot}", page)
    save_screenshot(shot, "docs_site_model.png")


@pytest.mark.docs_site
def test_docs_site_renders_lineage_graph(site_url, tmp_path):
    page = f"{site_url}#!/model/model.cdc_lake.shop__payments_current?g_v=1"
    dom = run_chromium("--dump-dom", page).stdout.decode("utf-8", "replace")
    assert 'data-id="layer2-node"' in dom  # cytoscape drew its node layer
    shot = tmp_path / "lineage.png"
    run_chromium("--window-size=1400,900", f"--screenshot={shot}", page)
    width, height, pixels = read_png(shot)
    # the graph area (below the header, above the selector bar) must show nodes and edges, not a
    # blank panel: a good share of its pixels differ from the panel's background colour
    area = [pixels[y][x] for y in range(120, height - 150, 4) for x in range(40, width - 40, 4)]
    background = max(set(area), key=area.count)
    drawn = sum(1 for p in area if sum(abs(a - b) for a, b in zip(p, background, strict=True)) > 60)
    assert drawn / len(area) > 0.005, f"lineage graph looks empty ({drawn} of {len(area)} pixels drawn)"
    save_screenshot(shot, "docs_site_lineage.png")


def save_screenshot(shot: Path, name: str) -> None:
    """With CDC_LAKE_UPDATE_SCREENSHOTS=1, refresh the screenshot the README shows."""
    assert shot.stat().st_size > 10_000
    if os.environ.get("CDC_LAKE_UPDATE_SCREENSHOTS"):
        shutil.copy2(shot, PROJECT_DIR / "docs" / name)


def read_png(path: Path) -> tuple[int, int, list[list[tuple[int, ...]]]]:
    """The screenshot's size and its rows of RGB pixels."""
    with Image.open(path) as image:
        rgb = image.convert("RGB")
    width, height = rgb.size
    pixels = list(rgb.get_flattened_data())
    return width, height, [pixels[y * width : (y + 1) * width] for y in range(height)]
