"""The ``ncuwrap.bench/v1`` report: typed records, written by ``ncuwrap bench``, read by ``ncuwrap compare``.

This module owns the format. :class:`BenchReport` and its parts are what :mod:`ncuwrap.bundled.bench`
builds; :meth:`BenchReport.to_json` is the document it writes (key order included) and :func:`read` turns
a file back into the same records (``read(p).to_json()`` is the file's document again). A file that is
not such a report is a one-line :class:`InputError` naming it and the place in it.

:func:`load_bench` is compare's view of a report: the uninstrumented median of each kernel.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ncuwrap.core import safejson, schema
from ncuwrap.core.errors import InputError
from ncuwrap.core.fileio import check_file
from ncuwrap.core.kernel_names import function_name

SCHEMA = "ncuwrap.bench/v1"
TOOL = "ncuwrap"
_FIX = "give the JSON written by 'ncuwrap bench'"
# 'ncuwrap bench' writes a few kilobytes; medians outside 1 ns .. one day are no kernel's time (and
# their ratios overflow what the outputs can hold).
MAX_BYTES = 16 << 20
MEDIAN_RANGE_MS = (1e-6, 86_400_000.0)

Number = int | float


@dataclass(frozen=True)
class RunTiming:
    """One process run of a variant: its timed launches' median, fastest and slowest (ms)."""

    median_ms: float
    min_ms: float
    max_ms: float

    def to_json(self) -> dict[str, Any]:
        return {"median_ms": self.median_ms, "min_ms": self.min_ms, "max_ms": self.max_ms}


@dataclass(frozen=True)
class Ceiling:
    """A measured copy ceiling: the faster copy variant's bandwidth, at ``bytes`` moved per copy run.

    ``bytes`` is None in reports written before the ceiling was measured at several sizes (always the
    large size then)."""

    gbps: float
    source: str  # "copy_ceiling/<variant>"
    bytes: int | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"gbps": self.gbps, "source": self.source}
        if self.bytes is not None:
            out["bytes"] = self.bytes
        return out


@dataclass(frozen=True)
class LibraryResult:
    """The library doing the same job, timed beside the variant (or why it was not)."""

    name: str
    available: bool
    note: str | None = None  # why it is not available
    description: str | None = None
    cupy_version: str | None = None
    median_ms: float | None = None
    min_ms: float | None = None
    max_ms: float | None = None
    library_speedup: float | None = None  # the variant's median / the library's
    advice: str | None = None

    def to_json(self) -> dict[str, Any]:
        if not self.available:
            return {"name": self.name, "available": False, "note": self.note}
        return {
            "name": self.name,
            "available": True,
            "description": self.description,
            "cupy_version": self.cupy_version,
            "median_ms": self.median_ms,
            "min_ms": self.min_ms,
            "max_ms": self.max_ms,
            "library_speedup": self.library_speedup,
            "advice": self.advice,
        }


@dataclass(frozen=True)
class ExpectedVerdict:
    """What the manifest expects ncuwrap to say about the variant."""

    bound: str
    limiter: str | None
    findings: tuple[str, ...]
    timeline: str | None

    def to_json(self) -> dict[str, Any]:
        return {"bound": self.bound, "limiter": self.limiter, "findings": list(self.findings), "timeline": self.timeline}


@dataclass(frozen=True)
class BenchEntry:
    """One variant's result: verification, timings over the process runs, and what they mean."""

    name: str  # the benchmark
    variant: str
    kernel: str  # compare matches on it; "[no kernel: bench/variant]" for a variant without one
    verified: bool
    max_error: float | None
    checked_sizes: tuple[str, ...]
    sizes: Mapping[str, int]
    bytes: Number
    flops: Number
    peak: str
    runs: tuple[RunTiming, ...]
    median_ms: float  # median of the run medians
    min_ms: float
    max_ms: float
    spread_pct: float
    gbps: float | None
    tflops: float | None
    pct_of_peak: float | None
    pct_of_ceiling: float | None
    library: LibraryResult | None
    extra: Mapping[str, float]
    expected: ExpectedVerdict
    # Fair ceilings (absent in older reports): which ceiling pct_of_ceiling uses ("same_bytes" or
    # "large"), and the percentage of each. Written only for variants compared with a ceiling.
    ceiling_basis: str | None = None
    pct_of_ceiling_same_bytes: float | None = None
    pct_of_ceiling_large: float | None = None

    @property
    def label(self) -> str:
        return f"{self.name}/{self.variant}"

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "variant": self.variant,
            "kernel": self.kernel,
            "verified": self.verified,
            "max_error": self.max_error,
            "checked_sizes": list(self.checked_sizes),
            "sizes": dict(self.sizes),
            "bytes": self.bytes,
            "flops": self.flops,
            "peak": self.peak,
            "runs": [r.to_json() for r in self.runs],
            "median_ms": self.median_ms,
            "min_ms": self.min_ms,
            "max_ms": self.max_ms,
            "spread_pct": self.spread_pct,
            "gbps": self.gbps,
            "tflops": self.tflops,
            "pct_of_peak": self.pct_of_peak,
            "pct_of_ceiling": self.pct_of_ceiling,
            **(
                {
                    "ceiling_basis": self.ceiling_basis,
                    "pct_of_ceiling_same_bytes": self.pct_of_ceiling_same_bytes,
                    "pct_of_ceiling_large": self.pct_of_ceiling_large,
                }
                if self.ceiling_basis is not None
                else {}
            ),
            "library": self.library.to_json() if self.library else None,
            "extra": dict(self.extra),
            "expected": self.expected.to_json(),
        }


@dataclass(frozen=True)
class BenchReport:
    """An ``ncuwrap bench`` run: the machine, the copy ceiling and every variant's result.

    ``ceiling`` is the copy ceiling at copy_ceiling's manifest size (the large one); ``ceilings`` are
    the same measurement at the bytes moved by the variants judged (one per distinct size; empty in
    older reports and when no variant needs one)."""

    tool_version: str
    env: Mapping[str, Any]  # what the binaries printed about the GPU, plus arch, flags, clocks, peaks, runs
    ceiling: Ceiling | None
    benchmarks: tuple[BenchEntry, ...]
    ceilings: tuple[Ceiling, ...] = ()

    def ceiling_at(self, nbytes: float) -> Ceiling | None:
        """The same-bytes ceiling measured for ``nbytes`` moved (None when there is none)."""
        return next((c for c in self.ceilings if c.bytes == nbytes), None)

    def wrong(self) -> list[str]:
        """``bench/variant`` of every result that did not match its CPU reference."""
        return [b.label for b in self.benchmarks if not b.verified]

    def to_json(self) -> dict[str, Any]:
        return {
            "schema": SCHEMA,
            "tool": {"name": TOOL, "version": self.tool_version},
            "env": dict(self.env),
            "ceiling": self.ceiling.to_json() if self.ceiling else None,
            **({"ceilings": [c.to_json() for c in self.ceilings]} if self.ceilings else {}),
            "benchmarks": [b.to_json() for b in self.benchmarks],
        }


def read(path: str | Path) -> BenchReport:
    """Read a report written by ``ncuwrap bench``; InputError naming the file when it is not one."""
    path = Path(path)
    # A FIFO or device would block or never end; 'ncuwrap bench' writes a few kilobytes.
    check_file(path, folder_fix=_FIX, missing=f"no such file; {_FIX}", empty_fix=_FIX, max_bytes=MAX_BYTES)
    try:
        doc = safejson.loads(path.read_text(encoding="utf-8"))
    except safejson.Refused as exc:
        raise InputError(f"{path}: {exc}; {_FIX}") from None
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise InputError(f"{path}: not a readable JSON file ({str(exc).splitlines()[0]}); {_FIX}") from None
    found = doc.get("schema") if isinstance(doc, dict) else None
    if found != SCHEMA:
        raise InputError(f"{path}: not an ncuwrap bench result (schema {found!r}, expected {SCHEMA!r}); write one with 'ncuwrap bench'")
    top = schema.document(doc, str(path), InputError, hint=_FIX).mapping({"schema", "tool", "env", "ceiling", "benchmarks"}, {"ceilings"})
    ceiling = top["ceiling"]
    ceilings = () if not top.has("ceilings") else tuple(
        _ceiling(node, need_bytes=True) for node in top["ceilings"].items(what="a list of copy ceilings")
    )
    return BenchReport(
        tool_version=top["tool"].mapping({"name", "version"})["version"].text(),
        env={key: node.value for key, node in top["env"].pairs()},
        ceiling=None if ceiling.absent else _ceiling(ceiling),
        benchmarks=tuple(_entry(node) for node in top["benchmarks"].items(what="a list of results")),
        ceilings=ceilings,
    )


def _ceiling(node: schema.Node, need_bytes: bool = False) -> Ceiling:
    node.mapping({"gbps", "source", "bytes"} if need_bytes else {"gbps", "source"}, set() if need_bytes else {"bytes"})
    gbps = node["gbps"].number()
    if not gbps > 0:
        raise node["gbps"].fail(f"expected a positive bandwidth in GB/s, got {gbps!r}; {_FIX}")
    return Ceiling(
        gbps=gbps,
        source=node["source"].text(),
        bytes=None if node["bytes"].absent else node["bytes"].integer(minimum=1),
    )


_ENTRY_KEYS = {
    "name", "variant", "kernel", "verified", "max_error", "checked_sizes", "sizes", "bytes", "flops", "peak", "runs",
    "median_ms", "min_ms", "max_ms", "spread_pct", "gbps", "tflops", "pct_of_peak", "pct_of_ceiling", "library", "extra",
    "expected",
}
_ENTRY_OPTIONAL = {"ceiling_basis", "pct_of_ceiling_same_bytes", "pct_of_ceiling_large"}
_BASES = ("same_bytes", "large")
_LIBRARY_KEYS = {"description", "cupy_version", "median_ms", "min_ms", "max_ms", "library_speedup", "advice", "note"}


def _entry(node: schema.Node) -> BenchEntry:
    kernel = node.value.get("kernel") if isinstance(node.value, dict) else None
    if isinstance(kernel, str) and kernel:
        node = node.at(f"{node.where} ({kernel})")
    node.mapping(_ENTRY_KEYS, _ENTRY_OPTIONAL)
    basis = None if node["ceiling_basis"].absent else node["ceiling_basis"].text()
    if basis is not None and basis not in _BASES:
        raise node["ceiling_basis"].fail(f"expected one of {', '.join(_BASES)}, got {basis!r}; {_FIX}")
    median = node["median_ms"].number()
    if not median > 0:
        raise node["median_ms"].fail(f"expected a positive time in ms, got {median!r}; {_FIX}")
    if not MEDIAN_RANGE_MS[0] <= median <= MEDIAN_RANGE_MS[1]:
        raise node["median_ms"].fail(f"{median:g} ms is not a kernel's time (1 ns to one day); {_FIX}")
    nullable = {key: node[key].number(nullable=True) for key in ("max_error", "gbps", "tflops", "pct_of_peak", "pct_of_ceiling")}
    expected = node["expected"].mapping({"bound", "limiter", "findings"}, {"timeline"})
    return BenchEntry(
        name=node["name"].text(),
        variant=node["variant"].text(),
        kernel=node["kernel"].text(),
        verified=node["verified"].boolean(),
        checked_sizes=node["checked_sizes"].texts(),
        sizes={key: size.integer(minimum=1) for key, size in node["sizes"].pairs()},
        bytes=node["bytes"].number(),
        flops=node["flops"].number(),
        peak=node["peak"].text(),
        runs=tuple(_run(run) for run in node["runs"].items(what="a list of per-run timings")),
        median_ms=median,
        min_ms=node["min_ms"].number(),
        max_ms=node["max_ms"].number(),
        spread_pct=node["spread_pct"].number(),
        library=None if node["library"].absent else _library(node["library"]),
        extra={key: value.number() for key, value in node["extra"].pairs()},
        expected=ExpectedVerdict(
            bound=expected["bound"].text(),
            limiter=None if expected["limiter"].absent else expected["limiter"].text(),
            findings=expected["findings"].texts(),
            timeline=None if expected["timeline"].absent else expected["timeline"].text(),
        ),
        ceiling_basis=basis,
        pct_of_ceiling_same_bytes=node["pct_of_ceiling_same_bytes"].number(nullable=True),
        pct_of_ceiling_large=node["pct_of_ceiling_large"].number(nullable=True),
        **nullable,
    )


def _run(node: schema.Node) -> RunTiming:
    node.mapping({"median_ms", "min_ms", "max_ms"})
    return RunTiming(node["median_ms"].number(), node["min_ms"].number(), node["max_ms"].number())


def _library(node: schema.Node) -> LibraryResult:
    node.mapping({"name", "available"}, _LIBRARY_KEYS)

    def text(key: str) -> str | None:
        return None if node[key].absent else node[key].text()

    return LibraryResult(
        name=node["name"].text(),
        available=node["available"].boolean(),
        note=text("note"),
        description=text("description"),
        cupy_version=text("cupy_version"),
        median_ms=node["median_ms"].number(nullable=True),
        min_ms=node["min_ms"].number(nullable=True),
        max_ms=node["max_ms"].number(nullable=True),
        library_speedup=node["library_speedup"].number(nullable=True),
        advice=text("advice"),
    )


# ---------------------------------------------------------------------------------------------- compare's view


@dataclass(frozen=True)
class Timing:
    """An uninstrumented timing of one kernel, from a bench JSON."""

    median_ms: float
    source: str  # the bench file
    benchmark: str  # the entry's name (and variant)

    def to_json(self) -> dict:
        return {"median_ms": self.median_ms, "source": self.source, "benchmark": self.benchmark}


@dataclass(frozen=True)
class BenchTimings:
    """The kernel timings of one ``ncuwrap.bench/v1`` file, looked up by kernel name."""

    path: str
    entries: tuple[BenchEntry, ...]

    def find(self, kernel) -> tuple[Timing | None, str | None]:
        """The timing of ``kernel`` (anything with ``name`` and ``display_name``, e.g. a KernelVerdict),
        or None and why (no entry, several entries)."""
        names = {kernel.name, kernel.display_name}
        hits = [e for e in self.entries if e.kernel in names or function_name(e.kernel) == kernel.name]
        if not hits:
            return None, f"{self.path}: no benchmark of kernel {kernel.name}"
        if len({e.median_ms for e in hits}) > 1:
            return None, f"{self.path}: {len(hits)} benchmarks of kernel {kernel.name} (ambiguous)"
        e = hits[0]
        return Timing(float(e.median_ms), self.path, f"{e.name} / {e.variant}"), None


def load_bench(path: str | Path) -> BenchTimings:
    """The kernel timings of an ``ncuwrap.bench/v1`` JSON (see :func:`read`)."""
    return BenchTimings(str(path), read(path).benchmarks)
