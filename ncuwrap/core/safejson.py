"""JSON loading with bounds, for the small JSON files ncuwrap reads from users (bench timings).

``json.loads`` recurses once per bracket (200,000 of them: RecursionError), turns ``1e999`` into
inf and ``NaN`` into nan without a word, and builds integers of any size (a 5,000-digit one raises
ValueError). Here the nesting is measured before parsing, and non-finite or oversized numbers are
refused while parsing. Callers bound the file's size first (ingest.check_file(max_bytes=...)).
"""

from __future__ import annotations

import json
import math
import re

# ncuwrap's own JSON nests 4 deep.
MAX_DEPTH = 32
# Integers beyond 2**53 are not exact as floats, which is how numbers are compared.
MAX_INT = 2**53

_TOKENS = re.compile(r'[\[\]{}"\\]')


class Refused(ValueError):
    """Over a bound; the message says which (without the file name)."""


def nesting(text: str) -> int:
    """The deepest nesting of brackets and braces outside strings, in one pass over the few
    characters that matter (no regular expression that could backtrack on an unterminated string)."""
    deepest = depth = 0
    in_string = False
    escaped = -1  # index of the character a backslash escapes
    for match in _TOKENS.finditer(text):
        char, at = match.group(), match.start()
        if in_string:
            if at == escaped:
                continue
            if char == "\\":
                escaped = at + 1
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
            if depth > deepest:
                deepest = depth
                if deepest > MAX_DEPTH:
                    break
        elif char in "]}":
            depth -= 1
    return deepest


def _float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise Refused(f"the number {text[:24]} is out of range")
    return value


def _int(text: str) -> int:
    # The length first: int() of thousands of digits is slow, and refused past 4,300.
    if len(text) > 17 or abs(int(text)) > MAX_INT:
        raise Refused(f"the integer {text[:24]}{'...' if len(text) > 24 else ''} is out of range (at most 2**53)")
    return int(text)


def _constant(text: str):
    raise Refused(f"{text} is not a number JSON allows")


def loads(text: str):
    """Parse ``text``; raise :class:`Refused` past the bounds and json.JSONDecodeError on bad syntax."""
    if nesting(text) > MAX_DEPTH:
        raise Refused(f"lists and objects nest more than {MAX_DEPTH} levels deep")
    return json.loads(text, parse_float=_float, parse_int=_int, parse_constant=_constant)
