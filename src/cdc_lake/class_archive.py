"""`make setup`'s last step: a class-data-sharing archive of the embedded Spark driver.

Every `dbt` command, `cdc-lake` command and test process starts a Spark driver JVM, and each start
loads and verifies the same tens of thousands of classes from Spark's, Hive's and Iceberg's jars.
Java's class-data sharing (CDS) keeps them parsed and verified in an archive file the JVM maps at
start instead. Measured on this project's 2-core machine, a cold `get_spark()` and its first two
queries: 28.7-33.6 s without the archive, 16.2-21.6 s with it.

The archive is made by running what a user runs once, the demo's records landed and built (seeds
and models) on a temporary lake, in a driver started with `-XX:ArchiveClassesAtExit`; the JVM writes the
archive when it exits. `cdc_lake.env.apply_defaults` then names it in CDC_LAKE_CLASS_ARCHIVE and
profiles/profiles.yml passes it to every embedded driver (`-XX:SharedArchiveFile`). A JVM that
finds the archive missing, or made by another Java or for other jars, starts without it, silently
(the CDS log is switched off): the archive only ever saves time. CDC_LAKE_CLASS_ARCHIVE= (empty)
switches it off.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

from cdc_lake.env import PROJECT_DIR, class_archive_path


def train(archive: Path) -> None:
    """Land the demo workload and build it, in a driver that writes `archive` when its JVM exits."""
    from dbt.cli.main import dbtRunner

    from cdc_lake.demo import demo_files
    from cdc_lake.landing import land
    from cdc_lake.spark import get_spark, profile_settings

    options = profile_settings()["spark.driver.extraJavaOptions"]
    spark = get_spark("cdc_lake class archive", {
        "spark.driver.extraJavaOptions": f"{options} -XX:ArchiveClassesAtExit={archive} -Xlog:cds=off,cds+dynamic=off"
    })
    # the demo's records hold every format, DDL, deletes and rejects: the classes of every path
    lake = Path(os.environ["CDC_LAKE_DIR"])
    for fmt, paths in demo_files(lake / "input").items():
        land(spark, fmt, [str(p) for p in paths])
    # seeds and models: the data tests run queries of the same kinds, and would double the time
    result = dbtRunner().invoke([
        "build", "--resource-type", "seed", "--resource-type", "model", "--project-dir", str(PROJECT_DIR),
        "--target-path", str(lake / "target"), "--log-path", str(lake / "logs"), "--quiet",
    ])
    if not result.success:
        raise RuntimeError(f"the training build failed: {result.exception}")
    # the JVM writes the archive as it exits, which it does when its standard input closes
    gateway_process = spark.sparkContext._gateway.proc  # type: ignore[attr-defined]
    spark.stop()
    gateway_process.stdin.close()
    gateway_process.wait(timeout=600)


def main() -> int:
    archive = class_archive_path()
    partial = archive.with_suffix(".partial")
    partial.unlink(missing_ok=True)
    lake = Path(tempfile.mkdtemp(prefix="cdc_lake_class_archive_"))
    # a lake of its own, and no archive read while this one is written
    os.environ.update(CDC_LAKE_DIR=str(lake), CDC_LAKE_CLASS_ARCHIVE="", CDC_LAKE_SCHEMA="cdc_lake")
    began = time.monotonic()
    try:
        train(partial)
    finally:
        from cdc_lake.servers.metastore import MetastoreServer

        MetastoreServer.for_lake(lake).stop()
        shutil.rmtree(lake, ignore_errors=True)
    if not partial.exists():
        print("cdc_lake: the JVM wrote no class archive; Spark starts without one", file=sys.stderr)
        return 1
    partial.replace(archive)
    size = archive.stat().st_size / 2**20
    print(f"cdc_lake: class archive {archive} ({size:.0f} MB) in {time.monotonic() - began:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
