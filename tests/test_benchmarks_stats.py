"""Statistics and the ``ncuwrap.bench/v1`` report, from what the benchmarks printed on the H200.

Inputs are real recordings (tests/data/h200_ncuwrap, see its README): ``bench_raw/<name>.json`` is one
process run of each binary (its stdout), ``bench/bench_all_runs3.json`` and ``bench_pairs/*.json`` are
reports written by ``ncuwrap bench``. Replaying the binaries' output through run_bench checks the report
without a GPU; the recorded reports check the arithmetic that made them.
"""

from __future__ import annotations

import dataclasses
import json
import statistics
from pathlib import Path

import pytest

from ncuwrap.bundled import bench as bench_mod
from ncuwrap.bundled import library as libmod
from ncuwrap.bundled import report as report_mod
from ncuwrap.bundled.build import BuildResult
from ncuwrap.bundled.manifest import Library, load_manifest
from ncuwrap.bundled.peaks import spec_peaks
from ncuwrap.bundled.runner import binary_argv, parse_binary_output, run_stats, summarize
from ncuwrap.core.errors import BenchError, InputError
from ncuwrap.render import Format, render
from tests.conftest import golden, golden_json

OURS = Path(__file__).resolve().parent / "data" / "h200_ncuwrap"
RAW = OURS / "bench_raw"
ALL_RUNS3 = OURS / "bench" / "bench_all_runs3.json"
MANIFEST = load_manifest()
# Variants added after bench_raw/ was recorded (issue 24): the replays run the manifest as it was then.
NEW_SINCE_RECORDING = {"vecadd/one_per_thread"}
RECORDED_MANIFEST = dataclasses.replace(MANIFEST, benchmarks=tuple(
    dataclasses.replace(b, variants=tuple(v for v in b.variants if f"{b.name}/{v.name}" not in NEW_SINCE_RECORDING))
    for b in MANIFEST.benchmarks))


def recorded(name: str):
    """One process run of benchmark ``name`` on the H200, parsed as ncuwrap parses a binary's stdout."""
    return parse_binary_output((RAW / f"{name}.json").read_text(), source=f"{name}.json")


def test_parse_binary_output_types_everything():
    run = recorded("transpose")
    doc = json.loads((RAW / "transpose.json").read_text())
    assert (run.benchmark, run.warmup, run.iters) == ("transpose", 5, 20)
    assert run.env == doc["env"] and run.env["cc"] == "9.0"
    assert [r.variant for r in run.results] == ["copy", "naive", "shared_tile", "padded_tile", "swizzled64_float4"]
    r = run.result("naive")
    assert r.kernel == "transpose_naive" and r.verified and r.max_error == 0.0
    assert r.sizes == {"rows": 4096, "cols": 4096} and r.checked_sizes == ("1000x1004", "4096x4096")
    assert r.times_ms == tuple(doc["results"][1]["times_ms"]) and len(r.times_ms) == 20
    assert [dict(r.extra) for r in recorded("e2e").results] == [{"launches_per_run": 1.0}, {"launches_per_run": 1.0}, {"launches_per_run": 8.0}]
    with pytest.raises(BenchError, match="the binary printed no result for variant 'nope'"):
        run.result("nope")


@pytest.mark.parametrize(
    ("text", "match"),
    [
        ("not json", "not the JSON document a benchmark binary prints"),
        ('{"results": []}', "missing 'benchmark' or 'results'"),
        ('{"benchmark": "x", "results": [{"variant": "v"}]}', r"results\[0\] is malformed"),
    ],
)
def test_parse_binary_output_rejects_garbage(text, match):
    with pytest.raises(InputError, match=match):
        parse_binary_output(text, source="out.json")


def test_run_stats_and_summary():
    assert run_stats([0.20, 0.21, 0.19, 0.20, 0.25]) == report_mod.RunTiming(0.20, 0.19, 0.25)
    s = summarize([[0.20, 0.21, 0.19], [0.22, 0.17, 0.25], [0.18, 0.18, 0.19]])
    assert [x.median_ms for x in s.runs] == [0.20, 0.22, 0.18]
    assert s.median_ms == 0.20 and s.min_ms == 0.17 and s.max_ms == 0.25
    assert s.spread_pct == pytest.approx(20.0)
    with pytest.raises(BenchError, match="no timing samples"):
        run_stats([])


def test_recorded_report_summaries_are_the_statistics_of_its_runs():
    """What `ncuwrap bench --all --runs 3` wrote on the H200: each entry's numbers from its per-run ones."""
    report = report_mod.read(ALL_RUNS3)
    assert len(report.benchmarks) == 43 and report.env["runs"] == 3
    for e in report.benchmarks:
        assert len(e.runs) == 3, e.label
        medians = [r.median_ms for r in e.runs]
        assert e.median_ms == statistics.median(medians), e.label
        assert (e.min_ms, e.max_ms) == (min(r.min_ms for r in e.runs), max(r.max_ms for r in e.runs)), e.label
        assert e.spread_pct == pytest.approx((max(medians) - min(medians)) / e.median_ms * 100.0, rel=1e-12), e.label


def test_spec_peaks_of_the_h200():
    env = recorded("transpose").env
    peaks = spec_peaks(env)
    assert peaks.dram_gbps == 4814.304  # what the binary computed from the memory clock and bus width
    assert peaks.fp32_tflops == pytest.approx(256 * 132 * 1.98e9 / 1e12)  # 66.9
    assert peaks.fp16_tensor_tflops == pytest.approx(4096 * 132 * 1.98e9 / 1e12)  # 1070
    assert peaks.to_json() == report_mod.read(ALL_RUNS3).env["spec_peaks"]
    assert spec_peaks({"cc": "5.2", "sm_count": 2, "sm_clock_khz": 1}).fp32_tflops is None


def test_ceiling_is_the_faster_copy():
    ceiling = bench_mod.ceiling_from_runs(MANIFEST.get("copy_ceiling"), [recorded("copy_ceiling")])
    # memcpy_d2d's median 0.2559 ms beat copy_float4's 0.2822 ms: 2 x 2^27 floats in 0.2559 ms.
    assert ceiling.source == "copy_ceiling/memcpy_d2d"
    assert ceiling.gbps == pytest.approx(2 * 2**27 * 4 / 0.25587199650000003e-3 / 1e9)


def test_metrics_reproduce_the_recorded_report():
    """GB/s, TFLOP/s, % of peak and % of the ceiling of all 43 variants, from the manifest's formulas."""
    report = report_mod.read(ALL_RUNS3)
    peaks = spec_peaks(report.env)
    for e in report.benchmarks:
        variant = MANIFEST.get(e.name).variant(e.variant)
        assert (e.bytes, e.flops) == (variant.bytes.evaluate(e.sizes), variant.flops.evaluate(e.sizes)), e.label
        m = bench_mod.compute_metrics(variant, e.sizes, e.median_ms, peaks, report.ceiling)
        for name in ("gbps", "tflops", "pct_of_peak", "pct_of_ceiling"):
            want = getattr(e, name)
            assert getattr(m, name) == (None if want is None else pytest.approx(want, rel=1e-12)), f"{e.label} {name}"
    by = {b.label: b for b in report.benchmarks}
    assert by["gemm/tensor_core"].pct_of_ceiling is None and by["gemm/tensor_core"].tflops > 100  # compute: no ceiling
    assert by["transpose/copy"].pct_of_ceiling == pytest.approx(by["transpose/copy"].gbps / report.ceiling.gbps * 100)


def test_binary_argv():
    assert binary_argv(Path("/c/gemm"), ["naive", "tensor_core"], 2, 1, {"m": 256}) == [
        "/c/gemm", "--variant", "naive", "--variant", "tensor_core", "--warmup", "2", "--iters", "1", "--size", "m=256",
    ]
    assert binary_argv(Path("/c/gemm"), None, 5, 20)[1:3] == ["--variant", "all"]


# A fixed cost per copy launch (the H200 showed ~3.7 us on the transpose; docs/benchmarks.md).
LAUNCH_COST_MS = 0.0037


def smaller_copy(n: int):
    """copy_ceiling at n floats, made from the recorded 2**27 run: the recorded time scaled by size plus a
    fixed launch cost. Synthetic (no same-size copy was recorded on the H200 yet): it exercises the
    arithmetic of the same-bytes ceiling, not the hardware."""
    run = recorded("copy_ceiling")
    scale = n / run.results[0].sizes["n"]
    results = tuple(
        dataclasses.replace(r, sizes={"n": n}, times_ms=tuple(t * scale + LAUNCH_COST_MS for t in r.times_ms)) for r in run.results
    )
    return dataclasses.replace(run, results=results)


@pytest.fixture
def replayed(monkeypatch):
    """run_bench with the GPU check, the build and the binaries replaced by the H200 recordings:
    every process run of a benchmark replays its one recorded run."""
    calls = []

    def fake_build_many(names, arch, manifest=None, **kw):
        return [BuildResult(n, Path(f"/cache/{n}"), "sm_90", True, "0" * 64, ()) for n in names]

    def fake_run_binary(binary, variants, warmup, iters, sizes=None, timeout_s=0):
        calls.append((binary.name, variants, warmup, iters, sizes))
        if binary.name == "copy_ceiling" and sizes:
            return smaller_copy(sizes["n"])
        return recorded(binary.name)

    monkeypatch.setattr(bench_mod, "require_gpu", lambda names: None)
    monkeypatch.setattr(bench_mod, "build_many", fake_build_many)
    monkeypatch.setattr(bench_mod, "run_binary", fake_run_binary)
    monkeypatch.setattr(bench_mod, "query_clocks", lambda: None)
    monkeypatch.setattr(libmod, "cupy_version", lambda: None)
    monkeypatch.setattr(bench_mod, "__version__", "0.0.test")
    return calls


def test_report_from_recorded_runs_matches_golden(replayed, tmp_path):
    report = bench_mod.run_bench(["transpose"], variants=["naive", "swizzled64_float4"], runs=1, with_library=False)
    assert replayed == [
        ("copy_ceiling", None, 5, 20, None),
        ("copy_ceiling", None, 5, 20, {"n": 4096 * 4096 * 2 // 2}),  # the transpose's 128 MiB, as 2 x n floats
        ("transpose", ["naive", "swizzled64_float4"], 5, 20, None),
    ]
    golden_json("bench_report_h200_replayed.json", report.to_json())
    by = {b.label: b for b in report.benchmarks}
    naive, best = by["transpose/naive"], by["transpose/swizzled64_float4"]
    raw = recorded("transpose")
    assert naive.median_ms == statistics.median(raw.result("naive").times_ms) and naive.spread_pct == 0.0
    assert best.gbps == pytest.approx(2 * 4096 * 4096 * 4 / (best.median_ms * 1e-3) / 1e9)
    # Judged by the ceiling at the same 128 MiB (the manifest's default), the large one reported beside it.
    (same,) = report.ceilings
    assert same.bytes == 2 * 4096 * 4096 * 4 and same.source == "copy_ceiling/memcpy_d2d" and same.gbps < report.ceiling.gbps
    assert best.ceiling_basis == "same_bytes"
    assert best.pct_of_ceiling == best.pct_of_ceiling_same_bytes == pytest.approx(best.gbps / same.gbps * 100)
    assert best.pct_of_ceiling_large == pytest.approx(best.gbps / report.ceiling.gbps * 100)
    assert report.ceiling.source == "copy_ceiling/memcpy_d2d" and report.wrong() == []
    assert "transpose/copy" not in by  # only the variants asked for
    golden("bench_table_h200_replayed.txt", render(report, Format.table))
    # The file written (through the one JSON renderer) is the file read back.
    path = tmp_path / "bench.json"
    path.write_text(render(report, Format.json))
    assert report_mod.read(path) == report


def test_a_variant_wrong_in_one_run_is_not_verified(replayed, monkeypatch):
    good = recorded("transpose")
    results = tuple(dataclasses.replace(r, verified=False, max_error=0.5) if r.variant == "naive" else r for r in good.results)
    copies = [recorded("copy_ceiling")] * 3 + [smaller_copy(4096 * 4096)] * 3  # the large ceiling, then at 128 MiB
    runs = iter(copies + [good, good, dataclasses.replace(good, results=results)])
    monkeypatch.setattr(bench_mod, "run_binary", lambda *a, **k: next(runs))
    report = bench_mod.run_bench(["transpose"], variants=["naive", "copy"], runs=3, with_library=False)
    assert report.wrong() == ["transpose/naive"]
    assert {b.label: b.max_error for b in report.benchmarks} == {"transpose/naive": 0.5, "transpose/copy": 0.0}


def test_ceiling_benchmark_is_run_once_and_reported(replayed):
    report = bench_mod.run_bench(["copy_ceiling"], runs=3, with_library=False)
    assert [c[0] for c in replayed] == ["copy_ceiling"] * 3
    by = {b.variant: b for b in report.benchmarks}
    assert by["memcpy_d2d"].kernel == "[no kernel: copy_ceiling/memcpy_d2d]"  # compare needs a name
    assert by["memcpy_d2d"].pct_of_ceiling == pytest.approx(100.0)
    assert by["copy_float4"].pct_of_ceiling == pytest.approx(0.25587199650000003 / 0.282159999 * 100)
    assert report.ceiling.source == "copy_ceiling/memcpy_d2d"


def test_library_comparison_advice(replayed, monkeypatch):
    def fake_measure(library, sizes, warmup, iters, runs=1):
        assert library is Library.transpose_copy and sizes == {"rows": 4096, "cols": 4096}
        return libmod.LibraryTiming(library, "cupy.ascontiguousarray(a.T)", "13.6.0", (0.05,) * 5)

    monkeypatch.setattr(libmod, "measure", fake_measure)
    report = bench_mod.run_bench(["transpose"], variants=["naive", "swizzled64_float4"], runs=3, with_ceiling=False)
    by = {b.variant: b for b in report.benchmarks}
    assert report.ceiling is None and by["naive"].pct_of_ceiling is None
    assert by["naive"].library.library_speedup == pytest.approx(0.255856007 / 0.05)
    assert by["naive"].library.advice == "the library is 5.1x faster: use it"
    assert by["swizzled64_float4"].library.advice == "this kernel is 1.3x faster than the library"


def test_library_without_cupy_is_reported_not_fatal(replayed, monkeypatch):
    monkeypatch.setattr(libmod, "measure", lambda *a, **k: None)
    report = bench_mod.run_bench(["transpose"], variants=["naive"], runs=3, with_ceiling=False)
    assert report.benchmarks[0].library.to_json() == {
        "name": "transpose_copy", "available": False, "note": "CuPy is not installed: pip install ncuwrap[gpu]",
    }


def test_variant_needs_one_benchmark():
    with pytest.raises(BenchError, match="--variant and --size need exactly one benchmark"):
        bench_mod.run_bench(["transpose", "vecadd"], variants=["naive"])
    with pytest.raises(InputError, match="has no variant 'nope'"):
        bench_mod.run_bench(["transpose"], variants=["nope"])
    with pytest.raises(InputError, match="has no size 'q'"):
        bench_mod.run_bench(["transpose"], sizes={"q": 1})


def test_same_bytes_ceiling_sizes_and_the_bytes_judged():
    copy = MANIFEST.get("copy_ceiling")
    assert bench_mod.ceiling_sizes(copy, 2 * 4096 * 4096 * 4) == {"n": 4096 * 4096}  # 2 x 64 MiB
    assert bench_mod.ceiling_sizes(copy, 2 * 8192 * 8192 * 4) == {"n": 8192 * 8192}
    assert bench_mod.ceiling_sizes(copy, 3) == {"n": 1}
    transpose = MANIFEST.get("transpose")
    assert bench_mod.judged_bytes(transpose, transpose.variants, None) == [2 * 4096 * 4096 * 4]
    assert bench_mod.judged_bytes(transpose, transpose.variants, {"rows": 8192, "cols": 8192}) == [2 * 8192 * 8192 * 4]
    gemm = MANIFEST.get("gemm_hopper")
    assert bench_mod.judged_bytes(gemm, gemm.variants, None) == []  # compute variants: no ceiling


def test_every_distinct_size_gets_its_own_ceiling_run(replayed):
    report = bench_mod.run_bench(["reduction", "vecadd", "occupancy"], runs=1, with_library=False, manifest=RECORDED_MANIFEST)
    sized = [c[4] for c in replayed if c[0] == "copy_ceiling"]
    # the large one, then reduction's 256 MiB (n x 4), occupancy's 512 MiB (8 n), vecadd's 768 MiB (12 n)
    assert sized == [None, {"n": 1 << 25}, {"n": 1 << 26}, {"n": 3 * (1 << 26) // 2}]
    assert [c.bytes for c in report.ceilings] == [1 << 28, 1 << 29, 3 << 28]
    by = {b.label: b for b in report.benchmarks}
    best = by["reduction/warp_shuffle"]
    assert best.ceiling_basis == "same_bytes" and best.pct_of_ceiling == best.pct_of_ceiling_same_bytes
    assert best.pct_of_ceiling_same_bytes > best.pct_of_ceiling_large  # the smaller copy pays the launch cost too
    # At copy_ceiling's own size (1 GiB moved) the large runs are reused, not run again.
    replayed.clear()
    bench_mod.run_bench(["occupancy"], sizes={"n": 1 << 27}, runs=1, with_library=False)
    assert [c[4] for c in replayed if c[0] == "copy_ceiling"] == [None]


def test_the_report_with_fair_ceilings_is_read_back(replayed, tmp_path):
    report = bench_mod.run_bench(["vecadd"], runs=1, with_library=False, manifest=RECORDED_MANIFEST)
    assert report.ceilings and all(b.ceiling_basis == "same_bytes" for b in report.benchmarks)
    path = tmp_path / "bench.json"
    path.write_text(render(report, Format.json))
    assert report_mod.read(path) == report


def test_an_arch_specific_family_is_skipped_on_another_gpu(replayed, monkeypatch):
    def sm80_build(names, arch, manifest=None, **kw):
        return [BuildResult(n, Path(f"/cache/{n}"), "sm_80", True, "0" * 64, ()) for n in names]

    monkeypatch.setattr(bench_mod, "build_many", sm80_build)
    said = []
    report = bench_mod.run_bench(["gemm_hopper", "vecadd"], runs=1, with_library=False, arch="sm_80", progress=said.append,
                                 manifest=RECORDED_MANIFEST)
    assert {b.name for b in report.benchmarks} == {"vecadd"}
    assert report.env["skipped"] == {"gemm_hopper": "needs sm_90a (built for sm_80 here); it runs only on a GPU of that architecture"}
    assert "gemm_hopper: skipped: needs sm_90a" in " ".join(said)
    with pytest.raises(BenchError, match=r"^gemm_hopper: needs sm_90a \(built for sm_80 here\)"):
        bench_mod.run_bench(["gemm_hopper"], runs=1, with_library=False, arch="sm_80")
