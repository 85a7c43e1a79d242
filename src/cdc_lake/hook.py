"""The venv's start-up hook: `python -m cdc_lake.env --install` writes a `.pth` file that calls
`startup()` at every interpreter start of the venv.

It fills the environment defaults (`cdc_lake.env.apply_defaults`); and for plain `dbt` and `sqlfluff`
(which render profiles/profiles.yml and open the `local` target's Spark session without any cdc_lake
code) it finds the lake's metastore server, starting it on first use (`cdc_lake.servers.metastore`),
and makes two writing dbt commands on one lake and schema take turns (`dbt_turn`), since both would
commit to the same tables. The metastore is imported only then, so other programs start as fast.
"""

from __future__ import annotations

import fcntl
import os
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO

from cdc_lake.env import apply_defaults, lake_dir, model_schema

# Commands of these programs open the `local` target's Spark session without cdc_lake code.
_LAKE_PROGRAMS = ("dbt", "sqlfluff")
_NO_LAKE = {"deps", "clean", "init", "parse", "ls", "list"}
# dbt commands that write models: two at once on one schema would commit over each other.
_WRITING = {"build", "run", "seed", "snapshot", "retry", "run-operation"}
_turn: IO[str] | None = None  # held for the life of the process
_started = False


def dbt_target(argv: list[str]) -> str:
    for i, arg in enumerate(argv):
        if arg in ("--target", "-t") and i + 1 < len(argv):
            return argv[i + 1]
        if arg.startswith("--target="):
            return arg.split("=", 1)[1]
    return os.environ.get("DBT_TARGET") or os.environ.get("CDC_LAKE_TARGET") or "local"


def _take_turn(command: str) -> IO[str]:
    """Wait until no other writing dbt command runs on this lake and schema; the open lock file.

    One line says who holds it. The lock is a `flock` on `$CDC_LAKE_DIR/dbt-<schema>.lock`, released
    when the file is closed or the process ends, however it ends.
    """
    path = lake_dir() / f"dbt-{model_schema()}.lock"
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
    return handle


def dbt_turn(command: str) -> None:
    """The turn of a dbt command line, held until the process exits."""
    global _turn
    _turn = _take_turn(command)


@contextmanager
def lake_turn(command: str) -> Iterator[None]:
    """The turn for one dbt command run in-process (`cdc-lake build`), given back when it ends."""
    handle = _take_turn(command)
    try:
        yield
    finally:
        handle.close()


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
    if program == "dbt" and dbt_target(argv) != "local":
        return
    try:
        from cdc_lake.servers.metastore import ensure_local_metastore

        ensure_local_metastore()
    except Exception as exc:  # noqa: BLE001 - dbt must still start and report its own connection error
        print(f"cdc_lake: {exc}", file=sys.stderr)
    if program == "dbt" and command in _WRITING:
        dbt_turn(command)
