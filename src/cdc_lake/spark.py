"""The embedded Spark session, configured exactly as dbt's `local` target configures it.

The Spark settings live once, in `profiles/profiles.yml`; this module renders that file (its only
Jinja is `env_var`) so the landing CLI and the test harness open the same lake as `dbt`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import jinja2
import yaml

from cdc_lake.env import PROJECT_DIR, apply_defaults

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

_MISSING = object()


def profile_output(target: str = "local", env: Mapping[str, str] | None = None) -> dict[str, Any]:
    """One target of profiles/profiles.yml, rendered; `env` overrides environment variables."""
    apply_defaults()
    variables = {**os.environ, **(env or {})}

    def env_var(name: str, default: Any = _MISSING) -> str:
        if name in variables:
            return variables[name]
        if default is _MISSING:
            raise KeyError(f"environment variable {name} is required by profiles.yml")
        return str(default)

    text = (PROJECT_DIR / "profiles" / "profiles.yml").read_text()
    jinja = jinja2.Environment()
    jinja.filters["as_number"] = lambda v: v
    rendered = jinja.from_string(text).render(env_var=env_var)
    return dict(yaml.safe_load(rendered)["cdc_lake"]["outputs"][target])


def profile_settings(target: str = "local", env: Mapping[str, str] | None = None) -> dict[str, str]:
    """The `server_side_parameters` of a target in profiles/profiles.yml, rendered."""
    output = profile_output(target, env)
    return {str(k): str(v) for k, v in output.get("server_side_parameters", {}).items()}


def get_spark(app_name: str = "cdc_lake", extra: dict[str, str] | None = None) -> SparkSession:
    """Return the active Spark session or start the embedded one (same settings as dbt's)."""
    from pyspark.sql import SparkSession

    active = SparkSession.getActiveSession()
    if active is not None:
        return active
    from cdc_lake.servers.metastore import ensure_local_metastore

    ensure_local_metastore()
    builder = SparkSession.builder.appName(app_name).enableHiveSupport()
    for key, value in {**profile_settings(), **(extra or {})}.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark
