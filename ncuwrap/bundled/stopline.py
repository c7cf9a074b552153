"""The stop line of a bundled lesson: how far the profiled variant is from what this GPU can do, from
an uninstrumented ``ncuwrap bench`` run (CUDA events, median over runs), never from ncu's duration.

A bandwidth lesson is judged against the measured copy ceiling (the manifest's basis: a copy of the
same bytes, or a large one): past ``stop_pct`` of it the access pattern has nothing left to give and
only fewer bytes go further. A lesson with a library doing the same job (cuBLAS, CUB) is judged
against the library's time. Either way the family's fastest variant doing the same job is named when
it goes further.
"""

from __future__ import annotations

from dataclasses import dataclass

from ncuwrap.bundled.report import BenchEntry, BenchReport
from ncuwrap.core.errors import InputError

# The seeds' rule: past ~90% of the copy ceiling (the minimum traffic moved at the best rate), stop.
STOP_PCT = 90.0
# A variant "goes further" when it is this much faster than the profiled one (well over the run-to-run
# spread of the bandwidth lessons, docs/benchmarks.md's results: a difference a reader can reproduce).
FASTER = 1.05


@dataclass(frozen=True)
class Further:
    """The family's fastest variant doing the same job, when it is faster than the profiled one."""

    variant: str
    median_ms: float
    pct: float | None  # of the same yardstick

    def to_json(self) -> dict:
        return {"variant": self.variant, "median_ms": self.median_ms, "pct": self.pct}


@dataclass(frozen=True)
class StopLine:
    """How far a profiled variant is from what this GPU can do (the copy ceiling or a library's time); from :func:`stop_line` on a bench report."""
    benchmark: str
    variant: str
    median_ms: float
    spread_pct: float
    runs: int
    measure: str  # "effective bandwidth" | "throughput" | "time"
    value: float | None  # GB/s or TFLOP/s
    unit: str  # "GB/s" | "TFLOP/s" | ""
    yardstick: str | None  # what the variant is judged against, in words; None: nothing to judge by
    yardstick_value: float | None  # its figure: GB/s of the ceiling, or the library's ms
    yardstick_unit: str  # "GB/s" | "ms" | ""
    pct: float | None  # % of the yardstick
    stop_pct: float
    decision: str  # "stop" | "go on" | "no yardstick"
    further: Further | None
    source: str  # the bench JSON read, or "measured for this run"

    def to_json(self) -> dict:
        return {"benchmark": self.benchmark, "variant": self.variant, "median_ms": self.median_ms, "spread_pct": self.spread_pct,
                "runs": self.runs, "measure": self.measure, "value": self.value, "unit": self.unit, "yardstick": self.yardstick,
                "yardstick_value": self.yardstick_value, "yardstick_unit": self.yardstick_unit, "pct": self.pct, "stop_pct": self.stop_pct,
                "decision": self.decision,
                "further": self.further.to_json() if self.further else None, "source": self.source}


def stop_line(report: BenchReport, benchmark: str, variant: str, *, source: str, stop_pct: float = STOP_PCT) -> StopLine:
    """The stop line of ``benchmark/variant`` from ``report``; InputError when the report lacks it."""
    entry = next((e for e in report.benchmarks if e.name == benchmark and e.variant == variant), None)
    if entry is None:
        raise InputError(f"{source}: no result for {benchmark}/{variant}; run 'ncuwrap bench {benchmark} -o FILE' and pass that file")
    pct, yardstick, figure, figure_unit = _judged(entry, report)
    same_job = [e for e in report.benchmarks if _same_job(e, entry) and e.verified and e.median_ms > 0]
    fastest = min(same_job, key=lambda e: e.median_ms, default=None)
    further = None
    if fastest is not None and fastest.variant != entry.variant and fastest.median_ms * FASTER <= entry.median_ms:
        further = Further(fastest.variant, fastest.median_ms, _judged(fastest, report)[0])
    decision = "no yardstick" if pct is None else ("stop" if pct >= stop_pct else "go on")
    if entry.gbps is not None and entry.peak == "dram":
        measure, value, unit = "effective bandwidth", entry.gbps, "GB/s"
    elif entry.tflops is not None:
        measure, value, unit = "throughput", entry.tflops, "TFLOP/s"
    else:
        measure, value, unit = "time", None, ""
    return StopLine(benchmark=benchmark, variant=variant, median_ms=entry.median_ms, spread_pct=entry.spread_pct, runs=len(entry.runs),
                    measure=measure, value=value, unit=unit, yardstick=yardstick, yardstick_value=figure, yardstick_unit=figure_unit, pct=pct,
                    stop_pct=stop_pct,
                    decision=decision, further=further, source=source)


def _judged(entry: BenchEntry, report: BenchReport) -> tuple[float | None, str | None, float | None, str]:
    """% of the yardstick that judges ``entry``, the yardstick in words, and its figure."""
    if entry.peak == "dram" and entry.pct_of_ceiling is not None and entry.gbps:
        basis = entry.ceiling_basis or "large"
        gbps = entry.gbps / (entry.pct_of_ceiling / 100.0)
        words = "the copy ceiling at the same bytes" if basis == "same_bytes" else "the copy ceiling (2 x 512 MiB)"
        return entry.pct_of_ceiling, words, gbps, "GB/s"
    lib = entry.library
    if lib is not None and lib.available and lib.median_ms and entry.median_ms > 0:
        return 100.0 * lib.median_ms / entry.median_ms, f"the library ({lib.description})", lib.median_ms, "ms"
    return None, None, None, ""


def _same_job(other: BenchEntry, entry: BenchEntry) -> bool:
    """Another variant of the family doing the same work: the same bytes and FLOPs, and the same library
    equivalent (a copy kept as a transpose's ceiling has none, a tensor-core GEMM has another)."""
    lib = lambda e: e.library.name if e.library is not None else None  # noqa: E731
    return (other.name == entry.name and other.bytes == entry.bytes and other.flops == entry.flops and lib(other) == lib(entry)
            and not other.kernel.startswith("[no kernel"))
