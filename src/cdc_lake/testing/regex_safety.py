"""Every regular expression the project's SQL runs, tried on adversarial inputs of a megabyte.

Java's `java.util.regex` recurses once per repetition of a group that holds an alternation (a
`StackOverflowError`, which Spark treats as fatal: an embedded driver exits), and backtracks
without end on nested quantifiers. A record is whatever a source sends, so a pattern on the
per-record path must stay linear on any text. This module finds the patterns in rendered
SQL (`pattern_expressions`), makes inputs aimed at each pattern (`adversarial_inputs`: long runs of
its own characters, its own matches made a megabyte long with every alternative in turn, and the
same cut short or followed by a character it does not take), and runs them through Spark in a
process of its own (`python -m cdc_lake.testing.regex_safety FILE`), since a pattern that
overflows the stack takes its JVM down: one JSON line per pattern says how long it took or how it
failed, so the caller names the pattern even when the process dies.
"""

from __future__ import annotations

import json
import os
import re
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

try:  # Python 3.11+
    import re._constants as sre_constants
    import re._parser as sre_parse
except ImportError:  # pragma: no cover - Python 3.10
    import sre_constants  # type: ignore[no-redef]
    import sre_parse  # type: ignore[no-redef]

# Spark SQL functions whose argument at this index is a Java regular expression.
REGEX_ARGUMENTS: dict[str, tuple[int, ...]] = {
    "regexp_extract": (1,), "regexp_extract_all": (1,), "regexp_replace": (1,), "regexp_like": (1,),
    "regexp_count": (1,), "regexp_instr": (1,), "regexp_substr": (1,), "rlike": (1,), "regexp": (1,),
    "split": (1,), "str_to_map": (1, 2),
}  # fmt: skip
# Operators whose right operand is one: `x rlike 'p'`, `x regexp 'p'`.
REGEX_OPERATORS = {"rlike", "regexp"}

INPUT_SIZE = 1 << 20  # characters of each adversarial input
MAX_CHAR_RUNS = 6  # runs of one of the pattern's characters
MAX_PAIR_RUNS = 2  # runs of an escape and another of its characters
MAX_LONG_REPEATS = 3  # unbounded repeats of the pattern made long, each its own input

TOKEN = re.compile(
    r"""(?P<comment>--[^\n]*|/\*.*?\*/)
      | (?P<string>'(?:[^'\\]|\\.)*+'|"(?:[^"\\]|\\.)*+")
      | (?P<quoted>`[^`]*`)
      | (?P<word>[A-Za-z_][A-Za-z0-9_]*)
      | (?P<punct>\|\||[(),\[\]])
      | (?P<other>\S)""",
    re.VERBOSE | re.DOTALL,
)


@dataclass(frozen=True)
class Token:
    kind: str
    text: str


def tokens(sql: str) -> list[Token]:
    """Spark SQL's tokens, enough to find calls and their arguments: comments dropped."""
    found = []
    for match in TOKEN.finditer(sql):
        kind = match.lastgroup or "other"
        if kind != "comment":
            found.append(Token(kind, match.group()))
    return found


def _call_arguments(toks: list[Token], open_at: int) -> tuple[list[list[Token]], int]:
    """The arguments (token lists) of the call whose `(` is toks[open_at], and the index after its `)`."""
    args: list[list[Token]] = [[]]
    depth = 0
    i = open_at
    while i < len(toks):
        tok = toks[i]
        if tok.text == "(":
            depth += 1
            if depth > 1:
                args[-1].append(tok)
        elif tok.text == ")":
            depth -= 1
            if depth == 0:
                return args, i + 1
            args[-1].append(tok)
        elif tok.text == "," and depth == 1:
            args.append([])
        else:
            args[-1].append(tok)
        i += 1
    return args, i


# Words of an expression that are SQL, not a column or lambda variable to stand a sample value in for.
SQL_WORDS = {
    "and", "or", "not", "is", "null", "true", "false", "case", "when", "then", "else", "end", "in", "as",
    "like", "rlike", "regexp", "between", "distinct", "string", "int", "bigint", "smallint", "tinyint",
    "double", "float", "boolean", "decimal", "date", "timestamp", "binary", "array", "map", "struct",
}  # fmt: skip
SAMPLE_VALUE = "'2'"  # what a column stands for when a pattern is computed from one


def _merge_references(toks: list[Token]) -> list[Token]:
    """`a.b` (a qualified column or a lambda variable's field) as one word token."""
    merged: list[Token] = []
    for tok in toks:
        if merged and merged[-1].kind == "word" and merged[-1].text.endswith(".") and tok.kind in ("word", "quoted"):
            merged[-1] = Token("word", merged[-1].text + tok.text)
        elif tok.text == "." and merged and merged[-1].kind in ("word", "quoted"):
            merged[-1] = Token("word", merged[-1].text + ".")
        else:
            merged.append(tok)
    return merged


def _pattern_expressions(arg: list[Token]) -> set[str]:
    """SQL expressions giving the pattern(s) an argument can hold: a literal as it is; each result
    of a CASE; otherwise the expression with a sample value for every column in it (a pattern
    computed from a column name or a scale), so that Spark evaluates it to a pattern."""
    if len(arg) == 1 and arg[0].kind == "string":
        return {arg[0].text}
    if arg and arg[0].text.lower() == "case":
        # the results of this CASE, not of one nested in its operand or conditions
        results, cases, parens = set(), 0, 0
        for before, tok in zip(arg, arg[1:], strict=False):
            word = before.text.lower()
            cases += (word == "case") - (word == "end")
            parens += (before.text == "(") - (before.text == ")")
            if cases == 1 and parens == 0 and word in ("then", "else") and tok.kind == "string":
                results.add(tok.text)
        return results
    parts, i = [], 0
    while i < len(arg):
        tok = arg[i]
        calls = i + 1 < len(arg) and arg[i + 1].text == "("
        if tok.kind == "quoted" or (tok.kind == "word" and not calls and tok.text.lower() not in SQL_WORDS):
            # a column, with its subscripts and fields (`c['k'].f`): one sample value
            i += 1
            while i < len(arg) and (arg[i].text == "[" or arg[i].text.startswith(".")):
                if arg[i].text == "[":
                    depth = 0
                    while i < len(arg):
                        depth += (arg[i].text == "[") - (arg[i].text == "]")
                        i += 1
                        if depth == 0:
                            break
                else:
                    i += 1
            parts.append(SAMPLE_VALUE)
            continue
        parts.append(tok.text)
        i += 1
    return {" ".join(parts)} if any(t.kind == "string" for t in arg) else set()


def pattern_expressions(sql: str) -> set[str]:
    """SQL expressions, from `sql`, that give the patterns of its regular expressions: the pattern
    argument of a call (`regexp_replace(x, '<p>', ...)`, `split(x, '<p>')`) or the right operand
    of an operator (`x rlike '<p>'`); see `_pattern_expressions` for patterns that are no literal."""
    toks = _merge_references(tokens(sql))
    found: set[str] = set()
    for i, tok in enumerate(toks):
        if tok.kind != "word":
            continue
        name = tok.text.lower()
        follows_paren = i + 1 < len(toks) and toks[i + 1].text == "("
        if name in REGEX_ARGUMENTS and follows_paren:
            args, _ = _call_arguments(toks, i + 1)
            for index in REGEX_ARGUMENTS[name]:
                if index < len(args):
                    found |= _pattern_expressions(args[index])
        elif name in REGEX_OPERATORS and not follows_paren and i + 1 < len(toks):
            operand = toks[i + 1]
            if operand.kind == "string":
                found.add(operand.text)
            elif operand.kind == "word" and i + 2 < len(toks) and toks[i + 2].text == "(":
                args, end = _call_arguments(toks, i + 2)
                found |= _pattern_expressions(toks[i + 1:end])
    return found


# ---- inputs aimed at one pattern -------------------------------------------------------------

FOREIGN = "\u00a7"  # a character no pattern of the project names
CATEGORY_CHARS = {
    sre_constants.CATEGORY_DIGIT: "0", sre_constants.CATEGORY_NOT_DIGIT: "a",
    sre_constants.CATEGORY_SPACE: " ", sre_constants.CATEGORY_NOT_SPACE: "a",
    sre_constants.CATEGORY_WORD: "a", sre_constants.CATEGORY_NOT_WORD: " ",
}  # fmt: skip
CANDIDATES = "a0 x\"\\'{}[],:.-Z9_\t\n" + FOREIGN


@dataclass(frozen=True)
class LongInput:
    """`prefix`, then `unit` repeated to INPUT_SIZE characters, then `suffix`."""

    prefix: str
    unit: str
    suffix: str


def _in_set(items: list, char: str) -> bool:
    negate = bool(items) and items[0][0] == sre_constants.NEGATE
    hit = False
    for op, av in items[1:] if negate else items:
        if op == sre_constants.LITERAL and ord(char) == av:
            hit = True
        elif op == sre_constants.RANGE and av[0] <= ord(char) <= av[1]:
            hit = True
        elif op == sre_constants.CATEGORY and CATEGORY_CHARS.get(av) == char:
            hit = True
    return hit != negate


def _set_char(items: list) -> str:
    for char in CANDIDATES:
        if _in_set(items, char):
            return char
    for op, av in items:
        if op == sre_constants.LITERAL:
            return chr(av)
        if op == sre_constants.RANGE:
            return chr(av[0])
    return "a"


REPEATS = (sre_constants.MAX_REPEAT, sre_constants.MIN_REPEAT, getattr(sre_constants, "POSSESSIVE_REPEAT", None))


class _Generator:
    """Text matching a parsed pattern: repeats at their minimum (one when that is zero), the first
    alternative of each branch, except at the `long_at`-th unbounded repeat, whose body comes out
    once per alternative of its branch (in turn) as the unit of a LongInput."""

    def __init__(self, long_at: int) -> None:
        self.long_at = long_at
        self.repeat_index = 0
        self.parts: list[str] = []
        self.unit: str | None = None
        self.prefix = ""

    def emit(self, text: str) -> None:
        self.parts.append(text)

    def walk(self, pattern: list, choice: int = 0) -> None:
        for op, av in pattern:
            self.node(op, av, choice)

    def node(self, op: object, av: object, choice: int) -> None:
        if op == sre_constants.LITERAL:
            self.emit(chr(av))  # type: ignore[arg-type]
        elif op == sre_constants.NOT_LITERAL:
            self.emit("b" if av == ord("a") else "a")
        elif op == sre_constants.ANY:
            self.emit("a")
        elif op == sre_constants.IN:
            self.emit(_set_char(av))  # type: ignore[arg-type]
        elif op == sre_constants.CATEGORY:
            self.emit(CATEGORY_CHARS.get(av, "a"))
        elif op in REPEATS:
            low, high, body = av  # type: ignore[misc]
            unbounded = high == sre_constants.MAXREPEAT
            index = self.repeat_index
            if unbounded:
                self.repeat_index += 1
            if unbounded and index == self.long_at and self.unit is None:
                self.prefix = "".join(self.parts)
                self.parts = []
                alternatives = _branch_count(body)
                for turn in range(alternatives):
                    self.walk(body, turn)
                self.unit = "".join(self.parts)
                self.parts = []
            else:
                for _ in range(max(low, 1) if high else 0):
                    self.walk(body, choice)
        elif op == sre_constants.SUBPATTERN:
            self.walk(av[-1], choice)  # type: ignore[index]
        elif op == getattr(sre_constants, "ATOMIC_GROUP", None):
            self.walk(av, choice)  # type: ignore[arg-type]
        elif op == sre_constants.BRANCH:
            alternatives = av[1]  # type: ignore[index]
            self.walk(alternatives[choice % len(alternatives)])
        # anchors, lookarounds and back references add no text


def _branch_count(body: list) -> int:
    """How many alternatives the body of a repeat chooses between at its top (through groups)."""
    for op, av in body:
        if op == sre_constants.BRANCH:
            return len(av[1])
        if op == sre_constants.SUBPATTERN:
            return _branch_count(av[-1])
        if op == getattr(sre_constants, "ATOMIC_GROUP", None):
            return _branch_count(av)
    return 1


def _pattern_chars(pattern: list) -> set[str]:
    """Every character the pattern names (literals, set members, range ends)."""
    chars: set[str] = set()

    def visit(node: object) -> None:
        if isinstance(node, (list, tuple, sre_parse.SubPattern)):
            items = list(node)
            if len(items) == 2 and items[0] in (sre_constants.LITERAL, sre_constants.NOT_LITERAL):
                chars.add(chr(items[1]))
                return
            if len(items) == 2 and items[0] == sre_constants.RANGE:
                chars.update((chr(items[1][0]), chr(items[1][1])))
                return
            for item in items:
                visit(item)

    visit(list(pattern))
    return chars


def adversarial_inputs(pattern: str) -> list[LongInput]:
    """Inputs of about INPUT_SIZE characters aimed at `pattern` (Java syntax; what Python's parser
    reads of it shapes the near-misses, the rest still gets the character runs)."""
    inputs = [LongInput("", "a", ""), LongInput("", FOREIGN, ""), LongInput('"', "\\\\", '"'),
              LongInput('"', '\\"', ""), LongInput("'", "''", "")]
    try:
        parsed = sre_parse.parse(pattern)
    except (re.error, OverflowError, RecursionError):
        return inputs
    chars = sorted(_pattern_chars(parsed))
    inputs += [LongInput("", char, "") for char in chars[:MAX_CHAR_RUNS]]
    inputs += [LongInput("", a + b, "") for a, b in list(_pairs(chars))[:MAX_PAIR_RUNS]]
    for index in range(MAX_LONG_REPEATS):
        gen = _Generator(index)
        gen.walk(list(parsed))
        if gen.unit is None:
            break
        suffix = "".join(gen.parts)
        if gen.unit:
            inputs += [
                LongInput(gen.prefix, gen.unit, suffix),  # a long match
                LongInput(gen.prefix, gen.unit, suffix[:-1]),  # cut short of its end
                LongInput(gen.prefix, gen.unit, suffix + FOREIGN),  # followed by a stranger
            ]
    return list(dict.fromkeys(inputs))


def _pairs(chars: list[str]) -> Iterator[tuple[str, str]]:
    """Pairs of a pattern's characters worth alternating: an escape with each other character."""
    for a in chars:
        for b in chars:
            if a != b and "\\" in (a, b):
                yield a, b


# ---- the child process -----------------------------------------------------------------------

RUN_QUERY = """
select max(length(regexp_replace(s, :pattern, ''))) as n
from (
    select /*+ REPARTITION(2) */ concat(i.prefix, repeat(i.unit, greatest(1, :size div length(i.unit))), i.suffix) as s
    from (select inline(from_json(:inputs, 'array<struct<prefix: string, unit: string, suffix: string>>')) ) as i
)
"""


def run_patterns(expressions: list[str], per_pattern: float, out: object = sys.stdout) -> None:
    """Evaluate each SQL expression to its pattern with Spark, then run the pattern on its adversarial
    inputs; a JSON line per pattern before it starts ("start") and after ("seconds", or "error").
    A pattern still running after `per_pattern` seconds ends the process (Java's regex matching
    cannot be interrupted), with an error line for it."""
    from pyspark.sql import SparkSession

    spark = (
        SparkSession.builder.master("local[2]").appName("cdc_lake regex safety")
        .config("spark.ui.enabled", "false").config("spark.sql.shuffle.partitions", "2")
        .config("spark.driver.memory", "2g").getOrCreate()
    )  # fmt: skip
    spark.sparkContext.setLogLevel("OFF")

    def say(entry: dict) -> None:
        print(json.dumps(entry), file=out, flush=True)  # type: ignore[call-overload]

    under_way: list = []  # [expression, started] while a pattern runs

    def watch() -> None:
        while True:
            time.sleep(0.5)
            if under_way and time.monotonic() - under_way[1] > per_pattern:
                say({"expression": under_way[0], "error": f"still running after {per_pattern:.0f} s"})
                os._exit(4)  # the JVM follows: its gateway ends with this process's pipe

    threading.Thread(target=watch, daemon=True).start()
    # a first query compiles Spark's code paths: not a pattern's cost
    warm_up = json.dumps([vars(i) for i in adversarial_inputs("[0-9]+")])
    spark.sql(RUN_QUERY, args={"pattern": "[0-9]+", "size": INPUT_SIZE, "inputs": warm_up}).collect()
    for expression in expressions:
        say({"expression": expression, "start": True})
        started = time.monotonic()
        under_way[:] = [expression, started]
        try:
            pattern = spark.sql(f"select {expression} as p").collect()[0]["p"]
            inputs = json.dumps([vars(i) for i in adversarial_inputs(pattern)])
            spark.sql(RUN_QUERY, args={"pattern": pattern, "size": INPUT_SIZE, "inputs": inputs}).collect()
            outcome = {"seconds": round(time.monotonic() - started, 3), "inputs": len(json.loads(inputs))}
        except Exception as error:  # noqa: BLE001 - every failure is the finding, reported
            if not _jvm_answers(spark):
                os._exit(3)  # this pattern took the JVM down: the caller names it, as under way
            outcome = {"error": str(error).strip().splitlines()[0][:500]}
        under_way.clear()
        say({"expression": expression, **outcome})
    spark.stop()


def _jvm_answers(spark: object) -> bool:
    try:
        return not spark.sparkContext._jsc.sc().isStopped()  # type: ignore[attr-defined]
    except Exception:  # noqa: BLE001 - the gateway to a dead JVM fails in many ways
        return False


def check_patterns(expressions: list[str], work_dir: Path, per_pattern: float = 30.0) -> dict[str, dict]:
    """Run `expressions` (see run_patterns) in child processes: each one's result line, or, for the
    one under way when its child died, what happened; the rest go on in a new child."""
    import subprocess

    results: dict[str, dict] = {}
    left = list(expressions)
    while left:
        listing = work_dir / "patterns.json"
        listing.write_text(json.dumps(left), encoding="utf-8")
        done = subprocess.run(
            [sys.executable, "-m", "cdc_lake.testing.regex_safety", str(listing), str(per_pattern)],
            capture_output=True, text=True, timeout=per_pattern * (len(left) + 4) + 120,
        )
        under_way = None
        for line in done.stdout.splitlines():
            if line.startswith("{"):
                entry = json.loads(line)
                under_way = entry["expression"] if entry.get("start") else None
                if not entry.get("start"):
                    results[entry["expression"]] = entry
        # the pattern under way when the process died (a pattern that ran too long says so itself);
        # a process that died before its first pattern blames that one, so the loop always ends
        culprit = under_way or (None if results.keys() & set(left) else left[0])
        if culprit is not None and culprit not in results:
            tail = done.stderr.strip().splitlines()[-1:] or [""]
            results[culprit] = {"expression": culprit,
                                "error": f"its process ended with status {done.returncode}: {tail[0][:300]}"}
        left = [e for e in left if e not in results]
    return results


def main(argv: list[str]) -> int:
    expressions = json.loads(Path(argv[0]).read_text(encoding="utf-8"))
    run_patterns(expressions, float(argv[1]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
