"""Project defaults that make plain `dbt ...` and `cdc-lake ...` work from the project's venv.

The venv gets a `.pth` file (written by `python -m cdc_lake.env --install`) that calls
`apply_defaults()` at interpreter start. It only fills variables the user has not set:

- DBT_PROFILES_DIR -> <project>/profiles, so dbt finds `profiles/profiles.yml` without flags;
- CDC_LAKE_DIR     -> <project>/.lake as an absolute path, so the warehouse and the Derby metastore
  never appear in whatever directory a command was started from;
- CDC_LAKE_LOG_CONFIG -> profiles/log4j2.properties, the Spark driver's quiet logging (WARN, and
  ERROR for warnings every run gives); CDC_LAKE_VERBOSE=1 leaves Spark's own defaults instead;
- CDC_LAKE_CLASS_ARCHIVE -> the Spark driver's class-data-sharing archive `make setup` wrote
  (`cdc_lake.class_archive`), when it exists: a faster JVM start;
- CDC_LAKE_DRIVER_MEMORY -> the embedded Spark driver's heap, sized to the machine
  (`default_driver_memory`: half of its memory, 4g to 8g), so that records with values of
  10 MB build where the memory is there (docs/operations.md, "Large values").

The hook (`startup`) also makes plain `dbt` and `sqlfluff` (which render profiles/profiles.yml and
open the `local` target's Spark session without any cdc_lake code) find the lake's metastore
server, starting it on first use (`cdc_lake.servers.metastore`); and it makes two writing dbt commands on
one lake and schema take turns (`dbt_turn`), since both would commit to the same tables.

`--install` also links the JVM parts that `make setup` copied from Maven Central into
`.venv/jvm/spark` (the Iceberg Spark runtime, Spark's Kafka source and its dependencies; see
jvm/spark/pom.xml) into pyspark's own `jars/` folder, so every Spark session of this venv has them
on its classpath. A jar pyspark already ships (another version of the same artifact) is not
linked twice.
"""

from __future__ import annotations

import os
import re
import site
import sys
from pathlib import Path

PROJECT_DIR = Path(__file__).resolve().parents[2]
PTH_NAME = "cdc_lake_defaults.pth"
ICEBERG_JAR = "iceberg-spark-runtime-3.5_2.12-1.10.2.jar"
_VERSIONED_JAR = re.compile(r"^(?P<artifact>.+?)-(?P<version>\d[\w.\-]*)\.jar$")


def jvm_dir(part: str) -> Path:
    """Where `make setup` put a JVM part's jars (`spark` or `kafka`), inside the venv."""
    return Path(sys.prefix) / "jvm" / part


def class_archive_path() -> Path:
    """Where `make setup` writes the Spark driver's class-data-sharing archive (cdc_lake.class_archive)."""
    return jvm_dir("spark").parent / "spark-driver.jsa"


def lake_dir() -> Path:
    """The lake folder (warehouse + metastore), absolute."""
    return Path(os.environ.get("CDC_LAKE_DIR", PROJECT_DIR / ".lake")).resolve()


def model_schema() -> str:
    """The schema dbt builds the models in (profiles/profiles.yml reads the same variable)."""
    return os.environ.get("CDC_LAKE_SCHEMA", "cdc_lake")


def default_driver_memory(machine_bytes: int | None = None) -> str:
    """The driver heap a build gets unless CDC_LAKE_DRIVER_MEMORY says otherwise: half of the
    machine's memory in whole GiB, at least 4g (the earlier fixed default: what a small machine
    keeps) and at most 8g (what a build of 10 MB values measured needs, with room; the JVM takes
    memory up to it only when the data needs it)."""
    if machine_bytes is None:
        try:
            machine_bytes = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
        except (ValueError, OSError, AttributeError):
            machine_bytes = 0
    return f"{min(8, max(4, machine_bytes // 2 // 2**30))}g"


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
    os.environ.setdefault("CDC_LAKE_DRIVER_MEMORY", default_driver_memory())
    archive = class_archive_path()
    if "CDC_LAKE_CLASS_ARCHIVE" not in os.environ and archive.exists():
        os.environ["CDC_LAKE_CLASS_ARCHIVE"] = str(archive)


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
    (site_packages / PTH_NAME).write_text("import cdc_lake.hook; cdc_lake.hook.startup()\n")
    print(f"cdc_lake: linked {', '.join(linked) or 'nothing new'} into {jars}")
    print(f"cdc_lake: defaults hook in {site_packages / PTH_NAME}")


if __name__ == "__main__":
    if "--install" in sys.argv:
        install()
    else:
        apply_defaults()
        print(f"DBT_PROFILES_DIR={os.environ['DBT_PROFILES_DIR']}\nCDC_LAKE_DIR={os.environ['CDC_LAKE_DIR']}")
