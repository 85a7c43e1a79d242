"""`kcat -C -J` dumps: what a line must be to be a Kafka record, and reading files of them.

`parse_kcat_line` is the reference: one line, in Python, with the reason when it is no record.
`read_records` applies it to every line (`--raw-values` corpora, the Thrift path).
`spark_records` reads files with Spark instead, on the executors, and hands `parse_kcat_line`
only the lines whose Spark parse could differ from it (see `_SPARK_VOUCHES`).
"""

from __future__ import annotations

import json
import re
import sys
import tempfile
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Protocol
from urllib.parse import unquote, urlparse

if TYPE_CHECKING:
    from pyspark.sql import Column, DataFrame, SparkSession

PROGRESS_EVERY = 100_000


@dataclass
class BadLine:
    source: str
    line_no: int
    reason: str


class Tally(Protocol):
    """What reading a dump counts (a `LandingReport` is one)."""

    lines_read: int
    records_valid: int
    bad_lines: list[BadLine]



# Kafka values are bytes; a kcat line is read with errors="surrogateescape", so bytes that are not
# UTF-8 arrive as lone surrogates U+DC80..U+DCFF, and a JSON escape such as \ud800 as a lone
# surrogate too. Neither can be stored as UTF-8 text (Spark's reader rejects the whole batch): each
# becomes U+FFFD, one per byte or escape, as `sql_string` does on the thrift path.
_SURROGATES = re.compile(r"[\ud800-\udfff]")


def _as_text(value: Any) -> str | None:
    """kcat prints key and payload as JSON strings; anything else is kept as its JSON text."""
    if value is None:
        return None
    if not isinstance(value, str):
        value = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return _SURROGATES.sub("\ufffd", value)


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def parse_kcat_line(line: str) -> dict[str, Any]:
    """One `kcat -J` line to a raw record; raises ValueError with the reason if it is not one."""
    try:
        obj = json.loads(line)
    except json.JSONDecodeError as exc:
        raise ValueError(f"not JSON ({exc.msg} at column {exc.colno})") from None
    if not isinstance(obj, dict):
        raise ValueError("not a JSON object")
    if not isinstance(obj.get("topic"), str) or not obj["topic"]:
        # the usual cause: a dump of bare values (kcat without -J), or a file of messages
        raise ValueError(
            "missing topic: not a kcat -J line (dump with `kcat -C -J`, or land plain message values with --raw-values)"
        )
    if not _is_int(obj.get("partition")) or obj["partition"] < 0:
        raise ValueError("missing or invalid partition")
    if not _is_int(obj.get("offset")) or obj["offset"] < 0:
        raise ValueError("missing or invalid offset")
    ts = obj.get("ts")
    headers = obj.get("headers")
    # kcat -J prints headers as a flat list: key, value, key, value, ...
    if isinstance(headers, list) and len(headers) % 2 == 0:
        header_pairs = [
            {"key": _as_text(k), "value": _as_text(v)} for k, v in zip(headers[::2], headers[1::2], strict=True)
        ]
    else:
        header_pairs = None
    return {
        "kafka_topic": _as_text(obj["topic"]),
        "kafka_partition": obj["partition"],
        "kafka_offset": obj["offset"],
        "kafka_timestamp_ms": ts if _is_int(ts) else None,
        "kafka_key": _as_text(obj.get("key")),
        "kafka_value": _as_text(obj.get("payload")),
        "kafka_headers": header_pairs,
    }


# Lines of standard input read ahead by `peek_values` (the format check runs before landing
# reads the input, and a pipe cannot be read twice); `_open_lines` gives them back first.
_stdin_head: list[str] = []


def _open_lines(path: str) -> Iterator[str]:
    if path == "-":
        while _stdin_head:
            yield _stdin_head.pop(0)
        yield from sys.stdin
        return
    with open(path, encoding="utf-8", errors="surrogateescape") as handle:
        yield from handle


def _head_lines(path: str, limit: int) -> list[str]:
    if path == "-":
        while len(_stdin_head) < limit:
            line = sys.stdin.readline()
            if not line:
                break
            _stdin_head.append(line)
        return _stdin_head[:limit]
    lines = []
    with open(path, encoding="utf-8", errors="surrogateescape") as handle:
        for line in handle:
            lines.append(line)
            if len(lines) >= limit:
                break
    return lines


def peek_values(paths: Iterable[str], raw_values: bool = False, lines_per_file: int = 200) -> Iterator[
    tuple[str, int, str | None]
]:
    """(source, line number, Kafka value) of the first lines of every file, without landing them
    or using up standard input; lines that are no record are skipped (landing reports them)."""
    for path in paths:
        source = "<stdin>" if path == "-" else path
        for line_no, line in enumerate(_head_lines(path, lines_per_file), start=1):
            text = line.rstrip("\r\n")
            if not text.strip():
                continue
            if raw_values:
                yield source, line_no, _as_text(text)
                continue
            try:
                yield source, line_no, parse_kcat_line(text)["kafka_value"]
            except ValueError:
                continue


def read_records(
    paths: Iterable[str],
    report: Tally,
    raw_values: bool = False,
    topic: str | None = None,
    partition: int = 0,
    progress: IO[str] | None = None,
) -> Iterator[dict[str, Any]]:
    """Yield valid raw records from the files; bad lines go to `report.bad_lines`.

    With `raw_values`, every non-empty line is a bare Kafka value (as in test corpora): it is
    wrapped as a record of `topic` (default: the file name without extension), `partition`, and
    offset = line number - 1, so landing the same file twice stays idempotent.
    """
    started = time.monotonic()
    for path in paths:
        source = "<stdin>" if path == "-" else path
        wrap_topic = topic or ("stdin" if path == "-" else Path(path).stem)
        for line_no, line in enumerate(_open_lines(path), start=1):
            report.lines_read += 1
            if progress is not None and report.lines_read % PROGRESS_EVERY == 0:
                rate = report.lines_read / max(time.monotonic() - started, 1e-9)
                print(f"  ... {report.lines_read:,} lines ({rate:,.0f}/s)", file=progress, flush=True)
            text = line.rstrip("\r\n")
            if not text.strip():
                continue
            if raw_values:
                record = {
                    "kafka_topic": wrap_topic,
                    "kafka_partition": partition,
                    "kafka_offset": line_no - 1,
                    "kafka_timestamp_ms": None,
                    "kafka_key": None,
                    "kafka_value": _as_text(text),
                    "kafka_headers": None,
                }
            else:
                try:
                    record = parse_kcat_line(text)
                except ValueError as exc:
                    report.bad_lines.append(BadLine(source, line_no, str(exc)))
                    continue
            report.records_valid += 1
            yield record


# ---------------------------------------------------------------------------------------------
# Reading kcat files with Spark
#
# Every line is parsed by `from_json` into the record's fields. Spark's parse agrees with
# `parse_kcat_line` on every line kcat writes, but not on every line a file can hold: it lands the
# first object of `{...}{...}` (two records whose newline was lost) where Python reports the line;
# it turns a lone-surrogate escape (\ud800) into "?" and a broken UTF-8 sequence into one U+FFFD
# where Python writes one U+FFFD per byte; it prints a key or payload that is a JSON number as
# Java does (1.0E20, not 1e+20). So Spark lands a line only when it can vouch for it, and hands
# the others (a few per thousand in the bench's workloads) to `parse_kcat_line`, which lands them
# or reports them with their line numbers.

KCAT_LINE_SCHEMA = (
    "topic string, partition int, offset bigint, ts bigint, key string, payload string, headers array<string>"
)
# Spark's JSON reader (Jackson) refuses a JSON string longer than 20,000,000 characters unless
# `maxStringLen` raises the cap: a kcat line whose payload is longer (a record of a 10 MB value
# in most formats) was left to `parse_kcat_line`, its text shipped from Python into the driver
# (landing 10 MB values peaked at 3.6 GB of a 4 GB heap). Lifted to Java's largest string, as the
# base models' from_json does (macros/parsing/json_read_options.sql).
KCAT_JSON_OPTIONS = {"allowSingleQuotes": "false", "maxStringLen": "2147483647"}

# A parsed line Spark vouches for: a JSON object that starts with its topic, a string, and has
# a partition and an offset of the right types; the payload last, a string or null (kcat prints
# both so; nothing can follow the object); no "}{" (two records on one line); no text in which
# Spark may have replaced what it could not decode (U+FFFD, or "?" on a line with a \ud8xx-\udfxx
# escape).
_SPARK_VOUCHES = r"""
    r.topic != '' and r.partition >= 0 and r.offset >= 0
    and startswith(line, '{"topic":"') and (endswith(line, '"}') or endswith(line, 'null}'))
    and not contains(line, '}{')
    and not coalesce(
        contains(r.topic, '\ufffd') or contains(r.key, '\ufffd') or contains(r.payload, '\ufffd')
        or exists(r.headers, h -> contains(h, '\ufffd') or contains(h, '?'))
        or (
            (contains(r.topic, '?') or contains(r.key, '?') or contains(r.payload, '?'))
            and (contains(line, '\\ud') or contains(line, '\\uD'))
        ),
        false
    )
"""


def _header_pairs(headers: str) -> str:
    """kcat prints headers as a flat list: name, value, name, value, ...; of an odd count, none."""
    return f"""
        case when size({headers}) % 2 = 0 then
            transform(
                filter({headers}, (h, i) -> i % 2 = 0),
                (name, i) -> named_struct('key', name, 'value', {headers}[2 * i + 1])
            )
        end
    """


_RECORD_COLUMNS = [
    "kafka_topic", "kafka_partition", "kafka_offset", "kafka_timestamp", "kafka_key", "kafka_value", "kafka_headers",
]
# the order of the records of one read: file (as given), split of the file, line within the split
_PYTHON_RECORDS = (
    "kafka_topic string, kafka_partition int, kafka_offset bigint, kafka_timestamp_ms bigint, kafka_key string, "
    "kafka_value string, kafka_headers array<struct<key: string, value: string>>, "
    "batch_order struct<file: int, block: bigint, row: bigint>"
)


@dataclass
class _Split:
    """One file split of Spark's read: where it is, how many lines it has and their ids."""

    file_index: int
    block_start: int
    lines: int
    vouched: int
    # distinct (topic, partition, offset) of the records Spark vouched for
    coordinates: int
    # lines Spark neither vouched for nor could place: not blank, and without a topic, a
    # partition and an offset of their own
    unplaced: int
    first_row_id: int
    # the lowest and highest offset of the records Spark vouched for
    lo: int | None
    hi: int | None
    first_line_no: int = 1


@dataclass
class SparkRecords:
    """The valid records of a Spark read of kcat files: the `_RECORD_COLUMNS` and a `batch_order`
    that follows the files as given and their lines (all equal when no offset repeats); their
    lowest and highest offset; whether no (topic, partition, offset) occurs twice. `frame` reads
    the files with Spark's JSON reader when it can (see `spark_records`), failing on a line it
    cannot parse whole; `fallback` is then the same records read as text lines. Without a
    fallback, `frame` reads text lines already."""

    frame: DataFrame
    fallback: DataFrame | None
    lo: int
    hi: int
    unique_coordinates: bool


@contextmanager
def spark_records(spark: SparkSession, paths: list[str], report: Tally) -> Iterator[SparkRecords | None]:
    """The valid records of kcat files, or None when there is none; bad lines go to
    `report.bad_lines` with their line numbers. Standard input ("-") is copied to a file first.

    The files are read twice. First as text lines parsed by `from_json`, for what the caller needs
    before it writes (counts, offsets, the lines `parse_kcat_line` must see, repeated offsets),
    keeping only those narrow columns (memory, then disk) until the block ends. Then `frame`, when
    the caller writes it: usually Spark's JSON file reader, which parses at twice the speed of
    `from_json` on a text column (1 GB Debezium dump: 1.3 s against 2.5 s) but knows neither lines
    nor their order, so it serves only when no offset repeats (no order to keep) and every line
    Spark did not vouch for is blank or has coordinates of its own, by which its record is left
    out (a line `[{...}]`, not placed, would give the JSON reader records `from_json` never saw).
    It fails on a line it cannot parse whole (FAILFAST), where `from_json` may have replaced what it
    could not decode in a field no check reads; the caller then writes `fallback`, which parses the
    text lines again, in order. Otherwise `frame` is that text read."""
    from pyspark import StorageLevel
    from pyspark.sql import functions as F

    with tempfile.TemporaryDirectory(prefix="cdc_lake_kcat_") as tmp:
        files = [_stdin_file(Path(tmp) / "stdin.jsonl") if p == "-" else Path(p).resolve() for p in paths]
        sources = ["<stdin>" if p == "-" else p for p in paths]
        names = [_glob_escaped(f) for f in dict.fromkeys(files)]
        parsed = _parsed_lines(spark, names)
        narrow = parsed.select("file_path", "block_start", "row_id", "vouched", "unplaced", *_COORDINATES, "line")
        narrow = narrow.persist(StorageLevel.MEMORY_AND_DISK)
        try:
            splits = _read_splits(narrow, files)
            lines = sum(split.lines for split in splits.values())
            vouched = sum(split.vouched for split in splits.values())
            report.lines_read += lines
            report.records_valid += vouched
            offsets = [o for split in splits.values() for o in (split.lo, split.hi) if o is not None]
            routed = lines > vouched  # lines Spark did not vouch for: parse_kcat_line's
            rest = _parse_the_rest(narrow, splits, sources, report) if routed else []
            report.bad_lines.sort(key=lambda bad: (sources.index(bad.source), bad.line_no))
            offsets += [row[2] for row in rest]
            if not offsets:
                yield None
                return
            python_records = spark.createDataFrame(rest, _PYTHON_RECORDS) if rest else None
            repeated = _repeated(narrow, python_records, splits)

            def with_python_records(frame: DataFrame) -> DataFrame:
                if python_records is None:
                    return frame
                return frame.unionByName(
                    python_records.select(
                        *_RECORD_COLUMNS[:3],
                        F.timestamp_millis("kafka_timestamp_ms").alias("kafka_timestamp"),
                        *_RECORD_COLUMNS[4:],
                        "batch_order",
                    )
                )

            text = with_python_records(_text_records(parsed, splits))
            if not repeated and not any(split.unplaced for split in splits.values()):
                frame, fallback = with_python_records(_json_records(spark, names, narrow if routed else None)), text
            else:
                frame, fallback = text, None
            yield SparkRecords(frame, fallback, min(offsets), max(offsets), unique_coordinates=not repeated)
        finally:
            narrow.unpersist()


_COORDINATES = ["kafka_topic", "kafka_partition", "kafka_offset"]
_PLACED = "kafka_topic is not null and kafka_partition is not null and kafka_offset is not null"


def _parsed_lines(spark: SparkSession, names: list[str]) -> DataFrame:
    """Every line of the files, where it is, parsed by `from_json`, and whether Spark vouches for it."""
    from pyspark.sql import functions as F

    return (
        spark.read.text(names)
        .select(
            F.col("value").alias("line"),
            F.col("_metadata.file_path").alias("file_path"),
            F.col("_metadata.file_block_start").alias("block_start"),
            F.monotonically_increasing_id().alias("row_id"),
            F.from_json("value", KCAT_LINE_SCHEMA, KCAT_JSON_OPTIONS).alias("r"),
        )
        .select(
            "file_path",
            "block_start",
            "row_id",
            F.coalesce(F.expr(_SPARK_VOUCHES), F.lit(False)).alias("vouched"),
            *_kafka_columns("r."),
            "line",
        )
        .withColumn(
            "unplaced",
            ~F.col("vouched")
            & (F.expr(r"trim(both ' \t' from line)") != "")  # JSON's blanks in a line: space, tab
            & ~F.coalesce(F.expr(_PLACED), F.lit(False)),
        )
        # the bytes of a line as the file has them, for parse_kcat_line; none for the others
        .withColumn("line", F.when(~F.col("vouched"), F.col("line").cast("binary")))
    )


def _kafka_columns(prefix: str) -> list[Column]:
    """A parsed kcat line (`KCAT_LINE_SCHEMA`'s fields, under `prefix`) as the raw record's columns."""
    from pyspark.sql import functions as F

    return [
        F.col(f"{prefix}topic").alias("kafka_topic"),
        F.col(f"{prefix}partition").alias("kafka_partition"),
        F.col(f"{prefix}offset").alias("kafka_offset"),
        F.timestamp_millis(F.col(f"{prefix}ts")).alias("kafka_timestamp"),
        F.col(f"{prefix}key").alias("kafka_key"),
        F.col(f"{prefix}payload").alias("kafka_value"),
        F.expr(_header_pairs(f"{prefix}headers")).alias("kafka_headers"),
    ]


def _text_records(parsed: DataFrame, splits: dict[tuple[str, int], _Split]) -> DataFrame:
    """The records Spark vouched for, parsed from the text lines again, in file and line order."""
    from pyspark.sql import functions as F

    by_uri = {uri: split.file_index for (uri, _), split in splits.items()}
    file_index = F.create_map(*(F.lit(v) for item in by_uri.items() for v in item))
    return parsed.where("vouched").select(
        *_RECORD_COLUMNS,
        F.struct(
            file_index[F.col("file_path")].alias("file"),
            F.col("block_start").alias("block"),
            F.col("row_id").alias("row"),
        ).alias("batch_order"),
    )


def _json_records(spark: SparkSession, names: list[str], narrow: DataFrame | None) -> DataFrame:
    """The records of the files by Spark's JSON reader, less those at the coordinates of a line
    Spark did not vouch for (`narrow`; parse_kcat_line decides about those)."""
    from pyspark.sql import functions as F

    records = (
        spark.read.schema(KCAT_LINE_SCHEMA).options(**KCAT_JSON_OPTIONS, mode="FAILFAST").json(names)
        .where("topic != '' and partition >= 0 and offset >= 0")
        .select(
            *_kafka_columns(""),
            F.struct(F.lit(0).alias("file"), F.lit(0).cast("bigint").alias("block"),
                     F.lit(0).cast("bigint").alias("row")).alias("batch_order"),
        )
    )
    if narrow is None:
        return records
    left_out = narrow.where(f"not vouched and {_PLACED}").select(*_COORDINATES).distinct()
    return records.join(F.broadcast(left_out), on=_COORDINATES, how="left_anti")


def _repeated(narrow: DataFrame, python_records: DataFrame | None, splits: dict[tuple[str, int], _Split]) -> bool:
    """Whether two lines have the same coordinates: among the records, or between a record and a
    line Spark did not vouch for (by its `from_json` coordinates, or by `parse_kcat_line`'s)."""
    (split, *more) = splits.values()
    if not more and python_records is None and split.vouched == split.lines:
        return split.coordinates < split.vouched  # one split, every line a record: counted already
    lines = narrow.where(_PLACED).select("row_id", *_COORDINATES)
    if python_records is not None:
        # a line parsed by both gives one pair of coordinates, or two if they disagree
        lines = lines.unionByName(python_records.select("batch_order.row", *_COORDINATES)
                                  .withColumnRenamed("row", "row_id")).distinct()
    return bool(lines.groupBy(*_COORDINATES).count().where("count > 1").limit(1).collect())


def _stdin_file(path: Path) -> Path:
    """Standard input (and what `peek_values` read of it) into a file Spark can read."""
    with path.open("w", encoding="utf-8", errors="surrogateescape") as out:
        for line in _open_lines("-"):
            out.write(line)
    return path


def _glob_escaped(path: Path) -> str:
    """Spark reads its paths as Hadoop globs: the glob characters of a file name must not expand."""
    return re.sub(r"([\\\[\]{}*?])", r"\\\1", str(path))


def _read_splits(narrow: DataFrame, files: list[Path]) -> dict[tuple[str, int], _Split]:
    """The splits of the read by (file URI, block start), each with the line number of its first
    line. A split's lines have consecutive row ids (one task reads a split whole and in order)."""
    from pyspark.sql import functions as F

    rows = narrow.groupBy("file_path", "block_start").agg(
        F.count("*").alias("lines"),
        F.sum(F.col("vouched").cast("int")).alias("vouched"),
        F.sum(F.col("unplaced").cast("int")).alias("unplaced"),
        F.count_distinct(
            F.when(F.col("vouched"), F.struct("kafka_topic", "kafka_partition", "kafka_offset"))
        ).alias("coordinates"),
        F.min("row_id").alias("first_row_id"),
        F.min(F.when(F.col("vouched"), F.col("kafka_offset"))).alias("lo"),
        F.max(F.when(F.col("vouched"), F.col("kafka_offset"))).alias("hi"),
    ).collect()
    first_index = {path: i for i, path in reversed(list(enumerate(files)))}
    splits = {
        (row.file_path, row.block_start): _Split(
            first_index[_local_path(row.file_path)], row.block_start, row.lines, row.vouched, row.coordinates,
            row.unplaced, row.first_row_id, row.lo, row.hi,
        )
        for row in rows
    }
    line_no: dict[int, int] = {}
    for split in sorted(splits.values(), key=lambda s: (s.file_index, s.block_start)):
        split.first_line_no = line_no.get(split.file_index, 1)
        line_no[split.file_index] = split.first_line_no + split.lines
    return splits


def _local_path(uri: str) -> Path:
    return Path(unquote(urlparse(uri).path)).resolve()


def _parse_the_rest(
    narrow: DataFrame, splits: dict[tuple[str, int], _Split], sources: list[str], report: Tally
) -> list[tuple[Any, ...]]:
    """`parse_kcat_line` on the lines Spark did not vouch for: records (in `_PYTHON_RECORDS`'s
    columns) for the good ones, `report.bad_lines` for the others; blank lines are skipped."""
    records = []
    for row in narrow.where("not vouched").select("file_path", "block_start", "row_id", "line").toLocalIterator():
        split = splits[(row.file_path, row.block_start)]
        text = bytes(row.line).decode("utf-8", errors="surrogateescape")
        if not text.strip():
            continue
        try:
            record = parse_kcat_line(text)
        except ValueError as exc:
            line_no = split.first_line_no + row.row_id - split.first_row_id
            report.bad_lines.append(BadLine(sources[split.file_index], line_no, str(exc)))
            continue
        report.records_valid += 1
        records.append((*record.values(), (split.file_index, row.block_start, row.row_id)))
    return records


def unparsed_line(exc: BaseException) -> bool:
    """Whether a failed Spark job is the JSON reader's FAILFAST on a line it could not parse whole."""
    return "MALFORMED_RECORD_IN_PARSING" in str(exc)
