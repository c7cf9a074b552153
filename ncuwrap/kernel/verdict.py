"""Typed results of a diagnosis and their JSON form (schema ``ncuwrap.diagnosis/v4``; v2 by ncuwrap.kernel.document.expand)."""

from __future__ import annotations

import functools
import operator
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from ncuwrap.core.version import __version__
from ncuwrap.core.display import Displayed, plural, short, short_path
from ncuwrap.kernel.json_delta import share_launches
from ncuwrap.kernel.metrics import MEMORY_LEVELS
from ncuwrap.core.numbers import clean, clean_all
from ncuwrap.ruleset.outcome import FindingResult, NextStep, NotEvaluated, Step

if TYPE_CHECKING:
    from ncuwrap.kernel.attribution import Unattributed, Where
    from ncuwrap.bundled.stopline import StopLine
    from ncuwrap.kernel.estimate import KernelEffects

# v2 (from v1): findings carry estimated_speedup and limited_after, severity may be "minor";
# kernels carry borderline, pipe, tensor, estimated_gain_pct, stalls and ncu_rules; the document has a ranking.
# v3 (from v2): a kernel's later launches are what they differ in from its first (ncuwrap.kernel.json_delta), and
# the document names the findings that hold the rules' roles; ncuwrap.kernel.document.expand gives v2 back.
# v4 (from v3): a later launch is like the latest earlier launch of its shape, its texts that differ only in
# their numbers are given as those numbers, and a value a record repeats is compared once (ncuwrap.kernel.json_delta).
SCHEMA = "ncuwrap.diagnosis/v4"
SCHEMA_V3 = "ncuwrap.diagnosis/v3"
SCHEMA_V2 = "ncuwrap.diagnosis/v2"


# Theoretical occupancy this close to 100% is full (ncu rounds).
FULL_OCCUPANCY_PCT = 99.5


@dataclass(frozen=True, slots=True)
class Stall:
    """A warp stall reason and its share of all stall cycles per issued instruction."""

    reason: str
    share_pct: float

    def to_json(self) -> dict:
        return {"reason": self.reason, "share_pct": self.share_pct}


@dataclass(frozen=True)
class NcuRule:
    """One of Nsight Compute's own rule results for the launch (from the report or its details page)."""

    rule: str
    section: str
    kind: str  # OPT, WRN, INF, ...
    speedup_type: str | None  # local | global
    estimated_speedup: float | None
    message: str
    # The ncuwrap finding this rule speaks about (None: no counterpart), and how the two compare.
    counterpart: str | None = None
    agreement: str | None = None

    def to_json(self) -> dict:
        return {"rule": self.rule, "section": self.section, "kind": self.kind, "speedup_type": self.speedup_type,
                "estimated_speedup": self.estimated_speedup, "message": self.message, "counterpart": self.counterpart,
                "agreement": self.agreement}


@dataclass(frozen=True, slots=True)
class RooflinePoint:
    """A kernel's point on the roofline at one memory level: its arithmetic intensity and FLOP/s."""
    level: str  # DRAM | L2 | L1
    intensity: float  # FLOP per byte moved at this level
    flops_per_s: float
    bytes_per_s: float

    def to_json(self) -> dict:
        return {"level": self.level, "intensity": clean(self.intensity), "flops_per_s": clean(self.flops_per_s),
                "bytes_per_s": clean(self.bytes_per_s)}


@dataclass(frozen=True, slots=True)
class Roofline:
    """The roofline of the arithmetic a kernel does (FP32, FP64, or tensor cores at its input type's
    dense peak): the device's roofs and the kernel's point per memory level."""

    kind: str  # fp32 | fp64 | a tensor input type ("bf16 tensor")
    peak_flops_per_s: float | None
    roofs: tuple[tuple[str, float], ...]  # (level, peak bytes/s) for the levels with a peak
    flops_per_s: float | None  # 0: the kernel does no arithmetic of this kind
    points: tuple[RooflinePoint, ...]
    # The counters it lacks (then nothing is drawn) and how to collect them.
    missing: tuple[str, ...] = ()
    how: str = ""
    # The L1 point left out because L1 does not carry the kernel's traffic: (the sectors L1 looked up, the
    # requests the SMs sent to L2), kernel_diagnosis._l1_where_it_carries. None: not left out.
    l1_left_out: tuple[float, float] | None = None

    @property
    def label(self) -> str:
        return self.kind.upper() if self.kind in ("fp32", "fp64") else self.kind

    @property
    def drawable(self) -> bool:
        """The roofs can be drawn: the counters were collected, with a compute peak and a memory peak."""
        return not self.missing and bool(self.peak_flops_per_s and self.peak_flops_per_s > 0 and self.roofs)

    @property
    def says_something(self) -> bool:
        """Worth a chart: the roofs can be drawn and the kernel has a point (it does arithmetic)."""
        return self.drawable and bool(self.points)

    def to_json(self) -> dict:
        out = {"kind": self.kind, "peak_flops_per_s": clean(self.peak_flops_per_s),
               "roofs": {level: clean(bw) for level, bw in self.roofs}, "flops_per_s": clean(self.flops_per_s),
               "points": [p.to_json() for p in self.points], "missing": list(self.missing)}
        if self.l1_left_out is not None:  # only then: a document without it reads as before
            out["l1_left_out"] = {"l1_sectors": clean(self.l1_left_out[0]), "l2_requests_from_sms": clean(self.l1_left_out[1])}
        return out


@dataclass(frozen=True, slots=True)
class LevelGap:
    """A memory level (DRAM, L2, L1) the launch's charts (bandwidth, roofline) cannot draw whole because the report
    holds no counter of it: all of it (``part`` "bytes": no bar, no point) or its peak ("peak": its bytes drawn
    without a roof or a share of one). Said, never dropped: a level left out reads as a level that did not matter."""

    level: str  # DRAM | L2 | L1
    part: str  # bytes | peak
    missing: tuple[str, ...]  # the counters the report lacks
    why: str  # "not collected", or "not on the details page" (a details CSV exports no raw counter)
    how: str  # how to collect them

    def to_json(self) -> dict:
        return {"level": self.level, "part": self.part, "missing": list(self.missing), "why": self.why, "how": self.how}


@dataclass(frozen=True, slots=True)
class ReportLevelGap:
    """A LevelGap said once for the report (the formats that draw no chart): on how many of its launches."""

    gap: LevelGap
    launches: int


@dataclass(frozen=True)
class Reprofile:
    """What a report lacks, said once for the whole report: the rules that could not be evaluated on
    some launch, the metrics they read, and how to get them."""

    rules: tuple[str, ...]
    missing: tuple[str, ...]
    launches: int  # how many launches had a rule not evaluated
    how: str  # "re-profile with --section ..." or how to export what the report has

    def to_json(self) -> dict:
        return {"rules": list(self.rules), "missing": list(self.missing), "launches": self.launches, "how": self.how}


class MetricRow(Mapping):
    """One launch's values of some metrics, read from columns shared by every launch (None: not
    known). Built for each of 10,000 launches and rarely read: no per-launch dict is made."""

    __slots__ = ("_columns", "_row")

    def __init__(self, columns: dict[str, list], row: int):
        self._columns, self._row = columns, row

    def __getitem__(self, name: str):
        return self._columns[name][self._row]

    def __iter__(self):
        return iter(self._columns)

    def __len__(self) -> int:
        return len(self._columns)

    def __repr__(self) -> str:
        return f"MetricRow({dict(self)!r})"

    def to_dict(self) -> dict:
        """As a dict (what dict(row) gives, without a lookup through the Mapping protocol per key)."""
        return dict(zip(self._columns, map(operator.itemgetter(self._row), self._columns.values())))


@dataclass(frozen=True, slots=True)
class KernelVerdict:
    """The verdict on one kernel launch: what bounds it, why, its findings, next step and chart data; made by kernel_diagnosis, compared by compare."""
    id: int
    name: str
    display_name: str
    grid: list[int] | None
    block: list[int] | None
    duration_ns: float | None
    bound: str
    limiter: str | None
    why: str
    findings: tuple[FindingResult, ...]
    not_evaluated: tuple[NotEvaluated, ...]
    # The metrics the rules file lists under 'display' that the report has (JSON "metrics").
    display_metrics: dict
    path: tuple[Step, ...] = ()
    # What the charts draw (Speed of Light, bandwidth, occupancy); see kernel_diagnosis.CHART_METRICS (JSON "chart").
    chart_metrics: dict = field(default_factory=dict)
    # Every metric a finding's evidence or a comparison reads, known or not (None): lets 'compare'
    # show how a resolved finding's evidence moved. Not part of the JSON document.
    compared_metrics: Mapping = field(default_factory=dict, repr=False, compare=False)
    # The bound decision was too close to call: another run may decide otherwise.
    borderline: bool = False
    # The busiest SM pipe and its utilization (%), and for tensor-core work the input type and the
    # share of that type's dense peak reached.
    pipe: str | None = None
    pipe_pct: float | None = None
    tensor: dict | None = None
    # What fixing every finding would save of this launch's time (%), ncuwrap.kernel.estimate.
    estimated_gain_pct: float | None = None
    stalls: tuple[Stall, ...] = ()
    ncu_rules: tuple[NcuRule, ...] = ()
    # The per-unit effect of each estimated finding, for combining them (compare). Not in the JSON.
    effects: "KernelEffects | None" = field(default=None, repr=False, compare=False)
    # The roofline of the arithmetic the kernel does; None when its counters were not collected.
    roofline: "Roofline | None" = None
    process_id: str | None = None
    process_name: str | None = None
    stream: str | None = None  # the CUDA stream ID ncu recorded
    # The lines holding most of the warps' stall samples (the verdict branch's 'where'), or why not.
    where: "Where | Unattributed | None" = None
    # Where its per-instruction counters came from (ncu-rep | source-page), by line or SASS only; None: none.
    source_counters: dict | None = None
    # What to do next when no finding costs time (a costly finding's advice is the next step then).
    next_step: NextStep | None = None
    # The memory levels its charts lack for want of counters (DRAM, L2, L1 order); the charts say each.
    level_gaps: tuple[LevelGap, ...] = ()

    @property
    def headline(self) -> FindingResult | None:
        return headline_of(self.findings)

    @property
    def verdict_label(self) -> str:
        """'memory (l1tex)'; a compute-bound kernel names its busiest pipe: 'compute (tensor)'."""
        return verdict_label(self.bound, self.pipe, self.limiter)

    def __repr__(self) -> str:
        head = f"; {self.headline.id} ({self.headline.severity})" if self.headline else ""
        return f"<KernelVerdict launch {self.id} {short(self.name, 40)}: {self.verdict_label}{head}; {plural(len(self.findings), 'finding')}>"

    def document(self) -> dict:
        """Its record in the diagnosis document (v3 and v4): the v2 record, then what 'compare' reads besides it
        (every metric a finding's evidence or a comparison reads; the effects that estimate a fix)."""
        return {key: get(self) for key, get in DOCUMENT.items()}

    @property
    def ncu_rules_shown(self) -> tuple[NcuRule, ...]:
        """Nsight Compute's rules worth showing beside the findings: those with an estimate or a
        counterpart among ncuwrap's findings."""
        return tuple(r for r in self.ncu_rules if r.estimated_speedup is not None or r.counterpart)

    @property
    def stop(self) -> FindingResult | None:
        """The finding that says to stop tuning (the kernel is at its roofline), when it fired."""
        return next((f for f in self.findings if f.role == "stop"), None)

    @property
    def issues(self) -> tuple[FindingResult, ...]:
        """The findings worth acting on: neither the stop finding nor minor ones."""
        return tuple(f for f in self.findings if f.role != "stop" and not f.minor)

    @property
    def occupancy_capped_by(self) -> str | None:
        """What caps the resident blocks per SM below the full warp slots; None at full theoretical
        occupancy (the warp limit is then the hardware's, not a cap) or when unknown."""
        theoretical = self.chart_metrics.get("theoretical_occupancy_pct")
        if not isinstance(theoretical, (int, float)) or theoretical >= FULL_OCCUPANCY_PCT:
            return None
        return self.chart_metrics.get("occupancy_limiter")

    @property
    def minor_findings(self) -> tuple[FindingResult, ...]:
        return tuple(f for f in self.findings if f.minor)

    @property
    def at_roofline(self) -> bool:
        return self.stop is not None

    def finding_ids(self) -> list[str]:
        return [f.id for f in self.findings]

    def to_json(self) -> dict:
        return {key: get(self) for key, get in RECORD.items()}


def headline_of(findings: tuple[FindingResult, ...]) -> FindingResult | None:
    """A launch's headline: its first finding that is not minor (they come worst first)."""
    return next((f for f in findings if not f.minor), None)


def verdict_label(bound: str, pipe: str | None, limiter) -> str:
    """KernelVerdict.verdict_label of a launch's bound, busiest pipe and limiter."""
    unit = pipe if bound == "compute" and pipe else limiter
    return f"{bound} ({unit})" if unit else bound


_FIELDS = tuple(KernelVerdict.__dataclass_fields__)


class LaunchVerdicts(Sequence):
    """A report's verdicts, one per launch, kept as columns: one list per KernelVerdict field, by launch, each made
    when first read (``made``: the fields given as a function of the launch's place instead; ``whole``: those of
    them whose whole column is made faster at once). A KernelVerdict is made when it is read (a renderer, compare),
    once; the diagnosis document of 10,000 launches is written from the columns without making one per launch.
    ``at``: a selection of another's launches (a kernel's group), sharing its columns and verdicts."""

    def __init__(self, n: int, columns: dict[str, list], made: dict, whole: dict | None = None, *, _base: "LaunchVerdicts | None" = None,
                 _at: list[int] | None = None):
        self._n, self._columns, self._made, self._whole = n, columns, made, whole or {}
        self._base, self._at = _base, _at
        self._verdicts: list = [None] * n if _base is None else []
        self._all_made = False

    def __len__(self) -> int:
        return self._n

    def __getitem__(self, i):
        if isinstance(i, slice):
            return tuple(self[j] for j in range(*i.indices(self._n)))
        if self._base is not None:
            return self._base[self._at[i]]
        if i < 0:
            i += self._n
        if not 0 <= i < self._n:
            raise IndexError("launch index out of range")
        verdict = self._verdicts[i]
        if verdict is None:
            verdict = self._verdicts[i] = KernelVerdict(**{name: self.value(name, i) for name in _FIELDS})
        return verdict

    def __iter__(self):
        if self._base is not None:
            verdicts = self._base._every()
            return (verdicts[i] for i in self._at)
        return iter(self._every())

    def _every(self) -> list[KernelVerdict]:
        """Every verdict, those not made yet made at once from the whole columns (a renderer reads them all)."""
        if not self._all_made:
            made = map(KernelVerdict, *map(self.column, _FIELDS))  # by place: the fields' order
            self._verdicts = [m if v is None else v for v, m in zip(self._verdicts, made)]
            self._all_made = True
        return self._verdicts

    def __eq__(self, other) -> bool:
        return isinstance(other, (tuple, LaunchVerdicts)) and tuple(self) == tuple(other)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"LaunchVerdicts({self._n} launches)"

    def column(self, name: str) -> list:
        """Every launch's ``name`` (a KernelVerdict field), in order."""
        if self._base is not None:
            column = self._base.column(name)
            return [column[i] for i in self._at]
        column = self._columns.get(name)
        if column is None:
            make = self._made[name]
            column = self._columns[name] = self._whole[name]() if name in self._whole else [make(i) for i in range(self._n)]
        return column

    def value(self, name: str, i: int):
        """Launch ``i``'s ``name``, made alone where its column was not."""
        if self._base is not None:
            return self._base.value(name, self._at[i])
        column = self._columns.get(name)
        return column[i] if column is not None else self._made[name](i)

    def row(self, i: int) -> "LaunchRow":
        """Launch ``i``'s fields read one at a time, without making its verdict."""
        return LaunchRow(self, i)

    def picked(self, at: list[int]) -> "LaunchVerdicts":
        """The launches at ``at`` (places in this sequence), in that order."""
        if self._base is not None:
            return self._base.picked([self._at[i] for i in at])
        return LaunchVerdicts(len(at), {}, {}, _base=self, _at=list(at))


class LaunchRow:
    """One launch of a LaunchVerdicts, its fields read as a KernelVerdict's attributes (RECORD's functions read it)."""

    __slots__ = ("_launches", "_i")

    def __init__(self, launches: LaunchVerdicts, i: int):
        self._launches, self._i = launches, i

    def __getattr__(self, name: str):
        if name not in KernelVerdict.__dataclass_fields__:
            raise AttributeError(name)
        return self._launches.value(name, self._i)


def column(kernels, name: str) -> list:
    """Every launch's ``name``: a LaunchVerdicts' column, else read from each verdict."""
    return kernels.column(name) if isinstance(kernels, LaunchVerdicts) else [getattr(k, name) for k in kernels]


def _picked(kernels, at: list[int]):
    """The launches of ``kernels`` at ``at``, as the same kind of sequence (a LaunchVerdicts' shares its columns)."""
    return kernels.picked(at) if isinstance(kernels, LaunchVerdicts) else tuple(kernels[i] for i in at)


def _compared(k: KernelVerdict) -> dict:
    compared = k.compared_metrics
    return compared.to_dict() if isinstance(compared, MetricRow) else dict(compared)


# A launch's record (v2), value by value: KernelVerdict.to_json makes the whole record of them, and
# ncuwrap.kernel.launch_records the values a launch of a large report differs in from its like.
RECORD = {
    "id": operator.attrgetter("id"),
    "name": operator.attrgetter("name"),
    "display_name": operator.attrgetter("display_name"),
    "launch": lambda k: {"grid": k.grid, "block": k.block},
    "duration_ns": operator.attrgetter("duration_ns"),
    "bound": operator.attrgetter("bound"),
    "limiter": operator.attrgetter("limiter"),
    "borderline": operator.attrgetter("borderline"),
    "pipe": operator.attrgetter("pipe"),
    "pipe_pct": operator.attrgetter("pipe_pct"),
    "tensor": operator.attrgetter("tensor"),
    "why": operator.attrgetter("why"),
    "estimated_gain_pct": operator.attrgetter("estimated_gain_pct"),
    "stalls": lambda k: [s.to_json() for s in k.stalls],
    "ncu_rules": lambda k: [r.to_json() for r in k.ncu_rules],
    "findings": lambda k: [f.to_json() for f in k.findings],
    "not_evaluated": lambda k: [n.to_json() for n in k.not_evaluated],
    "decision_path": lambda k: [s.to_json() for s in k.path],
    "metrics": operator.attrgetter("display_metrics"),
    "chart": operator.attrgetter("chart_metrics"),
    "roofline": lambda k: k.roofline.to_json() if k.roofline else None,
    "process": lambda k: {"id": k.process_id, "name": k.process_name},
    "stream": operator.attrgetter("stream"),
    "where": lambda k: k.where.to_json() if k.where is not None else None,
    "source_counters": operator.attrgetter("source_counters"),
    "next_step": lambda k: k.next_step.to_json() if k.next_step is not None else None,
}
# Its record in the diagnosis document (v3 and v4): the v2 record, then what v2 did not hold: the memory levels
# its charts lack, and what 'compare' reads besides it.
DOCUMENT = {
    **RECORD,
    "level_gaps": lambda k: [g.to_json() for g in k.level_gaps],
    "compared": _compared,
    "effects": lambda k: k.effects.to_json() if k.effects is not None else None,
}


@dataclass(frozen=True)
class SourceInfo:
    """The report's facts a reviewer needs to trust its numbers, in one record: what was profiled, on
    which GPU, how ncu ran (its clock and cache control read from the recorded command line), the SM
    clock while it measured. Every format shows these fields; none reconciles them."""

    path: str
    kind: str
    ncu_version: str | None
    device: str | None
    compute_capability: str | None
    command_line: str | None = None
    sha256: str | None = None
    # ncu's --clock-control / --cache-control as run ("base (ncu default)" where the command line gives none);
    # None: the report recorded no command line.
    clock_control: str | None = None
    cache_control: str | None = None
    # ncu 2025.3 records no driver version among a launch's metrics nor in CSV exports: None, not a guess.
    driver: str | None = None
    sm_clock_mhz: float | None = None  # the launches' median SM clock while profiled

    def to_json(self) -> dict:
        return {"path": self.path, "kind": self.kind, "ncu_version": self.ncu_version, "device": self.device,
                "compute_capability": self.compute_capability}

    def facts(self) -> dict:
        """The rest of its fields (the diagnosis document v3 carries them apart from v2's 'source')."""
        return {"command_line": self.command_line, "sha256": self.sha256, "clock_control": self.clock_control,
                "cache_control": self.cache_control, "driver": self.driver, "sm_clock_mhz": self.sm_clock_mhz}


# A report's "fix first" list: at most this many kernels, each saving at least this share (%) of the profile.
FIX_FIRST = 5
FIX_FIRST_MIN_SAVES_PCT = 0.5


@dataclass(frozen=True)
class Diagnosis(Displayed):
    """The verdict on a whole Nsight Compute report: a KernelVerdict per launch and what could not be evaluated;
    made by :func:`~ncuwrap.kernel.diagnosis.diagnose_profile`, drawn by the renderers."""
    source: SourceInfo
    rules_path: str
    rules_version: int
    rules_name: str
    kernels: "tuple[KernelVerdict, ...] | LaunchVerdicts"
    # Every rule not evaluated on some launch, and one way to collect what they read; None: all evaluated.
    reprofile: Reprofile | None = None
    # profile --top: the whole program's GPU time (nsys) and the part the profiled kernels cover.
    coverage: "Coverage | None" = None
    # Said once when no launch has per-instruction counters and a rule would point at lines with them.
    lines_hint: str | None = None
    # A bundled lesson's stop line (ncuwrap.bundled.stopline.StopLine): the profiled variant's
    # uninstrumented speed against the copy ceiling or the library; None outside bundled runs.
    stop_line: "StopLine | None" = None
    # How the report was read, where it is worth a line (launches NVIDIA's reader read: Profile.fallback).
    notes: tuple[str, ...] = ()
    # The report's columns the verdicts were read from (ncuwrap.kernel.launch_records.RecordColumns): the
    # document's launch records are shared by them, without making each whole. None: made one at a time.
    columns: object = field(default=None, repr=False, compare=False)

    @property
    def processes(self) -> tuple[str, ...]:
        """The distinct processes whose launches the report holds (a process column when more than one)."""
        return tuple(dict.fromkeys(k.process_id for k in self.kernels if k.process_id is not None))

    @property
    def streams(self) -> tuple[str, ...]:
        """The distinct CUDA streams of its launches (a stream column when more than one)."""
        return tuple(dict.fromkeys(k.stream for k in self.kernels if k.stream is not None))

    @property
    def roles(self) -> dict[str, str]:
        """The rules' roles and the finding holding each, among the findings of its launches ({"stop": "at_roofline"})."""
        return {f.role: f.id for findings in column(self.kernels, "findings") for f in findings if f.role}

    @property
    def grouped(self) -> bool:
        """Some kernel was launched more than once: outputs show one row per kernel."""
        return len({k.name for k in self.kernels}) != len(self.kernels)

    def level_gaps(self) -> tuple[ReportLevelGap, ...]:
        """Each memory level some launch's charts lack (KernelVerdict.level_gaps), once for the report, with how many
        launches lack it: in the order of the levels, then of the launches."""
        counts: dict[LevelGap, int] = {}
        for gaps in column(self.kernels, "level_gaps"):
            for gap in gaps:
                counts[gap] = counts.get(gap, 0) + 1
        order = {level: i for i, (level, _, _) in enumerate(MEMORY_LEVELS)}
        return tuple(ReportLevelGap(g, n) for g, n in sorted(counts.items(), key=lambda item: order.get(item[0].level, len(order))))

    def to_json(self) -> dict:
        return {
            "schema": SCHEMA,
            "tool": {"name": "ncuwrap", "version": __version__},
            "source": self.source.to_json(),
            "rules": {"path": self.rules_path, "version": self.rules_version, "name": self.rules_name},
            "facts": self.source.facts(),
            "roles": self.roles,
            "kernels": self._launch_records(),
            "ranking": [r.to_json() for r in self.ranking()],
            "groups": [g.to_json() for g in self.groups()],
            "reprofile": self.reprofile.to_json() if self.reprofile else None,
            "lines_hint": self.lines_hint,
            **({"coverage": self.coverage.to_json()} if self.coverage else {}),
            **({"stop_line": self.stop_line.to_json()} if self.stop_line else {}),
            **({"notes": list(self.notes)} if self.notes else {}),
        }

    def _launch_records(self) -> list[dict]:
        """The document's launches (v4): by the report's columns where the verdicts were read from them, else
        each launch's whole record one at a time (never all whole at once)."""
        shared = self.columns.shared(self.kernels) if self.columns is not None else None
        return shared if shared is not None else share_launches(k.document() for k in self.kernels)

    def __repr__(self) -> str:
        """One line (the whole result is in its fields, its report in ``ncuwrap.render_result``): the report, how
        many launches, and the kernel with the most time with its verdict and headline."""
        groups = self.groups()
        if not groups:
            return f"<Diagnosis {short_path(self.source.path)}: no launches>"
        top = groups[0].longest
        head = f", {top.headline.id} ({top.headline.severity})" if top.headline else ""
        return (f"<Diagnosis {short_path(self.source.path)}: {plural(len(self.kernels), 'launch', 'launches')} of "
                f"{plural(len(groups), 'kernel')}; most time: {short(top.name, 40)}: {top.verdict_label}{head}>")

    def to_frame(self):
        """One row per launch (pandas): what the JSON says of it, flat: verdict, limiter, pipe, the gain
        fixing it would buy, its findings by severity, its next step, and the rules' display metrics."""
        import pandas as pd

        rows = []
        for k in self.kernels:
            head = k.headline
            rows.append({
                "id": k.id, "kernel": k.name, "display_name": k.display_name, "grid": k.grid, "block": k.block, "duration_ns": k.duration_ns,
                "bound": k.bound, "limiter": k.limiter, "pipe": k.pipe, "verdict": k.verdict_label, "borderline": k.borderline,
                "estimated_gain_pct": k.estimated_gain_pct, "headline": head.id if head else None, "severity": head.severity if head else None,
                "findings": [f.id for f in k.findings], "not_evaluated": [n.rule for n in k.not_evaluated],
                "next_step": k.next_step.id if k.next_step is not None else None, "process": k.process_id, "stream": k.stream,
                **{name: value for name, value in k.display_metrics.items() if not isinstance(value, (dict, list))},
            })
        columns = ["id", "kernel", "display_name", "grid", "block", "duration_ns", "bound", "limiter", "pipe", "verdict", "borderline",
                   "estimated_gain_pct", "headline", "severity", "findings", "not_evaluated", "next_step", "process", "stream"]
        return pd.DataFrame(rows, columns=list(dict.fromkeys(columns + [c for r in rows for c in r])))

    def by_time(self) -> list[KernelVerdict]:
        return sorted(self.kernels, key=lambda k: -(k.duration_ns or 0.0))

    def sections(self, detail: int, groups: list["KernelGroup"] | None = None) -> frozenset[int]:
        """The launch IDs given a section of their own in a report of many launches: each kernel's
        longest launch (most total time first, KERNEL_SECTIONS at most) before any kernel's second
        launch, then the longest launches left, up to ``detail`` sections in all."""
        groups = self.groups() if groups is None else groups
        chosen = [g.longest.id for g in groups[:KERNEL_SECTIONS]]
        picked = set(chosen)
        for k in self.by_time():
            if len(chosen) >= detail:
                break
            if k.id not in picked:
                chosen.append(k.id)
                picked.add(k.id)
        return frozenset(chosen)

    @functools.cached_property
    def total_ns(self) -> float:
        # Once per diagnosis: a report's share of each of 100,000 launches reads it 100,000 times.
        return sum(d or 0.0 for d in column(self.kernels, "duration_ns"))

    def share_pct(self, launches) -> float | None:
        """The share (%) of the profiled time (ncu's summed durations) that ``launches`` take; None when
        no launch has a duration, or one of a single launch without it."""
        launches = list(launches)
        total = self.total_ns
        if not total or (len(launches) == 1 and launches[0].duration_ns is None):
            return None
        return 100.0 * sum(k.duration_ns or 0.0 for k in launches) / total

    def fix_first(self, limit: int = FIX_FIRST) -> list["Priority"]:
        """The ranking cut to the kernels whose fix saves a visible share of the profile; none for a
        report of one launch outside a program's time (nothing to rank it against)."""
        if len(self.kernels) < 2 and self.coverage is None:
            return []
        return [p for p in self.ranking() if (p.saves_pct or 0) >= FIX_FIRST_MIN_SAVES_PCT][:limit]

    def groups(self) -> list["KernelGroup"]:
        """The launches grouped by kernel name, most total time first: 200 launches of one kernel are
        one group, and no other kernel is pushed out of a short summary. Each group's statistics
        (total, median, min, max of ncu's durations) are computed here, once; outputs only format them."""
        kernels = self.kernels
        names, durations = column(kernels, "name"), column(kernels, "duration_ns")
        labels = list(map(verdict_label, column(kernels, "bound"), column(kernels, "pipe"), column(kernels, "limiter")))
        by_name: dict[str, list[int]] = {}
        for i in sorted(range(len(names)), key=[-(d or 0.0) for d in durations].__getitem__):  # by_time's order
            by_name.setdefault(names[i], []).append(i)
        total = self.total_ns
        groups = []
        for name, at in by_name.items():
            ns = sum(durations[i] or 0.0 for i in at)
            known = [durations[i] for i in at if durations[i] is not None]
            verdicts: dict[str, int] = {}
            for i in at:
                verdicts[labels[i]] = verdicts.get(labels[i], 0) + 1
            groups.append(KernelGroup(name=name, launches=_picked(kernels, at), total_ns=ns,
                                      share_pct=clean(100.0 * ns / total) if total else None,
                                      verdicts=tuple(sorted(verdicts.items(), key=lambda kv: -kv[1])),
                                      median_ns=clean(statistics.median(known)) if known else None,
                                      min_ns=min(known) if known else None, max_ns=max(known) if known else None))
        return sorted(groups, key=lambda g: -g.total_ns)

    def ranking(self) -> list["Priority"]:
        """Kernels by what fixing them buys the whole profile: estimated gain x share of the time (of the
        program's GPU time measured by nsys when there is a coverage, else of the profiled time)."""
        kernels = self.kernels
        ids, durations, gains = column(kernels, "id"), column(kernels, "duration_ns"), column(kernels, "estimated_gain_pct")
        if self.coverage is not None:
            shares = [self.coverage.share_of(i) for i in ids]
        else:
            total = sum(d or 0.0 for d in durations)  # summed in order, as a reader would
            shares = [100.0 * (d or 0.0) / total for d in durations] if total else [None] * len(durations)
        # Cleaned by whole columns (numbers.clean_all gives what clean() gives for each).
        share = np.array([np.nan if x is None else x for x in shares], dtype=float)
        gain = np.array([np.nan if g is None else g for g in gains], dtype=float)
        out = []
        for i, name, findings, gain_pct, share_pct, saves_pct in zip(ids, column(kernels, "name"), column(kernels, "findings"), gains, clean_all(share),
                                                                      clean_all(share * gain / 100.0)):
            headline = headline_of(findings)
            out.append(Priority(id=i, name=name, share_pct=share_pct, gain_pct=gain_pct, saves_pct=saves_pct,
                                headline=headline.id if headline else None))
        return sorted(out, key=lambda p: -(p.saves_pct or 0.0))


# How the reports meant for people (HTML, Markdown) show many launches; the JSON document lists every one.
KERNEL_SECTIONS = 50  # kernels given a section of their own, most total time first
LAUNCHES_LISTED = 20  # a kernel's launches listed: past this many, the longest and those that differ
OUTLIER_FACTOR = 2.0  # an ncu time this many times the median (or a fraction of it) differs


@dataclass(frozen=True)
class KernelGroup:
    """Every launch of one kernel: the longest first."""

    name: str
    launches: "tuple[KernelVerdict, ...] | LaunchVerdicts"  # the longest first
    total_ns: float
    share_pct: float | None
    verdicts: tuple[tuple[str, int], ...]  # (verdict label, launches), most launches first
    # ncu's (instrumented) durations of the launches; None when none of them has one.
    median_ns: float | None = None
    min_ns: float | None = None
    max_ns: float | None = None

    @property
    def longest(self) -> KernelVerdict:
        return self.launches[0]

    @property
    def count(self) -> int:
        return len(self.launches)

    @property
    def processes(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(p for p in self._in_order("process_id") if p is not None))

    @property
    def streams(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(s for s in self._in_order("stream") if s is not None))

    def _in_order(self, name: str) -> list:
        """Its launches' ``name`` in the order they ran (what in_order's verdicts hold, read by columns)."""
        ids, values = column(self.launches, "id"), column(self.launches, name)
        return [values[i] for i in sorted(range(len(ids)), key=ids.__getitem__)]

    def in_order(self) -> tuple[KernelVerdict, ...]:
        """Its launches in the order they ran (launch ID)."""
        return tuple(sorted(self.launches, key=lambda k: k.id))

    def listed(self, limit: int = LAUNCHES_LISTED) -> tuple[KernelVerdict, ...]:
        """The launches a report lists, in the order they ran: all of them up to ``limit``; past it, the
        longest and those that differ from the rest (another verdict than most launches', or an ncu
        time more than OUTLIER_FACTOR off the median, farthest first), ``limit`` at most."""
        if self.count <= limit:
            return self.in_order()
        typical = self.verdicts[0][0]
        median = self.median_ns

        def off(k: KernelVerdict) -> float:  # how far from the median, as a factor (1: at it)
            if not median or not k.duration_ns:
                return 1.0
            return max(k.duration_ns / median, median / k.duration_ns)

        odd = sorted((k for k in self.launches if k.verdict_label != typical), key=lambda k: -off(k))
        far = sorted((k for k in self.launches if off(k) > OUTLIER_FACTOR), key=lambda k: -off(k))
        chosen = list({k.id: k for k in [self.longest, *odd, *far]}.values())[:limit]
        return tuple(sorted(chosen, key=lambda k: k.id))

    def to_json(self) -> dict:
        return {"name": self.name, "launches": self.count, "launch_ids": self._in_order("id"),
                "total_ns": self.total_ns, "median_ns": self.median_ns, "min_ns": self.min_ns, "max_ns": self.max_ns,
                "share_pct": self.share_pct, "verdicts": [{"verdict": label, "launches": n} for label, n in self.verdicts],
                "processes": list(self.processes), "streams": list(self.streams)}


@dataclass(frozen=True, slots=True)
class Priority:
    """'Fix this first': a kernel's share of the profiled time, its estimated gain, and the product,
    the share of the whole profile's time fixing it would save."""

    id: int
    name: str
    share_pct: float | None
    gain_pct: float | None
    saves_pct: float | None
    headline: str | None

    def to_json(self) -> dict:
        return {"id": self.id, "name": self.name, "share_pct": self.share_pct, "gain_pct": self.gain_pct,
                "saves_pct": self.saves_pct, "headline": self.headline}


@dataclass(frozen=True)
class KernelTime:
    """Every launch of one kernel with one launch configuration, timed by nsys (uninstrumented)."""

    name: str  # nsys's short name (the function)
    demangled: str
    mangled: str
    grid: tuple[int, ...] | None
    block: tuple[int, ...] | None
    launches: int
    total_ns: float
    median_ns: float
    min_ns: float
    max_ns: float
    share_pct: float  # of the capture's summed kernel time
    launched_from: object = None  # ncuwrap.timeline.model.LaunchedFrom: its op and Python line (None: the capture holds no ops)

    def to_json(self) -> dict:
        return {"name": self.name, "demangled": self.demangled, "mangled": self.mangled,
                "grid": list(self.grid) if self.grid else None, "block": list(self.block) if self.block else None,
                "launches": self.launches, "total_ns": clean(self.total_ns), "median_ns": clean(self.median_ns),
                "min_ns": clean(self.min_ns), "max_ns": clean(self.max_ns), "share_pct": clean(self.share_pct),
                "launched_from": self.launched_from.to_json() if self.launched_from is not None else None}


@dataclass(frozen=True)
class KernelTimes:
    """A capture's kernels, grouped and ranked."""

    groups: tuple[KernelTime, ...]  # most total time first
    total_ns: float  # summed kernel time (concurrent kernels count in full)
    launches: int
    scope: str = "capture"  # "steady steps": the kernels launched in the steady steps only (ncuwrap.timeline.steps)


@dataclass(frozen=True)
class CoveredKernel:
    """One profiled kernel's place in the whole program: its nsys group (every launch with its launch
    configuration, uninstrumented) and the profiled launch(es) of it in the diagnosis."""

    time: KernelTime
    rank: int  # 1 = the most GPU time in the program
    launch_ids: tuple[int, ...]

    def to_json(self) -> dict:
        return {"rank": self.rank, "launch_ids": list(self.launch_ids), **self.time.to_json()}


@dataclass(frozen=True)
class Coverage:
    """profile --top N: what the nsys run measured of the whole program, and the share of its GPU time
    the profiled kernels cover."""

    capture: str  # the nsys capture (its SQLite export)
    top: int  # N asked for
    nth_launch: int  # which launch of each kernel ncu profiled
    gpu_ns: float  # the program's summed kernel time
    launches: int
    distinct: int  # kernel groups (name and launch configuration)
    kernels: tuple[CoveredKernel, ...]  # the profiled groups, by GPU time
    missed: tuple[KernelTime, ...] = ()  # top groups ncu did not profile (e.g. fewer launches under ncu)
    scope: str = "capture"  # "steady steps": the GPU time is the steady steps' (warm-up and start-up left out)

    @property
    def covered_pct(self) -> float:
        return sum(k.time.share_pct for k in self.kernels)

    def share_of(self, launch_id: int) -> float | None:
        """The program GPU-time share of the group a profiled launch belongs to (split evenly when
        several launches of one group were profiled)."""
        for k in self.kernels:
            if launch_id in k.launch_ids:
                return k.time.share_pct / len(k.launch_ids)
        return None

    def of(self, launch_id: int) -> CoveredKernel | None:
        return next((k for k in self.kernels if launch_id in k.launch_ids), None)

    def to_json(self) -> dict:
        return {"capture": self.capture, "scope": self.scope, "top": self.top, "nth_launch": self.nth_launch, "gpu_ns": clean(self.gpu_ns),
                "launches": self.launches, "distinct_kernels": self.distinct, "covered_pct": clean(self.covered_pct),
                "kernels": [k.to_json() for k in self.kernels], "missed": [m.to_json() for m in self.missed]}
