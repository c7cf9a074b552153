"""``ncuwrap bench``: the uninstrumented baseline of the bundled benchmarks, as an ``ncuwrap.bench/v1`` report
(:class:`~ncuwrap.bundled.report.BenchReport`).

For every variant: R separate process runs of its binary (each verifying, warming up and timing N
launches with CUDA events), median/min/max per run and across runs, effective GB/s and TFLOP/s from the
manifest's formulas, % of the device's spec peak, % of the measured copy ceiling (the faster of a tuned
copy kernel and device-to-device cudaMemcpy), and, where a library does the same job, the library's time.

Fair ceilings: the copy ceiling is measured at copy_ceiling's manifest size (the "large" ceiling, 2 x 512
MiB) and again at the bytes each bandwidth variant moves (the "same bytes" ceiling, where the same fixed
launch cost weighs); both percentages are reported and the manifest's ``ceiling`` says which judges.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
import dataclasses
from dataclasses import dataclass
from typing import Any

from ncuwrap.core.version import __version__
from ncuwrap.core import nvidia_smi
from ncuwrap.bundled import library as libmod
from ncuwrap.bundled.build import NVCC_FLAGS, NVCC_TAIL_FLAGS, BuildResult, build_many, detect_arch, normalize_arch
from ncuwrap.bundled.manifest import Benchmark, CeilingBasis, Manifest, Peak, Variant, load_manifest
from ncuwrap.bundled.peaks import SpecPeaks, spec_peaks
from ncuwrap.bundled.report import BenchEntry, BenchReport, Ceiling, ExpectedVerdict, LibraryResult
from ncuwrap.bundled.runner import BinaryRun, Summary, require_gpu, run_binary, summarize
from ncuwrap.core.errors import BenchError


class WrongResultError(BenchError):
    """A benchmark printed a result that does not match its CPU reference (exit code 1, like the binaries)."""

    exit_code = 1

CEILING_BENCHMARK = "copy_ceiling"

Progress = Callable[[str], None]


@dataclass(frozen=True)
class Metrics:
    """What one variant's median time means: its bandwidth or throughput and its share of the spec peak and of the copy ceiling (compute_metrics, for
    variant_entry)."""
    gbps: float | None
    tflops: float | None
    pct_of_peak: float | None
    pct_of_ceiling: float | None  # against the ceiling the manifest judges the variant by
    ceiling_basis: str | None = None  # set when the same-bytes ceiling was measured for the variant
    pct_of_ceiling_same_bytes: float | None = None
    pct_of_ceiling_large: float | None = None


def compute_metrics(
    variant: Variant,
    sizes: Mapping[str, int],
    median_ms: float,
    peaks: SpecPeaks,
    ceiling: Ceiling | None,
    same_bytes: Ceiling | None = None,
) -> Metrics:
    """Effective bandwidth and throughput of one run time, and how they compare with the peaks.

    ``ceiling`` is the large copy ceiling, ``same_bytes`` the one measured at this variant's bytes
    (None: not measured; then only the large one is used, as in reports before fair ceilings)."""
    seconds = median_ms * 1e-3
    nbytes = float(variant.bytes.evaluate(sizes))
    flops = float(variant.flops.evaluate(sizes))
    gbps = nbytes / seconds / 1e9 if nbytes > 0 and seconds > 0 else None
    tflops = flops / seconds / 1e12 if flops > 0 and seconds > 0 else None
    peak = peaks.for_kind(variant.peak)
    achieved = gbps if variant.peak is Peak.dram else tflops
    pct_peak = achieved / peak * 100.0 if achieved is not None and peak else None
    def pct(c: Ceiling | None) -> float | None:
        return gbps / c.gbps * 100.0 if variant.peak is Peak.dram and gbps is not None and c is not None and c.gbps > 0 else None

    large, same = pct(ceiling), pct(same_bytes)
    if same_bytes is None or variant.peak is not Peak.dram:
        return Metrics(gbps=gbps, tflops=tflops, pct_of_peak=pct_peak, pct_of_ceiling=large)
    judged = same if variant.ceiling is CeilingBasis.same_bytes else large
    return Metrics(
        gbps=gbps, tflops=tflops, pct_of_peak=pct_peak, pct_of_ceiling=judged,
        ceiling_basis=variant.ceiling.value, pct_of_ceiling_same_bytes=same, pct_of_ceiling_large=large,
    )


def ceiling_sizes(cbench: Benchmark, nbytes: float) -> dict[str, int]:
    """The copy_ceiling sizes whose copies move ``nbytes`` (its bytes formula is linear in its one size)."""
    if len(cbench.sizes) != 1:
        raise BenchError(f"{cbench.name}: the copy ceiling needs exactly one size to scale, has {', '.join(cbench.sizes)}")
    (name,) = cbench.sizes
    per_unit = float(cbench.variants[0].bytes.evaluate({name: 1}))
    return {name: max(1, round(nbytes / per_unit))}


def judged_bytes(bench: Benchmark, variants: Sequence[Variant], sizes: Mapping[str, int] | None) -> list[int]:
    """The distinct bytes moved by the bandwidth (``dram``) variants of ``bench`` that a ceiling judges."""
    at = bench.sizes_with(sizes)
    return sorted({int(v.bytes.evaluate(at)) for v in variants if v.peak is Peak.dram and float(v.bytes.evaluate(at)) > 0})


def ceiling_from_runs(bench: Benchmark, runs: Sequence[BinaryRun]) -> Ceiling:
    """The faster of the copy variants: median over runs of each, then the best."""
    best: Ceiling | None = None
    for variant in bench.variants:
        times = [run.result(variant.name).times_ms for run in runs if _has(run, variant.name)]
        if not times:
            continue
        sizes = dict(runs[0].result(variant.name).sizes) or dict(bench.sizes)
        summary = summarize(times)
        gbps = float(variant.bytes.evaluate(sizes)) / (summary.median_ms * 1e-3) / 1e9
        if best is None or gbps > best.gbps:
            best = Ceiling(gbps=gbps, source=f"{bench.name}/{variant.name}", bytes=int(variant.bytes.evaluate(sizes)))
    if best is None:
        raise BenchError(f"{bench.name}: no copy variant produced timings, so there is no ceiling")
    return best


def library_report(
    variant: Variant, sizes: Mapping[str, int], median_ms: float, warmup: int, iters: int, runs: int
) -> LibraryResult | None:
    """The library's time for the same job, and what it means for this variant."""
    if variant.library is None:
        return None
    timing = libmod.measure(variant.library, sizes, warmup, iters, runs)
    if timing is None:
        return LibraryResult(name=variant.library.value, available=False, note="CuPy is not installed: pip install ncuwrap[gpu]")
    lib_ms = timing.median_ms
    speedup = median_ms / lib_ms if lib_ms > 0 else None
    if speedup is None:
        advice = None
    elif speedup > 1.1:
        advice = f"the library is {speedup:.1f}x faster: use it"
    elif speedup < 1 / 1.1:
        advice = f"this kernel is {1 / speedup:.1f}x faster than the library"
    else:
        advice = "on par with the library"
    return LibraryResult(
        name=variant.library.value,
        available=True,
        description=timing.description,
        cupy_version=timing.version,
        median_ms=lib_ms,
        min_ms=min(timing.times_ms),
        max_ms=max(timing.times_ms),
        library_speedup=speedup,
        advice=advice,
    )


def variant_entry(
    bench: Benchmark,
    variant: Variant,
    runs: Sequence[BinaryRun],
    peaks: SpecPeaks,
    ceiling: Ceiling | None,
    library: LibraryResult | None,
    same_bytes: Mapping[int, Ceiling] | None = None,
) -> BenchEntry:
    """One element of the report's ``benchmarks`` list (``same_bytes``: ceilings by bytes moved)."""
    results = [run.result(variant.name) for run in runs]
    summary: Summary = summarize([r.times_ms for r in results])
    sizes = dict(results[0].sizes) or dict(bench.sizes)
    same = (same_bytes or {}).get(int(variant.bytes.evaluate(sizes)))
    m = compute_metrics(variant, sizes, summary.median_ms, peaks, ceiling, same)
    return BenchEntry(
        name=bench.name,
        variant=variant.name,
        # compare matches on this name; a variant without a kernel (cudaMemcpy) gets a label no kernel has
        kernel=results[0].kernel or f"[no kernel: {bench.name}/{variant.name}]",
        verified=all(r.verified for r in results),
        max_error=max((r.max_error for r in results if r.max_error is not None), default=None),
        checked_sizes=tuple(results[0].checked_sizes),
        sizes=sizes,
        bytes=variant.bytes.evaluate(sizes),
        flops=variant.flops.evaluate(sizes),
        peak=variant.peak.value,
        runs=summary.runs,
        median_ms=summary.median_ms, min_ms=summary.min_ms, max_ms=summary.max_ms, spread_pct=summary.spread_pct,
        **dataclasses.asdict(m),  # gbps, tflops, pct_of_peak, pct_of_ceiling and the two ceilings
        library=library,
        extra=dict(results[0].extra),
        expected=ExpectedVerdict(
            bound=variant.expected.bound.value,
            limiter=variant.expected.limiter.value if variant.expected.limiter else None,
            findings=tuple(variant.expected.findings),
            timeline=variant.expected.timeline.value if variant.expected.timeline else None,
        ),
    )


CLOCK_FIELDS = ("clocks.sm", "clocks.mem", "clocks.max.sm", "clocks.max.mem", "persistence_mode", "power.limit", "temperature.gpu")


def query_clocks(*, run=None, which=None) -> dict[str, Any] | None:
    """Current and maximum clocks, persistence mode and power limit of GPU 0 (None without nvidia-smi)."""
    found = nvidia_smi.query(CLOCK_FIELDS, units=False, run=run, which=which)
    return found.gpus[0] if found.gpus else None


def run_bench(
    names: Sequence[str],
    *,
    variants: Sequence[str] | None = None,
    sizes: Mapping[str, int] | None = None,
    runs: int = 3,
    warmup: int | None = None,
    iters: int | None = None,
    arch: str | None = None,
    with_library: bool = True,
    with_ceiling: bool = True,
    manifest: Manifest | None = None,
    progress: Progress | None = None,
) -> BenchReport:
    """Build (cached) and run the named benchmarks; return the ``ncuwrap.bench/v1`` report."""
    manifest = manifest or load_manifest()
    say = progress or (lambda _msg: None)
    if runs < 1:
        raise BenchError("--runs must be at least 1")
    benches = _chosen(manifest, names, variants, sizes)
    require_gpu(names)  # before building: without a GPU the binaries could only fail
    need = [b.name for b in benches]
    if with_ceiling and CEILING_BENCHMARK not in need:
        need.insert(0, CEILING_BENCHMARK)
    base_arch = normalize_arch(arch) if arch else detect_arch().arch
    say(f"building {', '.join(need)}")
    built: dict[str, BuildResult] = {b.name: b for b in build_many(need, base_arch, manifest=manifest)}
    benches, skipped = _runnable(benches, built, say)

    def process_runs(bench: Benchmark, chosen: Sequence[str] | None, overrides: Mapping[str, int] | None = None) -> list[BinaryRun]:
        return _process_runs(built[bench.name].binary, bench, chosen, overrides, runs=runs, warmup=warmup, iters=iters, say=say)

    all_runs: dict[str, list[BinaryRun]] = {}
    ceiling = None
    same_bytes: dict[int, Ceiling] = {}
    if with_ceiling:
        cbench = manifest.get(CEILING_BENCHMARK)
        all_runs[CEILING_BENCHMARK] = process_runs(cbench, None)
        ceiling = ceiling_from_runs(cbench, all_runs[CEILING_BENCHMARK])
        same_bytes = _ceilings_by_bytes(cbench, ceiling, benches, variants, sizes, process_runs, say)
    for bench in benches:
        if bench.name not in all_runs or sizes:  # the ceiling ran at default sizes
            all_runs[bench.name] = process_runs(bench, variants if variants else None, sizes)

    env_src = next(iter(all_runs.values()))[0].env
    peaks = spec_peaks(env_src)
    entries = []
    for bench in benches:
        chosen = [bench.variant(v) for v in variants] if variants else list(bench.variants)
        for variant in chosen:
            runs_v = all_runs[bench.name]
            lib = None
            if with_library and variant.library is not None:
                say(f"{bench.name}/{variant.name}: timing the library equivalent")
                lib = _library(bench, variant, runs_v, warmup=warmup, iters=iters, runs=runs)
            entries.append(variant_entry(bench, variant, runs_v, peaks, ceiling, lib, same_bytes))
    env = dict(env_src)
    env.update(
        {
            "arch": base_arch,
            "nvcc_flags": [*NVCC_FLAGS, f"-arch={base_arch}", *NVCC_TAIL_FLAGS],
            "clocks": query_clocks(),
            "spec_peaks": peaks.to_json(),
            "cupy_version": libmod.cupy_version(),
            "runs": runs,
        }
    )
    special = {name: r.arch for name, r in built.items() if r.arch != base_arch}
    if special:  # families built for an architecture-specific target (sm_90a)
        env["arch_specific"] = special
    if skipped:
        env["skipped"] = skipped
    ceilings = tuple(sorted({c.bytes: c for c in same_bytes.values()}.values(), key=lambda c: c.bytes or 0))
    return BenchReport(tool_version=__version__, env=env, ceiling=ceiling, benchmarks=tuple(entries), ceilings=ceilings)


def _chosen(manifest: Manifest, names: Sequence[str], variants: Sequence[str] | None, sizes: Mapping[str, int] | None) -> list[Benchmark]:
    """The named benchmarks; variants and sizes (checked here, before anything is built) need exactly one."""
    benches = [manifest.get(n) for n in names]
    if variants or sizes:
        if len(benches) != 1:
            raise BenchError("--variant and --size need exactly one benchmark name")
        for v in variants or ():
            benches[0].variant(v)
        benches[0].sizes_with(sizes)  # unknown size names fail here
    return benches


def _runnable(benches: list[Benchmark], built: Mapping[str, BuildResult], say: Progress) -> tuple[list[Benchmark], dict[str, str]]:
    """The benchmarks this GPU can run, and why each other was skipped: a family that needs sm_90a cannot run
    on another GPU (asked for alone, that is an error)."""
    skipped: dict[str, str] = {}
    for bench in benches:
        got = built[bench.name].arch
        if bench.arch_specific and got != bench.arch_specific:
            why = f"needs {bench.arch_specific} (built for {got} here); it runs only on a GPU of that architecture"
            if len(benches) == 1:
                raise BenchError(f"{bench.name}: {why}")
            say(f"{bench.name}: skipped: {why}")
            skipped[bench.name] = why
    return [b for b in benches if b.name not in skipped], skipped


def _process_runs(binary, bench: Benchmark, chosen: Sequence[str] | None, overrides: Mapping[str, int] | None, *,
                  runs: int, warmup: int | None, iters: int | None, say: Progress) -> list[BinaryRun]:
    """``runs`` runs of a benchmark's binary, each a process of its own, with the warm-up and iterations asked
    for or the benchmark's own."""
    w = bench.warmup if warmup is None else warmup
    n = bench.iters if iters is None else iters
    out = []
    for i in range(runs):
        say(f"{bench.name}: process run {i + 1}/{runs}")
        out.append(run_binary(binary, chosen, w, n, overrides))
    return out


def _ceilings_by_bytes(cbench: Benchmark, ceiling: Ceiling, benches: list[Benchmark], variants: Sequence[str] | None,
                       sizes: Mapping[str, int] | None, process_runs: Callable, say: Progress) -> dict[int, Ceiling]:
    """The ceiling measured again at each size a judged variant moves (the default sizes' ceiling where it is the same)."""
    same_bytes: dict[int, Ceiling] = {}
    wanted = sorted(
        {
            nbytes
            for bench in benches
            if bench.name != CEILING_BENCHMARK
            for nbytes in judged_bytes(bench, [bench.variant(v) for v in variants] if variants else bench.variants, sizes)
        }
    )
    for nbytes in wanted:
        at = ceiling_sizes(cbench, nbytes)
        if at == dict(cbench.sizes):
            same_bytes[nbytes] = ceiling
            continue
        say(f"{CEILING_BENCHMARK}: ceiling at {nbytes} bytes moved")
        same_bytes[nbytes] = ceiling_from_runs(cbench, process_runs(cbench, None, at))
    return same_bytes


def _library(bench: Benchmark, variant: Variant, runs_v: list[BinaryRun], *, warmup: int | None, iters: int | None, runs: int) -> LibraryResult | None:
    """The library equivalent of a variant timed at the sizes the variant ran at, against the variant's median."""
    sizes = dict(runs_v[0].result(variant.name).sizes) or dict(bench.sizes)
    median = summarize([r.result(variant.name).times_ms for r in runs_v]).median_ms
    w = bench.warmup if warmup is None else warmup
    n = bench.iters if iters is None else iters
    return library_report(variant, sizes, median, w, n, runs)


def _has(run: BinaryRun, variant: str) -> bool:
    return any(r.variant == variant for r in run.results)
