"""Landing over thrift sends records as Spark SQL literals: they must parse back to the exact text."""

from __future__ import annotations

from cdc_lake.landing import sql_string

SAMPLES = [
    "plain",
    "",
    "it's",
    "back\\slash, \\\\ double, \\' escaped quote, trailing \\",
    "literal escapes stay text: \\n \\t \\u0041 \\% \\_ \\0",
    'json {"a":"x\\"y","b":null,"c":"\\u00e9"}',
    "controls \n \r \t \x00 \x01 \x1f \x7f",
    "unicode é ü 中文 😀 \u0085 \u2028 \u2029",
    "%_ like wildcards",
]


def test_sql_string_round_trips_through_spark_sql(spark):
    row = spark.sql("select " + ", ".join(sql_string(s) for s in SAMPLES)).first()
    assert list(row) == SAMPLES


def test_sql_string_null_and_undecodable_bytes(spark):
    assert sql_string(None) == "null"
    # a byte that was not UTF-8, kept by errors="surrogateescape", arrives as U+FFFD
    row = spark.sql("select " + sql_string("a\udcffb")).first()
    assert row[0] == "a\ufffdb"
