"""The embedded Spark driver starts from the class-data-sharing archive `make setup` wrote
(src/cdc_lake/class_archive.py), and a driver without one is configured exactly as before."""

from __future__ import annotations

import os
from pathlib import Path

from cdc_lake.env import class_archive_path
from cdc_lake.spark import profile_settings


def test_the_profile_names_the_archive_only_when_there_is_one() -> None:
    archive = "/somewhere/spark-driver.jsa"
    named = profile_settings(env={"CDC_LAKE_CLASS_ARCHIVE": archive})["spark.driver.extraJavaOptions"]
    assert f" -XX:SharedArchiveFile={archive} " in f"{named} "
    # the JVM's CDS log off: a stale archive (another Java, other jars) is left unused in silence
    assert "-Xlog:cds=off" in named
    without = profile_settings(env={"CDC_LAKE_CLASS_ARCHIVE": ""})["spark.driver.extraJavaOptions"]
    assert "SharedArchive" not in without and "-Xlog:cds" not in without
    assert named.startswith(without)


def test_the_suites_driver_maps_the_archive(spark) -> None:
    """The venv's start-up hook names the archive and the driver JVM has it mapped in memory (a JVM
    that could not use it would have started without it, silently)."""
    archive = os.environ.get("CDC_LAKE_CLASS_ARCHIVE")
    assert archive == str(class_archive_path()) and Path(archive).exists(), "run `make setup`"
    pid = spark.sparkContext._jvm.java.lang.ProcessHandle.current().pid()
    assert archive in Path(f"/proc/{pid}/maps").read_text()
