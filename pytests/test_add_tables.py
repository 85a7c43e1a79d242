"""`cdc-lake add-tables` and `cdc-lake build --add-tables` (issue 78, item 2): every table the lake
has seen that matches include/exclude patterns gets its typed models through tables.add_table, and
a second run changes no file.

Without Spark: the patterns, and the runs on a temporary copy of the project's files with a lake
given as a list of tables. On a real lake: this module's Canal tables in the shared lake's one
build (conftest.shared_lake), read by the command and by a schedule's step before a build.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from cdc_lake import add_tables, build_loop, tables
from cdc_lake.add_tables import ALREADY_EXPOSED, Outcome, TablePatterns
from cdc_lake.cli import build_parser
from cdc_lake.env import PROJECT_DIR
from cdc_lake.tables import SEED_PATH, TABLES_DIR, SourceColumn, seed_rows
from cdc_lake.testing.harness import kcat_lines

# --- patterns ---------------------------------------------------------------------------------


def test_patterns_match_database_dot_table_case_sensitively() -> None:
    patterns = TablePatterns(("shop.*", "crm.customers"), ("shop.tmp_*",))
    assert patterns.matches(("shop", "orders"))
    assert patterns.matches(("crm", "customers"))
    assert not patterns.matches(("shop", "tmp_orders"))  # excluded wins over included
    assert not patterns.matches(("crm", "leads"))
    assert not patterns.matches(("Shop", "orders"))  # the lake's case
    assert not patterns.matches(("crm", "Customers"))
    every = TablePatterns()
    assert every.matches(("any", "table")) and every.matches(("", "x"))
    assert TablePatterns(exclude=("*.audit_?",)).matches(("a", "audit_10"))
    assert not TablePatterns(exclude=("*.audit_?",)).matches(("a", "audit_1"))
    assert TablePatterns(("shop_[0-7].orders_*",)).matches(("shop_3", "orders_63"))
    assert not TablePatterns(("shop_[0-7].orders_*",)).matches(("shop_8", "orders_63"))
    assert TablePatterns(("*",)).matches(("a.b", "c"))
    assert TablePatterns(("shop.*",)).unused_includes([("shop", "a")]) == []
    assert TablePatterns(("Shop.*", "shop.*")).unused_includes([("shop", "a")]) == ["Shop.*"]


def test_a_pattern_without_a_dot_is_refused_with_a_hint(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        build_parser().parse_args(["add-tables", "--include", "shop"])
    assert "'shop.*' or '*.shop'" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        build_parser().parse_args(["build", "--add-tables", "orders_*"])
    assert build_parser().parse_args(["add-tables", "--include", "*"]).include == ["*"]


# --- runs on a copy of the project's files, the lake given ---------------------------------------

LAKE = [
    ("shop", "customers"), ("shop", "orders"),  # the demo's, exposed in the checkout's seed
    ("shop", "refunds"), ("shop", "tmp_import"), ("crm", "customers"), ("crm", "leads"),
    ("Shop", "Orders"),  # the model name shop__orders, which shop.orders has
    ("crm", "Leads"),  # crm__leads as crm.leads: the first in name order (capitals first) takes it
    ("odd", "a{b}"),  # braces: dbt would render them
    ("sales", "audit-log"),  # a model name with a hash
]
COLUMNS = {
    ("shop", "refunds"): [SourceColumn("id", "int(11)", "int", True), SourceColumn("amount", "decimal(10,2)",
                                                                                    "decimal(10,2)", False)],
    ("crm", "customers"): [SourceColumn("id", "bigint(20)", "bigint", True)],
}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """The files `add-table` reads and writes, copied: the seed and models/marts/tables."""
    (tmp_path / SEED_PATH).parent.mkdir(parents=True)
    shutil.copy2(PROJECT_DIR / SEED_PATH, tmp_path / SEED_PATH)
    shutil.copytree(PROJECT_DIR / TABLES_DIR, tmp_path / TABLES_DIR)
    return tmp_path


def files(project: Path) -> dict[str, str]:
    return {str(p.relative_to(project)): p.read_text(encoding="utf-8")
            for p in sorted([project / SEED_PATH, *(project / TABLES_DIR).iterdir()])}


def run(project: Path, patterns: TablePatterns, dry_run: bool = False) -> tuple[Outcome, list[list[tuple]]]:
    reads: list[list[tuple]] = []

    def columns_of(new: list[tuple[str, str]]) -> dict:
        reads.append(new)
        return {table: columns for table, columns in COLUMNS.items() if table in new}

    return add_tables.add_tables(project, patterns, LAKE, columns_of, dry_run=dry_run), reads


def test_matching_tables_are_added_once_and_a_second_run_changes_no_file(project: Path) -> None:
    tables.update_seed(project / SEED_PATH, "shop", "orders", {"total": "decimal(12,2)"})  # an override to keep
    before = files(project)
    patterns = TablePatterns(("shop.*", "Shop.*", "crm.customers", "crm.?eads", "odd.*", "sales.*"), ("shop.tmp_*",))

    dry, reads = run(project, patterns, dry_run=True)
    assert files(project) == before and reads == []  # a dry run writes and reads nothing more

    outcome, reads = run(project, patterns)
    audit = tables.model_base("sales", "audit-log")
    assert audit.startswith("sales_audit_log_")
    assert outcome.added == {("crm", "Leads"): "crm__leads", ("crm", "customers"): "crm__customers",
                             ("sales", "audit-log"): audit, ("shop", "refunds"): "shop__refunds"}
    assert dry.added == outcome.added and dry.skipped == outcome.skipped
    assert reads == [[("crm", "Leads"), ("crm", "customers"), ("sales", "audit-log"), ("shop", "refunds")]]  # one
    assert outcome.skipped == {
        ("Shop", "Orders"): "the model name shop__orders is already shop.orders's",
        ("crm", "leads"): "the model name crm__leads is already crm.Leads's",
        ("odd", "a{b}"): "TABLE 'a{b}': must be non-empty, without braces or control characters",
        ("shop", "customers"): ALREADY_EXPOSED,
        ("shop", "orders"): ALREADY_EXPOSED,
    }
    assert outcome.columns == {("crm", "Leads"): None, ("crm", "customers"): 1, ("sales", "audit-log"): None,
                               ("shop", "refunds"): 2}

    after = files(project)
    rows = seed_rows(project / SEED_PATH)
    assert [(r["database_name"], r["table_name"]) for r in rows] == [
        ("shop", "customers"), ("shop", "orders"), ("crm", "Leads"), ("crm", "customers"), ("sales", "audit-log"),
        ("shop", "refunds")]
    assert rows[1]["column_types"] == "total:decimal(12,2)"  # the exposed table left as it was
    for name in ("shop__orders_current.sql", "shop__orders_history.sql", "_shop__orders__models.yml"):
        assert after[f"{TABLES_DIR}/{name}"] == before[f"{TABLES_DIR}/{name}"]
    # each new table's files are exactly what `cdc-lake add-table` writes
    assert after[f"{TABLES_DIR}/shop__refunds_current.sql"] == "{{ typed_current('shop', 'refunds') }}\n"
    assert after[f"{TABLES_DIR}/_shop__refunds__models.yml"] == tables.models_yml(
        "shop", "refunds", COLUMNS["shop", "refunds"])
    assert after[f"{TABLES_DIR}/_{audit}__models.yml"] == tables.models_yml("sales", "audit-log", None)
    assert set(after) - set(before) == {f"{TABLES_DIR}/{base}{suffix}" for base in outcome.added.values()
                                        for suffix in ("_current.sql", "_history.sql")} | {
        f"{TABLES_DIR}/_{base}__models.yml" for base in outcome.added.values()}

    again, reads = run(project, patterns)
    assert files(project) == after and reads == []
    assert again.added == {}
    assert again.skipped == {**outcome.skipped, **dict.fromkeys(outcome.added, ALREADY_EXPOSED)}
    lines = add_tables.report(again)
    assert lines[0] == "10 tables in the lake, 9 matching"
    assert "skipped odd.a{b}: TABLE 'a{b}': must be non-empty, without braces or control characters" in lines


def test_every_table_without_patterns_and_a_table_listed_without_its_files(project: Path) -> None:
    (project / TABLES_DIR / "shop__customers_history.sql").unlink()  # listed in the seed, a file missing
    outcome, _ = run(project, TablePatterns())
    assert ("shop", "customers") in outcome.added  # its files written again
    assert (project / TABLES_DIR / "shop__customers_history.sql").exists()
    assert len(outcome.added) + len(outcome.skipped) == len(LAKE)
    assert outcome.added.keys() == {("shop", "customers"), ("shop", "refunds"), ("shop", "tmp_import"),
                                    ("crm", "customers"), ("crm", "Leads"), ("sales", "audit-log")}


def test_add_table_refuses_a_model_name_another_table_has(project: Path) -> None:
    with pytest.raises(ValueError, match="the model name shop__orders is already shop.orders's"):
        tables.add_table("Shop", "Orders", project_dir=project, read_lake=False)
    with pytest.raises(ValueError, match="too long for a file name"):
        tables.add_table("d" * 64, "t" * 200, project_dir=project, read_lake=False)
    assert tables.name_problem("shop", "orders", [("shop", "orders")]) is None  # itself


# --- `cdc-lake build --add-tables`: the step before each build -----------------------------------


class AddAndBuild(build_loop.Schedule):
    """A schedule whose builds are recorded, not run."""

    def __init__(self, patterns: TablePatterns | None, echoed: list[str]) -> None:
        super().__init__(Path("."), [], 0.01, 3, None, echo=echoed.append, table_patterns=patterns)
        self.steps: list[str] = []

    def build_once(self, number: int) -> int:
        self.steps.append("build")
        return 0


def test_a_schedule_adds_new_tables_before_each_build_and_says_a_skip_once(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(build_loop, "TURN_GAP", 0.01)
    monkeypatch.setattr("cdc_lake.spark.get_spark", lambda *a, **k: "session")
    new = Outcome(3, added={("shop", "new"): "shop__new"},
                  skipped={("odd", "a{b}"): "braces", ("shop", "orders"): ALREADY_EXPOSED})
    same = Outcome(3, skipped=new.skipped)
    # before the first build of a fresh lake (no cdc_source_columns), a failure, new tables, none
    outcomes: list[Outcome | Exception | None] = [None, RuntimeError("metastore busy"), new, same]
    calls: list[TablePatterns] = []

    def fake(spark: object, project_dir: Path, patterns: TablePatterns, dry_run: bool = False) -> Outcome | None:
        calls.append(patterns)
        schedule.steps.append("add")
        outcome = outcomes.pop(0)
        if isinstance(outcome, Exception):
            raise outcome
        return outcome

    monkeypatch.setattr(add_tables, "add_lake_tables", fake)
    echoed: list[str] = []
    patterns = TablePatterns(("*",), ("shop.tmp_*",))
    schedule = AddAndBuild(patterns, echoed)
    assert schedule.run() == 0
    assert schedule.steps == ["add", "build"] * 3 and calls == [patterns] * 3
    assert echoed == ["cdc-lake build: adding tables failed: metastore busy",
                      "cdc-lake build: exposed 1 new table(s): shop.new",
                      "cdc-lake build: not exposing odd.a{b}: braces"]
    schedule.add_tables_once()  # the same skip again: not said again
    assert len(echoed) == 3
    without = AddAndBuild(None, [])
    assert without.run() == 0 and without.steps == ["build"] * 3


def test_build_refuses_exclude_tables_without_add_tables(capsys: pytest.CaptureFixture[str]) -> None:
    args = build_parser().parse_args(["build", "--exclude-tables", "shop.tmp_*"])
    assert args.func(args) == 2
    assert "--exclude-tables goes with --add-tables" in capsys.readouterr().err


# --- on a real lake: this module's tables in the shared lake --------------------------------------

TOPIC = "add_tables_canal"
DATABASE = "addtab"
TYPES = {"id": "int(11)", "label": "varchar(20)", "total": "decimal(10,2)"}
SOURCE_TABLES = ["orders", "order_items", "tmp_scratch", "late_arrival", "odd{x}"]


def land_records(lake) -> None:
    """One insert into each source table of database `addtab`, Canal FlatMessages on a topic of this
    module's; one build of the shared lake (conftest) makes `built`."""
    messages = [
        json.dumps({"data": [{"id": "1", "label": f"row of {table}", "total": "12.50"}], "database": DATABASE,
                    "es": 1_700_000_000_000 + i, "id": i + 1, "isDdl": False, "mysqlType": TYPES, "old": None,
                    "pkNames": ["id"], "sql": "", "sqlType": {"id": 4, "label": 12, "total": 3}, "table": table,
                    "ts": 1_700_000_000_005 + i, "type": "INSERT"})
        for i, table in enumerate(SOURCE_TABLES)
    ]
    lake.land("canal_flat", kcat_lines(messages, topic=TOPIC))


def test_the_command_and_a_schedules_step_on_a_built_lake(
    built, project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("CDC_LAKE_SCHEMA", built.schema)  # the shared lake's models
    argv = ["add-tables", "--include", f"{DATABASE}.*", "--exclude", f"{DATABASE}.tmp_*",
            "--exclude", f"{DATABASE}.late_*", "--project-dir", str(project)]
    before = files(project)
    dry_args = build_parser().parse_args([*argv, "--dry-run"])
    assert dry_args.func(dry_args) == 0
    assert files(project) == before
    dry = capsys.readouterr().out.splitlines()
    assert dry[1:] == ["would add addtab.order_items: addtab__order_items_current, addtab__order_items_history",
                       "would add addtab.orders: addtab__orders_current, addtab__orders_history",
                       "skipped addtab.odd{x}: TABLE 'odd{x}': must be non-empty, without braces or control characters"]

    args = build_parser().parse_args(argv)
    assert args.func(args) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[1:] == ["added addtab.order_items: addtab__order_items_current, addtab__order_items_history (3 columns)",
                       "added addtab.orders: addtab__orders_current, addtab__orders_history (3 columns)",
                       "skipped addtab.odd{x}: TABLE 'odd{x}': must be non-empty, without braces or control characters",
                       "next: dbt build"]
    yml = (project / TABLES_DIR / "_addtab__orders__models.yml").read_text(encoding="utf-8")
    assert "Source column `total`: MySQL `decimal(10,2)`, Spark `decimal(10,2)`." in yml
    written = files(project)

    assert args.func(args) == 0  # again: nothing to add, no file changed
    assert files(project) == written
    assert "skipped addtab.orders: already exposed" in capsys.readouterr().out

    # a schedule's step before a build, in the same (this process's) session: the table it was told of
    echoed: list[str] = []
    schedule = build_loop.Schedule(project, [], None, 1, None, echo=echoed.append,
                                   table_patterns=TablePatterns((f"{DATABASE}.late_*",)))
    schedule.add_tables_once()
    assert echoed == ["cdc-lake build: exposed 1 new table(s): addtab.late_arrival"]
    assert (project / TABLES_DIR / "addtab__late_arrival_current.sql").exists()
    assert ("addtab", "tmp_scratch") not in {(r["database_name"], r["table_name"])
                                             for r in seed_rows(project / SEED_PATH)}
