"""Random native values with the cases CDC parsers get wrong (quotes, unicode, extremes, NULL-like text)."""

from __future__ import annotations

import itertools
import json
import struct
from random import Random

from cdc_lake.generator.model import ValueGen
from cdc_lake.generator.mysql_types import DAY_SECONDS, MICROS, ColType

U64_MAX = 2**64 - 1
I64_MIN = -(2**63)
I64_MAX = 2**63 - 1

# Strings that break naive quoting/escaping or look like something else (NULL, JSON, numbers).
TRICKY_TEXT = (
    "O'Brien",
    'say "hi"',
    "back\\slash",
    "C:\\Users\\demo\\",
    "naïve café",
    "Zoë Ångström",
    "日本語のテキスト",
    "Влад Ѳ",
    "ελληνικά",
    "עברית",
    "rocket 🚀 ✓",
    "tab\there",
    "line\nbreak",
    "carriage\r\nreturn",
    "null",
    "NULL",
    "",
    "  padded  ",
    "semi;colon,comma|pipe",
    "percent % under_score",
    '{"not": "json"}',
    "0x00ff",
    "12.50",
    "\\N",
)
PLAIN_WORDS = (
    "alpha",
    "bravo",
    "charlie",
    "delta",
    "echo",
    "foxtrot",
    "golf",
    "hotel",
    "india",
    "juliet",
    "kilo",
    "lima",
    "mike",
    "november",
    "oscar",
    "papa",
    "quebec",
    "romeo",
    "sierra",
    "tango",
)
FIRST_NAMES = (
    "Anne",
    "Bob",
    "Chloé",
    "Dmitri",
    "Eve",
    "Fatima",
    "Günther",
    "Hiro",
    "Ivy",
    "José",
    "Kai",
    "Lena",
    "Mía",
    "Noah",
    "Øystein",
    "Priya",
    "Quinn",
    "Rosa",
    "Søren",
    "Tomás",
)
CITIES = (
    "Berlin",
    "São Paulo",
    "Zürich",
    "Kraków",
    "Tōkyō",
    "Hangzhou",
    "Reykjavík",
    "Montréal",
    "New York",
    "Cape Town",
)


def tricky_string(rng: Random, max_len: int) -> str:
    """Mostly ordinary text, often with one tricky fragment; never longer than max_len characters."""
    r = rng.random()
    if r < 0.35:
        s = rng.choice(TRICKY_TEXT)
    elif r < 0.7:
        s = f"{rng.choice(FIRST_NAMES)} {rng.choice(PLAIN_WORDS).title()} {rng.randrange(1000)}"
    else:
        s = f"{rng.choice(PLAIN_WORDS)} {rng.choice(TRICKY_TEXT)} {rng.randrange(100)}"
    return s[:max_len]


def text_gen(max_len: int) -> ValueGen:
    return lambda rng, now: tricky_string(rng, max_len)


def long_text(rng: Random, now: int) -> str:
    parts = [
        rng.choice(TRICKY_TEXT) if rng.random() < 0.3 else rng.choice(PLAIN_WORDS) for _ in range(rng.randrange(0, 12))
    ]
    return " ".join(parts)


def int_gen(lo: int, hi: int, edges: tuple[int, ...] = ()) -> ValueGen:
    """Uniform in [lo, hi], with the listed edge values now and then."""
    if edges:

        def gen(rng: Random, now: int) -> int:
            if rng.random() < 0.08:
                return rng.choice(edges)
            return rng.randint(lo, hi)

        return gen
    return lambda rng, now: rng.randint(lo, hi)


def int_range_gen(t: ColType) -> ValueGen:
    """Whole range of an integer type, extremes included, and all-digit values of every length.

    Uniform draws from a 64-bit range almost always have 19 or 20 digits; a quarter of the values
    instead take the next digit count in turn (1, 2, ... up to the type's width), so lengths that
    are also valid base64 text (4, 8, 12, 16 digits) come up in every run of some size.
    """
    if t.unsigned:
        lo, hi = 0, 2**t.bits - 1
    else:
        lo, hi = -(2 ** (t.bits - 1)), 2 ** (t.bits - 1) - 1
    uniform = int_gen(lo, hi, (lo, hi, 0, 1))
    lengths = itertools.cycle(range(1, len(str(hi)) + 1))

    def gen(rng: Random, now: int) -> int:
        if rng.random() < 0.25:
            n = next(lengths)
            return min(rng.randrange(10 ** (n - 1), 10**n), hi)
        return uniform(rng, now)

    return gen


def small_int_gen(lo: int, hi: int) -> ValueGen:
    return lambda rng, now: rng.randint(lo, hi)


def decimal_gen(t: ColType, magnitude_digits: int | None = None) -> ValueGen:
    """Unscaled values of decimal(p,s): negatives, zero, one-cent values and the type's extremes."""
    digits = t.precision if magnitude_digits is None else min(magnitude_digits, t.precision)
    top = 10**t.precision - 1

    def gen(rng: Random, now: int) -> int:
        r = rng.random()
        if r < 0.04:
            return rng.choice((0, 1, -1, top, -top))
        size = 10 ** rng.randint(1, digits)
        v = rng.randrange(size)
        return -v if rng.random() < 0.25 else v

    return gen


def date_gen(rng: Random, now: int) -> int:
    r = rng.random()
    if r < 0.03:
        return rng.choice(
            (-354285, 2932896, -1, 0, 19782)
        )  # 1000-01-01, 9999-12-31, 1969-12-31, 1970-01-01, 2024-02-29
    if r < 0.2:
        return rng.randint(-9000, -1)  # before 1970: negative epoch days
    return rng.randint(0, 23000)


def datetime_gen(fsp: int, around_now: bool = False) -> ValueGen:
    """Epoch microseconds with exactly `fsp` significant fraction digits (sometimes a zero fraction)."""
    unit = 10 ** (6 - fsp)

    def gen(rng: Random, now: int) -> int:
        if around_now:
            secs = now - rng.randrange(0, 90 * DAY_SECONDS)
        elif rng.random() < 0.1:
            secs = rng.randint(-315_619_200, -1)  # 1960 .. 1969
        else:
            secs = rng.randint(0, 2_000_000_000)
        frac = 0 if rng.random() < 0.2 else rng.randrange(0, MICROS, unit)
        return secs * MICROS + frac

    return gen


def timestamp_gen(fsp: int) -> ValueGen:
    """A TIMESTAMP (UTC) within MySQL's range 1970-01-01 00:00:01 .. 2038-01-19 03:14:07."""
    unit = 10 ** (6 - fsp)

    def gen(rng: Random, now: int) -> int:
        secs = now - rng.randrange(0, 30 * DAY_SECONDS) if rng.random() < 0.8 else rng.randint(1, 2_147_483_646)
        return secs * MICROS + (rng.randrange(0, MICROS, unit) if fsp else 0)

    return gen


def time_gen(fsp: int) -> ValueGen:
    """TIME values: negative, over 24 hours, and MySQL's extremes -838:59:59 / 838:59:59."""
    unit = 10 ** (6 - fsp)
    limit = (838 * 3600 + 59 * 60 + 59) * MICROS

    def gen(rng: Random, now: int) -> int:
        r = rng.random()
        if r < 0.05:
            return rng.choice((limit, -limit, 0))
        secs = rng.randint(-100 * 3600, 200 * 3600) if r < 0.3 else rng.randint(0, 86_399)
        frac = rng.randrange(0, MICROS, unit) if fsp and rng.random() < 0.7 else 0
        return secs * MICROS + (frac if secs >= 0 else -frac)

    return gen


def enum_gen(t: ColType) -> ValueGen:
    n = len(t.labels)
    return lambda rng, now: rng.randint(1, n)


def set_gen(t: ColType) -> ValueGen:
    top = 2 ** len(t.labels) - 1
    return lambda rng, now: 0 if rng.random() < 0.1 else rng.randint(0, top)


def bit_gen(t: ColType) -> ValueGen:
    top = 2**t.bits - 1
    if t.bits == 1:
        return lambda rng, now: rng.randint(0, 1)
    return int_gen(0, top, (0, top, 1))


def blob_gen(rng: Random, now: int) -> bytes:
    r = rng.random()
    if r < 0.05:
        return b""
    if r < 0.15:
        return bytes((0, 255, 10, 13, 34, 92, 128, 159))  # NUL, 0xff, \n, \r, ", \, C1 controls
    return rng.randbytes(rng.randint(1, 24))


def point_gen(rng: Random, now: int) -> bytes:
    """MySQL's internal value of a POINT: the SRID (0 or 4326) as 4 bytes little-endian, then the
    WKB (little-endian byte order, type 1, x, y as doubles)."""
    srid = rng.choice((0, 4326))
    x = round(rng.uniform(-180, 180), rng.randint(0, 7))
    y = round(rng.uniform(-90, 90), rng.randint(0, 7))
    return struct.pack("<IBIdd", srid, 1, 1, x, y)


# JSON documents, printed as MySQL prints a JSON column: `{"a": 1, "b": [1, 2]}`, object keys sorted the
# way MySQL stores them (by length, then bytes).
_JSON_KEYS = ("a", "id", "ok", "tag", "note", "tags", "price", "nested", "ünï", 'quote"d', "x.y")
_JSON_SCALARS = (
    0,
    1,
    -7,
    42,
    2.5,
    -0.125,
    True,
    False,
    None,
    "",
    "text",
    "O'Brien",
    'say "hi"',
    "back\\slash",
    "日本",
    "🚀",
    "line\nbreak",
    "12.50",
    18446744073709551615,
)


def _json_value(rng: Random, depth: int) -> object:
    r = rng.random()
    if depth < 2 and r < 0.2:
        return [_json_value(rng, depth + 1) for _ in range(rng.randint(0, 3))]
    if depth < 2 and r < 0.35:
        return _json_object(rng, depth + 1)
    return rng.choice(_JSON_SCALARS)


def _json_object(rng: Random, depth: int) -> dict[str, object]:
    keys = rng.sample(_JSON_KEYS, rng.randint(0, 4))
    keys.sort(key=lambda k: (len(k.encode()), k.encode()))
    return {k: _json_value(rng, depth) for k in keys}


def mysql_json_text(doc: object) -> str:
    return json.dumps(doc, ensure_ascii=False, separators=(", ", ": "))


def json_gen(rng: Random, now: int) -> str:
    r = rng.random()
    if r < 0.03:
        return "null"  # the JSON literal null: text "null", not SQL NULL
    if r < 0.1:
        return mysql_json_text([_json_value(rng, 1) for _ in range(rng.randint(0, 3))])
    if r < 0.13:
        return mysql_json_text(rng.choice(_JSON_SCALARS))
    return mysql_json_text(_json_object(rng, 0))
