"""A Spark standalone cluster on this machine, with a Spark Thrift Server for dbt's `thrift` target.

Three processes, all started from the pyspark package's own `bin/spark-class` / `bin/spark-submit`
(the pyspark 3.5 wheel ships both and the `spark-hive-thriftserver` jar, but no `sbin/start-*.sh`):

- a standalone **master**  (`org.apache.spark.deploy.master.Master`),
- one **worker**            (`org.apache.spark.deploy.worker.Worker`), small: CDC_LAKE_CLUSTER_CORES
  cores (default 2), CDC_LAKE_CLUSTER_WORKER_MEMORY (default 3g);
- a **Spark Thrift Server** (`org.apache.spark.sql.hive.thriftserver.HiveThriftServer2`) submitted
  to that master, with the Iceberg runtime jar on `--jars` and `--driver-class-path`.

Everything binds to 127.0.0.1 only. The catalog is the `local` target's: Iceberg through Spark's
session catalog with a Hive metastore in Derby, served by the cluster dir's Derby network server
(`cdc_lake.servers.metastore`, started first and stopped last), so that a second Spark application
shares it: `cdc-lake consume --cluster`, whose Kafka reads and MERGEs run on the worker's
executors beside the Thrift Server's. dbt and `cdc-lake land --target thrift` go through the
Thrift Server. The worker offers the Thrift Server's cores plus the consumer's
(CDC_LAKE_CLUSTER_CONSUME_CORES, default 1), so both applications get executors at once.
Warehouse, metastore, checkpoints, logs, pid files and scratch space all live under
CDC_LAKE_CLUSTER_DIR (default `.lake-cluster/` in the project).

Each process is started in its own session (process group), its pid written to `run/<name>.pid`;
`stop` signals exactly those groups (the worker's executors are in the worker's group), SIGTERM
first, SIGKILL after a timeout. Health checks have deadlines: master port open, worker registered
(master's JSON status page), Thrift port open and `select 1` answered.
"""

from __future__ import annotations

import json
import os
import shlex
import time
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from cdc_lake.env import PROJECT_DIR, apply_defaults, iceberg_jar
from cdc_lake.servers.metastore import MetastoreServer
from cdc_lake.servers.ports import port_open
from cdc_lake.servers.processes import cmdline, is_alive
from cdc_lake.servers.supervisor import LocalServer
from cdc_lake.spark import profile_settings

HOST = "127.0.0.1"
MASTER_CLASS = "org.apache.spark.deploy.master.Master"
WORKER_CLASS = "org.apache.spark.deploy.worker.Worker"
THRIFT_CLASS = "org.apache.spark.sql.hive.thriftserver.HiveThriftServer2"
START_TIMEOUT = 180.0
STOP_TIMEOUT = 60.0


class ClusterError(RuntimeError):
    """The cluster could not be started (the message carries the failing process's log tail)."""


def _env_int(name: str, default: int) -> int:
    return int(os.environ.get(name, default))


@dataclass(frozen=True)
class Settings:
    """Where the cluster lives and how big it is; every field has a CDC_LAKE_* variable."""

    cluster_dir: Path
    master_port: int = 7077
    master_ui_port: int = 8080
    worker_ui_port: int = 8081
    thrift_port: int = 10000
    cores: int = 2
    worker_memory: str = "3g"
    executor_memory: str = "2g"
    driver_memory: str = "2g"
    # what the worker keeps for `cdc-lake consume --cluster` besides the Thrift Server's share
    consume_cores: int = 1
    consume_executor_memory: str = "1g"

    @classmethod
    def from_env(cls) -> Settings:
        apply_defaults()
        return cls(
            cluster_dir=Path(os.environ.get("CDC_LAKE_CLUSTER_DIR", PROJECT_DIR / ".lake-cluster")).resolve(),
            master_port=_env_int("CDC_LAKE_CLUSTER_MASTER_PORT", 7077),
            master_ui_port=_env_int("CDC_LAKE_CLUSTER_MASTER_UI_PORT", 8080),
            worker_ui_port=_env_int("CDC_LAKE_CLUSTER_WORKER_UI_PORT", 8081),
            thrift_port=_env_int("CDC_LAKE_THRIFT_PORT", 10000),
            cores=_env_int("CDC_LAKE_CLUSTER_CORES", 2),
            worker_memory=os.environ.get("CDC_LAKE_CLUSTER_WORKER_MEMORY", "3g"),
            executor_memory=os.environ.get("CDC_LAKE_CLUSTER_EXECUTOR_MEMORY", "2g"),
            driver_memory=os.environ.get("CDC_LAKE_CLUSTER_DRIVER_MEMORY", "2g"),
            consume_cores=_env_int("CDC_LAKE_CLUSTER_CONSUME_CORES", 1),
            consume_executor_memory=os.environ.get("CDC_LAKE_CLUSTER_CONSUME_EXECUTOR_MEMORY", "1g"),
        )

    @property
    def master_url(self) -> str:
        return f"spark://{HOST}:{self.master_port}"

    def path(self, *parts: str) -> Path:
        return self.cluster_dir.joinpath(*parts)


def spark_home() -> Path:
    import pyspark

    return Path(pyspark.__file__).resolve().parent


def metastore(settings: Settings) -> MetastoreServer:
    """The Derby network server of the cluster dir's metastore database."""
    return MetastoreServer.for_lake(settings.cluster_dir)


def thrift_server_conf(settings: Settings) -> dict[str, str]:
    """Spark settings of the Thrift Server: the `local` target's, with the lake in the cluster dir.

    Taking the `local` target's `server_side_parameters` (Iceberg extensions, session catalog on a
    Hive metastore, UTC, shuffle partitions, ...) keeps both targets' SQL semantics identical; only
    where things run and live changes. The metastore is the cluster dir's server once it has been
    started (`start` starts it first), else embedded Derby.
    """
    lake = settings.cluster_dir
    server = metastore(settings)
    client = server.client_env() if server.port() is not None else {}
    conf = profile_settings(
        "local", env={"CDC_LAKE_DIR": str(lake), "CDC_LAKE_METASTORE_URL": "", "CDC_LAKE_METASTORE_DRIVER": "",
                      **client},
    )
    conf.pop("spark.master", None)
    conf.pop("spark.driver.memory", None)
    # The local driver's JVM flags (its GC and class archive, as profiles.yml explains them); its
    # system properties (-D) name the local lake's files, so the server gets its own.
    jvm_flags = [f for f in conf.pop("spark.driver.extraJavaOptions", "").split() if f.startswith(("-XX:", "-Xlog:"))]
    gc_flags = [f for f in jvm_flags if f.startswith("-XX:+Use") and f.endswith("GC")]
    conf.update(
        {
            "spark.driver.host": HOST,
            "spark.driver.bindAddress": HOST,
            "spark.driver.extraJavaOptions": " ".join([
                *jvm_flags, f"-Dderby.system.home={lake}", f"-Dderby.stream.error.file={lake}/logs/derby.log",
                f"-Djava.io.tmpdir={lake}/tmp",
            ]),
            "spark.executor.extraJavaOptions": " ".join(gc_flags),
            "spark.executor.memory": settings.executor_memory,
            "spark.cores.max": str(settings.cores),
        }
    )
    return conf


def consumer_conf(settings: Settings) -> dict[str, str]:
    """Spark settings that put `cdc-lake consume` on this cluster: its master, the consumer's
    share of the worker, the driver on loopback like every other process of the cluster."""
    return {
        "spark.master": settings.master_url,
        "spark.cores.max": str(settings.consume_cores),
        "spark.executor.memory": settings.consume_executor_memory,
        "spark.driver.host": HOST,
        "spark.driver.bindAddress": HOST,
    }


def thrift_server_hiveconf(settings: Settings) -> dict[str, str]:
    """HiveServer2 settings: loopback only, and its scratch folder inside the cluster dir.

    The other Hive session folders default to java.io.tmpdir, which the driver's options point
    into the cluster dir; they stay per-session (a fixed `hive.downloaded.resources.dir` is
    deleted when any session closes and breaks concurrent session opening).
    """
    return {
        "hive.server2.thrift.bind.host": HOST,
        "hive.server2.thrift.port": str(settings.thrift_port),
        "hive.server2.transport.mode": "binary",
        "hive.exec.scratchdir": str(settings.path("tmp", "hive-scratch")),
    }


class Daemon(LocalServer):
    """One cluster process: how to start it, how to recognise it, and when it is healthy. Detached:
    its pid is kept in `run/<name>.pid`, its output in `logs/<name>.log`."""

    error = ClusterError
    poll_seconds = 1.0

    def __init__(
        self, name: str, main_class: str, argv: list[str], port: int, healthy: Callable[[], bool], settings: Settings,
    ) -> None:
        super().__init__(settings.cluster_dir)
        self.name = name  # type: ignore[misc] - each daemon names its own files
        self.main_class = main_class
        self.argv = argv
        self.port = port
        self.healthy = healthy
        self.settings = settings

    def command(self) -> list[str]:
        return self.argv

    def ready(self) -> bool:
        return self.healthy()

    def environment(self) -> dict[str, str]:
        return _process_env(self.settings)

    def working_dir(self) -> Path:
        return self.settings.cluster_dir

    @property
    def pid_file(self) -> Path:
        return self.settings.path("run", f"{self.name}.pid")

    @property
    def output_file(self) -> Path:
        return self.settings.path("logs", f"{self.name}.log")

    def pid(self) -> int | None:
        """The recorded pid if that process is alive and is this daemon (not a reused pid)."""
        try:
            pid = int(self.pid_file.read_text().strip())
        except (FileNotFoundError, ValueError):
            return None
        return pid if is_alive(pid) and self.main_class in " ".join(cmdline(pid)) else None

    def record(self, pid: int) -> None:
        # spark-class exec()s java, so this pid is the JVM's
        self.pid_file.parent.mkdir(parents=True, exist_ok=True)
        self.pid_file.write_text(f"{pid}\n")

    def forget(self) -> None:
        self.pid_file.unlink(missing_ok=True)


def alive_workers(settings: Settings) -> int:
    """ALIVE workers the master reports on its JSON status page (0 when it does not answer)."""
    url = f"http://{HOST}:{settings.master_ui_port}/json/"
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            status = json.load(response)
    except (OSError, ValueError):
        return 0
    return sum(1 for w in status.get("workers", []) if w.get("state") == "ALIVE")


def thrift_select_one(settings: Settings, timeout: float = 30.0) -> bool:
    """`select 1` over the Thrift protocol, the same way dbt's thrift target connects."""
    from cdc_lake.thrift import ThriftTarget, connect

    target = ThriftTarget(HOST, settings.thrift_port, "cdc_lake", "NONE")
    try:
        conn = connect(target, timeout=timeout)
    except Exception:  # noqa: BLE001 - any failure to connect means "not healthy yet"
        return False
    try:
        cursor = conn.cursor()
        cursor.execute("select 1")
        return cursor.fetchall() == [(1,)]
    except Exception:  # noqa: BLE001
        return False
    finally:
        try:
            conn.close()
        except Exception:  # noqa: BLE001
            pass


def daemons(settings: Settings) -> list[Daemon]:
    """The three processes, in start order."""
    bin_dir = spark_home() / "bin"
    jar = str(iceberg_jar())
    master = Daemon(
        name="master",
        main_class=MASTER_CLASS,
        argv=[
            str(bin_dir / "spark-class"), MASTER_CLASS,
            "--host", HOST, "--port", str(settings.master_port),
            "--webui-port", str(settings.master_ui_port),
        ],
        port=settings.master_port,
        healthy=lambda: port_open(settings.master_port) and port_open(settings.master_ui_port),
        settings=settings,
    )
    worker = Daemon(
        name="worker",
        main_class=WORKER_CLASS,
        argv=[
            str(bin_dir / "spark-class"), WORKER_CLASS,
            "--host", HOST, "--webui-port", str(settings.worker_ui_port),
            "--cores", str(settings.cores + settings.consume_cores), "--memory", settings.worker_memory,
            "--work-dir", str(settings.path("work")),
            settings.master_url,
        ],
        port=settings.worker_ui_port,
        healthy=lambda: alive_workers(settings) >= 1,
        settings=settings,
    )
    submit = [
        str(bin_dir / "spark-submit"),
        "--master", settings.master_url,
        "--deploy-mode", "client",
        "--class", THRIFT_CLASS,
        "--name", "cdc_lake Thrift Server",
        "--jars", jar,  # the driver has it in pyspark's jars/ (make setup links it there)
        "--driver-memory", settings.driver_memory,
    ]
    for key, value in thrift_server_conf(settings).items():
        submit += ["--conf", f"{key}={value}"]
    # No application jar: spark-submit knows HiveThriftServer2 (it is "spark-internal").
    for key, value in thrift_server_hiveconf(settings).items():
        submit += ["--hiveconf", f"{key}={value}"]
    thrift = Daemon(
        name="thriftserver",
        main_class=THRIFT_CLASS,
        argv=submit,
        port=settings.thrift_port,
        healthy=lambda: port_open(settings.thrift_port) and thrift_select_one(settings),
        settings=settings,
    )
    return [master, worker, thrift]


def _process_env(settings: Settings) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        {
            "SPARK_HOME": str(spark_home()),
            # Every Spark server socket (RPC, block manager, web UIs) binds to loopback.
            "SPARK_LOCAL_IP": HOST,
            "SPARK_LOCAL_HOSTNAME": HOST,
            "SPARK_MASTER_HOST": HOST,
            "SPARK_LOG_DIR": str(settings.path("logs")),
            "SPARK_PID_DIR": str(settings.path("run")),
            "SPARK_WORKER_DIR": str(settings.path("work")),
            "SPARK_LOCAL_DIRS": str(settings.path("tmp", "spark")),
            # Master and worker are bookkeeping only; the default 1g heap is more than they need.
            "SPARK_DAEMON_MEMORY": os.environ.get("CDC_LAKE_CLUSTER_DAEMON_MEMORY", "512m"),
        }
    )
    # A PySpark driver setting in the caller's environment must not leak into the daemons.
    env.pop("PYSPARK_SUBMIT_ARGS", None)
    return env


def start(
    settings: Settings | None = None,
    timeout: float = START_TIMEOUT,
    echo: Callable[[str], None] = print,
) -> Settings:
    """Start master, worker and Thrift Server (those not already running); wait until healthy.

    On failure, the processes this call started are stopped again and ClusterError is raised.
    """
    settings = settings or Settings.from_env()
    for sub in ("logs", "run", "work", "tmp"):
        settings.path(sub).mkdir(parents=True, exist_ok=True)
    server = metastore(settings)
    started_server = server.start()
    if started_server:
        echo(f"metastore: started (pid {server.pid()}, port {server.port()})")
    started: list[Daemon] = []
    try:
        for daemon in daemons(settings):
            running = daemon.pid()
            if running is not None:
                echo(f"{daemon.name}: already running (pid {running})")
                continue
            if port_open(daemon.port):
                raise ClusterError(
                    f"{daemon.name}: port {HOST}:{daemon.port} is already taken by another process; "
                    "choose another with the CDC_LAKE_CLUSTER_*_PORT / CDC_LAKE_THRIFT_PORT variables"
                )
            began = time.monotonic()
            started.append(daemon)
            daemon.start(timeout)
            echo(f"{daemon.name}: started (pid {daemon.pid()}, port {daemon.port}) in {time.monotonic() - began:.1f}s")
    except BaseException:
        for daemon in reversed(started):
            _stop_one(daemon, STOP_TIMEOUT, echo)
        if started_server:
            server.stop()
        raise
    return settings


def _stop_one(daemon: Daemon, timeout: float, echo: Callable[[str], None]) -> None:
    """SIGTERM to the daemon's process group (the worker's executors are in the worker's), SIGKILL
    after `timeout`; a group it does not lead is never signalled."""
    pid = daemon.pid()
    began = time.monotonic()
    if daemon.stop(timeout):
        echo(f"{daemon.name}: stopped (pid {pid}) in {time.monotonic() - began:.1f}s")


def stop(
    settings: Settings | None = None,
    timeout: float = STOP_TIMEOUT,
    echo: Callable[[str], None] = print,
) -> None:
    """Stop the processes recorded in the pid files, Thrift Server first, the metastore server
    last; no others."""
    settings = settings or Settings.from_env()
    for daemon in reversed(daemons(settings)):
        if daemon.pid() is None:
            echo(f"{daemon.name}: not running")
        _stop_one(daemon, timeout, echo)
    server = metastore(settings)
    pid = server.pid()
    if server.stop(timeout):
        echo(f"metastore: stopped (pid {pid})")


def status(settings: Settings | None = None, echo: Callable[[str], None] = print) -> bool:
    """Print each process's state and health; True when all three are running and healthy."""
    settings = settings or Settings.from_env()
    all_ok = True
    for daemon in daemons(settings):
        pid = daemon.pid()
        if pid is None:
            all_ok = False
            echo(f"{daemon.name:<13} stopped")
            continue
        ok = daemon.healthy()
        all_ok = all_ok and ok
        health = "healthy" if ok else "NOT healthy"
        echo(f"{daemon.name:<13} running  pid {pid:<8} port {HOST}:{daemon.port:<6} {health}")
    echo(f"cluster dir   {settings.cluster_dir}")
    return all_ok


def client_env(settings: Settings) -> dict[str, str]:
    """Environment variables that point dbt's `thrift` target and `cdc-lake land` at this cluster."""
    return {
        "CDC_LAKE_TARGET": "thrift",
        "CDC_LAKE_THRIFT_HOST": HOST,
        "CDC_LAKE_THRIFT_PORT": str(settings.thrift_port),
    }


def submit_command(settings: Settings | None = None) -> str:
    """The Thrift Server's spark-submit command line, for reading or copying to a real cluster."""
    settings = settings or Settings.from_env()
    return shlex.join(daemons(settings)[-1].argv)
