"""The parts of `cdc-lake verify` that need no source database: the URL, the neutral form floats
are hashed in (run in Spark on the texts both printers write), and the row comparison that decides
after bisection. The command itself is tested against MariaDB in test_e2e_debezium.py."""

from __future__ import annotations

import struct

import pytest

from cdc_lake.verify.compare import compare_rows, same_value
from cdc_lake.verify.source import SourceError, SourceTable, SourceUrl
from cdc_lake.verify.sql import SPARK, Column

# the same double as Java prints it (the lake's canonical text) and as MariaDB prints it
SAME_NUMBERS = [
    ("1.0E20", "1e20"),
    ("1.500000053056283E-7", "0.0000001500000053056283"),
    ("9.007199254740992E15", "9.007199254740992e15"),
    ("1.7976931348623157E308", "1.7976931348623157e308"),
    ("4.9E-324", "5e-324"),  # Java 17 prints the smallest subnormal with two digits
    ("-123.456", "-123.456"),
    ("1.23456789E8", "123456789"),
    ("0.001", "0.001"),
    ("0.0", "0"),
    ("-0.0", "-0"),
]


def neutral(value: str) -> str:
    """The neutral form computed in Python: sign, significant digits, `e`, exponent of the first."""
    sign = "-" if value.startswith("-") else ""
    mantissa, _, exponent = value.lstrip("-").lower().partition("e")
    whole, _, fraction = mantissa.partition(".")
    digits = whole + fraction
    significant = digits.lstrip("0").rstrip("0")
    if not significant:
        return "0"
    position = int(exponent or 0) + len(whole) - 1 - (len(digits) - len(digits.lstrip("0")))
    return f"{sign}{significant}e{position}"


def test_both_printers_texts_get_one_neutral_form(spark):
    texts = [t for pair in SAME_NUMBERS for t in pair]
    values = ", ".join(f"('{t}')" for t in texts)
    rows = spark.sql(f"select t, {SPARK.number_form('t')} as n from values {values} as v(t)").collect()
    forms = {r["t"]: r["n"] for r in rows}
    assert forms == {t: neutral(t) for t in texts}
    same = [(java, mariadb) for java, mariadb in SAME_NUMBERS if forms[java] == forms[mariadb]]
    # the one pair that differs is Java 17's non-shortest text, left to the rows' numeric comparison
    assert [p for p in SAME_NUMBERS if p not in same] == [("4.9E-324", "5e-324")]
    assert float("4.9E-324") == float("5e-324")


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
