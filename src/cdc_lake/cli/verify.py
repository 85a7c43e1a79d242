"""`cdc-lake verify`: compare the lake's current state with the source database."""

from __future__ import annotations

import argparse
import os
import sys

from cdc_lake.env import model_schema


def run(args: argparse.Namespace) -> int:
    from cdc_lake.landing import raw_schema
    from cdc_lake.verify.run import parse_source_url, verify
    from cdc_lake.verify.source import SourceError

    try:
        url = parse_source_url(args.source)
        tables = [t.strip() for t in args.tables.split(",") if t.strip()] if args.tables else None
        tables = url.table_names(tables) if tables else None
        if args.as_of_landed:
            _build_current_state(args.project_dir)
        from cdc_lake.spark import get_spark

        verification = verify(
            get_spark("cdc-lake verify"), url, schema=model_schema(),
            raw_schema=raw_schema(), tables=tables,
            source_system=args.source_system,
        )
    except SourceError as exc:
        print(f"cdc-lake verify: {exc}", file=sys.stderr)
        return 2
    print(verification.as_json() if args.output == "json" else verification.as_text())
    return 0 if verification.equal else 1


def _build_current_state(project_dir: str | None) -> None:
    """`--as-of-landed`: build `cdc_current` and what it reads from every record landed so far
    (the same models a scheduled build runs), before verify opens the lake."""
    import subprocess

    from cdc_lake.verify.source import SourceError

    dbt = os.path.join(os.path.dirname(sys.executable), "dbt")
    command = [dbt, "run", "--select", "+cdc_current"]
    if project_dir:
        command += ["--project-dir", project_dir]
    if subprocess.run(command, check=False).returncode != 0:
        raise SourceError("--as-of-landed: the build of cdc_current failed (its output is above)")


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    verify_parser = sub.add_parser(
        "verify",
        help="compare the lake's current state with the source database, table by table",
        description=(
            "Compare the live rows of cdc_current with the source MariaDB/MySQL or PostgreSQL tables: counts and "
            "checksums over buckets of the key (computed inside each engine), narrowed by bisection to "
            "the keys that differ, read from the source at one consistent snapshot. Keyless tables are "
            "compared as multisets. The password comes from $CDC_LAKE_SOURCE_PASSWORD (or $MYSQL_PWD, $PGPASSWORD). "
            "Each run's results are appended to <raw schema>.verification_results (the cdc_verification "
            "model). Exit status: 0 every table equal, 1 a table differs, 2 the source or the arguments "
            "are wrong."
        ),
    )
    verify_parser.add_argument(
        "--source", required=True,
        help="mysql://user@host:port/database or postgresql://user@host:port/database",
    )
    verify_parser.add_argument(
        "--tables", help="comma-separated tables (db.table or table; PostgreSQL: schema.table, a bare name in "
        "public; default: every base table of the database)"
    )
    verify_parser.add_argument(
        "--source-system", help="the lake's source_system to compare (needed when several hold the database)"
    )
    verify_parser.add_argument(
        "--as-of-landed", action="store_true",
        help="first build cdc_current from every record landed so far (dbt run -s +cdc_current)",
    )
    verify_parser.add_argument("--project-dir", help="the dbt project for --as-of-landed (default: current directory)")
    verify_parser.add_argument("--output", choices=["text", "json"], default="text")
    verify_parser.set_defaults(func=run)
