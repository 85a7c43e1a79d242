"""`cdc-lake generate --large-values` (issue 76, item 3): values of the listed sizes in every value kind,
the awkward shapes, their exact truth, every format's records decoding to it; and the output
without the option byte for byte as before (other tests rely on what a seed produces).

Pure Python and quick: the lake's side is test_large_values_lake (integration).
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter, defaultdict
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pytest
import test_generator
from test_generator import RESET, carried, decoded_changes, key_of, truth

from cdc_lake.cli import main
from cdc_lake.formats import FORMATS
from cdc_lake.generator import Options, generate
from cdc_lake.generator.large import (
    ARRAY_ELEMENTS,
    NESTING_DEPTH,
    WIDE_COLUMNS,
    json_depth,
    parse_sizes,
    size_bytes,
)

# sha256 over the (relative path, bytes) of every file `generate` wrote, before --large-values
# existed (main 907464e): the ordinary workload must stay exactly as it was.
DEFAULT_OUTPUT_SHA256 = {
    (42, 1500, False): "44b9df9c0c5b53cb617179d55202762ea13d1fd1e341b88d33a1085c0660b119",
    (42, 1500, True): "c3d7b97b68f8f6f3bc8d73f19df7f7ea3451fa10271c145f85b898f9ec633826",
    (20261122, 400, False): "b9b5901eb8a9bc7cd954bd13ec18097015db16d640306857bbe5dcd3b5378ebd",
}


def output_digest(out: Path) -> str:
    digest = hashlib.sha256()
    for path in sorted(p for p in out.rglob("*") if p.is_file()):
        digest.update(str(path.relative_to(out)).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


@pytest.mark.parametrize(("seed", "changes", "faults"), sorted(DEFAULT_OUTPUT_SHA256))
def test_output_without_the_option_is_unchanged(tmp_path, seed, changes, faults):
    opts = Options(seed=seed, changes=changes, out=tmp_path)
    if faults:
        opts = Options(seed=seed, changes=changes, out=tmp_path, duplicates=0.05, out_of_order=True,
                       malformed=0.03, batches=3)
    generate(opts)
    assert output_digest(tmp_path) == DEFAULT_OUTPUT_SHA256[(seed, changes, faults)]


def test_sizes_parse():
    assert parse_sizes("1k,100K,1m, 10m,1k") == ("1k", "100k", "1m", "10m")
    assert [size_bytes(s) for s in ("1k", "1m", "10m", "500")] == [1024, 1 << 20, 10 << 20, 500]
    for bad in ("", "1g", "k", "0k", "65m", "1.5m"):
        with pytest.raises(ValueError):
            parse_sizes(bad)


SIZES = "1k,100k"


@pytest.fixture(scope="module")
def large(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("gen_large")
    assert main(["generate", "--seed", "5", "--changes", "30", "--large-values", SIZES, "--out", str(out),
                 "--quiet"]) == 0
    return out


def test_the_ordinary_workload_comes_first_and_unchanged(large, tmp_path):
    """The large tables are played after the ordinary workload: its truth is a prefix."""
    generate(Options(seed=5, changes=30, out=tmp_path))
    for name in ("changes.jsonl", "ddl.jsonl"):
        plain = (tmp_path / "truth" / name).read_bytes()
        assert (large / "truth" / name).read_bytes().startswith(plain), name
    summary = json.loads((large / "truth" / "summary.json").read_text())
    assert summary["options"]["large_values"] == ["1k", "100k"]


def test_values_of_every_kind_have_the_exact_size(large):
    versions = defaultdict(list)
    for v in truth(large, "history.jsonl"):
        if v["database"] == "large" and v["table"].startswith("values_"):
            versions[(v["table"], v["key"]["id"])].append(v)
    for label in parse_sizes(SIZES):
        size = size_bytes(label)
        for key, kind, column in ((1, "text", "txt"), (2, "binary", "bin"), (3, "json", "doc")):
            history = versions[(f"values_{label}", str(key))]
            assert len(history) == 3, (label, kind)
            for v in history:
                value = v["image"][column]
                assert v["image"]["kind"] == kind
                assert (len(bytes.fromhex(value)) if column == "bin" else len(value.encode())) == size
        message = versions[(f"values_{label}", "4")]
        for v in message:
            image = v["image"]
            total = len(image["txt"].encode()) + len(bytes.fromhex(image["bin"])) + len(image["doc"].encode())
            assert size - 3 <= total <= size
    text = next(v["image"]["txt"] for k, vs in versions.items() for v in vs if v["image"]["txt"])
    for ch in ("\u2028", "\u0085", '"', "\\", "\n", "\u0001", "🚀", "日本語"):
        assert ch in text, ch


def test_shapes_and_the_wide_table(large):
    history = [v for v in truth(large, "history.jsonl") if v["database"] == "large"]
    nested = [v for v in history if v["table"] == "shapes" and v["image"]["kind"] == "nested"]
    array = [v for v in history if v["table"] == "shapes" and v["image"]["kind"] == "array"]
    assert len(nested) == 2 and len(array) == 3
    assert {json_depth(json.loads(v["image"]["doc"])) for v in nested} == {NESTING_DEPTH}
    assert {len(json.loads(v["image"]["doc"])) for v in array} == {ARRAY_ELEMENTS}
    wide = [v for v in history if v["table"] == f"wide_{WIDE_COLUMNS}"]
    assert len(wide) == 6 and {len(v["image"]) for v in wide} == {WIDE_COLUMNS}
    tables = {t["table"]: t for t in json.loads((large / "truth" / "tables.json").read_text())["tables"]}
    assert len(tables[f"wide_{WIDE_COLUMNS}"]["columns"]) == WIDE_COLUMNS
    assert tables["values_1k"]["formats"] == list(FORMATS)
    assert [c["mysql_type"] for c in tables["values_1k"]["columns"]][3:] == ["longtext", "longblob", "json"]


@pytest.mark.parametrize("fmt", FORMATS)
def test_every_format_decodes_to_the_truth(large, fmt, monkeypatch):
    """The independent decoders of test_generator read every format's records of the large tables
    back to the truth's changes, key by key and in order (their MySQL-text decoding told that
    longblob is binary, as blob is)."""
    monkeypatch.setattr(test_generator, "BINARY_TYPES", (*test_generator.BINARY_TYPES, "longblob"))
    wanted = {t for t in carried(large, fmt) if t[0] == "large"}
    expected: dict[tuple[Any, ...], list[tuple[Any, ...]]] = defaultdict(list)
    for ch in truth(large, "changes.jsonl"):
        if (ch["database"], ch["table"]) in wanted:
            expected[(ch["database"], ch["table"], key_of(ch["key"]))].append(
                (ch["op"], ch["before"], ch["after"], ch["commit_time"])
            )
    got: dict[tuple[Any, ...], list[tuple[Any, ...]]] = defaultdict(list)
    for ch in decoded_changes(large, fmt):
        if ch["op"] == RESET or ch["database"] != "large":
            continue
        commit = datetime.fromtimestamp(ch["commit_ms"] / 1000, timezone.utc).strftime("%Y-%m-%d %H:%M:%S")
        got[(ch["database"], ch["table"], key_of(ch["key"]))].append((ch["op"], ch["before"], ch["after"], commit))
    assert Counter({k: len(v) for k, v in got.items()}) == Counter({k: len(v) for k, v in expected.items()})
    for k in expected:
        assert got[k] == expected[k], k


def test_inserted_sizes_are_inserted_and_half_deleted_only(tmp_path):
    """`--large-values-inserted`: the size's rows inserted, two of the four deleted, none updated,
    so no message carries two images of the size; a size in both lists is refused."""
    out = tmp_path / "w"
    assert main(["generate", "--seed", "5", "--changes", "30", "--large-values", "1k", "--large-values-inserted",
                 "2k", "--out", str(out), "--quiet"]) == 0
    ops: dict[str, list[str]] = defaultdict(list)
    for ch in truth(out, "changes.jsonl"):
        if ch["database"] == "large" and ch["table"].startswith("values_"):
            ops[ch["table"]].append(ch["op"])
    assert Counter(ops["values_2k"]) == {"c": 4, "d": 2}
    assert Counter(ops["values_1k"]) == {"c": 4, "u": 8, "d": 2}
    live = {v["key"]["id"] for v in truth(out, "current.jsonl") if v["table"] == "values_2k"}
    assert live == {"2", "4"}  # the binary value and the message of all three kinds stay
    summary = json.loads((out / "truth" / "summary.json").read_text())
    assert summary["options"]["large_values_inserted"] == ["2k"]
    assert main(["generate", "--seed", "5", "--changes", "30", "--large-values", "1k", "--large-values-inserted",
                 "1k", "--out", str(tmp_path / "both"), "--quiet"]) == 2
