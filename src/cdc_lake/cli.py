"""`cdc-lake`: the project's command line (landing Kafka dumps, SQL on the lake, the metastore server,
a local cluster, verifying the lake against the source database; more join here)."""

from __future__ import annotations

import argparse
import os
import sys
import time

from cdc_lake.env import model_schema
from cdc_lake.formats import FORMATS
from cdc_lake.landing import LandingReport

EXIT_BAD_LINES = 3
EXIT_WRONG_FORMAT = 4
EXIT_CONFLICTS = 5
TARGETS = ("local", "thrift")


def _land_plan(args: argparse.Namespace) -> dict[str, list[str]] | str:
    """Files by format, in the order given: `FORMAT=FILE` names its own format, a plain FILE takes
    --format. Returns the error message when a FILE has none."""
    plan: dict[str, list[str]] = {}
    for item in args.files:
        prefix, sep, rest = item.partition("=")
        if sep and prefix in FORMATS:
            fmt, path = prefix, rest
        elif args.format:
            fmt, path = args.format, item
        else:
            return f"cdc-lake land: which format is {item}? give --format FORMAT or write FORMAT={item}"
        plan.setdefault(fmt, []).append(path)
    return plan


def _land(args: argparse.Namespace) -> int:
    plan = _land_plan(args)
    if isinstance(plan, str):
        print(plan, file=sys.stderr)
        return 2
    if args.topic_incarnation < 0:
        print("cdc-lake land: --topic-incarnation counts a topic's lives from 0", file=sys.stderr)
        return 2
    # checked before Spark starts: a typo should cost a second, not a JVM start and a traceback
    missing = [path for paths in plan.values() for path in paths if path != "-" and not os.path.isfile(path)]
    if missing:
        for path in missing:
            print(f"cdc-lake land: no such file: {path}", file=sys.stderr)
        return 2
    from cdc_lake.kcat import peek_values
    from cdc_lake.sniff import sample_values

    wrong = False
    for fmt, paths in plan.items():
        sample = sample_values(fmt, peek_values(paths, args.raw_values))
        if sample.wrong:
            print(sample.message(), file=sys.stderr)
            wrong = True
    if wrong and not args.force:
        return EXIT_WRONG_FORMAT
    options = {
        "raw_values": args.raw_values,
        "topic": args.topic,
        "partition": args.partition,
        "progress": sys.stderr,
        "incarnation": args.topic_incarnation,
    }
    reports = []
    if args.target == "thrift":
        from cdc_lake.landing import land_over_thrift
        from cdc_lake.thrift import ThriftTarget, connect

        target = ThriftTarget.from_profile()
        try:
            conn = connect(target)
        except Exception as exc:  # noqa: BLE001 - thrift/SASL raise many types; all mean "not reached"
            print(f"cannot reach the Spark Thrift Server {target}: {exc}", file=sys.stderr)
            return 1
        try:
            for fmt, paths in plan.items():
                reports.append(land_over_thrift(conn.cursor(), fmt, paths, **options))
        finally:
            conn.close()
    else:
        from cdc_lake.landing import land
        from cdc_lake.spark import get_spark

        spark = get_spark("cdc-lake land")  # one JVM for every format of the command
        reports = [land(spark, fmt, paths, **options) for fmt, paths in plan.items()]
    code = 0
    for report in reports:
        for bad in report.bad_lines[: args.max_errors]:
            print(f"{bad.source}:{bad.line_no}: {bad.reason}", file=sys.stderr)
        if len(report.bad_lines) > args.max_errors:
            print(f"... and {len(report.bad_lines) - args.max_errors} more bad lines", file=sys.stderr)
        if report.conflicts:
            _print_conflicts(report)
        print(report.summary())
        if report.conflicts:
            code = EXIT_CONFLICTS
        elif report.bad_lines and code == 0:
            code = EXIT_BAD_LINES
    return code


def _print_conflicts(report: LandingReport) -> None:
    print(
        f"{report.fmt}: {report.conflicts} records arrived again at offsets already landed, with another "
        "key or value; they were not landed (the first landing of an offset wins):",
        file=sys.stderr,
    )
    for conflict in report.conflict_samples:
        print(f"  {conflict.describe()}", file=sys.stderr)
    if report.conflicts > len(report.conflict_samples):
        print(f"  ... and {report.conflicts - len(report.conflict_samples)} more", file=sys.stderr)
    for topic, incarnation in sorted({(c.topic, c.topic_incarnation) for c in report.conflict_samples}):
        print(
            f"If topic {topic} was deleted and created again (its offsets started again at 0), land its "
            f"new records with --topic-incarnation {incarnation + 1}; if the dump belongs to another "
            "topic or format, land it there instead.",
            file=sys.stderr,
        )


def _unland(args: argparse.Namespace) -> int:
    from cdc_lake.landing import Selection, raw_table

    selection = Selection(
        args.format, args.topic, args.partition, args.from_offset, args.to_offset, args.topic_incarnation
    )
    if args.target == "thrift":
        from cdc_lake.thrift import ThriftTarget, connect

        target = ThriftTarget.from_profile()
        try:
            conn = connect(target)
        except Exception as exc:  # noqa: BLE001 - thrift/SASL raise many types; all mean "not reached"
            print(f"cannot reach the Spark Thrift Server {target}: {exc}", file=sys.stderr)
            return 1
        try:
            cursor = conn.cursor()
            cursor.execute(selection.count_sql())
            removed = int(cursor.fetchall()[0][0])
            if removed:
                cursor.execute(selection.delete_sql())
        finally:
            conn.close()
    else:
        from cdc_lake.landing import unland
        from cdc_lake.spark import get_spark

        removed = unland(get_spark("cdc-lake unland"), selection)
    if not removed:
        print(f"cdc-lake unland: no landed record of {raw_table(args.format)} matches {selection.where()}",
              file=sys.stderr)
        return 1
    print(f"removed {removed} records from {raw_table(args.format)} where {selection.where()}")
    print(
        "The models built from them still hold what they became; rebuild the models of this format from "
        "the raw tables (the other formats' parsed tables are kept):\n"
        f"  dbt build --full-refresh --select base_{args.format}__messages+"
    )
    return 0


def _consume_spark_conf(args: argparse.Namespace) -> dict[str, str]:
    """Where the consumer's Spark runs: the profile's local master by default; `--cluster` puts it
    on the local standalone cluster (its master, its lake dir), `--master` on another one."""
    from cdc_lake.consume import ConsumeError

    conf: dict[str, str] = {}
    if args.cluster:
        from cdc_lake.servers import cluster

        settings = cluster.Settings.from_env()
        down = [d.name for d in cluster.daemons(settings)[:2] if d.pid() is None]
        if down:
            raise ConsumeError(f"the local cluster is not running ({', '.join(down)} down): `cdc-lake cluster start`")
        os.environ["CDC_LAKE_DIR"] = str(settings.cluster_dir)  # the Thrift Server's lake and metastore
        conf.update(cluster.consumer_conf(settings))
    if args.master:
        conf["spark.master"] = args.master
    conf.update(_key_values(args.spark_conf, "--spark-conf"))
    return conf


def _key_values(items: list[str] | None, flag: str) -> dict[str, str]:
    """The KEY=VALUE items of a repeatable option."""
    from cdc_lake.consume import ConsumeError

    pairs = {}
    for item in items or []:
        key, sep, value = item.partition("=")
        if not sep:
            raise ConsumeError(f"{flag} {item!r}: expected KEY=VALUE")
        pairs[key] = value
    return pairs


def _consume(args: argparse.Namespace) -> int:
    import json as json_module
    from pathlib import Path

    from cdc_lake.consume import DEFAULT_CONFIG, ConsumeError, ConsumeSettings, TopicRule, consume, load_rules

    bootstrap = args.bootstrap_servers or os.environ.get("CDC_LAKE_KAFKA_BOOTSTRAP")
    if not bootstrap:
        from cdc_lake.servers import kafka_broker

        bootstrap = kafka_broker.running_bootstrap()
    if not bootstrap:
        print("no broker: give --bootstrap-servers, set CDC_LAKE_KAFKA_BOOTSTRAP, or `cdc-lake kafka start`",
              file=sys.stderr)
        return 2
    try:
        spark_conf = _consume_spark_conf(args)  # first: --cluster moves the lake, and its checkpoints
        if args.topic or args.pattern:
            if not args.format:
                raise ConsumeError("--topic/--pattern need --format")
            rules = [TopicRule(args.format, list(args.topic or []), list(args.pattern or []))]
        else:
            rules = load_rules(Path(args.config) if args.config else DEFAULT_CONFIG)
        options = json_module.loads(os.environ.get("CDC_LAKE_KAFKA_OPTIONS", "{}"))
        options.update(_key_values(args.kafka_option, "--kafka-option"))
        settings = ConsumeSettings(
            bootstrap_servers=bootstrap,
            rules=rules,
            follow=args.follow,
            trigger_seconds=args.trigger_seconds,
            starting_offsets=args.starting_offsets,
            max_offsets_per_trigger=args.max_offsets_per_trigger,
            kafka_options=options,
        )
        from cdc_lake.spark import get_spark

        began = time.monotonic()
        counts = consume(get_spark("cdc-lake consume", extra=spark_conf), settings)
    except ConsumeError as exc:
        print(f"consume: {exc}", file=sys.stderr)
        return 1
    seconds = time.monotonic() - began
    for fmt, count in counts.items():
        print(f"{fmt}: {count} records read in {seconds:.1f}s")
    return 0


def _verify(args: argparse.Namespace) -> int:
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


def _kafka(args: argparse.Namespace) -> int:
    from cdc_lake.servers.kafka_broker import BrokerError, LocalKafka

    broker = LocalKafka()
    if args.action == "start":
        try:
            broker.start()
        except BrokerError as exc:
            print(f"kafka start failed: {exc}", file=sys.stderr)
            return 1
        print(f"kafka broker up: export CDC_LAKE_KAFKA_BOOTSTRAP={broker.bootstrap}")
        return 0
    if args.action == "stop":
        broker.stop()
        print("kafka broker stopped")
        return 0
    if broker.is_running():
        print(f"kafka broker running at {broker.bootstrap} (pid {broker.pid()}, state in {broker.folder})")
        return 0
    print(f"no kafka broker running for {broker.folder}")
    return 1


def _metastore(args: argparse.Namespace) -> int:
    from cdc_lake.servers.metastore import HOST, MetastoreError, MetastoreServer, embedded_holder

    server = MetastoreServer.for_lake()
    if args.action == "start":
        try:
            started = server.start()
        except MetastoreError as exc:
            print(f"metastore start failed: {exc}", file=sys.stderr)
            return 1
        print(f"metastore server {'started' if started else 'already running'} on {HOST}:{server.port()} "
              f"(pid {server.pid()}) for {server.lake}")
        return 0
    if args.action == "stop":
        print("metastore server stopped" if server.stop() else f"no metastore server running for {server.lake}")
        return 0
    if server.is_running():
        print(f"metastore server running on {HOST}:{server.port()} (pid {server.pid()}), "
              f"database {server.lake / 'metastore_db'}, log {server.log_file}")
        return 0
    holder = embedded_holder(server.lake)
    if holder is not None:
        print(f"no metastore server; {server.lake / 'metastore_db'} is open in embedded Derby by pid {holder[0]}")
    else:
        print(f"no metastore server running for {server.lake} (the next dbt or cdc-lake command starts it)")
    return 1


def _cluster(args: argparse.Namespace) -> int:
    from cdc_lake.servers import cluster

    settings = cluster.Settings.from_env()
    if args.action == "start":
        began = time.monotonic()
        try:
            cluster.start(settings, timeout=args.timeout or cluster.START_TIMEOUT)
        except cluster.ClusterError as exc:
            print(f"cluster start failed: {exc}", file=sys.stderr)
            return 1
        print(f"cluster up in {time.monotonic() - began:.1f}s; point dbt and cdc-lake land at it with:")
        print("export " + " ".join(f"{k}={v}" for k, v in cluster.client_env(settings).items()))
        print("and land from Kafka on it with: cdc-lake consume --cluster [--follow]")
        return 0
    if args.action == "stop":
        began = time.monotonic()
        cluster.stop(settings, timeout=args.timeout or cluster.STOP_TIMEOUT)
        print(f"cluster down in {time.monotonic() - began:.1f}s")
        return 0
    if args.action == "status":
        return 0 if cluster.status(settings) else 1
    print(cluster.submit_command(settings))
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="cdc-lake",
        description="Land Kafka CDC records into the lake that the cdc_lake dbt project builds on.",
    )
    sub = parser.add_subparsers(dest="command", required=True)

    land = sub.add_parser(
        "land",
        help="append Kafka records (kcat -C -J lines) to the raw table of a format",
        description=(
            "Append Kafka records to the raw Iceberg table of their format. Each line of FILE is one record "
            "as `kcat -C -b BROKER -t TOPIC -J -e` prints it. Records already landed (same topic, "
            "partition, offset, topic incarnation) are skipped, so landing twice changes nothing. "
            "Several formats in one command (one Spark start): `debezium=a.jsonl canal_flat=b.jsonl`. "
            "Exit codes: 2 usage or missing file; "
            f"{EXIT_BAD_LINES} lines that are not records (reported with their line numbers, not landed); "
            f"{EXIT_WRONG_FORMAT} the values do not look like the format (checked on a sample before "
            f"anything is landed; --force lands anyway); {EXIT_CONFLICTS} records at offsets already landed "
            "with other content (not landed; see --topic-incarnation)."
        ),
    )
    land.add_argument(
        "--format", choices=FORMATS, help="the CDC tool that wrote the records of every FILE not written FORMAT=FILE"
    )
    land.add_argument(
        "files", nargs="+", metavar="FILE",
        help="kcat -J dump, or FORMAT=FILE to give that file's format; '-' reads standard input",
    )
    land.add_argument(
        "--raw-values",
        action="store_true",
        help="each line is a bare Kafka value (no kcat envelope); offsets are line numbers - 1",
    )
    land.add_argument("--topic", help="topic for --raw-values (default: file name without extension)")
    land.add_argument("--partition", type=int, default=0, help="partition for --raw-values (default 0)")
    land.add_argument("--max-errors", type=int, default=20, help="bad lines to print (default 20)")
    land.add_argument(
        "--force", action="store_true", help="land even when the values do not look like the format's records"
    )
    land.add_argument(
        "--topic-incarnation", type=int, default=0, metavar="N",
        help=(
            "the topic's life: 0 (default) for a topic never recreated; a topic deleted and created again "
            "(offsets restart at 0) lands its new records as 1, then 2, ... (stored in the raw table's "
            "kafka_topic_incarnation, part of the landing identity)"
        ),
    )
    land.add_argument(
        "--target",
        choices=TARGETS,
        default=os.environ.get("CDC_LAKE_TARGET", "local"),
        help=(
            "dbt target whose lake receives the records: `local` opens the embedded lake in "
            "CDC_LAKE_DIR; `thrift` sends them to the Spark Thrift Server of the `thrift` target "
            "(CDC_LAKE_THRIFT_HOST/PORT/USER/AUTH) as INSERT batches plus one MERGE "
            "(default: $CDC_LAKE_TARGET, else local)"
        ),
    )
    land.set_defaults(func=_land)

    unland_parser = sub.add_parser(
        "unland",
        help="remove landed records (landed by mistake) from the raw table of a format",
        description=(
            "Delete the records of one topic (optionally one partition, an inclusive offset range, one "
            "topic incarnation) from the raw table of FORMAT, in one Iceberg commit. The models keep what "
            "they built from those records until the format's models are rebuilt: the command prints "
            "the `dbt build --full-refresh --select base_<format>__messages+` to run next. Exit 1 when "
            "nothing matches."
        ),
    )
    unland_parser.add_argument("--format", required=True, choices=FORMATS)
    unland_parser.add_argument("--topic", required=True)
    unland_parser.add_argument("--partition", type=int)
    unland_parser.add_argument("--from-offset", type=int, help="first offset to remove (inclusive)")
    unland_parser.add_argument("--to-offset", type=int, help="last offset to remove (inclusive)")
    unland_parser.add_argument("--topic-incarnation", type=int, metavar="N", help="only this incarnation")
    unland_parser.add_argument(
        "--target", choices=TARGETS, default=os.environ.get("CDC_LAKE_TARGET", "local"),
        help="dbt target whose lake holds the records (default: $CDC_LAKE_TARGET, else local)",
    )
    unland_parser.set_defaults(func=_unland)

    consume = sub.add_parser(
        "consume",
        help="land Kafka topics from a broker into the raw tables (Spark Structured Streaming)",
        description=(
            "Land the topics of kafka_topics.yml (topic names or patterns -> format), or of --topic/"
            "--pattern with --format, into the raw tables, exactly once: the offsets live in a "
            "checkpoint under CDC_LAKE_DIR/checkpoints. By default lands what the broker holds at the "
            "start, then stops (for a scheduler); --follow keeps running. Kafka consumer settings "
            "(security.protocol, sasl.*, ...) pass through --kafka-option or the JSON object in "
            "CDC_LAKE_KAFKA_OPTIONS (keep secrets in the environment)."
        ),
    )
    consume.add_argument("--bootstrap-servers", help="default: $CDC_LAKE_KAFKA_BOOTSTRAP, else the local broker")
    consume.add_argument("--config", help="topic file (default: kafka_topics.yml in the project)")
    consume.add_argument("--topic", action="append", help="a topic name (repeatable); needs --format")
    consume.add_argument("--pattern", action="append", help="a topic regex (repeatable); needs --format")
    consume.add_argument("--format", choices=FORMATS, help="format of --topic/--pattern")
    consume.add_argument("--follow", action="store_true", help="keep running, one batch per trigger interval")
    consume.add_argument("--trigger-seconds", type=float, default=10.0, help="trigger interval with --follow")
    consume.add_argument(
        "--starting-offsets", default="earliest",
        help="where a new checkpoint starts: earliest (default), latest, or Spark's JSON per partition",
    )
    consume.add_argument("--max-offsets-per-trigger", type=int, help="cap on records per batch")
    consume.add_argument("--kafka-option", action="append", metavar="KEY=VALUE", help="Kafka consumer setting")
    consume.add_argument(
        "--cluster", action="store_true",
        help="run on the local standalone cluster (`cdc-lake cluster start`): its master and lake; the Kafka "
             "reads and MERGEs run on its executors",
    )
    consume.add_argument("--master", help="a Spark master URL (the lake must be on storage its executors reach)")
    consume.add_argument("--spark-conf", action="append", metavar="KEY=VALUE", help="a Spark setting of the consumer")
    consume.set_defaults(func=_consume)

    from cdc_lake.build_loop import add_subcommand as add_build

    add_build(sub)

    from cdc_lake.generator import add_subcommand as add_generate

    add_generate(sub)

    from cdc_lake.tables import add_subcommand as add_add_table

    add_add_table(sub)

    from cdc_lake.sql_shell import add_subcommand as add_sql

    add_sql(sub)

    metastore = sub.add_parser(
        "metastore",
        help="start/stop/status of the lake's metastore server (Derby network server on 127.0.0.1)",
        description=(
            "The lake's Hive metastore database (CDC_LAKE_DIR/metastore_db) is served by a Derby network "
            "server on a free loopback port, so that dbt, cdc-lake land/consume/sql and tests can use "
            "the lake at the same time. The first command that needs it starts it; it keeps running "
            "until `stop` (port and pid in CDC_LAKE_DIR/metastore/server.json, log in "
            "CDC_LAKE_DIR/metastore/server.log). Stop it before deleting or moving the lake. "
            "CDC_LAKE_METASTORE=embedded opens the database in-process instead (one process at a time)."
        ),
    )
    metastore.add_argument(
        "action", choices=["start", "stop", "status"],
        help="status exits 0 when the server runs and answers",
    )
    metastore.set_defaults(func=_metastore)

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
    verify_parser.set_defaults(func=_verify)

    kafka = sub.add_parser(
        "kafka",
        help="start/stop/status of a local Kafka broker (KRaft) on 127.0.0.1",
        description=(
            "One Apache Kafka broker in KRaft mode (broker and controller in one process) on free "
            "loopback ports, from the jars `make setup` fetched; state under CDC_LAKE_DIR/kafka. "
            "`cdc-lake consume` finds it without --bootstrap-servers."
        ),
    )
    kafka.add_argument("action", choices=["start", "stop", "status"])
    kafka.set_defaults(func=_kafka)

    cluster = sub.add_parser(
        "cluster",
        help="start/stop/status of a local Spark standalone cluster with a Thrift Server",
        description=(
            "A Spark standalone master, one worker and a Spark Thrift Server submitted to it, bound to "
            "127.0.0.1, with Iceberg and a Derby metastore owned by the Thrift Server, all under "
            "CDC_LAKE_CLUSTER_DIR (default .lake-cluster/). Ports: CDC_LAKE_CLUSTER_MASTER_PORT (7077), "
            "CDC_LAKE_CLUSTER_MASTER_UI_PORT (8080), CDC_LAKE_CLUSTER_WORKER_UI_PORT (8081), "
            "CDC_LAKE_THRIFT_PORT (10000). Size: CDC_LAKE_CLUSTER_CORES (2), "
            "CDC_LAKE_CLUSTER_WORKER_MEMORY (3g), CDC_LAKE_CLUSTER_EXECUTOR_MEMORY (2g), "
            "CDC_LAKE_CLUSTER_DRIVER_MEMORY (2g). Then use `--target thrift` (or CDC_LAKE_TARGET=thrift) "
            "with dbt and `cdc-lake land`."
        ),
    )
    cluster.add_argument(
        "action",
        choices=["start", "stop", "status", "command"],
        help=(
            "start: start what is not running and wait until healthy; stop: stop the processes in the "
            "pid files; status: exit 0 only when all three are running and healthy; command: print the "
            "Thrift Server's spark-submit command line"
        ),
    )
    cluster.add_argument(
        "--timeout", type=float, default=None, help="seconds to wait per process (start 180, stop 60)"
    )
    cluster.set_defaults(func=_cluster)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return int(args.func(args))


if __name__ == "__main__":
    sys.exit(main())
