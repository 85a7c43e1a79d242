"""Large values and awkward shapes (`cdc-lake generate --large-values 1k,100k,1m`; issue 76, item 3).

Tables of their own in the database `large`, played after the ordinary workload (so the ordinary
workload, and every seed's output without the option, stay as they were), their content drawn
from a random stream of its own:

- `large.values_<size>` per listed size (`1k` = 1,024 bytes, `1m` = 1,048,576 bytes): one row per
  value kind the simulator has, each holding a value of exactly that size (UTF-8 bytes of a
  `longtext`, bytes of a `longblob`, UTF-8 bytes of a `json` document as MySQL prints it), and a
  fourth row holding all three at a third of the size each: a row, so a message, of that size;
- `large.shapes`: a JSON document nested 100 levels deep (MySQL's limit) and a JSON array of
  100,000 elements;
- `large.wide_1000`: a table of 1,000 columns of ten kinds (InnoDB allows 1,017).

Each row is inserted, updated in its large values (a second version of the same size), updated in
its small `note` only (the formats that send partial before images send just that column), and
some are deleted: history has three or four versions per row. The sizes given as "inserted"
(`--large-values-inserted`) have their rows inserted and two of them deleted, nothing updated: each
message carries one image of the size, a lighter run of the largest sizes.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from random import Random
from typing import Any

from cdc_lake.generator import values as V
from cdc_lake.generator.model import Column, TableVersion
from cdc_lake.generator.mysql_types import (
    DATE_TYPE,
    DATETIME,
    JSON_TYPE,
    LONGBLOB_TYPE,
    LONGTEXT_TYPE,
    TEXT_TYPE,
    TIME,
    bit_type,
    decimal_type,
    enum_type,
    int_type,
    temporal_type,
    varchar_type,
)

DATABASE = "large"
MAX_SIZE = 64 * 1024 * 1024  # a guard against typos (`--large-values 1g`); MySQL's longtext holds 4 GB
NESTING_DEPTH = 100  # MySQL refuses a JSON document nested deeper ("exceeds the maximum depth 100")
ARRAY_ELEMENTS = 100_000
WIDE_COLUMNS = 1_000

_SIZE = re.compile(r"(?i)^\s*([0-9]+)\s*([km]?)b?\s*$")
_UNITS = {"": 1, "k": 1024, "m": 1024 * 1024}


def parse_sizes(text: str) -> tuple[str, ...]:
    """`1k,100k,1m,10m` -> the labels in order, without repeats (`1K` and `1k` are one size);
    ValueError on a size that is not <n>[k|m] or above MAX_SIZE."""
    labels: list[str] = []
    for part in text.split(","):
        if not part.strip():
            continue
        label = size_label(part)
        if label not in labels:
            labels.append(label)
    if not labels:
        raise ValueError("--large-values: give sizes such as 1k,100k,1m,10m")
    return tuple(labels)


def size_label(text: str) -> str:
    match = _SIZE.match(text)
    if match is None:
        raise ValueError(f"--large-values: {text.strip()!r} is not a size (<n>, <n>k or <n>m)")
    n, unit = int(match.group(1)), match.group(2).lower()
    if n < 1 or n * _UNITS[unit] > MAX_SIZE:
        raise ValueError(f"--large-values: {text.strip()!r} must be between 1 byte and {MAX_SIZE // 2**20}m")
    return f"{n}{unit}"


def size_bytes(label: str) -> int:
    match = _SIZE.match(label)
    assert match is not None, label
    return int(match.group(1)) * _UNITS[match.group(2).lower()]


# ---------------------------------------------------------------------------------------------
# values of an exact size

# Text fragments: plain ASCII, two-, three- and four-byte UTF-8, and characters JSON must escape
# (quote, backslash, control characters) or that line-splitting gets wrong (U+0085, U+2028, U+2029).
TEXT_FRAGMENTS = (
    "alpha ", "bravo ", "Zoë ", "Ångström ", "naïve ", "日本語 ", "テキスト ", "Влад ", "ελληνικά ", "עברית ",
    "🚀", "✓", "€", '"quoted" ', "back\\slash ", "C:\\Users\\ ", "tab\t", "line\n", "cr\r\n", "\u0001",
    "\u001f", "\b\f", "\u0085", "\u2028", "\u2029", "O'Brien ", "null ", "\\N ", "{\"not\": json} ", "</script> ",
)


def text_of_size(rng: Random, size: int) -> str:
    """Text of exactly `size` UTF-8 bytes, from TEXT_FRAGMENTS (cut on a character boundary, padded
    with ASCII)."""
    count = size // 5 + 1  # fragments average more than 5 bytes
    raw = "".join(rng.choices(TEXT_FRAGMENTS, k=count)).encode()[:size]
    text = raw.decode("utf-8", errors="ignore")
    return text + "x" * (size - len(text.encode()))


def blob_of_size(rng: Random, size: int) -> bytes:
    """`size` random bytes: NUL, 0xff, C1 controls and invalid UTF-8 included."""
    return rng.randbytes(size)


def _mysql_key_order(doc: dict[str, Any]) -> dict[str, Any]:
    """An object's keys as MySQL stores and prints them: by length, then bytes."""
    return {k: doc[k] for k in sorted(doc, key=lambda k: (len(k.encode()), k.encode()))}


def json_of_size(rng: Random, size: int) -> str:
    """A JSON document as MySQL prints it, exactly `size` UTF-8 bytes: an object with a list of
    small items and a string padded to the size (at least ~60 bytes)."""
    items: list[Any] = []
    budget = max(0, size - 60)
    used = 0
    while used < budget:
        i = len(items)
        item = _mysql_key_order({
            "id": i,
            "ok": rng.random() < 0.5,
            "tag": rng.choice(("a", "ü", "日本", 'q"t', "b\\s", "nl\n", "")),
            "note": None if rng.random() < 0.2 else rng.choice(V.PLAIN_WORDS),
        })
        items.append(item)
        used += len(V.mysql_json_text(item).encode()) + 2
    doc: dict[str, Any] = {"n": len(items), "pad": "", "items": items}
    text = V.mysql_json_text(_mysql_key_order(doc))
    while len(text.encode()) > size and items:  # the last item went over: drop it
        items.pop()
        doc["n"] = len(items)
        text = V.mysql_json_text(_mysql_key_order(doc))
    doc["pad"] = "x" * max(0, size - len(text.encode()))
    text = V.mysql_json_text(_mysql_key_order(doc))
    return text


def nested_json(depth: int, leaf: str) -> str:
    """A document of `depth` nested containers (objects and arrays in turn) around a string leaf."""
    doc: Any = leaf
    for level in range(depth, 0, -1):
        doc = {"d": level, "in": doc} if level % 2 else [level, doc]
    return V.mysql_json_text(doc)


def json_depth(doc: Any) -> int:
    """Containers on the deepest path (MySQL's depth less one: it counts the scalar)."""
    depth = 0
    while isinstance(doc, (list, dict)):
        depth += 1
        inner = [v for v in (doc.values() if isinstance(doc, dict) else doc) if isinstance(v, (list, dict))]
        doc = inner[0] if inner else None
    return depth


def big_array(rng: Random, elements: int, version: int) -> str:
    """A JSON array of `elements` elements of every JSON type (its strings name the version, so two
    versions always differ)."""
    kinds: list[Callable[[int], Any]] = [
        lambda i: i, lambda i: f"s{i}v{version}", lambda i: i % 3 == 0, lambda i: None, lambda i: [i],
        lambda i: {"i": i}, lambda i: -i * 1_000_003, lambda i: "ü\"\\",
    ]
    start = rng.randrange(len(kinds))
    return V.mysql_json_text([kinds[(start + i) % len(kinds)](i) for i in range(elements)])


# ---------------------------------------------------------------------------------------------
# the tables and their script


def values_table(label: str) -> TableVersion:
    return TableVersion(
        DATABASE,
        f"values_{label}",
        (
            Column("id", int_type(32), None, nullable=False, null_rate=0.0),
            Column("kind", varchar_type(16), None),
            Column("note", varchar_type(40), None),
            Column("txt", LONGTEXT_TYPE, None),
            Column("bin", LONGBLOB_TYPE, None),
            Column("doc", JSON_TYPE, None),
        ),
        ("id",),
    )


SHAPES = TableVersion(
    DATABASE,
    "shapes",
    (
        Column("id", int_type(32), None, nullable=False, null_rate=0.0),
        Column("kind", varchar_type(16), None),
        Column("note", varchar_type(40), None),
        Column("doc", JSON_TYPE, None),
    ),
    ("id",),
)

# The wide table's column kinds, in turn: (name prefix, type, generator).
_WIDE_KINDS: tuple[tuple[str, Any, Any], ...] = (
    ("i", int_type(32), None),
    ("v", varchar_type(20), V.text_gen(20)),
    ("d", decimal_type(12, 2), None),
    ("t", temporal_type(DATETIME, 6), V.datetime_gen(6)),
    ("dt", DATE_TYPE, V.date_gen),
    ("x", TEXT_TYPE, V.long_text),
    ("j", JSON_TYPE, V.json_gen),
    ("b", bit_type(1), None),
    ("e", enum_type("red", "green", "blue"), None),
    ("tm", temporal_type(TIME, 3), None),
)


def wide_table() -> TableVersion:
    from cdc_lake.generator.tables import _with_default_generators

    columns = [Column("id", int_type(32), None, nullable=False, null_rate=0.0)]
    for n in range(1, WIDE_COLUMNS):
        prefix, type_, gen = _WIDE_KINDS[n % len(_WIDE_KINDS)]
        columns.append(Column(f"{prefix}{n:03d}", type_, gen, nullable=True, null_rate=0.1))
    tv = TableVersion(DATABASE, f"wide_{WIDE_COLUMNS}", tuple(columns), ("id",))
    # the key column has no generator (its value comes from the script): give it one to fill in
    return _with_default_generators(tv)


# One step of the script: (op, table, key, {column: value} for c/u; None for d).
Step = tuple[str, TableVersion, int, dict[str, Any] | None]


def script(
    rng: Random, labels: tuple[str, ...], inserted: tuple[str, ...] = ()
) -> tuple[list[TableVersion], list[Step]]:
    """The tables and the statements (one row each, one per transaction) of the large values:
    `labels` with updates, then `inserted` without."""
    tables: list[TableVersion] = []
    steps: list[Step] = []
    for label in labels + inserted:
        size = size_bytes(label)
        tv = values_table(label)
        tables.append(tv)
        third = max(1, size // 3)

        def fill(kind: str, size: int = size, third: int = third) -> dict[str, Any]:
            if kind == "text":
                return {"txt": text_of_size(rng, size)}
            if kind == "binary":
                return {"bin": blob_of_size(rng, size)}
            if kind == "json":
                return {"doc": json_of_size(rng, size)}
            return {
                "txt": text_of_size(rng, third), "bin": blob_of_size(rng, third), "doc": json_of_size(rng, third),
            }

        kinds = ("text", "binary", "json", "message")
        for key, kind in enumerate(kinds, 1):
            steps.append(("c", tv, key, {"kind": kind, "note": f"{kind} of {label}", **fill(kind)}))
        if label not in inserted:
            for key, kind in enumerate(kinds, 1):
                steps.append(("u", tv, key, fill(kind)))
            for key, kind in enumerate(kinds, 1):
                steps.append(("u", tv, key, {"note": f"{kind} of {label}, seen"}))
        steps.append(("d", tv, 1, None))
        steps.append(("d", tv, 3, None))

    tables.append(SHAPES)
    leaf = 'deepest "leaf" \\ ü 🚀'
    steps.append(("c", SHAPES, 1, {"kind": "nested", "note": "100 levels", "doc": nested_json(NESTING_DEPTH, leaf)}))
    array = big_array(rng, ARRAY_ELEMENTS, 1)
    steps.append(("c", SHAPES, 2, {"kind": "array", "note": "100000 elements", "doc": array}))
    steps.append(("u", SHAPES, 1, {"doc": nested_json(NESTING_DEPTH, leaf + " v2")}))
    steps.append(("u", SHAPES, 2, {"doc": big_array(rng, ARRAY_ELEMENTS, 2)}))
    steps.append(("u", SHAPES, 2, {"note": "seen"}))
    steps.append(("d", SHAPES, 1, None))

    wide = wide_table()
    tables.append(wide)

    def wide_values(share: float) -> dict[str, Any]:
        return {
            c.name: None if rng.random() < c.null_rate else c.gen(rng, 1_709_251_200)
            for c in wide.columns[1:]
            if rng.random() < share
        }

    for key in (1, 2, 3):
        steps.append(("c", wide, key, wide_values(1.0)))
    # every update sets v001 to a text of its own, so none leaves the row as it was
    steps.append(("u", wide, 1, {**wide_values(0.5), "v001": "second"}))
    steps.append(("u", wide, 2, {**wide_values(0.01), "v001": "second"}))
    steps.append(("u", wide, 1, {**wide_values(0.01), "v001": "third"}))
    steps.append(("d", wide, 3, None))
    return tables, steps
