"""Project defaults that make plain `dbt ...` and `cdc-lake ...` work from the project's venv.

The venv gets a `.pth` file (written by `python -m cdc_lake.env --install`) that calls
`apply_defaults()` at interpreter start. It only fills variables the user has not set:

- DBT_PROFILES_DIR -> <project>/profiles, so dbt finds `profiles/profiles.yml` without flags;
- CDC_LAKE_DIR     -> <project>/.lake as an absolute path, so the warehouse and the Derby metastore
  never appear in whatever directory a command was started from.

`--install` also links the Iceberg Spark runtime jar (from the snowpark-connect-deps-iceberg wheel)
into pyspark's own `jars/` folder, so every Spark session of this venv has Iceberg on its classpath.
"""

from __future__ import annotations

import os
import site
import sys
from pathlib import Path

PROJECT_DIR = Path(__file__).resolve().parents[2]
PTH_NAME = "cdc_lake_defaults.pth"
ICEBERG_JAR = "iceberg-spark-runtime-3.5_2.12-1.10.2.jar"


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


def iceberg_jar() -> Path:
    """Path of the Iceberg Spark runtime jar shipped in the snowpark-connect-deps-iceberg wheel."""
    import snowpark_connect_deps_iceberg

    jar = Path(snowpark_connect_deps_iceberg.__file__).parent / "jars" / ICEBERG_JAR
    if not jar.exists():
        raise FileNotFoundError(f"Iceberg runtime jar not found at {jar}")
    return jar


def install() -> None:
    """Write the .pth hook into this venv and put the Iceberg jar on pyspark's classpath."""
    import pyspark

    target = Path(pyspark.__file__).parent / "jars" / ICEBERG_JAR
    if not target.exists():
        target.symlink_to(iceberg_jar())
    site_packages = Path(site.getsitepackages()[0])
    (site_packages / PTH_NAME).write_text("import cdc_lake.env; cdc_lake.env.apply_defaults()\n")
    print(f"cdc_lake: Iceberg jar linked into {target.parent}; defaults hook in {site_packages / PTH_NAME}")


if __name__ == "__main__":
    if "--install" in sys.argv:
        install()
    else:
        apply_defaults()
        print(f"DBT_PROFILES_DIR={os.environ['DBT_PROFILES_DIR']}\nCDC_LAKE_DIR={os.environ['CDC_LAKE_DIR']}")
