"""Project rule (issue 76, item 1): no regular expression the project's SQL runs can stop a process.

Java's regex engine recurses once per repetition of a group holding an alternation (a
StackOverflowError, fatal to Spark: an embedded driver exits, so every later build failed on a
PostgreSQL array with one element of 10,000 characters) and backtracks without end on nested
quantifiers; a pattern that can start a match at many places and scan to the end from each is
quadratic. Every pattern of the SQL the shared lake's build rendered (models and data tests, found
in the rendered SQL, not listed by hand) runs through Spark, in a process of its own, on
adversarial inputs of 1 MB each (cdc_lake.testing.regex_safety): none may fail, and none may take
more than a second per input. A new pattern cannot bring the crash back.
"""

from __future__ import annotations

import tempfile
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

from cdc_lake.testing.regex_safety import INPUT_SIZE, adversarial_inputs, check_patterns, pattern_expressions

SECONDS_PER_INPUT = 1.0


def land_records(lake) -> None:  # noqa: ARG001 - joins the shared lake for its rendered SQL only
    """Nothing of its own: the shared lake's one build renders every model this rule reads."""


def start_after_build(shared) -> Future:
    """The check, started as soon as the shared lake's build has rendered its SQL: its Spark process
    runs beside the other tests (about 40 s of both cores alone) instead of after them."""
    compiled = shared.target_path / "compiled"
    expressions = sorted(set().union(*(pattern_expressions(p.read_text()) for p in compiled.rglob("*.sql"))))
    work_dir = Path(tempfile.mkdtemp(prefix="cdc_lake_regex_safety_"))
    return ThreadPoolExecutor(1).submit(lambda: (expressions, check_patterns(expressions, work_dir, per_pattern=60)))


def test_the_scan_finds_patterns_of_calls_operators_and_computed_patterns() -> None:
    sql = """
        select regexp_extract(a, '^([0-9]+)$', 1), b rlike '"x"', split(c, ','),
               regexp_replace(d, case e.kind when 'int' then '[0-9]+' else '(?!)' end, ''),
               regexp_extract_all(f, concat('"\\\\Q', replace(g.col, '\\\\E', ''), '\\\\E"'), 0),
               get_json_object(h, '$.not_a_pattern') -- rlike 'in a comment'
    """
    assert pattern_expressions(sql) == {
        "'^([0-9]+)$'", "'\"x\"'", "','", "'[0-9]+'", "'(?!)'",
        "concat ( '\"\\\\Q' , replace ( '2' , '\\\\E' , '' ) , '\\\\E\"' )",
    }


def test_the_inputs_aim_at_the_pattern() -> None:
    inputs = adversarial_inputs('"(?:[^"\\\\]|\\\\.)*"')
    # the pattern's own match made long with both alternatives, cut short of its closing quote
    assert any(i.prefix == '"' and "\\" in i.unit and "a" in i.unit and i.suffix == "" for i in inputs)
    assert all(len(i.unit) < INPUT_SIZE for i in inputs)


def test_every_pattern_the_build_runs_is_safe_on_a_megabyte(shared_lake) -> None:
    expressions, results = shared_lake.started[__name__].result()
    # the scan still finds the project's patterns (90 when this rule was written)
    assert len(expressions) > 60, expressions
    unsafe = {
        expression: result.get("error") or f"{result['seconds']} s on {result['inputs']} inputs"
        for expression, result in results.items()
        if "error" in result or result["seconds"] > SECONDS_PER_INPUT * result["inputs"]
    }
    assert unsafe == {}
