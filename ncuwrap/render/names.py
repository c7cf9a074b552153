"""Kernel names as every format shows them (terminal, Markdown, HTML), one way.

``--names`` picks the form, in the words of ncu's ``--print-kernel-base``:

- ``short`` (default): the function name, its template arguments as ``‹…›`` and no parameters:
  ``at::native::vectorized_elementwise_kernel‹…›``; a CUTLASS launch wrapper's, the operator it launches
  (``cutlass::Kernel2<cutlass_80_simt_sgemm_256x128_8x4_nn_align1>`` -> ``cutlass_80_simt_sgemm_256x128_8x4_nn_align1``).
  Where two kernels of one document would read the same, each keeps the first word of its template arguments that
  the others lack:
  ``vectorized_elementwise_kernel‹rsqrt_kernel_cuda…›`` and ``‹MulFunctor…›``.
- ``function``: the function name with its template arguments, no parameters (ncu's CSV "Kernel Name").
- ``demangled``: the whole signature, parameters included.

A table cell holds at most three lines of a name (:class:`Clamped`): it wraps after ``_``, ``::``, ``,``
and spaces (a word wider than the cell at its camel-case joints), and a name longer than three lines ends in ``…``
(``--names demangled`` shows the whole name in the kernel's own section; the JSON always has it).
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable

from rich.measure import Measurement
from rich.text import Text

from ncuwrap.core.kernel_names import function_name, wrapped
from ncuwrap.render.escape import terminal

SHORT, FUNCTION, DEMANGLED = "short", "function", "demangled"
CHOICES = (SHORT, FUNCTION, DEMANGLED)
ELIDED = "‹…›"
MAX_LINES = 3
# The widest table cell laid out (a terminal's whole width): what a name keeps for its cell.
MAX_CELL = 1000
# Namespaces that name nothing: compilers' spellings of an anonymous namespace.
_ANONYMOUS = ("(anonymous namespace)::", "<unnamed>::", "{anonymous}::")
# Words of template arguments that tell no kernel from another.
_COMMON = {"void", "int", "float", "double", "char", "unsigned", "signed", "long", "short", "bool", "const", "volatile", "std", "array",
           "lambda", "instance", "operator", "at", "native", "c10", "cuda", "detail", "true", "false", "__nv_bool", "size_t", "int64_t",
           "uint32_t", "int32_t", "struct", "class", "typename", "unnamed", "anonymous", "namespace"}
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|\d+")


def _plain(name: str) -> str:
    for mark in _ANONYMOUS:
        name = name.replace(mark, "")
    return name


# A template argument list this short is shown whole (scale_add<float, 4>): it is the name.
KEPT = 16


def _split(function: str) -> tuple[str, str]:
    """``"ns::k<float, (int)4, Policy<8, 2>>::run"`` -> (``"ns::k‹…›::run"``, what the elided lists
    held): each top-level template argument list elided unless it is at most KEPT characters."""
    out, inner, group, depth = [], [], [], 0
    for ch in function:
        if ch == "<":
            if depth:
                group.append(ch)
            depth += 1
        elif ch == ">" and depth:
            depth -= 1
            if depth:
                group.append(ch)
            else:
                args = "".join(group)
                out.append(f"<{args}>" if len(args) <= KEPT else ELIDED)
                inner.append(args + " ")
                group = []
        elif depth:
            group.append(ch)
        else:
            out.append(ch)
    if depth:  # an unclosed '<' (a hostile or cut name): the rest as written
        out.append("<" + "".join(group))
    return "".join(out), "".join(inner)


def short(name: str) -> str:
    """The short form of one name, without regard to the others of its document. A CUTLASS launch wrapper's is its
    operator's: every CUTLASS GEMM would read ``cutlass::Kernel2‹…›``."""
    return _split(function_name(_plain(wrapped(name) or name)))[0]


def _words(name: str) -> list[str]:
    """The telling words of a name's template arguments, in order, each once."""
    _, inner = _split(function_name(_plain(name)))
    seen: dict[str, None] = {}
    for word in _WORD.findall(inner):
        if word not in _COMMON and not re.fullmatch(r"T\d*", word):
            seen.setdefault(word, None)
    return list(seen)


def _hint(words: list[str], others: list[set[str]]) -> str:
    """The first words of a name's template arguments that, together, no other name of its group has
    all of: each word taken tells it from at least one name still alike."""
    alike, picked = list(others), []
    for word in sorted(words, key=str.isdigit):  # names before numbers, each in the order written
        if not alike:
            break
        if any(word not in o for o in alike):
            picked.append(word)
            alike = [o for o in alike if word in o]
    return ", ".join(picked[:3])


class Names:
    """The names of one document in the form ``style``: ``Names(all_names)(name)``."""

    def __init__(self, names: Iterable[str], style: str = SHORT):
        if style not in CHOICES:
            raise ValueError(f"names style {style!r}: one of {', '.join(CHOICES)}")
        self.style = style
        self._short: dict[str, str] = {}
        if style != SHORT:
            return
        groups: dict[str, list[str]] = defaultdict(list)
        for name in dict.fromkeys(names):
            groups[short(name)].append(name)
        for base, members in groups.items():
            function = {m: function_name(_plain(m)) for m in members}
            if len(set(function.values())) == 1:
                for m in members:
                    self._short[m] = base
                continue
            words = {m: _words(m) for m in members}
            for m in members:
                hint = _hint(words[m], [set(words[o]) for o in members if function[o] != function[m]])
                self._short[m] = base.replace(ELIDED, f"‹{hint}…›", 1) if hint and ELIDED in base else base

    def __call__(self, name: str) -> str:
        if self.style == DEMANGLED:
            shown = name
        elif self.style == FUNCTION:
            shown = function_name(name)
        else:
            shown = self._short.get(name) or short(name)
        # White space inside a name (tabs, newlines) means nothing on screen: one space each run.
        return " ".join(shown.split())


# Where a name may wrap: after these, and before a hint's ‹ (a bare ‹…› stays with its name).
_BREAK = re.compile(r"(?<=::)|(?<=_)|(?<=,)|(?<= )|(?=‹(?!…›))")


# Where a piece wider than its cell may break as well: a capital after a small letter (RadixSort|Onesweep).
_CAMEL = re.compile(r"(?<=[a-z])(?=[A-Z])")


class Clamped:
    """A name in a table cell: wrapped at ``_``, ``::``, ``,`` and spaces to the cell's width, at most
    ``MAX_LINES`` lines, the last ending in ``…`` when the name is longer.

    Only the head of a name is read: the lines shown and one line more (whether a piece fits is known
    from at most a line of it), so laying out a name takes time in the cell's size, not the name's
    (a 16 MB name took minutes when every folded line re-sliced the rest)."""

    def __init__(self, text: str, style: str = "", lines: int = MAX_LINES):
        raw = str(text)
        # Escaping is per character: the escaped head of a name is the head of the escaped name.
        keep = (lines + 1) * MAX_CELL + 1
        self.text = terminal(raw[:keep])
        self.cut = len(raw) > keep  # more than any cell shows, whatever its width
        self.style = style
        self.lines = lines

    def __rich_measure__(self, console, options) -> Measurement:
        # At least its longest piece (up to 32 columns), so that a word splits only when nothing else fits.
        head = self.text[: (self.lines + 1) * max(1, options.max_width) + 1]
        longest = max((len(p) for p in _BREAK.split(head)), default=1)
        return Measurement(min(longest, 32, len(self.text)) or 1, max(len(self.text), 1))

    def _wrap(self, width: int) -> list[str]:
        # Lines are consecutive runs of the name of at most ``width`` characters: ``lines`` of them and
        # the piece that starts the next lie within the first (lines + 1) * width + 1 characters.
        head = self.text[: (self.lines + 1) * width + 1]
        lines: list[str] = []
        current = ""
        for piece in (p for p in _BREAK.split(head) if p):
            parts = _CAMEL.split(piece) if len(piece) > width else (piece,)
            for part in (p for p in parts if p):
                if len(part) > width:  # wider than the cell even at its camel-case joints: folded
                    if current:
                        lines.append(current)
                    folds = [part[i:i + width] for i in range(0, len(part), width)]
                    lines += folds[:-1]
                    current = folds[-1]
                elif len(current) + len(part) > width:
                    lines.append(current)
                    current = part
                else:
                    current += part
                if len(lines) > self.lines:
                    break
            if len(lines) > self.lines:
                break
        if current and len(lines) <= self.lines:
            lines.append(current)
        if len(lines) > self.lines or self.cut:
            last = lines[min(self.lines, len(lines)) - 1]
            lines = lines[: min(self.lines, len(lines)) - 1] + [(last[: width - 1] if len(last) >= width else last) + "…"]
        # A line that starts after a ',' or a space starts at its word.
        return [line.rstrip() if i == 0 else line.strip() for i, line in enumerate(lines)]

    def __rich_console__(self, console, options):
        yield Text("\n".join(self._wrap(max(1, options.max_width))), style=self.style, no_wrap=True, overflow="ignore")

    def __str__(self) -> str:
        return self.text


def of(result, style: str = SHORT) -> Names:
    """The :class:`Names` of every kernel a result shows (a diagnosis, compare, timeline, timeline compare)."""
    kind = type(result).__name__
    if kind == "Diagnosis":
        names = [k.name for k in result.kernels]
    elif kind == "CompareResult":
        names = [n for p in result.pairs for n in (p.before.name, p.after.name)]
        names += [k.name for k in (*result.unpaired_before, *result.unpaired_after)]
    elif kind == "TimelineDiagnosis":
        names = [k.demangled for k in result.timeline.kernels]
    elif kind == "TimelineCompare":
        names = [k.name for k in result.kernels]
    else:
        names = []
    return Names(names, style)
