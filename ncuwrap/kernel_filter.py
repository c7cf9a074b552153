"""``--kernel REGEX``: which launches of a report a diagnosis keeps.

Matching runs on RE2 (google-re2), whose time is linear in the name: Python's ``re`` backtracks,
and ``(a+)+$`` against a 26-character kernel name took 45 s (each character more doubles it). A
time-bounded backtracking engine (the ``regex`` package's timeout) would make the result depend on
the machine's speed; RE2 gives the same answer in bounded time everywhere. What RE2 leaves out
(lookarounds, backreferences) is refused with one line. RE2 also bounds the memory of a compiled
pattern (8 MiB); its time grows with the pattern's length too, hence MAX_PATTERN.
"""

from __future__ import annotations

from typing import Callable, Iterable

import numpy as np
import re2

from ncuwrap.errors import InputError

# A filter names part of a kernel name; 2,000-character patterns took seconds per long name.
MAX_PATTERN = 512
# Kernels listed when nothing matched (a report can hold thousands of distinct names).
MAX_LISTED = 20

_OPTIONS = re2.Options()
_OPTIONS.log_errors = False  # RE2 would print its own line on stderr for every bad pattern


def _quoted(text: str) -> str:
    return repr(text) if len(text) <= 60 else repr(text[:60]) + "..."


def compile_filter(text: str) -> Callable[[str], bool]:
    """A predicate telling whether a kernel name matches ``text`` (searched anywhere in the name);
    InputError, one line, for a pattern that is too long or not valid RE2 syntax."""
    if len(text) > MAX_PATTERN:
        raise InputError(f"--kernel {_quoted(text)}: the regular expression is {len(text):,} characters long (at most {MAX_PATTERN}); "
                         "match a shorter part of the kernel name")
    try:
        pattern = re2.compile(text, _OPTIONS)
    except re2.error as exc:
        detail = exc.args[0].decode("utf-8", "replace") if exc.args and isinstance(exc.args[0], bytes) else str(exc)
        raise InputError(f"--kernel {_quoted(text)}: not a valid regular expression ({detail}); quote it or escape special characters "
                         "(RE2 syntax: no lookarounds or backreferences)") from None

    def matches(name: str) -> bool:
        try:
            return pattern.search(name) is not None
        except UnicodeEncodeError:  # a lone surrogate from a badly decoded name: RE2 reads UTF-8 only
            return pattern.search(name.encode("utf-8", "replace").decode("utf-8")) is not None

    return matches


def select(text: str, names: Iterable, display_names: Iterable, source: str) -> np.ndarray:
    """Indices of the launches whose short or full (display) name matches ``text``; InputError
    listing the report's kernels when none does. Each distinct name is matched once."""
    matches = compile_filter(text)
    seen: dict[str, bool] = {}

    def hit(value) -> bool:
        key = str(value)
        if key not in seen:
            seen[key] = matches(key)
        return seen[key]

    short = [str(n) for n in names]
    rows = np.array([i for i, (name, full) in enumerate(zip(short, display_names)) if hit(name) or hit(full)], dtype=int)
    if not len(rows):
        distinct = list(dict.fromkeys(short))
        listed = ", ".join(distinct[:MAX_LISTED]) + (f" and {len(distinct) - MAX_LISTED:,} more" if len(distinct) > MAX_LISTED else "")
        raise InputError(f"--kernel {_quoted(text)} matched no kernel of {source}; its kernels: {listed}")
    return rows
