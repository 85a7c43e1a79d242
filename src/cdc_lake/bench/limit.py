"""The limits: a bare `from_json` of the landed raw values, and a bare read of the kcat files the
landing reads, each written to Spark's `noop` sink.

The schema is not retyped here: `dbt compile --inline` renders the macro each format's base model
(`base_<format>__messages`) parses its messages with, so the limit parses exactly what the model
parses, without the model's guard against trailing text (parse_json), which is part of the
model's cost, not of the limit.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from cdc_lake.formats import message_schema_macro

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

def schemas_inline_sql(formats: list[str]) -> str:
    """Jinja for `dbt compile --inline` that renders the formats' schemas as one JSON object."""
    calls = ", ".join(f"{json.dumps(fmt)}: {message_schema_macro(fmt)}()" for fmt in formats)
    return "{{ tojson({" + calls + "}) }}"


def limit_expressions(compiled_schemas: str) -> dict[str, str]:
    """Per format, the bare `from_json` of a raw value, from the compiled `schemas_inline_sql`."""
    return {
        fmt: f"from_json(kafka_value, '{schema}', map('columnNameOfCorruptRecord', '_corrupt'))"
        for fmt, schema in json.loads(compiled_schemas).items()
    }


def run_limit(spark: SparkSession, raw_tables: dict[str, str], expressions: dict[str, str]) -> None:
    """Parse every raw value of every format into the noop sink."""
    for fmt, table in raw_tables.items():
        frame = spark.sql(f"select {expressions[fmt]} as parsed from {table}")
        frame.write.format("noop").mode("overwrite").save()


# the JSON object `kcat -C -J` prints per record (what `cdc-lake land` reads from a file)
KCAT_RECORD = (
    "topic string, partition int, offset bigint, tstype string, ts bigint, broker int, key string, payload string"
)


def read_files(spark: SparkSession, paths: list[str]) -> None:
    """Read kcat files into their records (Spark's JSON reader, the record's schema given) and
    into the noop sink: what landing a file costs at least, before it checks or writes a record."""
    spark.read.schema(KCAT_RECORD).json(paths).write.format("noop").mode("overwrite").save()
