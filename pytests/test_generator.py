"""`cdc-lake generate`: reproducible output, kcat-shaped records, and payloads that decode to the truth.

Pure Python and fast (no Spark). The decoders below are written independently of the generator's
encoders: they read the records the way a consumer of each tool would, turn values into the canonical
text of docs/canonical_values.md, replay the changes in each format's source order and compare the
result with DIR/truth/.
"""

from __future__ import annotations

import base64
import json
import re
from collections import Counter, defaultdict
from datetime import date, datetime, timedelta, timezone
from decimal import Context, Decimal
from pathlib import Path
from typing import Any

import pytest

from cdc_lake.cli import main
from cdc_lake.formats import FORMATS
from cdc_lake.generator import Options, generate
from cdc_lake.kcat import parse_kcat_line

CHANGES = 1500
KCAT_KEYS = ["topic", "partition", "offset", "tstype", "ts", "broker", "key", "payload"]
EPOCH = datetime(1970, 1, 1)


# ---------------------------------------------------------------------------------------------------
# fixtures


@pytest.fixture(scope="module")
def clean(tmp_path_factory) -> Path:
    """A run without faults, one batch."""
    out = tmp_path_factory.mktemp("gen_clean")
    generate(Options(seed=42, changes=CHANGES, out=out))
    return out


@pytest.fixture(scope="module")
def faulty(tmp_path_factory) -> Path:
    """Same seed, with every fault and three batches."""
    out = tmp_path_factory.mktemp("gen_faulty")
    generate(Options(seed=42, changes=CHANGES, out=out, duplicates=0.05, out_of_order=True, malformed=0.03, batches=3))
    return out


def jsonl(path: Path) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle]


def records(out: Path, fmt: str) -> list[dict[str, Any]]:
    """All records of a format, in landing order (batch files in order)."""
    files = sorted(out.glob(f"{fmt}.jsonl")) or sorted(out.glob(f"{fmt}-*.jsonl"))
    assert files, f"no output for {fmt}"
    return [rec for path in files for rec in jsonl(path)]


def truth(out: Path, name: str) -> list[dict[str, Any]]:
    return jsonl(out / "truth" / name)


def tables(out: Path) -> dict[tuple[str, str], dict[str, Any]]:
    desc = json.loads((out / "truth" / "tables.json").read_text(encoding="utf-8"))
    return {(t["database"], t["table"]): t for t in desc["tables"]}


RESET = "reset"  # the op of a decoded TRUNCATE or DROP TABLE
DROP_OR_TRUNCATE = re.compile(r"(?i)^\s*(?:DROP\s+TABLE|TRUNCATE(?:\s+TABLE)?)\s+`?(\w+)`?")


def table_reset(database: str, statement: str, order: tuple[Any, ...], commit_ms: int) -> list[dict[str, Any]]:
    """A DDL statement as a decoded change: a reset of its table if it removes the table's rows."""
    match = DROP_OR_TRUNCATE.match(statement)
    if match is None:
        return []
    return [{"database": database, "table": match.group(1), "op": RESET, "key": {}, "before": None,
             "after": None, "order": order, "commit_ms": commit_ms}]


def key_of(key: dict[str, str]) -> tuple[tuple[str, str], ...]:
    return tuple(sorted(key.items()))


def image_text(image: dict[str, Any] | None) -> str:
    return json.dumps(image, sort_keys=True, ensure_ascii=False)


def apply_change(state: dict[tuple[Any, ...], Any], ch: dict[str, Any]) -> None:
    """Replay one change: a keyed row is replaced or removed; a keyless table is a multiset of
    images (an insert adds one, a delete removes one; keys hold the count); a table reset
    (TRUNCATE, DROP TABLE) removes every row of its table."""
    if ch["op"] == RESET:
        for k in [k for k in state if k[:2] == (ch["database"], ch["table"])]:
            del state[k]
        return
    if ch["key"]:
        k = (ch["database"], ch["table"], key_of(ch["key"]))
        if ch["op"] == "d":
            state.pop(k, None)
        else:
            state[k] = image_text(ch["after"])
        return
    for image, step in ((ch["before"], -1), (ch["after"], 1)):
        if image is None or ch["op"] == "u":
            continue  # an update of a keyless row that changes it was split; one that does not moves nothing
        k = (ch["database"], ch["table"], ("image", image_text(image)))
        state[k] = state.get(k, 0) + step
        if state[k] == 0:
            del state[k]


def current_state(out: Path, wanted: set[tuple[str, str]]) -> dict[tuple[Any, ...], Any]:
    """The truth's current state in the shape `apply_change` builds."""
    state: dict[tuple[Any, ...], Any] = {}
    for row in truth(out, "current.jsonl"):
        if (row["database"], row["table"]) in wanted:
            apply_change(state, {**row, "op": "c", "before": None, "after": row["image"]})
    return state


# ---------------------------------------------------------------------------------------------------
# canonical text helpers (independent of the generator)


def trim_fraction(text: str) -> str:
    if "." not in text:
        return text
    head, frac = text.split(".")
    frac = frac.rstrip("0")
    return f"{head}.{frac}" if frac else head


def datetime_from_micros(us: int) -> str:
    dt = EPOCH + timedelta(microseconds=us)
    return trim_fraction(dt.strftime("%Y-%m-%d %H:%M:%S.%f"))


def time_from_micros(us: int) -> str:
    sign = "-" if us < 0 else ""
    us = abs(us)
    hours, rest = divmod(us, 3_600_000_000)
    minutes, rest = divmod(rest, 60_000_000)
    seconds, micros = divmod(rest, 1_000_000)
    return trim_fraction(f"{sign}{hours:02d}:{minutes:02d}:{seconds:02d}.{micros:06d}")


def decimal_from_unscaled(unscaled: int, scale: int) -> str:
    if scale == 0:
        return str(unscaled)
    sign = "-" if unscaled < 0 else ""
    digits = str(abs(unscaled)).rjust(scale + 1, "0")
    return f"{sign}{digits[:-scale]}.{digits[-scale:]}"


def mysql_json(text: str) -> str:
    """JSON text as MySQL prints it (", " and ": " separators), from any JSON text with the same key order."""
    return json.dumps(json.loads(text), ensure_ascii=False, separators=(", ", ": "))


def labels_of(mysql_type: str) -> list[str]:
    return [m.replace("''", "'") for m in re.findall(r"'((?:[^']|'')*)'", mysql_type)]


# MySQL types whose text is bytes: the spatial types are MySQL's internal value (SRID + WKB)
BINARY_TYPES = ("blob", "point", "geometry", "linestring", "polygon")


def from_mysql_text(mysql_type: str, text: str | None, binary: str) -> str | None:
    """Canonical text of a value printed as MySQL text (Canal, KafkaRiverCanal, DTS)."""
    if text is None:
        return None
    base = mysql_type.split("(")[0].split(" ")[0]
    if base in ("datetime", "timestamp", "time"):
        return trim_fraction(text)
    if base in BINARY_TYPES:
        return text[2:] if binary == "0x" else text.encode("latin-1").hex()
    if base == "enum" and text.isdigit():
        return labels_of(mysql_type)[int(text) - 1]
    if base == "set" and text.isdigit():
        names = labels_of(mysql_type)
        return ",".join(name for i, name in enumerate(names) if int(text) >> i & 1)
    return text


# ---------------------------------------------------------------------------------------------------
# per-format decoders: record -> list of changes {database, table, op, key, before, after, order}


def decode_debezium(rec: dict[str, Any]) -> list[dict[str, Any]]:
    value = rec["payload"]
    if value is None or value == '{"schema":null,"payload":null}':
        return []  # tombstones
    # numbers as Decimal: a Connect Decimal sent as a JSON number (decimal.format=NUMERIC) keeps its digits
    obj = json.loads(value, parse_float=Decimal)
    if "ddl" in obj:  # the schema-change topic
        position = obj["position"]
        order = (int(position["file"].rsplit(".", 1)[1]), position["pos"], 0)
        return table_reset(obj["databaseName"], obj["ddl"], order, position["ts_sec"] * 1000)
    payload = obj["payload"]
    fields = {f["field"]: f for f in obj["schema"]["fields"]}
    row_fields = {f["field"]: f for f in fields["after"]["fields"]}

    def canon(field: dict[str, Any], v: Any) -> str | None:
        if v is None:
            return None
        name = field.get("name")
        params = field.get("parameters", {})
        if name == "org.apache.kafka.connect.data.Decimal" and not isinstance(v, str):
            # a JSON number: the decimal itself, written with its scale
            unscaled = Decimal(v).scaleb(int(params["scale"]), Context(prec=100))
            return decimal_from_unscaled(int(unscaled), int(params["scale"]))
        if name == "org.apache.kafka.connect.data.Decimal":
            return decimal_from_unscaled(int.from_bytes(base64.b64decode(v), "big", signed=True), int(params["scale"]))
        if name == "io.debezium.time.Date":
            return (date(1970, 1, 1) + timedelta(days=v)).isoformat()
        if name == "io.debezium.time.Timestamp":
            return datetime_from_micros(v * 1000)
        if name == "io.debezium.time.MicroTimestamp":
            return datetime_from_micros(v)
        if name == "io.debezium.time.ZonedTimestamp":
            assert v.endswith("Z")
            return trim_fraction(v[:-1].replace("T", " "))
        if name == "io.debezium.time.MicroTime":
            return time_from_micros(v)
        if name == "io.debezium.data.Bits":
            return str(int.from_bytes(base64.b64decode(v), "little"))
        if name == "io.debezium.data.geometry.Geometry":
            srid = (v["srid"] or 0).to_bytes(4, "little")
            return (srid + base64.b64decode(v["wkb"])).hex()
        if name == "io.debezium.data.Json":
            assert ", " not in v or '"' in v  # compact text: the documented exception
            return mysql_json(v)
        if field["type"] == "bytes":
            return base64.b64decode(v).hex()
        if field["type"] == "boolean":
            return "1" if v else "0"
        return str(v)

    def image(img: dict[str, Any] | None) -> dict[str, str | None] | None:
        return None if img is None else {k: canon(row_fields[k], v) for k, v in img.items()}

    source = payload["source"]
    # a table without primary key: no Kafka key
    key = json.loads(rec["key"]) if rec["key"] is not None else {"schema": {"fields": []}, "payload": {}}
    key_fields = {f["field"]: f for f in key["schema"]["fields"]}
    if payload["op"] == "t":  # a TRUNCATE (skipped.operations=none)
        order = (int(source["file"].rsplit(".", 1)[1]), source["pos"], source["row"])
        return table_reset(source["db"], f"TRUNCATE TABLE {source['table']}", order, source["ts_ms"])
    if payload["op"] not in ("c", "u", "d"):
        raise ValueError(f"unknown op {payload['op']!r}")
    return [
        {
            "database": source["db"],
            "table": source["table"],
            "op": payload["op"],
            "key": {k: canon(key_fields[k], v) for k, v in key["payload"].items()},
            "before": image(payload["before"]),
            "after": image(payload["after"]),
            # an embedded engine's zero positions order nothing: commit time, then the Kafka offset
            "order": (int(source["file"].rsplit(".", 1)[1]), source["pos"], source["row"])
            if source["file"]
            else (0, 0, 0, source["ts_ms"], rec["partition"], rec["offset"]),
            "commit_ms": source["ts_ms"],
        }
    ]


def decode_canal(rec: dict[str, Any]) -> list[dict[str, Any]]:
    msg = json.loads(rec["payload"])
    # one Canal batch shares `id`, and `es` has whole seconds: the offset orders its messages
    position = (msg["es"], msg["id"], rec["partition"], rec["offset"])
    if msg["isDdl"]:
        return table_reset(msg["database"], msg["sql"], position, msg["es"])
    if msg["type"] == "QUERY":
        return []  # the statement text before a rows event: no change
    types = msg["mysqlType"]
    op = {"INSERT": "c", "UPDATE": "u", "DELETE": "d"}[msg["type"]]
    out = []
    for i, row in enumerate(msg["data"]):
        data = {k: from_mysql_text(types[k], v, "latin-1") for k, v in row.items()}
        before = after = None
        if op == "c":
            after = data
        elif op == "d":
            before = data
        else:
            after = data
            old = {k: from_mysql_text(types[k], v, "latin-1") for k, v in msg["old"][i].items()}
            before = {**data, **old}
        out.append(
            {
                "database": msg["database"],
                "table": msg["table"],
                "op": op,
                "key": {k: data[k] for k in msg["pkNames"] or []},
                "before": before,
                "after": after,
                "order": (*position, i),
                "commit_ms": msg["es"],
            }
        )
    return out


def decode_krc(rec: dict[str, Any]) -> list[dict[str, Any]]:
    msg = json.loads(rec["payload"])
    op = {"i": "c", "u": "u", "d": "d"}[msg["event"]]
    image = {c["n"]: None if c["null"] else from_mysql_text(c["t"], c["v"], "latin-1") for c in msg["columns"]}
    before = after = None
    if op == "c":
        after = image
    elif op == "d":
        before = image
    else:
        after = image
        before = dict(image)
        for c in msg["columns"]:
            if c["updated"]:  # no origin_val on an updated column: it was NULL (Gson drops nulls)
                before[c["n"]] = from_mysql_text(c["t"], c.get("origin_val"), "latin-1")
    pos, file = msg["binlog"].split("@")
    return [
        {
            "database": msg["db"],
            "table": msg["table"],
            "op": op,
            "key": {k: image[k] for k in msg.get("keys", [])},
            "before": before,
            "after": after,
            "order": (int(file.rsplit(".", 1)[1]), int(pos)),
            "commit_ms": msg["time"],
        }
    ]


def decode_dts(rec: dict[str, Any]) -> list[dict[str, Any]]:
    msg = json.loads(rec["payload"])
    if msg["messageType"] == "DDL":
        end_pos, file_no = msg["position"].split("@")
        return table_reset(msg["schemaName"], msg["sql"], (int(file_no), int(end_pos)), msg["timestamp"] * 1000)
    if msg["messageType"] in ("BEGIN", "COMMIT", "HEARTBEAT", "CHECKPOINT"):
        return []
    op = {"INSERT": "c", "UPDATE": "u", "DELETE": "d"}[msg["messageType"]]
    cols = msg["columns"]

    def image(values: Any) -> dict[str, str | None] | None:
        if values is None:
            return None
        if isinstance(values, dict):
            values = [values[c["name"]] for c in cols]
        return {c["name"]: from_mysql_text(c["originalType"], v, "0x") for c, v in zip(cols, values, strict=True)}

    before, after = image(msg["oldColumns"]), image(msg["newColumns"])
    img = after or before
    assert img is not None
    end_pos, file_no = msg["position"].split("@")
    return [
        {
            "database": msg["schemaName"],
            "table": msg["tableName"],
            "op": op,
            "key": {k: img[k] for k in msg["pkNames"] or []},
            "before": before,
            "after": after,
            "order": (int(file_no), int(end_pos)),
            "commit_ms": msg["timestamp"] * 1000,
        }
    ]


def decode_lindorm(rec: dict[str, Any]) -> list[dict[str, Any]]:
    obj = json.loads(rec["payload"])
    payload = obj["payload"]
    fields = {f["field"]: f for f in obj["schema"]["fields"]}
    row_fields = {f["field"]: f for f in fields["after"]["fields"]}
    source = payload["source"]
    hbase = "ROW" in row_fields

    def canon(field: dict[str, Any], v: Any) -> str | None:
        if v is None:
            return None
        if hbase:
            return base64.b64decode(v).decode("utf-8")
        if field.get("name") == "org.apache.kafka.connect.data.Timestamp":
            return datetime_from_micros(v * 1000)
        if field["type"] == "bytes":
            return base64.b64decode(v).hex()
        if field["type"] == "boolean":
            return "1" if v else "0"
        return str(v)

    def image(img: dict[str, Any] | None) -> dict[str, str | None] | None:
        return None if img is None else {k: canon(row_fields[k], v) for k, v in img.items()}

    key = json.loads(rec["key"]) if rec["key"] is not None else {}
    if payload["op"] not in ("c", "u", "d"):
        raise ValueError(f"unknown op {payload['op']!r}")
    return [
        {
            "database": source["namespace"],
            "table": source["table"],
            "op": payload["op"],
            "key": {k: canon(row_fields[k], v) for k, v in key.items()},
            "before": image(payload["before"]),
            "after": image(payload["after"]),
            "order": (source["ts_ms"], rec["partition"], rec["offset"]),
            "commit_ms": source["ts_ms"],
        }
    ]


DECODERS = {
    "debezium": decode_debezium,
    "canal_flat": decode_canal,
    "kafka_river_canal": decode_krc,
    "tencent_dts": decode_dts,
    "lindorm": decode_lindorm,
}


def split_key_change(ch: dict[str, Any]) -> list[dict[str, Any]]:
    """An update whose before image holds another key than its after image is, in the truth, a
    delete of the old key and an insert of the new one (as Debezium sends it)."""
    if ch["op"] != "u":
        return [ch]
    if not ch["key"]:  # a keyless row is its image: an update that alters it is a delete and an insert
        if ch["before"] == ch["after"]:
            return [ch]
        return [{**ch, "op": "d", "after": None}, {**ch, "op": "c", "before": None}]
    if all(ch["before"][k] == v for k, v in ch["key"].items()):
        return [ch]
    old_key = {k: ch["before"][k] for k in ch["key"]}
    return [{**ch, "op": "d", "key": old_key, "after": None}, {**ch, "op": "c", "before": None}]


def decoded_changes(out: Path, fmt: str) -> list[dict[str, Any]]:
    changes = [half for rec in records(out, fmt) for ch in DECODERS[fmt](rec) for half in split_key_change(ch)]
    return sorted(changes, key=lambda ch: ch["order"])


def carried(out: Path, fmt: str) -> set[tuple[str, str]]:
    return {name for name, t in tables(out).items() if fmt in t["formats"]}


# ---------------------------------------------------------------------------------------------------
# tests


def test_same_seed_same_bytes(tmp_path, faulty):
    """Same options, byte-identical files, also when the formats are spread over two processes."""
    again = tmp_path / "again"
    opts = Options(seed=42, changes=CHANGES, out=again, duplicates=0.05, out_of_order=True, malformed=0.03, batches=3)
    opts.jobs = 2
    generate(opts)
    first = sorted(p.relative_to(faulty) for p in faulty.rglob("*") if p.is_file())
    second = sorted(p.relative_to(again) for p in again.rglob("*") if p.is_file())
    assert first == second
    for rel in first:
        assert (faulty / rel).read_bytes() == (again / rel).read_bytes(), rel
    other = tmp_path / "other"
    generate(Options(seed=43, changes=CHANGES, out=other))
    assert (other / "debezium.jsonl").read_bytes() != (faulty / "debezium-1.jsonl").read_bytes()


def test_faults_do_not_change_the_workload(clean, faulty):
    for name in ("changes.jsonl", "history.jsonl", "current.jsonl", "ddl.jsonl"):
        assert (clean / "truth" / name).read_bytes() == (faulty / "truth" / name).read_bytes(), name


def test_file_names(clean, faulty):
    assert sorted(p.name for p in clean.glob("*.jsonl")) == sorted(f"{fmt}.jsonl" for fmt in FORMATS)
    assert sorted(p.name for p in faulty.glob("*.jsonl")) == sorted(
        f"{fmt}-{b}.jsonl" for fmt in FORMATS for b in (1, 2, 3)
    )


@pytest.mark.parametrize("fmt", FORMATS)
def test_every_line_is_a_kcat_record(faulty, fmt):
    offsets: dict[tuple[str, int], list[int]] = defaultdict(list)
    for path in sorted(faulty.glob(f"{fmt}-*.jsonl")):
        # split on "\n" only: values may hold U+0085 or U+2028 unescaped, as kcat leaves them
        for line in path.read_text(encoding="utf-8").split("\n")[:-1]:
            rec = json.loads(line)
            assert list(rec) == KCAT_KEYS
            assert rec["tstype"] == "create" and rec["broker"] == 0
            assert isinstance(rec["ts"], int) and rec["ts"] > 1_700_000_000_000
            assert rec["key"] is None or isinstance(rec["key"], str)
            assert rec["payload"] is None or isinstance(rec["payload"], str)
            assert rec["partition"] in (0, 1, 2)
            parsed = parse_kcat_line(line)  # what `cdc-lake land` accepts
            assert parsed["kafka_value"] == rec["payload"]
            offsets[(rec["topic"], rec["partition"])].append(rec["offset"])
    for tp, seen in offsets.items():
        assert sorted(seen) == list(range(len(seen))), f"offsets of {tp} are not 0..n-1 without gaps"


@pytest.mark.parametrize("fmt", FORMATS)
def test_decoded_changes_equal_the_truth(clean, fmt):
    """Every format, decoded and put in its own source order, gives the truth's changes key by key."""
    wanted = carried(clean, fmt)
    expected: dict[tuple[Any, ...], list[tuple[Any, ...]]] = defaultdict(list)
    for ch in truth(clean, "changes.jsonl"):
        if (ch["database"], ch["table"]) in wanted:
            expected[(ch["database"], ch["table"], key_of(ch["key"]))].append(
                (ch["op"], ch["before"], ch["after"], ch["commit_time"])
            )
    got: dict[tuple[Any, ...], list[tuple[Any, ...]]] = defaultdict(list)
    resets = []
    for ch in decoded_changes(clean, fmt):
        if ch["op"] == RESET:
            resets.append((ch["database"], ch["table"], ch["commit_ms"] // 1000))
            continue
        commit = datetime.fromtimestamp(ch["commit_ms"] / 1000, timezone.utc).strftime("%Y-%m-%d %H:%M:%S")
        got[(ch["database"], ch["table"], key_of(ch["key"]))].append((ch["op"], ch["before"], ch["after"], commit))
    assert sum(map(len, got.values())) == sum(map(len, expected.values()))
    assert got.keys() == expected.keys()
    for k in expected:
        assert got[k] == expected[k], k
    wanted_resets = [
        (d["database"], d["table"], int(datetime.fromisoformat(d["commit_time"] + "+00:00").timestamp()))
        for d in truth(clean, "ddl.jsonl")
        if d["kind"] in ("TRUNCATE", "ERASE") and (d["database"], d["table"]) in wanted
    ]
    carries_ddl = json.loads((clean / "truth" / "tables.json").read_text())["formats"][fmt]["ddl"]
    assert resets == wanted_resets and bool(resets) == carries_ddl


@pytest.mark.parametrize("fmt", FORMATS)
def test_replayed_state_is_the_truths_current_state(clean, fmt):
    state: dict[tuple[Any, ...], Any] = {}
    for ch in decoded_changes(clean, fmt):
        apply_change(state, ch)
    assert state == current_state(clean, carried(clean, fmt))


@pytest.mark.parametrize("fmt", FORMATS)
def test_faulty_stream_dedupes_to_the_truth(faulty, fmt):
    """Drop the listed malformed records, dedupe, sort by source order: the truth's final state again."""
    bad = {(b["topic"], b["partition"], b["offset"]) for b in truth(faulty, "malformed.jsonl") if b["format"] == fmt}
    unique: dict[tuple[Any, ...], dict[str, Any]] = {}
    for rec in records(faulty, fmt):
        if (rec["topic"], rec["partition"], rec["offset"]) in bad:
            continue
        for ch in (half for decoded in DECODERS[fmt](rec) for half in split_key_change(decoded)):
            # position formats: source position + row key + op (the halves of a key change share a
            # position); Lindorm and an embedded engine's zero positions (file number 0) have none:
            # content (earliest offset wins)
            ident = (ch["database"], ch["table"], key_of(ch["key"]), ch["op"])
            if not ch["key"]:  # a keyless row: its image is its identity
                ident += (image_text(ch["before"]), image_text(ch["after"]))
            positionless = fmt == "lindorm" or ch["order"][0] == 0
            ident += (rec["payload"],) if positionless else (ch["order"],)
            if ident not in unique or ch["order"] < unique[ident]["order"]:
                unique[ident] = ch
    state: dict[tuple[Any, ...], Any] = {}
    for ch in sorted(unique.values(), key=lambda ch: ch["order"]):
        apply_change(state, ch)
    wanted = carried(faulty, fmt)
    assert state == current_state(faulty, wanted)
    expected = sum(1 for ch in truth(faulty, "changes.jsonl") if (ch["database"], ch["table"]) in wanted)
    assert len([ch for ch in unique.values() if ch["op"] != RESET]) == expected


def test_composite_key_table(clean):
    items = [row for row in truth(clean, "current.jsonl") if row["table"] == "order_items"]
    assert items and all(sorted(row["key"]) == ["line_no", "order_id"] for row in items)
    dbz = [json.loads(r["key"]) for r in records(clean, "debezium") if r["topic"].endswith(".order_items")]
    assert all(sorted(k["payload"]) == ["line_no", "order_id"] for k in dbz)
    lindorm = [json.loads(r["key"]) for r in records(clean, "lindorm") if r["topic"].endswith(".order_items")]
    assert all(sorted(k) == ["line_no", "order_id"] for k in lindorm)


def test_alter_table_adds_the_column_midway(clean):
    (ddl,) = [d for d in truth(clean, "ddl.jsonl") if d["kind"] == "ALTER"]
    assert ddl["sql"].startswith("ALTER TABLE `shop`.`orders` ADD COLUMN `coupon_code`")
    ddl_pos = (int(ddl["binlog_file"][-6:]), ddl["binlog_pos"])
    before = after = 0
    for ch in truth(clean, "changes.jsonl"):
        if ch["table"] != "orders":
            continue
        image = ch["after"] or ch["before"]
        if (int(ch["binlog_file"][-6:]), ch["binlog_pos"]) < ddl_pos:
            assert "coupon_code" not in image
            before += 1
        else:
            assert "coupon_code" in image
            after += 1
    assert before and after
    assert any(
        row["image"].get("coupon_code") is not None for row in truth(clean, "history.jsonl") if row["table"] == "orders"
    )


def test_ddl_in_the_formats_that_carry_it(clean):
    """Every statement in Canal and Tencent DTS; in Debezium a TRUNCATE is an op `t` record on the
    table's topic and the rest go to the schema-change topic. No other format carries the tables
    that are truncated or dropped."""
    ddl = truth(clean, "ddl.jsonl")
    assert [d["kind"] for d in ddl] == ["TRUNCATE", "TRUNCATE", "ALTER", "ERASE", "CREATE", "ERASE", "CREATE"]
    canal = [json.loads(r["payload"]) for r in records(clean, "canal_flat")]
    assert [(m["type"], m["table"], m["sql"]) for m in canal if m["isDdl"]] == [
        (d["kind"], d["table"], d["sql"]) for d in ddl
    ]
    dts = [json.loads(r["payload"]) for r in records(clean, "tencent_dts")]
    assert [(m["tableName"], m["sql"]) for m in dts if m["messageType"] == "DDL"] == [
        (d["table"], d["sql"]) for d in ddl
    ]
    dbz = [json.loads(r["payload"]) for r in records(clean, "debezium") if r["topic"].endswith(".schema-changes")]
    assert [d["ddl"] for d in dbz] == [d["sql"] for d in ddl if d["kind"] != "TRUNCATE"]
    truncates = [
        (r["topic"], r["key"], json.loads(r["payload"])["payload"]) for r in records(clean, "debezium")
        if r["payload"] and '"op":"t"' in r["payload"]
    ]
    assert [(topic, key, p["source"]["table"], p["before"], p["after"]) for topic, key, p in truncates] == [
        (f"cdclake.shop.{d['table']}", None, d["table"], None, None) for d in ddl if d["kind"] == "TRUNCATE"
    ]
    reset = {(d["database"], d["table"]) for d in ddl if d["kind"] != "ALTER"}
    for fmt in ("kafka_river_canal", "lindorm"):
        assert not reset & carried(clean, fmt)
        assert not [r for r in records(clean, fmt) if any(f'"{t}"' in (r["payload"] or "") for _, t in reset)]


def test_workload_covers_the_awkward_cases(clean):
    changes = truth(clean, "changes.jsonl")
    ops = Counter(ch["op"] for ch in changes)
    assert ops["c"] and ops["u"] and ops["d"]
    values = {v for ch in changes for img in (ch["before"], ch["after"]) if img for v in img.values()}
    assert "18446744073709551615" in values  # bigint unsigned maximum
    assert any(v and v.startswith("-") and "." in v and v[1:].replace(".", "").isdigit() for v in values)
    assert any(v and "\\" in v for v in values) and any(v and "'" in v for v in values)
    assert any(v and any(ord(c) > 0xFFFF for c in v) for v in values)  # outside the BMP (emoji)
    # null -> value and value -> null updates
    to_null = from_null = 0
    for ch in changes:
        if ch["op"] == "u":
            for k, v in ch["after"].items():
                old = ch["before"].get(k)
                to_null += old is not None and v is None
                from_null += old is None and v is not None
    assert to_null and from_null
    # re-inserts after delete, multi-row events, multi-statement transactions
    deleted: set[tuple[Any, ...]] = set()
    reinserted = 0
    for ch in changes:
        k = (ch["table"], key_of(ch["key"]))
        if ch["op"] == "d":
            deleted.add(k)
        elif ch["op"] == "c" and k in deleted:
            reinserted += 1
    assert reinserted
    assert max(Counter(ch["event_id"] for ch in changes if ch["event_id"]).values()) > 1
    per_gtid = defaultdict(set)
    for ch in changes:
        if ch["gtid"]:
            per_gtid[ch["gtid"]].add(ch["event_id"])
    assert max(map(len, per_gtid.values())) > 1
    # binlog: several files, positions increasing, commit times whole seconds and non-decreasing
    positions = [(int(ch["binlog_file"][-6:]), ch["binlog_pos"], ch["row"]) for ch in changes if ch["gtid"]]
    assert positions == sorted(positions) and len({p[0] for p in positions}) > 1
    times = [ch["commit_time"] for ch in changes]
    assert times == sorted(times) and len(set(times)) < len(times)


def test_workload_covers_the_fidelity_traps(clean):
    """The cases real producers' data hit (issue 16), in the truth and in the records."""
    types = {
        (db, table, c["name"]): c["mysql_type"] for (db, table), t in tables(clean).items() for c in t["columns"]
    }
    changes = truth(clean, "changes.jsonl")
    by_type: dict[str, set[str]] = defaultdict(set)
    for ch in changes:
        for img in (ch["before"], ch["after"]):
            for name, v in (img or {}).items():
                if v is not None:
                    by_type[types[ch["database"], ch["table"], name]].add(v)
    # all-digit integers of every length, the base64-valid ones (4, 8, 12, 16, 20 digits) included
    bigint_unsigned = by_type["bigint(20) unsigned"]
    assert {4, 8, 12, 16, 20} <= {len(v) for v in bigint_unsigned if v.isdigit()}
    # decimals wider than Spark's 38 digits, negative ones included
    wide = by_type["decimal(65,30)"] | by_type["decimal(65,0)"]
    assert any(len(v.lstrip("-").replace(".", "")) > 38 and v.startswith("-") for v in wide)
    # geometry: MySQL's internal value (SRID little-endian, then a WKB point), SRID 0 and 4326
    points = by_type["point"]
    assert {p[:8] for p in points} == {"00000000", "e6100000"}
    assert all(p[8:18] == "0101000000" and len(p) == 50 for p in points)
    # key-changing updates: in the truth a delete of the old key and an insert of the new one at
    # one binlog position, in both keyed tables that allow them
    at = defaultdict(list)
    for ch in changes:
        if ch["gtid"]:
            at[ch["table"], ch["binlog_file"], ch["binlog_pos"], ch["row"]].append(ch)
    moved = {table for (table, *_), pair in at.items() if [c["op"] for c in pair] == ["d", "c"]}
    assert {"customers", "contacts"} <= moved  # (keyless audit_log updates are delete + insert too)
    # Canal's QUERY messages (statement text before a rows event, no database or table)
    queries = [m for m in map(json.loads, (r["payload"] for r in records(clean, "canal_flat"))) if m["type"] == "QUERY"]
    assert queries and all((m["isDdl"], m["database"], m["table"], m["data"]) == (False, "", "", None) for m in queries)
    # a Debezium table read by an embedded engine: zero positions, the Decimals as JSON numbers
    texts = [r["payload"] for r in records(clean, "debezium") if r["topic"] == "cdclake.crm.contacts"]
    sources = [json.loads(t)["payload"]["source"] for t in texts if t and '"source"' in t]
    assert sources and all((s["file"], s["pos"], s["row"]) == ("", 0, 0) for s in sources)
    assert any(re.search(r'"exact_balance":-?[0-9]{20,}\.[0-9]{30}[,}]', t) for t in texts if t)


def test_history_intervals_chain(clean):
    versions: dict[tuple[Any, ...], list[dict[str, Any]]] = defaultdict(list)
    # keyed rows; a keyless table's versions follow its counts of identical rows (test below)
    for v in truth(clean, "history.jsonl"):
        if v["key"]:
            versions[(v["database"], v["table"], key_of(v["key"]))].append(v)
    current = {(r["database"], r["table"], key_of(r["key"])): r["image"] for r in truth(clean, "current.jsonl")}
    same_second = 0
    for k, vs in versions.items():
        vs.sort(key=lambda v: (v["valid_from"], v["valid_to"] is None, v["valid_to"] or ""))
        for prev, nxt in zip(vs, vs[1:], strict=False):
            assert prev["valid_to"] is not None
            if prev["closed_by_delete"]:
                assert nxt["valid_from"] >= prev["valid_to"] and nxt["op"] == "c"
            else:
                assert prev["valid_to"] == nxt["valid_from"] and nxt["op"] == "u"
        for v in vs:
            assert v["valid_to"] is None or v["valid_from"] <= v["valid_to"]
            same_second += v["valid_from"] == v["valid_to"]
        open_versions = [v for v in vs if v["valid_to"] is None]
        if k in current:
            assert len(open_versions) == 1 and open_versions[0]["image"] == current[k]
            assert vs[-1] is open_versions[0]
        else:
            assert not open_versions and vs[-1]["closed_by_delete"]
    assert same_second  # several changes in one second are kept as zero-length versions


def test_an_update_that_changes_nothing_opens_no_version(clean):
    changes = [ch for ch in truth(clean, "changes.jsonl") if ch["key"]]  # keyed rows
    noop = [ch for ch in changes if ch["op"] == "u" and ch["before"] == ch["after"]]
    assert noop, "the workload should contain updates that change nothing"
    opening = sum(1 for ch in changes if ch["op"] == "c" or (ch["op"] == "u" and ch["before"] != ch["after"]))
    assert len([v for v in truth(clean, "history.jsonl") if v["key"]]) == opening


def test_keyless_history_follows_the_number_of_identical_rows(clean):
    """Replaying a keyless table's changes image by image gives its versions: one per run of the
    same count of identical rows, closed by delete when none is left; twins do occur."""
    counts: dict[tuple[Any, ...], int] = defaultdict(int)
    expected = []
    resets = [d for d in truth(clean, "ddl.jsonl") if d["kind"] in ("TRUNCATE", "ERASE")]
    for ch in truth(clean, "changes.jsonl"):
        position = (ch["binlog_file"] or "", ch["binlog_pos"] or 0)  # (none for the HBase table's changes)
        while resets and ch["binlog_file"] and (resets[0]["binlog_file"], resets[0]["binlog_pos"]) < position:
            reset = resets.pop(0)  # every identical row of the table ends
            for k in counts:
                if k[:2] == (reset["database"], reset["table"]):
                    counts[k] = 0
        if ch["key"] or ch["op"] == "u":
            continue
        image = ch["after"] if ch["op"] == "c" else ch["before"]
        k = (ch["database"], ch["table"], image_text(image))
        before = counts[k]
        counts[k] += 1 if ch["op"] == "c" else -1
        if counts[k] > 0:
            expected.append((k, counts[k]))
        assert before >= 0 and counts[k] >= 0
    versions = [v for v in truth(clean, "history.jsonl") if not v["key"]]
    assert sorted(((v["database"], v["table"], image_text(v["image"])), v["row_count"]) for v in versions) == sorted(
        expected
    )
    assert any(count > 1 for _, count in expected), "the workload should hold identical rows"


def test_duplicates_are_resent_records(faulty):
    dups = truth(faulty, "duplicates.jsonl")
    assert dups
    for fmt in FORMATS:
        by_coord = {(r["topic"], r["partition"], r["offset"]): r for r in records(faulty, fmt)}
        mine = [d for d in dups if d["format"] == fmt]
        total = len(by_coord)
        if fmt == "canal_flat":  # Canal re-sends a failed batch under a new id, never the same bytes
            assert not mine
            continue
        assert 0.02 * total < len(mine) < 0.09 * total, (fmt, len(mine), total)
        for d in mine:
            copy = by_coord[(d["topic"], d["partition"], d["offset"])]
            original = by_coord[(d["topic"], d["partition"], d["original_offset"])]
            assert d["offset"] > d["original_offset"]
            assert (copy["key"], copy["payload"], copy["ts"]) == (
                original["key"],
                original["payload"],
                original["ts"],
            )
    batches = {d["batch"] for d in dups}
    assert batches == {1, 2, 3}


def test_malformed_records_are_listed_and_broken(faulty):
    bad = truth(faulty, "malformed.jsonl")
    assert {b["format"] for b in bad} == set(FORMATS)
    reasons = Counter(b["why"].split(" ")[0] for b in bad)
    assert reasons["truncated"] and reasons["wrong"] and reasons["unknown"]
    listed = {(b["format"], b["topic"], b["partition"], b["offset"]): b for b in bad}
    for fmt in FORMATS:
        for rec in records(faulty, fmt):
            coord = (fmt, rec["topic"], rec["partition"], rec["offset"])
            if coord in listed:
                why = listed[coord]["why"]
                if why.startswith("truncated"):
                    with pytest.raises(json.JSONDecodeError):
                        json.loads(rec["payload"])
                else:
                    with pytest.raises((KeyError, TypeError, AttributeError, ValueError, AssertionError)):
                        DECODERS[fmt](rec)
            else:
                DECODERS[fmt](rec)  # every other record decodes


def test_out_of_order_moves_records_to_later_batches(tmp_path, faulty):
    def landing_order_breaks(out: Path) -> int:
        breaks = 0
        for fmt in FORMATS:
            last: dict[tuple[str, int], int] = {}
            for rec in records(out, fmt):
                tp = (rec["topic"], rec["partition"])
                breaks += rec["offset"] < last.get(tp, -1)
                last[tp] = max(last.get(tp, -1), rec["offset"])
        return breaks

    in_order = tmp_path / "in_order"
    generate(Options(seed=42, changes=CHANGES, out=in_order, batches=3))
    assert landing_order_breaks(in_order) == 0
    assert landing_order_breaks(faulty) > 0
    # all batches hold records, and the split follows the stream (first batch starts at the start)
    for fmt in FORMATS:
        sizes = [len(jsonl(p)) for p in sorted(in_order.glob(f"{fmt}-*.jsonl"))]
        assert len(sizes) == 3 and min(sizes) > 0


def test_summary_counts_every_record(faulty):
    summary = json.loads((faulty / "truth" / "summary.json").read_text(encoding="utf-8"))
    assert summary["changes"]["mysql"] == CHANGES
    for fmt in FORMATS:
        recs = records(faulty, fmt)
        info = summary["formats"][fmt]
        assert info["records"] == len(recs)
        per_tp = Counter(f"{r['topic']}:{r['partition']}" for r in recs)
        assert {tp: sum(kinds.values()) for tp, kinds in info["by_topic_partition"].items()} == per_tp
        assert info["by_kind"]["malformed"] == sum(1 for b in truth(faulty, "malformed.jsonl") if b["format"] == fmt)


def test_cli_generate(tmp_path, capsys):
    out = tmp_path / "cli"
    assert main(["generate", "--seed", "3", "--changes", "200", "--out", str(out), "--batches", "2", "--quiet"]) == 0
    assert "200 MySQL" in capsys.readouterr().out
    assert (out / "debezium-1.jsonl").exists() and (out / "truth" / "current.jsonl").exists()
    # a rerun with one batch replaces the earlier files
    assert main(["generate", "--seed", "3", "--changes", "200", "--out", str(out), "--quiet"]) == 0
    assert not (out / "debezium-1.jsonl").exists() and (out / "debezium.jsonl").exists()
    with pytest.raises(SystemExit):
        main(["generate", "--seed", "3", "--changes", "0", "--out", str(out)])
    # a subset of the formats: the same records for those, the same truth
    sub = tmp_path / "sub"
    assert (
        main(
            [
                "generate",
                "--seed",
                "3",
                "--changes",
                "200",
                "--out",
                str(sub),
                "--formats",
                "lindorm,canal_flat",
                "--quiet",
            ]
        )
        == 0
    )
    assert sorted(p.name for p in sub.glob("*.jsonl")) == ["canal_flat.jsonl", "lindorm.jsonl"]
    for name in ("canal_flat.jsonl", "lindorm.jsonl", "truth/changes.jsonl", "truth/history.jsonl"):
        assert (sub / name).read_bytes() == (out / name).read_bytes(), name
    assert main(["generate", "--seed", "3", "--changes", "9", "--out", str(sub), "--formats", "kafka"]) == 2
