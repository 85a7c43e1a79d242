"""The parts of `cdc-lake verify` that need no source database: the URL, the neutral form floats
are hashed in (run in Spark on the texts both printers write), and the row comparison that decides
after bisection. The command itself is tested against MariaDB in test_e2e_debezium.py."""

from __future__ import annotations

import struct

import pytest

from cdc_lake.verify.compare import compare_rows, same_value
from cdc_lake.verify.source import SourceError, SourceTable, SourceUrl
from cdc_lake.verify.sql import Column, double_layers, layered

# the same double as Java prints it (the lake's canonical text) and as MariaDB 10.11's
# `cast(d as char)` printed it (observed; the end-to-end tests compare against a live server)
SAME_NUMBERS = [
    ("1.0E20", "1e20"),
    ("1.500000053056283E-7", "0.0000001500000053056283"),
    ("9.007199254740992E15", "9.007199254740992e15"),
    ("1.7976931348623157E308", "1.7976931348623157e308"),
    ("2.2250738585072014E-308", "2.2250738585072014e-308"),
    ("1.0E15", "1e15"),
    ("9.99999999999999E14", "999999999999999"),
    ("1.0E-15", "0.000000000000001"),
    ("9.99E-16", "9.99e-16"),
    ("1.234E-15", "0.000000000000001234"),
    ("1.234567890123456E14", "123456789012345.6"),
    ("1.2345678901234568E17", "1.2345678901234568e17"),
    ("-2.5E300", "-2.5e300"),
    ("-1.0E-20", "-1e-20"),
    ("1.23456789E8", "123456789"),
    ("12345.678", "12345.678"),
    ("3.0E-5", "0.00003"),
    ("0.1", "0.1"),
    ("1.0", "1"),
    ("0.0", "0"),
    ("4.9E-324", "5e-324"),  # Java 17 prints the smallest subnormal with two digits
]


def test_the_lakes_double_text_is_rewritten_as_mariadb_prints_it(spark):
    values = ", ".join(f"('{java}')" for java, _ in SAME_NUMBERS)
    query = layered(f"select t from values {values} as v(t)", double_layers("t", "m"))
    rows = spark.sql(f"select t, m from ({query})").collect()
    rewritten = {r["t"]: r["m"] for r in rows}
    differ = [(java, mariadb, rewritten[java]) for java, mariadb in SAME_NUMBERS if rewritten[java] != mariadb]
    # the one that differs is Java 17's non-shortest text: the rows' numeric comparison decides it
    assert differ == [("4.9E-324", "5e-324", "4.9e-324")]
    assert same_value(Column("d", "double"), "5e-324", "4.9e-324")


def test_source_url():
    url = SourceUrl.parse("mysql://cdc@db.example:3307/shop")
    assert (url.user, url.host, url.port, url.database, str(url)) == ("cdc", "db.example", 3307, "shop",
                                                                      "mysql://cdc@db.example:3307/shop")
    assert SourceUrl.parse("mariadb://u@h/d").port == 3306
    with pytest.raises(SourceError, match="CDC_LAKE_SOURCE_PASSWORD"):
        SourceUrl.parse("mysql://cdc:secret@h:3306/shop")
    with pytest.raises(SourceError, match="expected mysql://"):
        SourceUrl.parse("postgres://u@h/d")
    with pytest.raises(SourceError, match="expected mysql://"):
        SourceUrl.parse("mysql://u@h:3306/")


ID, NAME, WEIGHT = Column("id", "int"), Column("name", "varchar"), Column("weight", "float")
KEYED = SourceTable("t", [ID, NAME, WEIGHT], [ID])
KEYLESS = SourceTable("t", [NAME, WEIGHT], [])


def widened(text: str) -> str:
    """A FLOAT's text as both sides hand it over: the float widened to double."""
    return repr(struct.unpack("f", struct.pack("f", float(text)))[0])


def test_rows_compare_by_key_and_floats_as_numbers():
    source = [("1", "a", widened("3.14")), ("2", "b", None), ("10", "c", "1e20"), ("3", "x", "1")]
    lake = [("1", "a", widened("3.14")), ("2", "b", "0.5"), ("10", "c", "1.0E20"), ("4", "x", "1")]
    found = compare_rows(KEYED, source, lake)
    assert [(d.key, d.kind, d.columns) for d in found] == [
        ("id=2", "values_differ", {"weight": (None, "0.5")}),
        ("id=3", "missing_in_lake", {}),
        ("id=4", "only_in_lake", {}),
    ]
    assert same_value(WEIGHT, "1e20", "1.0E20") and not same_value(NAME, "1e20", "1.0E20")


def test_keyless_rows_compare_as_multisets():
    source = [("click", "1"), ("click", "1"), ("view", None)]
    lake = [("click", "1.0"), ("view", None), ("view", None)]
    found = compare_rows(KEYLESS, source, lake)
    assert [(d.key, d.kind) for d in found] == [
        ("row(name=click, weight=1)", "missing_in_lake"),
        ("row(name=view, weight=NULL)", "only_in_lake"),
    ]
