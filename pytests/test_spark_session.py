"""The embedded Spark driver starts from the class-data-sharing archive `make setup` wrote
(src/cdc_lake/class_archive.py), and a driver without one is configured exactly as before; its heap
is sized to the machine unless CDC_LAKE_DRIVER_MEMORY says otherwise."""

from __future__ import annotations

import os
from pathlib import Path

from cdc_lake.env import class_archive_path, default_driver_memory
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


def test_the_driver_heap_is_half_the_machine_between_4g_and_8g() -> None:
    gib = 2**30
    assert [default_driver_memory(n * gib) for n in (2, 8, 11, 12, 16, 24, 256)] == [
        "4g", "4g", "5g", "6g", "8g", "8g", "8g",
    ]


def test_the_suites_driver_has_the_default_heap_unless_told(spark) -> None:
    """The venv's start-up hook fills CDC_LAKE_DRIVER_MEMORY, and the profile's driver takes it."""
    expected = os.environ.get("CDC_LAKE_DRIVER_MEMORY")
    assert expected and profile_settings()["spark.driver.memory"] == expected
    assert spark.sparkContext.getConf().get("spark.driver.memory") == expected
