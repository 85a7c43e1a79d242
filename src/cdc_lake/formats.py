"""The source formats, as the one list that the dbt project and this package both read: the var
`cdc_formats` of `dbt_project.yml` (macro cdc_formats reads it on the dbt side). Each format names
the staging models it has beside `stg_<format>__changes` and the macro that gives the schema of
one of its messages. Adding a format: docs/adding_a_format.md."""

from __future__ import annotations

from functools import cache
from typing import Any

import yaml

from cdc_lake.env import PROJECT_DIR

__all__ = ["FORMATS", "formats_carrying", "message_schema_macro"]


@cache
def _declared() -> dict[str, dict[str, Any]]:
    project = yaml.safe_load((PROJECT_DIR / "dbt_project.yml").read_text(encoding="utf-8"))
    return dict(project["vars"]["cdc_formats"])


def formats_carrying(kind: str) -> tuple[str, ...]:
    """The formats whose `carries` names `kind` (`schema_changes`, `heartbeats`, `snapshot_markers`),
    as macro cdc_formats(carrying=kind) lists them."""
    return tuple(fmt for fmt, declared in _declared().items() if kind in declared.get("carries", []))


def message_schema_macro(fmt: str) -> str:
    """The dbt macro that renders the Spark schema of one `fmt` message (what a record holds)."""
    return str(_declared()[fmt]["message_schema"])


FORMATS: tuple[str, ...] = tuple(_declared())
