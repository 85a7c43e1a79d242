"""The embedded Spark session, configured exactly as dbt's `local` target configures it.

The Spark settings live once, in `profiles/profiles.yml`; this module renders that file (its only
Jinja is `env_var`) so the landing CLI and the test harness open the same lake as `dbt`.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

import jinja2
import yaml

from cdc_lake.env import PROJECT_DIR, apply_defaults

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

_MISSING = object()


def _env_var(name: str, default: Any = _MISSING) -> str:
    if name in os.environ:
        return os.environ[name]
    if default is _MISSING:
        raise KeyError(f"environment variable {name} is required by profiles.yml")
    return str(default)


def profile_settings(target: str = "local") -> dict[str, str]:
    """The `server_side_parameters` of a target in profiles/profiles.yml, rendered."""
    apply_defaults()
    text = (PROJECT_DIR / "profiles" / "profiles.yml").read_text()
    env = jinja2.Environment()
    env.filters["as_number"] = lambda v: v
    rendered = env.from_string(text).render(env_var=_env_var)
    outputs = yaml.safe_load(rendered)["cdc_lake"]["outputs"]
    return {str(k): str(v) for k, v in outputs[target].get("server_side_parameters", {}).items()}


def get_spark(app_name: str = "cdc_lake", extra: dict[str, str] | None = None) -> SparkSession:
    """Return the active Spark session or start the embedded one (same settings as dbt's)."""
    from pyspark.sql import SparkSession

    active = SparkSession.getActiveSession()
    if active is not None:
        return active
    builder = SparkSession.builder.appName(app_name).enableHiveSupport()
    for key, value in {**profile_settings(), **(extra or {})}.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark
