"""`cdc-lake generate`: the one place the product exposes the workload simulator (cdc_lake.generator)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from cdc_lake.formats import FORMATS
from cdc_lake.generator.large import parse_sizes
from cdc_lake.generator.runner import Options, generate

DEMO = {"seed": 7, "changes": 2000}


def _rate(text: str) -> float:
    value = float(text)
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"{text} is not a rate between 0 and 1")
    return value


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text} must be at least 1")
    return value


def _sizes(text: str) -> tuple[str, ...]:
    try:
        return parse_sizes(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def run(args: argparse.Namespace) -> int:
    seed = args.seed if args.seed is not None else DEMO["seed"] if args.demo else None
    changes = args.changes if args.changes is not None else DEMO["changes"] if args.demo else None
    if seed is None or changes is None:
        print("cdc-lake generate: --seed and --changes are required (or use --demo)", file=sys.stderr)
        return 2
    formats = tuple(f.strip() for f in args.formats.split(",") if f.strip()) if args.formats else FORMATS
    bad = [f for f in formats if f not in FORMATS]
    if bad or not formats:
        print(f"cdc-lake generate: --formats takes names from {', '.join(FORMATS)}", file=sys.stderr)
        return 2
    opts = Options(
        seed=seed,
        changes=changes,
        out=Path(args.out),
        duplicates=args.duplicates,
        out_of_order=args.out_of_order,
        malformed=args.malformed,
        batches=args.batches,
        formats=formats,
        jobs=args.jobs,
        large_values=args.large_values or (),
        large_values_inserted=args.large_values_inserted or (),
        snapshot_after_gap=args.snapshot_after_gap,
    )
    try:
        opts.validate()
    except ValueError as exc:
        print(f"cdc-lake generate: {exc}", file=sys.stderr)
        return 2
    summary = generate(opts, progress=not args.quiet)
    seconds = summary["seconds"]
    rate = summary["changes"]["mysql"] / max(seconds, 1e-9)
    records = ", ".join(f"{fmt} {info['records']:,}" for fmt, info in summary["formats"].items())
    print(
        f"generated {summary['changes']['all']:,} row changes ({summary['changes']['mysql']:,} MySQL, "
        f"{summary['changes']['lindorm_hbase']:,} Lindorm HBase) in {seconds:.1f}s ({rate:,.0f} changes/s) "
        f"into {args.out}\nrecords: {records}"
    )
    return 0


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser(
        "generate",
        help="simulate a MySQL/Lindorm workload and write it as Kafka records of all five formats",
        description=(
            "Simulate a seeded, reproducible MySQL workload (and a small Lindorm HBase-style table) and "
            "write it as the Kafka records each CDC tool would produce, one kcat -C -J file per format "
            "(DIR/<format>.jsonl, or DIR/<format>-<n>.jsonl with --batches), plus the ground truth under "
            "DIR/truth/: changes.jsonl, history.jsonl, current.jsonl, ddl.jsonl, malformed.jsonl, "
            "duplicates.jsonl, tables.json, summary.json. The same seed gives byte-identical files. "
            "See docs/generator.md."
        ),
    )
    parser.add_argument("--seed", type=int, help="random seed (required unless --demo)")
    parser.add_argument("--changes", type=_positive, help="number of MySQL row changes (required unless --demo)")
    parser.add_argument("--out", required=True, metavar="DIR", help="output folder (earlier output is replaced)")
    parser.add_argument(
        "--duplicates",
        type=_rate,
        default=0.0,
        metavar="RATE",
        help="share of records produced twice (same content, new offset); default 0",
    )
    parser.add_argument(
        "--out-of-order",
        action="store_true",
        help="move some records to a later landing batch (landing order differs from source order)",
    )
    parser.add_argument(
        "--malformed",
        type=_rate,
        default=0.0,
        metavar="RATE",
        help="after this share of change records, add a broken copy (listed in truth/malformed.jsonl)",
    )
    parser.add_argument(
        "--batches",
        type=_positive,
        default=1,
        metavar="K",
        help="split each format's stream into K landing batches (default 1)",
    )
    parser.add_argument(
        "--formats",
        metavar="F1,F2",
        help=f"write only these formats (default all: {','.join(FORMATS)}); the truth is always complete",
    )
    parser.add_argument(
        "--jobs",
        type=_positive,
        default=1,
        metavar="N",
        help="spread the formats over N processes (default 1); the output does not depend on N",
    )
    parser.add_argument(
        "--large-values",
        type=_sizes,
        metavar="SIZES",
        help=(
            "add the tables of large values and shapes (database `large`), played after the workload: per "
            "size (1k = 1,024 bytes, 1m = 1,048,576; up to 64m) a longtext, a longblob and a json value of "
            "that size and a row of that size, plus JSON nested 100 levels deep, a JSON array of 100,000 "
            "elements and a table of 1,000 columns; e.g. 1k,100k,1m,10m"
        ),
    )
    parser.add_argument(
        "--large-values-inserted",
        type=_sizes,
        metavar="SIZES",
        help=(
            "the same tables for these sizes, their rows only inserted and half of them deleted (no updates, "
            "so no message carries a before and an after image of that size): a lighter run of large sizes"
        ),
    )
    parser.add_argument(
        "--snapshot-after-gap",
        action="store_true",
        help=(
            "Debezium only (--formats debezium): the stream loses records for a while (offsets gone), the "
            "connector restarts and stops inside a snapshot, then snapshots every table, and later a "
            "snapshot stops inside its second table; truth/lake_history.jsonl and lake_current.jsonl "
            "hold what the lake must show (docs/generator.md)"
        ),
    )
    parser.add_argument(
        "--demo",
        action="store_true",
        help=f"small preset: --seed {DEMO['seed']} --changes {DEMO['changes']} unless given",
    )
    parser.add_argument("--quiet", action="store_true", help="no progress lines on standard error")
    parser.set_defaults(func=run)
