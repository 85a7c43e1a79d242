"""Project defaults that make plain `dbt ...` and `cdc-lake ...` work from the project's venv.

The venv gets a `.pth` file (written by `python -m cdc_lake.env --install`) that calls
`apply_defaults()` at interpreter start. It only fills variables the user has not set:

- DBT_PROFILES_DIR -> <project>/profiles, so dbt finds `profiles/profiles.yml` without flags;
- CDC_LAKE_DIR     -> <project>/.lake as an absolute path, so the warehouse and the Derby metastore
  never appear in whatever directory a command was started from;
- CDC_LAKE_LOG_CONFIG -> profiles/log4j2.properties, the Spark driver's quiet logging (WARN, and
  ERROR for warnings every run gives); CDC_LAKE_VERBOSE=1 leaves Spark's own defaults instead.

The hook (`startup`) also makes plain `dbt` and `sqlfluff` (which render profiles/profiles.yml and
open the `local` target's Spark session without any cdc_lake code) find the lake's metastore
server, starting it on first use (`cdc_lake.metastore`); and it makes two writing dbt commands on
one lake and schema take turns (`dbt_turn`), since both would commit to the same tables.

`--install` also links the JVM parts that `make setup` copied from Maven Central into
`.venv/jvm/spark` (the Iceberg Spark runtime, Spark's Kafka source and its dependencies; see
jvm/spark/pom.xml) into pyspark's own `jars/` folder, so every Spark session of this venv has them
on its classpath. A jar pyspark already ships (another version of the same artifact) is not
linked twice.
"""

from __future__ import annotations

import fcntl
import os
import re
import site
import sys
import time
from pathlib import Path
from typing import IO

PROJECT_DIR = Path(__file__).resolve().parents[2]
PTH_NAME = "cdc_lake_defaults.pth"
ICEBERG_JAR = "iceberg-spark-runtime-3.5_2.12-1.10.2.jar"
_VERSIONED_JAR = re.compile(r"^(?P<artifact>.+?)-(?P<version>\d[\w.\-]*)\.jar$")


def jvm_dir(part: str) -> Path:
    """Where `make setup` put a JVM part's jars (`spark` or `kafka`), inside the venv."""
    return Path(sys.prefix) / "jvm" / part


def lake_dir() -> Path:
    """The lake folder (warehouse + metastore), absolute."""
    return Path(os.environ.get("CDC_LAKE_DIR", PROJECT_DIR / ".lake")).resolve()


def apply_defaults() -> None:
    """Fill in the environment defaults described in the module docstring."""
    if not (PROJECT_DIR / "dbt_project.yml").exists():
        return  # installed outside a checkout: nothing to point at
    os.environ.setdefault("DBT_PROFILES_DIR", str(PROJECT_DIR / "profiles"))
    os.environ["CDC_LAKE_DIR"] = str(lake_dir())
    # Local Spark binds to loopback; otherwise it warns about the host name on every start.
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    if os.environ.get("CDC_LAKE_VERBOSE", "") not in ("", "0"):
        os.environ.pop("CDC_LAKE_LOG_CONFIG", None)
    else:
        os.environ.setdefault("CDC_LAKE_LOG_CONFIG", str(PROJECT_DIR / "profiles" / "log4j2.properties"))


# Commands of these programs open the `local` target's Spark session without cdc_lake code.
_LAKE_PROGRAMS = ("dbt", "sqlfluff")
_NO_LAKE = {"deps", "clean", "init", "parse", "ls", "list"}
# dbt commands that write models: two at once on one schema would commit over each other.
_WRITING = {"build", "run", "seed", "snapshot", "retry", "run-operation"}
_turn: IO[str] | None = None  # held for the life of the process
_started = False


def _dbt_target(argv: list[str]) -> str:
    for i, arg in enumerate(argv):
        if arg in ("--target", "-t") and i + 1 < len(argv):
            return argv[i + 1]
        if arg.startswith("--target="):
            return arg.split("=", 1)[1]
    return os.environ.get("DBT_TARGET") or os.environ.get("CDC_LAKE_TARGET") or "local"


def dbt_turn(command: str) -> None:
    """Wait until no other writing dbt command runs on this lake and schema; hold the turn until exit.

    One line says who holds it. The lock is a `flock` on `$CDC_LAKE_DIR/dbt-<schema>.lock`, released
    by the kernel when the process ends, however it ends.
    """
    global _turn
    path = lake_dir() / f"dbt-{os.environ.get('CDC_LAKE_SCHEMA', 'cdc_lake')}.lock"
    path.parent.mkdir(parents=True, exist_ok=True)
    handle = open(path, "a+", encoding="utf-8")  # noqa: SIM115 - kept open: it is the lock
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        handle.seek(0)
        holder = handle.read().strip() or "another dbt command"
        print(f"cdc_lake: waiting for {holder}, which holds {path} (two dbt runs on one schema would "
              "commit over each other); Ctrl-C to give up", file=sys.stderr, flush=True)
        fcntl.flock(handle, fcntl.LOCK_EX)
    handle.seek(0)
    handle.truncate()
    handle.write(f"dbt {command} (pid {os.getpid()}, since {time.strftime('%H:%M:%S')})\n")
    handle.flush()
    _turn = handle


def startup() -> None:
    """The venv's start-up hook (see the module docstring)."""
    global _started
    if _started:  # site.py may process the venv's .pth files twice (venv() and main())
        return
    _started = True
    # A metastore address inherited from a parent process may be another lake's.
    os.environ.pop("CDC_LAKE_METASTORE_URL", None)
    os.environ.pop("CDC_LAKE_METASTORE_DRIVER", None)
    apply_defaults()
    argv = list(getattr(sys, "argv", None) or [])
    program = Path(argv[0]).name if argv else ""
    command = next((arg for arg in argv[1:] if not arg.startswith("-")), "")
    if program not in _LAKE_PROGRAMS or command in _NO_LAKE or {"--help", "--version"} & set(argv):
        return
    if program == "dbt" and _dbt_target(argv) != "local":
        return
    try:
        from cdc_lake.metastore import ensure_local_metastore

        ensure_local_metastore()
    except Exception as exc:  # noqa: BLE001 - dbt must still start and report its own connection error
        print(f"cdc_lake: {exc}", file=sys.stderr)
    if program == "dbt" and command in _WRITING:
        dbt_turn(command)


def iceberg_jar() -> Path:
    """Path of the Iceberg Spark runtime jar fetched from Maven Central by `make setup`."""
    jar = jvm_dir("spark") / ICEBERG_JAR
    if not jar.exists():
        raise FileNotFoundError(f"Iceberg runtime jar not found at {jar}: run `make setup`")
    return jar


def _artifact(jar_name: str) -> str:
    match = _VERSIONED_JAR.match(jar_name)
    return match.group("artifact") if match else jar_name


def install() -> None:
    """Write the .pth hook into this venv and put the Maven jars on pyspark's classpath."""
    import pyspark

    jars = Path(pyspark.__file__).parent / "jars"
    # links of an earlier install whose target is gone (e.g. the former PyPI-wheel Iceberg jar)
    for link in jars.iterdir():
        if link.is_symlink() and not link.exists():
            link.unlink()
    shipped = {_artifact(j.name) for j in jars.iterdir() if not j.is_symlink()}
    linked = []
    for jar in sorted(jvm_dir("spark").glob("*.jar")):
        target = jars / jar.name
        if _artifact(jar.name) in shipped:
            continue
        if target.is_symlink() and target.resolve() == jar.resolve():
            continue
        if target.is_symlink():
            target.unlink()  # the same file name linked from elsewhere (the former wheel's jar)
        target.symlink_to(jar)
        linked.append(jar.name)
    site_packages = Path(site.getsitepackages()[0])
    (site_packages / PTH_NAME).write_text("import cdc_lake.env; cdc_lake.env.startup()\n")
    print(f"cdc_lake: linked {', '.join(linked) or 'nothing new'} into {jars}")
    print(f"cdc_lake: defaults hook in {site_packages / PTH_NAME}")


if __name__ == "__main__":
    if "--install" in sys.argv:
        install()
    else:
        apply_defaults()
        print(f"DBT_PROFILES_DIR={os.environ['DBT_PROFILES_DIR']}\nCDC_LAKE_DIR={os.environ['CDC_LAKE_DIR']}")
