"""Project conventions read from dbt's manifest (`dbt parse`, no lake needed), in the spirit of
dbt-project-evaluator: every model has a grain test, every var the SQL reads is declared in
dbt_project.yml, a staging model reads one source. (test_analyst's test_everything_is_documented
checks the documentation the same way, after `dbt docs generate`.)

Exceptions are listed here with their reason; an exception that no longer applies fails too, so
the lists cannot go stale.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml

from cdc_lake.env import PROJECT_DIR
from cdc_lake.testing.harness import invoke_dbt

GRAIN_TESTS = {"unique", "unique_combination"}

# Views whose grain is tested where their rows are stored: testing a view re-runs its whole query
# (the staging views parse every raw record again) at every build.
UNTESTED_GRAIN = {
    "stg_canal_flat__changes": "one row per change delivery; stored and tested as cdc_changelog.change_id",
    "stg_kafka_river_canal__changes": "as stg_canal_flat__changes",
    "stg_debezium__changes": "as stg_canal_flat__changes",
    "stg_tencent_dts__changes": "as stg_canal_flat__changes",
    "stg_lindorm__changes": "as stg_canal_flat__changes",
    "stg_canal_flat__schema_changes": "one row per DDL delivery; stored and tested as cdc_schema_changes",
    "stg_debezium__schema_changes": "as stg_canal_flat__schema_changes",
    "stg_tencent_dts__schema_changes": "as stg_canal_flat__schema_changes",
    "stg_tencent_dts__heartbeats": "one row per heartbeat record, each a row of the tested base model",
    "stg_raw__records": "one row per raw record; the raw tables are unique on Kafka coordinates by landing",
    "int_changes_unioned": "the union of the staging changes, duplicates included by design",
    "int_schema_changes_unioned": "the union of the staging DDL, duplicates included by design",
    "int_heartbeats_unioned": "the union of the staging heartbeats",
    "int_raw_records_unioned": "the union of the base models, each tested on its grain",
    "cdc_lag": "a monitoring view: one row per group of its final aggregate",
    "cdc_reconciliation": "a monitoring view: one row per group of its final aggregate",
    "cdc_consumer_lag": "a monitoring view over kafka_end_offsets, one row per topic-partition",
}

# Staging models that read more than one source, and why.
MULTI_SOURCE_STAGING = {
    "stg_raw__records": "counts every raw table's records, independently of the parsing, for cdc_reconciliation",
}

VAR_CALL = re.compile(r"""\bvar\(\s*['"](\w+)['"]""")


@pytest.fixture(scope="module")
def manifest(tmp_path_factory) -> dict:
    target = tmp_path_factory.mktemp("parse_target")
    invoke_dbt(PROJECT_DIR, ["parse", "--target-path", str(target)])
    return json.loads((Path(target) / "manifest.json").read_text())


def project_models(manifest: dict) -> dict[str, dict]:
    return {
        node["name"]: node
        for node in manifest["nodes"].values()
        if node["resource_type"] == "model" and node["package_name"] == "cdc_lake"
    }


def test_every_model_has_a_grain_test(manifest):
    grain_tested = set()
    for node in manifest["nodes"].values():
        if node["resource_type"] == "test" and (node.get("test_metadata") or {}).get("name") in GRAIN_TESTS:
            grain_tested.update(node["depends_on"]["nodes"])
    models = project_models(manifest)
    missing = {name for name, node in models.items() if node["unique_id"] not in grain_tested}
    assert missing - set(UNTESTED_GRAIN) == set(), "models without a unique / unique_combination test"
    # an exception is a view without a grain test: not a stored table, not since tested
    stale = {name for name in UNTESTED_GRAIN if name not in missing or models[name]["config"]["materialized"] != "view"}
    assert stale == set(), "exceptions that no longer apply"


def test_every_var_used_is_declared(manifest):
    declared = set(yaml.safe_load((PROJECT_DIR / "dbt_project.yml").read_text())["vars"])
    used: dict[str, set[str]] = {}
    code = [
        (node["original_file_path"], node.get("raw_code") or "")
        for node in manifest["nodes"].values()
        if node["package_name"] == "cdc_lake"
    ] + [
        (macro["original_file_path"], macro["macro_sql"])
        for macro in manifest["macros"].values()
        if macro["package_name"] == "cdc_lake"
    ]
    for path, text in code:
        for name in VAR_CALL.findall(text):
            used.setdefault(name, set()).add(path)
    assert used, "no var() call found: the pattern no longer matches the project's SQL"
    assert {name: sorted(paths) for name, paths in used.items() if name not in declared} == {}


def test_each_staging_model_reads_one_source(manifest):
    sources = {uid: source["name"] for uid, source in manifest["sources"].items()}
    models = project_models(manifest)
    by_id = {node["unique_id"]: node for node in models.values()}
    reads: dict[str, set[str]] = {}
    for name, node in models.items():
        if not node["original_file_path"].startswith("models/staging/"):
            continue
        found = set()
        for parent in node["depends_on"]["nodes"]:
            if parent in sources:
                found.add(sources[parent])
            elif parent in by_id and by_id[parent]["original_file_path"].startswith("models/staging/"):
                # a staging model built on its format's base model reads the base model's source
                found.update(sources[p] for p in by_id[parent]["depends_on"]["nodes"] if p in sources)
            else:
                found.add(f"non-staging {parent}")
        reads[name] = found
    assert reads, "no staging models found"
    wrong = {name: sorted(found) for name, found in reads.items() if len(found) != 1}
    assert {name: found for name, found in wrong.items() if name not in MULTI_SOURCE_STAGING} == {}
    stale = {name for name in MULTI_SOURCE_STAGING if len(reads.get(name, ())) <= 1}
    assert stale == set(), "exceptions that no longer apply"


def test_every_place_that_lists_the_formats_agrees(manifest):
    """The format list lives in dbt_project.yml (var cdc_formats), read by macro cdc_formats and by
    cdc_lake.formats; the accepted values of source_format call the macro; the raw sources, which
    dbt cannot generate, must list the same formats (docs/adding_a_format.md)."""
    from cdc_lake.formats import FORMATS

    models = project_models(manifest)
    by_id = {node["unique_id"]: name for name, node in models.items()}
    # int_changes_unioned refs stg_<format>__changes for every format of cdc_formats()
    unioned = {by_id[p] for p in models["int_changes_unioned"]["depends_on"]["nodes"]}
    from_macro = {re.fullmatch(r"stg_(\w+)__changes", name).group(1) for name in unioned}
    raw = {
        source["name"].removeprefix("raw_")
        for source in manifest["sources"].values()
        if source["source_name"] == "cdc_raw" and source["name"].startswith("raw_")
    }
    accepted = {
        node["test_metadata"]["kwargs"]["values"]
        for node in manifest["nodes"].values()
        if node["resource_type"] == "test"
        and (node.get("test_metadata") or {}).get("name") == "accepted_values"
        and node["test_metadata"]["kwargs"].get("column_name") == "source_format"
    }
    assert accepted, "no accepted_values test on source_format"
    assert from_macro == set(FORMATS) == raw
    assert accepted == {"{{ cdc_formats() }}"}


def test_the_raw_table_ddl_agrees_in_python_and_the_hook(manifest):
    """The raw tables are created by the landing (Python, RAW_COLUMNS and RAW_TABLE_PROPERTIES) or by
    the on-run-start hook create_raw_tables, whichever runs first on a lake; both must create the
    same table. The hook assembles its statement from string literals; joined, they must give the
    same columns and table properties."""
    from cdc_lake.landing import RAW_COLUMNS, RAW_TABLE_PROPERTIES

    macro = manifest["macros"]["macro.cdc_lake.create_raw_tables"]["macro_sql"]
    start = macro.index('"create table if not exists "')
    statement = macro[start : macro.index(") -%}", start)]  # the first run_query call's argument
    text = "".join(re.findall(r'"([^"]*)"', statement))
    found = re.search(r"\((.*)\) using iceberg tblproperties \((.*)\)$", text)
    assert found, text

    def words(sql: str) -> str:
        return " ".join(sql.split())

    assert words(found.group(1)) == words(RAW_COLUMNS)
    assert words(found.group(2)) == words(RAW_TABLE_PROPERTIES)


@pytest.mark.parametrize("table", ["verification_results", "cdc_set_aside_records", "cdc_schema_acceptances"])
def test_the_ddl_of_the_raw_schemas_other_tables_agrees_in_python_and_the_hook(manifest, table):
    """`cdc-lake verify` creates verification_results (cdc_lake.verify.run.RESULTS_COLUMNS),
    `cdc-lake set-aside` cdc_set_aside_records (cdc_lake.set_aside.SET_ASIDE_COLUMNS) and
    `cdc-lake accept-schema` cdc_schema_acceptances (cdc_lake.schema_acceptance.ACCEPTANCES_COLUMNS)
    unless the hook did first, for the models that read them; both must create the same table."""
    from cdc_lake.schema_acceptance import ACCEPTANCES_COLUMNS
    from cdc_lake.set_aside import SET_ASIDE_COLUMNS
    from cdc_lake.verify.run import RESULTS_COLUMNS

    columns = {
        "verification_results": RESULTS_COLUMNS, "cdc_set_aside_records": SET_ASIDE_COLUMNS,
        "cdc_schema_acceptances": ACCEPTANCES_COLUMNS,
    }[table]
    macro = manifest["macros"]["macro.cdc_lake.create_raw_tables"]["macro_sql"]
    start = macro.index(f'".{table} ("')
    statement = macro[start : macro.index(") -%}", start)]
    text = "".join(re.findall(r'"([^"]*)"', statement))
    found = re.search(rf"\.{table} \((.*)\) using iceberg$", text)
    assert found, text
    assert " ".join(found.group(1).split()) == " ".join(columns.split())


def test_each_override_of_a_dbt_macro_is_pinned_to_the_macro_it_replaces(manifest):
    """A project macro named like one of dbt's or dbt-spark's replaces it for the whole project, and
    one named `spark__<name>` where dbt has only `default__<name>` replaces that through dbt's
    adapter dispatch. Each such override says in one line why it exists (meta.why) and pins, by
    SHA-256, the text of every macro it replaces (meta.overrides). When a dbt upgrade changes a
    replaced macro, this fails: the override was written against the old text and must be read
    again (then the pin updated)."""
    import hashlib

    macros = manifest["macros"]
    ours = {m["name"]: m for m in macros.values() if m["package_name"] == "cdc_lake"}
    upstream_names = {m["name"] for m in macros.values() if m["package_name"] in ("dbt", "dbt_spark")}

    def replaced_by_ours(name: str) -> bool:
        dispatched = name.removeprefix("default__")
        return name in ours or (name.startswith("default__") and f"spark__{dispatched}" in ours
                                and f"spark__{dispatched}" not in upstream_names)

    upstream = {
        f"{m['package_name']}.{m['name']}": hashlib.sha256(m["macro_sql"].encode()).hexdigest()
        for m in macros.values()
        if m["package_name"] in ("dbt", "dbt_spark") and replaced_by_ours(m["name"])
    }
    assert {"dbt.default__get_test_sql", "dbt.default__get_where_subquery",
            "dbt_spark.materialization_incremental_spark"} <= set(upstream), upstream
    assert len(upstream) >= 8, upstream
    pinned: dict[str, str] = {}
    for name, macro in ours.items():
        meta = macro.get("meta") or {}
        if "overrides" in meta:
            why = meta.get("why") or ""
            assert why and "\n" not in why.strip(), f"{name}: meta.why must say in one line why it overrides dbt"
            pinned.update(meta["overrides"])
    unpinned = sorted(set(upstream) - set(pinned))
    assert unpinned == [], f"overrides without a pin (meta.overrides in the macro's yml): {unpinned}"
    gone = sorted(set(pinned) - set(upstream))
    assert gone == [], f"pinned macros dbt no longer has (the override is dead code now): {gone}"
    changed = sorted(key for key, digest in pinned.items() if upstream[key] != digest)
    assert changed == [], f"dbt changed the macros these override; read them again, then update the pins: {changed}"


# A `run_query` whose SQL starts with one of these words writes to the lake or its catalog.
WRITING_QUERY = re.compile(
    r"run_query\(\s*(?:[\"'](?:alter|create|drop|insert|merge|delete|update|truncate|call)\b|cdc_rewrite_data_files_sql)",
    re.IGNORECASE,
)


def macros_a_compile_reaches(manifest: dict, code: str) -> set[str]:
    """The project's macros that rendering `code` (a model's SQL) can call, directly or through
    other macros: the names it calls, then each one's dependencies as dbt recorded them."""
    ours = {m["name"]: uid for uid, m in manifest["macros"].items() if m["package_name"] == "cdc_lake"}
    todo = [ours[name] for name in re.findall(r"\b(\w+)\s*\(", code) if name in ours]
    seen: set[str] = set()
    while todo:
        uid = todo.pop()
        if uid not in seen:
            seen.add(uid)
            todo.extend(d for d in manifest["macros"][uid]["depends_on"]["macros"] if d in manifest["macros"])
    return seen


def test_no_model_writes_while_it_compiles(manifest):
    """A model's compile reads the catalog but writes nothing: records of a build (the batch a model
    wrote, a typed table's column list) are written by hooks and materializations, where dbt logs
    the statement, never as a side effect of rendering SQL (`dbt compile`, docs, sqlfluff render
    it too). The record of a batch is a note in the compiled SQL (tested_batch_note) that the
    incremental materialization writes (record_tested_batch_sql); build cache entries are notes in
    the compiled SQL that the on-run-end writes (cache_note)."""
    writers = {
        uid for uid, m in manifest["macros"].items()
        if m["package_name"] == "cdc_lake" and WRITING_QUERY.search(m["macro_sql"])
    }
    # the rule can fail: these macros write, and no model may reach them while it compiles
    assert {"macro.cdc_lake.build_cache_put", "macro.cdc_lake.cdc_forget_passes"} <= writers
    offenders = {
        name: sorted(macros_a_compile_reaches(manifest, node["raw_code"]) & writers)
        for name, node in project_models(manifest).items()
    }
    assert {name: found for name, found in offenders.items() if found} == {}


def test_no_macro_or_model_file_repeats_its_yml(manifest):
    """Each macro is documented once, in its yml (docs/design_choices.md, "How the SQL is
    documented"): a macro's file does not open with a description that would say it again (a
    comment of more than three lines; a shorter one explains the line under it), and every
    macro of the project has a yml description."""
    opening_comment = re.compile(r"^\s*\{#(.*?)#\}", re.S)
    repeated, undocumented = [], []
    for macro in manifest["macros"].values():
        if macro["package_name"] != "cdc_lake":
            continue
        opening = opening_comment.match(macro["macro_sql"].split("%}", 1)[1])
        if opening and opening.group(1).count("\n") >= 3:
            repeated.append(macro["name"])
        if not (macro.get("description") or "").strip():
            undocumented.append(macro["name"])
    assert repeated == [] and undocumented == [], (repeated, undocumented)
    # the rule can fail: the manifest holds the macros' text
    assert "{#" in manifest["macros"]["macro.cdc_lake.materialization_incremental_spark"]["macro_sql"]
    # a model likewise: its yml describes it; a comment before its first CTE explains the line under it
    described_in_sql = []
    for node in manifest["nodes"].values():
        if node["resource_type"] != "model" or node["package_name"] != "cdc_lake":
            continue
        head = re.split(r"(?m)^with\b", node["raw_code"], maxsplit=1)[0]
        runs = re.findall(r"(?m)(?:^--.*\n)+", head)
        if any(run.count("\n") > 3 for run in runs):
            described_in_sql.append(node["name"])
    assert described_in_sql == [], described_in_sql


def test_the_design_notes_point_at_the_lines_they_name():
    """docs/design_choices.md's "What a build does" reads with the files beside it: each
    `path.sql:N` link lands on a macro or a numbered step, and each "`macro`, line N" of the
    materialization names the line where that macro starts. A change that moves them fails here."""
    notes = (PROJECT_DIR / "docs" / "design_choices.md").read_text()
    wrong = []
    for path, line in re.findall(r"\(\.\./((?:macros|models)/[\w/]+\.sql)#L(\d+)\)", notes):
        text = (PROJECT_DIR / path).read_text().splitlines()[int(line) - 1].strip()
        if not text.startswith(("{% macro", "{% materialization", "{% test", "{#-")):
            wrong.append(f"{path}:{line}: {text}")
    materialization = (PROJECT_DIR / "macros" / "materializations" / "incremental.sql").read_text().splitlines()
    named = re.findall(r"\(`(\w+)`, line (\d+)\)", notes)
    for name, line in named:
        if f"macro {name}(" not in materialization[int(line) - 1]:
            wrong.append(f"incremental.sql:{line} is not where {name} starts")
    assert named and wrong == [], wrong


def test_the_batch_travels_from_compile_to_materialization_in_the_compiled_sql(manifest):
    """What a model's compile learnt about its batch (are there new rows, where does it start)
    reaches its materialization as notes in the compiled SQL, which anyone can read in
    target/compiled: never through the memo, and no pre-hook or override of dbt's write takes part.
    The notes the macros write are the notes the materialization reads."""
    macros = manifest["macros"]
    ours = {m["name"]: m for m in macros.values() if m["package_name"] == "cdc_lake"}
    materialization = ours["materialization_incremental_spark"]["macro_sql"]
    assert "batch_notes(model.compiled_code)" in materialization
    reader = ours["batch_notes"]["macro_sql"]
    writer = ours["landed_since_last_build"]["macro_sql"]
    assert "cdc_lake batch: new rows" in writer and "cdc_lake batch: empty" in writer
    assert "cdc_lake batch: (new rows|empty)" in reader
    assert "cdc_lake tested batch: " in ours["tested_batch_note"]["macro_sql"] and "cdc_lake tested batch: " in reader
    # no hand-off through the memo on the write's path (the materialization only keeps the
    # invocation's copy of the catalog's batch records true to what it wrote), no pre-hook, no
    # override of dbt's write
    write_path = ["merge_batch_sql", "batch_notes", "record_tested_batch_sql", "landed_since_last_build",
                  "tested_batch_note"]
    assert not [name for name in write_path if "build_memo" in ours[name]["macro_sql"]]
    assert re.findall(r"build_memo\(\)\.setdefault\('(\w+)'", materialization) == ["tested_batches"]
    for node in manifest["nodes"].values():
        if node["resource_type"] == "model" and node["package_name"] == "cdc_lake":
            assert not node["config"].get("pre-hook"), node["name"]
    gone = {"spark__get_merge_sql", "get_insert_into_sql", "spark__create_temporary_view",
            "source_is_empty", "batch_source", "mark_batch", "batch_marked_empty", "record_tested_batch"}
    assert gone.isdisjoint(ours), sorted(gone & set(ours))


def test_the_build_memo_lives_in_one_graph_object_per_invocation(manifest):
    """build_memo keeps what one invocation read from the catalog in dbt's `graph` context object
    (its threads share it; macros have no other state that outlives a node). Pinned: every node's
    context hands out the manifest's one flat graph, built once per invocation, not a copy."""
    import inspect

    from dbt.context.providers import ProviderContext
    from dbt.contracts.graph.manifest import Manifest

    source = inspect.getsource(ProviderContext.graph.fget)
    assert source.rstrip().endswith("return self.manifest.flat_graph"), source
    assert "self.flat_graph = {" in inspect.getsource(Manifest.build_flat_graph)
    assert "graph.setdefault('cdc_lake_build_memo'" in manifest["macros"]["macro.cdc_lake.build_memo"]["macro_sql"]


PACKAGE = PROJECT_DIR / "src" / "cdc_lake"


def module_imports() -> dict[str, set[str]]:
    """cdc_lake module -> the cdc_lake modules it imports, at module level or inside a function."""
    import ast

    def name_of(path: Path) -> str:
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)

    modules = {name_of(path): path for path in PACKAGE.rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        found: set[str] = set()
        package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                found |= {alias.name for alias in node.names}
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    base = ".".join(package.split(".")[: len(package.split(".")) - node.level + 1] + [base]).strip(".")
                found.add(base)
                found |= {f"{base}.{alias.name}" for alias in node.names}
        graph[name] = {m for m in found if m in modules and m != name}
    return graph


def test_the_package_imports_form_no_circle():
    """No module of cdc_lake imports, directly or through others, a module that imports it back (a
    package's __init__ aside, which may re-export its own modules)."""
    graph = module_imports()
    assert len(graph) > 40
    path: list[str] = []
    done: set[str] = set()

    def visit(module: str) -> None:
        if module in path:
            cycle = path[path.index(module):] + [module]
            raise AssertionError("import circle: " + " -> ".join(cycle))
        if module in done:
            return
        path.append(module)
        for imported in sorted(graph[module]):
            if not imported.startswith(module + "."):  # a package importing its own modules
                visit(imported)
        path.pop()
        done.add(module)

    for module in sorted(graph):
        visit(module)


def test_every_server_process_is_started_by_the_one_supervisor():
    """The package starts server processes in one place (cdc_lake.servers.supervisor.LocalServer);
    each server is a LocalServer: the product's (metastore, Kafka broker, cluster daemons) and the
    end-to-end rig's (MariaDB, Kafka Connect, Canal)."""
    from cdc_lake.servers.cluster import Daemon
    from cdc_lake.servers.kafka_broker import LocalKafka
    from cdc_lake.servers.metastore import MetastoreServer
    from cdc_lake.servers.supervisor import LocalServer
    from cdc_lake.testing.canal_server import CanalServer
    from cdc_lake.testing.kafka_connect import KafkaConnect
    from cdc_lake.testing.mariadb import LocalMariaDB

    spawning = sorted(str(p.relative_to(PACKAGE)) for p in PACKAGE.rglob("*.py") if "Popen(" in p.read_text())
    assert spawning == ["servers/supervisor.py"]
    for server in (Daemon, LocalKafka, MetastoreServer, CanalServer, KafkaConnect, LocalMariaDB):
        assert issubclass(server, LocalServer), server


RIG = ("cdc_lake.testing", "cdc_lake.bench", "cdc_lake.generator")

# Product modules that may import part of the rig: module -> (the part, why).
RIG_IMPORTS = {
    "cdc_lake.cli.generate": ("cdc_lake.generator", "`cdc-lake generate` is the CLI's door to the workload simulator"),
}


def test_the_product_never_imports_the_test_rig():
    """The product (every cdc_lake module outside testing/, bench/ and generator/; servers/ is product)
    imports none of the rig, at module level or inside a function, however spelt (`import
    cdc_lake.testing.x`, `from cdc_lake import bench`, relative): the product must run without it."""

    def part_of(module: str, package: str) -> bool:
        return module == package or module.startswith(package + ".")

    graph = module_imports()
    product = {name: imported for name, imported in graph.items() if not any(part_of(name, r) for r in RIG)}
    assert {"cdc_lake.cli", "cdc_lake.servers.supervisor", *RIG_IMPORTS} <= set(product), sorted(product)
    found = {name: sorted(m for m in imported if any(part_of(m, r) for r in RIG)) for name, imported in product.items()}
    wrong = {
        name: [m for m in rig if name not in RIG_IMPORTS or not part_of(m, RIG_IMPORTS[name][0])]
        for name, rig in found.items()
    }
    assert {name: rig for name, rig in wrong.items() if rig} == {}, "product modules that import the test rig"
    stale = sorted(name for name in RIG_IMPORTS if not found[name])
    assert stale == [], "exceptions that no longer apply"
