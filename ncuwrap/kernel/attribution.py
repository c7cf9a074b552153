"""Which source lines (or SASS instructions) a finding's waste comes from.

A finding names a kernel-wide waste (excess sectors of uncoalesced stores, bank-conflict replays...);
Nsight Compute's SourceCounters section measures the same waste per instruction. ``attribute`` adds
it up per source line (per instruction where the kernel has no line information: a library built
without ``-lineinfo``) and returns the lines that hold most of it, each with its share, its SASS and
its counters. A rules file names the waste of each finding (``where:``, WASTES below).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from ncuwrap.core.numbers import clean

if TYPE_CHECKING:
    from ncuwrap.kernel.reading.source_counters import SourceCounters

WARP = 32
# The hot lines shown: the largest first, until they hold COVER of the waste, at most MAX_LINES, none
# under MIN_SHARE of it (a line with 2% of the waste is not where the fix is).
COVER = 0.9
MAX_LINES = 3
MIN_SHARE = 0.05
# Lines holding less than this share of the waste between them: the waste is spread out (said so).
SPREAD_OUT = 0.5
MAX_SASS = 3  # instructions shown per line
CONTEXT = 2  # source lines shown around a hot line in the snippet
MAX_TEXT = 240  # characters of a source line kept (untrusted text, bounded)


@dataclass(frozen=True)
class Waste:
    """A per-instruction measure of one kind of waste: how to compute it from the table."""

    name: str
    label: str  # "excess global store sectors": what the share is a share of
    needs: tuple[str, ...]  # table columns it reads (any one missing: not measurable)
    shown: tuple[str, ...]  # counters listed beside each hot line


def _excess(table: dict, total: str, ideal: str, excess: str) -> np.ndarray:
    if excess in table:
        values = table[excess]
        if np.isfinite(values).any():
            return np.nan_to_num(values, nan=0.0)
    return np.clip(np.nan_to_num(table[total] - table[ideal], nan=0.0), 0, None)


def _where_access(table: dict, space: str, access: str | None) -> np.ndarray:
    mask = table["space"] == space
    if access is not None:
        mask &= table["access"] == access
    return mask


def _values(waste: str, table: dict) -> np.ndarray:
    """Each instruction's amount of ``waste`` (``table``: :attr:`SourceCounters.columns`)."""
    if waste in ("global_load_excess", "global_store_excess"):
        mask = _where_access(table, "global", "load" if waste == "global_load_excess" else "store")
        return np.where(mask, _excess(table, "global_sectors", "global_sectors_ideal", "global_sectors_excess"), 0.0)
    if waste == "shared_excess":
        return _excess(table, "shared_wavefronts", "shared_wavefronts_ideal", "shared_wavefronts_excess")
    if waste == "local_traffic":
        return np.nan_to_num(table["local_sectors"], nan=0.0)
    if waste == "idle_lanes":
        inst = np.nan_to_num(table["inst_executed"], nan=0.0)
        return np.clip(WARP * inst - np.nan_to_num(table["thread_inst_executed"], nan=0.0), 0, None)
    if waste == "divergent_branches":
        return np.nan_to_num(table["divergent_branches"], nan=0.0)
    if waste == "stall_samples":
        samples = np.nan_to_num(table["samples"], nan=0.0)
        if "stall_selected" in table:  # a selected warp is issuing, not waiting
            samples = np.clip(samples - np.nan_to_num(table["stall_selected"], nan=0.0), 0, None)
        return samples
    raise KeyError(waste)


WASTES = {w.name: w for w in (
    Waste("global_load_excess", "excess global load sectors", ("global_sectors", "global_sectors_ideal"),
          ("global_sectors", "global_sectors_ideal", "inst_executed")),
    Waste("global_store_excess", "excess global store sectors", ("global_sectors", "global_sectors_ideal"),
          ("global_sectors", "global_sectors_ideal", "inst_executed")),
    Waste("shared_excess", "excess shared-memory wavefronts (bank-conflict replays)", ("shared_wavefronts", "shared_wavefronts_ideal"),
          ("shared_wavefronts", "shared_wavefronts_ideal", "inst_executed")),
    Waste("local_traffic", "local-memory sectors", ("local_sectors",), ("local_sectors", "inst_executed")),
    Waste("idle_lanes", "idle lanes of executed instructions", ("inst_executed", "thread_inst_executed"),
          ("inst_executed", "thread_inst_executed")),
    Waste("divergent_branches", "divergent branches (where warps split)", ("divergent_branches",), ("divergent_branches", "inst_executed")),
    Waste("stall_samples", "warp stall samples", ("samples",), ("samples",)),
)}


@dataclass(frozen=True)
class Instruction:
    """One SASS instruction of a hot line: its address, its text and its value of the waste's counter (made by :func:`attribute`)."""
    pc: int
    sass: str | None  # None where the report gave no SASS text for it (not among the hottest)
    value: float

    def to_json(self) -> dict:
        return {"pc": f"0x{self.pc:x}", "sass": self.sass, "value": clean(self.value)}


@dataclass(frozen=True)
class HotLine:
    """A source line (or, without line information, one instruction) and its part of the waste."""

    file: str | None
    line: int | None
    text: str | None  # the line's source text where the report carries it (bounded)
    value: float
    share: float  # of the waste, 0..1
    instructions: tuple[Instruction, ...]  # the line's largest contributors (MAX_SASS), largest first
    counters: dict  # the line's totals of the waste's shown counters
    stalls: tuple[tuple[str, float], ...] = ()  # the line's leading stall reasons, share of its samples
    contributors: int = 1  # how many of its instructions hold some of the waste

    @property
    def location(self) -> str:
        """'transpose.cu:47' (the file's base name), or the PC of a line-less instruction."""
        if self.line is not None and self.file:
            return f"{self.file.replace(chr(92), '/').rsplit('/', 1)[-1]}:{self.line}"
        return f"0x{self.instructions[0].pc:x}" if self.instructions else "?"

    def to_json(self) -> dict:
        return {"file": self.file, "line": self.line, "text": self.text, "share": clean(self.share), "value": clean(self.value),
                "sass": [i.to_json() for i in self.instructions], "counters": {k: clean(v) for k, v in self.counters.items()},
                "stalls": [{"reason": r, "share": clean(s)} for r, s in self.stalls], "instructions": self.contributors}


@dataclass(frozen=True)
class SnippetLine:
    """A line of source text shown around a hot line, with its share of the waste; read from the source file by the attribution, drawn by the renderers."""
    file: str
    line: int
    text: str  # indentation kept, tabs expanded
    share: float | None  # of the waste, where the line holds some
    hot: bool = False  # one of the hot lines


@dataclass(frozen=True)
class Where:
    """Where a waste lives in the kernel's code."""

    waste: str
    label: str
    function: str
    total: float
    by_line: bool  # False: SASS instructions only (no line information in the report)
    lines: tuple[HotLine, ...]
    covered: float  # share of the waste the lines shown hold, 0..1
    snippet: tuple[SnippetLine, ...] = field(default=())

    @property
    def spread_out(self) -> bool:
        """The lines shown hold less than SPREAD_OUT of the waste: no one place to fix."""
        return self.covered < SPREAD_OUT

    def to_json(self) -> dict:
        return {"waste": self.waste, "label": self.label, "function": self.function, "total": clean(self.total),
                "by": "line" if self.by_line else "instruction", "covered": clean(self.covered), "lines": [h.to_json() for h in self.lines]}


@dataclass(frozen=True)
class Unattributed:
    """Why a finding has no line: no source counters, or the waste is not in them."""

    waste: str
    why: str

    def to_json(self) -> dict:
        return {"waste": self.waste, "why": self.why}


NO_COUNTERS = ("no per-instruction counters in the report: profile with 'ncuwrap profile' (SourceCounters is collected "
               "by default) or 'ncu --section SourceCounters --import-source yes' of a build with -lineinfo")


def attribute(counters: SourceCounters | None, waste: str, gap: str | None = None) -> Where | Unattributed:
    """The lines of ``counters`` that hold ``waste`` (a WASTES name); without counters, why not
    (``gap`` where the input says, else NO_COUNTERS)."""
    if counters is None:
        return Unattributed(waste, gap or NO_COUNTERS)
    spec = WASTES[waste]
    table = counters.columns
    missing = [c for c in spec.needs if c not in table]
    if missing:
        return Unattributed(waste, f"the per-instruction counters lack {', '.join(missing)}; collect ncu's SourceCounters section")
    values = _values(waste, table)
    total = float(values.sum())
    if not total > 0:
        return Unattributed(waste, f"the per-instruction counters hold no {spec.label}")
    by_line = counters.has_lines
    # By whole arrays, not a frame per finding (the diagnosis of a 44-kernel report spent most of its time
    # in pandas here). Every sum is of counts, so it does not depend on the order it is added in.
    rows = np.flatnonzero(values > 0)
    if by_line:
        codes, places = counters.places
        distinct, first, group = np.unique(codes[rows], return_index=True, return_inverse=True)
        sums = np.bincount(group, weights=values[rows], minlength=len(distinct))
        seen = np.argsort(first, kind="stable")  # in the order the lines first hold some, as a groupby keeps them
        order = seen[np.argsort(-sums[seen], kind="stable")]
    else:
        sums = values[rows]
        order = np.argsort(-sums, kind="stable")
    lines: list[HotLine] = []
    covered = 0.0
    for at in order.tolist():
        value = float(sums[at])
        share = value / total
        if len(lines) >= MAX_LINES or (lines and share < MIN_SHARE) or covered >= COVER:
            break
        members = rows[group == at] if by_line else rows[at:at + 1]
        place = places[int(distinct[at])] if by_line else None
        lines.append(_hot_line(counters, spec, place, members, values, value, share))
        covered += share
    shares = {places[int(code)]: float(s) / total for code, s in zip(distinct.tolist(), sums.tolist())} if by_line else {}
    return Where(waste=waste, label=spec.label, function=counters.function, total=total, by_line=by_line, lines=tuple(lines),
                 covered=covered, snippet=_snippet(counters, shares, lines) if by_line else ())


def _hot_line(counters: SourceCounters, spec: Waste, place: tuple[str, int] | None, members, values, value: float, share: float) -> HotLine:
    """One hot line: ``members``, the rows (in table order) of its instructions that hold some of the waste."""
    table = counters.columns
    top = members[np.argsort(-values[members], kind="stable")[:MAX_SASS]]
    pcs, sass = table["pc"], table["sass"]
    instructions = tuple(Instruction(int(pcs[i]), sass[i] if isinstance(sass[i], str) else None, float(values[i])) for i in top.tolist())
    shown = {name: float(np.nansum(table[name][members])) for name in spec.shown if name in table}
    file, line = (place[0] or None, place[1] if place[1] >= 0 else None) if place is not None else (None, None)
    text = counters.text(file, line)
    return HotLine(file=file, line=line, text=_bounded(text), value=value, share=share, instructions=instructions, counters=shown,
                   stalls=_stalls(table, members), contributors=len(members))


def _stalls(table: dict, members) -> tuple[tuple[str, float], ...]:
    """The two leading stall reasons of a line's samples (``members``: its rows; selected: issuing, not a stall)."""
    reasons = [(c[len("stall_"):], float(np.nansum(values[members]))) for c, values in table.items()
               if c.startswith("stall_") and c != "stall_selected"]
    total = sum(v for _, v in reasons)
    if not total > 0:
        return ()
    reasons.sort(key=lambda r: -r[1])
    return tuple((name, value / total) for name, value in reasons[:2] if value / total >= MIN_SHARE)


def _bounded(text: str | None, strip: bool = True) -> str | None:
    if text is None:
        return None
    text = text.strip() if strip else text.expandtabs(4).rstrip()
    return text if len(text) <= MAX_TEXT else text[:MAX_TEXT - 1] + "…"


def _snippet(counters: SourceCounters, shares: dict[tuple[str, int], float], lines: list[HotLine]) -> tuple[SnippetLine, ...]:
    """The hot lines with CONTEXT lines around each, where the report carries the text. ``shares``:
    each (file, line) holding some of the waste, its share of it."""
    out: list[SnippetLine] = []
    seen: set[tuple[str, int]] = set()
    for hot in lines:
        if hot.file is None or hot.line is None or counters.text(hot.file, hot.line) is None:
            continue
        for number in range(max(1, hot.line - CONTEXT), hot.line + CONTEXT + 1):
            text = counters.text(hot.file, number)
            if text is None or (hot.file, number) in seen:
                continue
            seen.add((hot.file, number))
            share = shares.get((hot.file, number))
            out.append(SnippetLine(hot.file, number, _bounded(text, strip=False) or "", share,
                                   hot=any(h.file == hot.file and h.line == number for h in lines)))
    out.sort(key=lambda s: (s.file, s.line))
    return tuple(out)


