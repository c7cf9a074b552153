"""``--kernel REGEX`` (and ``--process``, ``--launch-skip``, ``--launch-count``): which launches of a
report a diagnosis keeps (:class:`~ncuwrap.core.launch_selection.LaunchSelection`, chosen; :func:`select_launches`, kept).

Matching runs on RE2 (google-re2), whose time is linear in the name: Python's ``re`` backtracks,
and ``(a+)+$`` against a kernel name takes twice as long with each character more (docs/threat-model.md). A
time-bounded backtracking engine (the ``regex`` package's timeout) would make the result depend on
the machine's speed; RE2 gives the same answer in bounded time everywhere. What RE2 leaves out
(lookarounds, backreferences) is refused with one line. RE2 also bounds the memory of a compiled
pattern (8 MiB); its time grows with the pattern's length too, hence MAX_PATTERN.
"""

from __future__ import annotations

import re
from typing import Callable, Iterable

import numpy as np
import re2

from ncuwrap.core.errors import InputError
# The launch filter's value, in a module of its own that imports no numpy (the command line makes it first).
from ncuwrap.core.launch_selection import LaunchSelection, quoted as _quoted  # noqa: F401  (LaunchSelection: for callers)
from ncuwrap.core.numbers import distinct

# A filter names part of a kernel name; 2,000-character patterns took seconds per long name.
MAX_PATTERN = 512
# Kernels listed when nothing matched (a report can hold thousands of distinct names).
MAX_LISTED = 20

_OPTIONS = re2.Options()
_OPTIONS.log_errors = False  # RE2 would print its own line on stderr for every bad pattern


def compile_filter(text: str, option: str = "--kernel", what: str = "kernel name") -> Callable[[str], bool]:
    """A predicate telling whether a name matches ``text`` (searched anywhere in the name); InputError,
    one line naming ``option``, for a pattern that is too long or not valid RE2 syntax. Every regular
    expression a user gives ncuwrap (-k, --step-range) goes through here."""
    if len(text) > MAX_PATTERN:
        raise InputError(f"{option} {_quoted(text)}: the regular expression is {len(text):,} characters long (at most {MAX_PATTERN}); "
                         f"match a shorter part of the {what}")
    try:
        pattern = re2.compile(text, _OPTIONS)
    except re2.error as exc:
        detail = exc.args[0].decode("utf-8", "replace") if exc.args and isinstance(exc.args[0], bytes) else str(exc)
        raise InputError(f"{option} {_quoted(text)}: not a valid regular expression ({detail}); quote it or escape special characters "
                         "(RE2 syntax: no lookarounds or backreferences)") from None

    def matches(name: str) -> bool:
        try:
            return pattern.search(name) is not None
        except UnicodeEncodeError:  # a lone surrogate from a badly decoded name: RE2 reads UTF-8 only
            return pattern.search(name.encode("utf-8", "replace").decode("utf-8")) is not None

    return matches


# A pattern that is a plain word (no character RE2 reads as an operator): every match is that text.
_PLAIN = re.compile(r"[A-Za-z0-9_ :#,=/-]+")
# The characters other than themselves that RE2's case folding (Unicode's) matches for ASCII letters.
_FOLDED = {"s": "\u017f", "k": "\u212a"}
_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


def search_all(pattern: str, texts: list[str], *, literal: str | None = None, folded: bool = False,
               option: str = "--kernel", what: str = "kernel name") -> np.ndarray:
    """Whether ``pattern`` (RE2, as :func:`compile_filter`) is found in each of ``texts``, in bulk: the
    texts are joined and searched once for the literal every match holds (``literal``, ASCII, with
    ``folded`` case-insensitive; a pattern that is a plain word is its own literal), and RE2 runs only on
    the texts that hold it. A pattern with no known literal is matched text by text. What bulk saves on
    millions of distinct NVTX names: docs/threat-model.md (benchmarks/nvtx_match.py)."""
    matches = compile_filter(pattern, option, what)
    out = np.zeros(len(texts), dtype=bool)
    if literal is None and _PLAIN.fullmatch(pattern):
        literal = pattern
    if literal is None or not texts:
        out[:] = [matches(t) for t in texts]
        return out
    joined = "\n".join(texts)
    if folded:
        joined = joined.translate(_ASCII_LOWER)  # ASCII letters only: every offset stays where it was
    needles = [literal.lower() if folded else literal]
    needles += [_FOLDED[c] for c in sorted(set(needles[0])) if folded and c in _FOLDED]
    ends = np.cumsum(np.fromiter(map(len, texts), dtype=np.int64, count=len(texts)) + 1)  # each text's separator
    hits = np.concatenate([np.fromiter((m.start() for m in re.finditer(re.escape(n), joined)), dtype=np.int64) for n in needles])
    for i in distinct(np.searchsorted(ends, hits, side="right")).tolist():  # np.unique would import numpy.ma (ncuwrap.core.numbers)
        out[i] = matches(texts[i])
    return out


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


def pattern(text: str) -> str:
    """ncuwrap's -k is always a regular expression; ncu's explicit ``regex:`` prefix is accepted too."""
    text = text.strip()
    return text[len("regex:"):] if text.startswith("regex:") else text


def _process_label(pid, name) -> str:
    return f"{pid} ({name})" if name else str(pid)


def select_launches(selection: LaunchSelection, names, display_names, process_ids, process_names, source: str) -> np.ndarray:
    """Indices (launch order) of the launches ``selection`` keeps; InputError, one line naming ``source``
    and the fix, when it keeps none."""
    rows = np.arange(len(names))
    if selection.process:
        pids = [None if p is None or p != p or p == "" else str(p) for p in process_ids]
        pnames = [None if n is None or n != n or n == "" else str(n) for n in process_names]
        if all(p is None for p in pids):
            raise InputError(f"{source}: the report records no process for its launches, so --process cannot select; "
                             "diagnose ncu's CSV export of it instead (ncu --import REPORT --csv --page raw > REPORT.raw.csv)")
        wanted = str(selection.process).strip()
        rows = np.array([i for i in rows if wanted in (pids[i], pnames[i])], dtype=int)
        if not len(rows):
            known = list(dict.fromkeys(_process_label(p, n) for p, n in zip(pids, pnames) if p is not None))
            raise InputError(f"--process {_quoted(wanted)} matched no process of {source}; its processes: {', '.join(known[:MAX_LISTED])}")
    if selection.kernel:
        names, display_names = list(names), list(display_names)
        hits = select(pattern(selection.kernel), [names[i] for i in rows], [display_names[i] for i in rows], source)
        rows = rows[hits]
    matched = len(rows)
    rows = rows[selection.launch_skip:]
    if selection.launch_count:
        rows = rows[: selection.launch_count]
    if not len(rows):
        which = f"launches matching {selection.describe().replace(f' --launch-skip {selection.launch_skip}', '')}" \
            if (selection.kernel or selection.process) else "launches"
        raise InputError(f"--launch-skip {selection.launch_skip} skips all {matched} {which} of {source}; "
                         f"give a --launch-skip below {matched}")
    return rows
