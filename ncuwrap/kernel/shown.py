"""What a report shows of a diagnosis: how many kernels get a section of their own, how many rows the
summary has, how many sections start unfolded, and which launches each part lists.

Decided here, once, for every format (a renderer draws the parts of a :class:`Layout` and holds no
limit of its own): the HTML page for a code review has room for more than a pull-request comment, so
each format names its preset (:data:`PAGE`, :data:`COMMENT`) and may be handed another.
"""

from __future__ import annotations

from dataclasses import dataclass

from ncuwrap.kernel.verdict import Diagnosis, KernelGroup, KernelVerdict, Priority


@dataclass(frozen=True)
class Shown:
    """How much of a report one output shows in full."""

    detail: int  # kernels (or compared pairs) given a section of their own
    summary: int  # rows of the summary; never fewer than ``detail``
    open: int  # sections shown unfolded (the others are one click away)
    calls: int | None = None  # a timeline's slowest CUDA calls listed; None: all


# A self-contained HTML page; a pull-request comment (Markdown) stays short; the terminal prints every
# kernel's section and keeps the slowest calls to one line.
PAGE = Shown(detail=10, summary=25, open=3)
COMMENT = Shown(detail=5, summary=15, open=2, calls=10)
TERMINAL_CALLS = 5

# Kernels drawn on one report roofline (its longest launch each, most total time first).
ROOFLINE_KERNELS = 8


@dataclass(frozen=True)
class Layout:
    """The parts of one report of a diagnosis, as ``shown`` allows."""

    shown: Shown
    launches: tuple[KernelVerdict, ...]  # every launch, longest first: a launch's rank is its place here (from 1)
    groups: tuple[KernelGroup, ...]  # Diagnosis.groups(): most total time first
    listed: dict  # kernel name -> the launches a report lists of it (KernelGroup.listed)
    sections: frozenset[int]  # launch IDs given a section (Diagnosis.sections)
    summary: int  # launches (or kernels, where grouped) in the summary
    rest: tuple[KernelVerdict, ...]  # past the summary, the launches listed (of a kernel's many, those that differ)
    rest_share_pct: float | None  # the share of every launch past the summary
    groups_rest_share_pct: float | None  # the share of the kernels past the summary
    fix_first: tuple[Priority, ...]
    rooflines: tuple[tuple[str, tuple[KernelGroup, ...]], ...]  # (arithmetic, its kernels) of a report of several kernels

    @property
    def below(self) -> int:
        """Launches past the summary."""
        return max(0, len(self.launches) - self.summary)

    @property
    def rest_left_out(self) -> int:
        return self.below - len(self.rest)

    @property
    def summary_groups(self) -> tuple[KernelGroup, ...]:
        return self.groups[: self.summary]

    @property
    def groups_below(self) -> tuple[KernelGroup, ...]:
        return self.groups[self.summary:]

    @property
    def section_groups(self) -> tuple[KernelGroup, ...]:
        """The kernels given a section where a format shows one per kernel (Markdown)."""
        return self.groups[: self.shown.detail]

    def unfolded(self, rank: int) -> bool:
        """The section of the launch (or kernel) at ``rank`` starts open."""
        return rank <= self.shown.open


def layout(diagnosis: Diagnosis, shown: Shown) -> Layout:
    launches = tuple(diagnosis.by_time())
    groups = tuple(diagnosis.groups())  # one pass over the launches, for every part that needs them
    summary = max(shown.summary, shown.detail)
    listed = {g.name: g.listed() for g in groups}
    kept = {k.id for ks in listed.values() for k in ks}
    below = launches[summary:]
    return Layout(
        shown=shown, launches=launches, groups=groups, listed=listed, sections=diagnosis.sections(shown.detail, list(groups)),
        summary=summary, rest=tuple(k for k in below if k.id in kept), rest_share_pct=diagnosis.share_pct(below),
        groups_rest_share_pct=diagnosis.share_pct(k for g in groups[summary:] for k in g.launches),
        fix_first=tuple(diagnosis.fix_first()), rooflines=_rooflines(groups) if len(groups) > 1 else ())


def _rooflines(groups) -> tuple:
    """The kernels with a roofline point, by the kind of arithmetic they do (one chart each: FP32, FP64,
    bf16 tensor...), ROOFLINE_KERNELS at most each."""
    by: dict[str, list] = {}
    for g in groups:
        roof = g.longest.roofline
        if roof is not None and roof.says_something:
            members = by.setdefault(roof.label, [])
            if len(members) < ROOFLINE_KERNELS:
                members.append(g)
    return tuple((label, tuple(members)) for label, members in by.items())
