"""The texts of the rules: titles, advice and explanations with ``{name}`` / ``{name:.1f}`` placeholders,
which metrics they read, and how they are filled for a launch (no attribute access, nothing evaluated).
The rules loader checks them (ncuwrap.ruleset); the evaluator fills them (ncuwrap.ruleset.evaluate)."""

from __future__ import annotations

import functools
import re
from itertools import repeat
from pathlib import Path

from ncuwrap.core.errors import RulesError

# Names a text may read besides the metrics: the verdict.
VERDICT_FIELDS = ("bound",)
_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_.]*)(?::([<>^]?\d*(?:\.\d+)?[fgde%]?))?\}")
# A placeholder's width and precision at most: {x:200000000f} would make one text huge.
MAX_WIDTH = 64
MAX_PRECISION = 12


def check_formats(texts, path: Path, where: str) -> None:
    """Refuse a placeholder whose width or precision would make a text huge ({x:200000000f})."""
    for text in texts:
        for match in _PLACEHOLDER.finditer(text):
            spec = re.fullmatch(r"[<>^]?(\d*)(?:\.(\d+))?[fgde%]?", match.group(2) or "")
            width, precision = spec.group(1), spec.group(2)
            # Lengths first: int() refuses more than 4,300 digits.
            if (width and (len(width) > 3 or int(width) > MAX_WIDTH)) or (precision and (len(precision) > 3 or int(precision) > MAX_PRECISION)):
                raise RulesError(f"{path}: {where}: placeholder {match.group(0)[:40]} is too wide (width at most {MAX_WIDTH}, "
                                 f"precision at most {MAX_PRECISION}), e.g. {{{match.group(1)}:.1f}}")


def text_names(title: str, advice: str | dict[str, str], advice_by: str | None) -> list[str]:
    """The metrics a rule's title and advice show: the one choosing the advice, then the placeholders."""
    texts = [title] + (list(advice.values()) if isinstance(advice, dict) else [advice])
    names = [advice_by] if advice_by and advice_by not in VERDICT_FIELDS else []
    return list(dict.fromkeys(names + [name for text in texts for name in placeholders(text)]))


def chosen_advice(advice: str | dict[str, str], advice_by: str | None, values: dict) -> str:
    """A rule's advice for the values at hand: the case ``advice_by`` picks (``default`` otherwise)."""
    if isinstance(advice, dict):
        return advice.get(str(values.get(advice_by)), advice.get("default", ""))
    return advice


def placeholders(text: str) -> list[str]:
    """The metric names a text's {name} / {name:.1f} placeholders read."""
    return list(_placeholders(text))


@functools.lru_cache(maxsize=1024)
def _placeholders(text: str) -> tuple[str, ...]:
    # Cached: the same few texts are filled for every launch of a large report.
    return tuple(m.group(1) for m in _PLACEHOLDER.finditer(text))


def render_text(template: str, values: dict) -> str:
    """Fill ``{name}`` / ``{name:.1f}`` placeholders from ``values`` (no attribute access, no eval)."""
    parts, tail = _segments(template)
    out = []
    for literal, name, spec in parts:
        out.append(literal)
        out.append(_fill(values.get(name), spec))
    out.append(tail)
    return "".join(out)


def render_rows(template: str, columns: dict[str, list], n: int) -> list[str]:
    """:func:`render_text` of ``template`` for each of ``n`` rows, their values given by whole columns (name ->
    the rows' values): the same texts, each placeholder filled for all rows in one pass."""
    parts, tail = _segments(template)
    pieces: list = []
    for literal, name, spec in parts:
        column = columns.get(name)
        pieces += [repeat(literal, n), [_fill(v, spec) for v in column] if column is not None else repeat(_fill(None, spec), n)]
    return ["".join(row) for row in zip(*pieces, repeat(tail, n))]


@functools.lru_cache(maxsize=1024)
def _segments(template: str) -> tuple[tuple[tuple[str, str, str | None], ...], str]:
    # Parsed once: the same few texts are filled for every launch of a large report.
    parts, pos = [], 0
    for match in _PLACEHOLDER.finditer(template):
        parts.append((template[pos:match.start()], match.group(1), match.group(2)))
        pos = match.end()
    return tuple(parts), template[pos:]


def _fill(value, spec: str | None) -> str:
    if value is None or (isinstance(value, float) and value != value):
        return "n/a"
    if spec and isinstance(value, (int, float)):
        try:
            return format(value, spec)
        except ValueError:
            return str(value)
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)
