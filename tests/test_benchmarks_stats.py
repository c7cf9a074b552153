"""Statistics and the ``ncuwrap.bench/v1`` report, computed from recorded binary output.

The inputs here are HAND-MADE (tests/data/benchmarks/handmade_*.json: round numbers typed by hand so
the arithmetic can be checked by eye, not measurements); real H200 recordings are added beside them.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from ncuwrap.benchmarks import bench as bench_mod
from ncuwrap.benchmarks import library as libmod
from ncuwrap.benchmarks.build import BuildResult
from ncuwrap.benchmarks.manifest import Library, load_manifest
from ncuwrap.benchmarks.peaks import spec_peaks
from ncuwrap.benchmarks.runner import RunStats, binary_argv, parse_binary_output, run_stats, summarize
from ncuwrap.errors import BenchError, InputError

DATA = Path(__file__).resolve().parent / "data" / "benchmarks"
MANIFEST = load_manifest()


def recorded(name: str):
    """The process runs of one hand-made recording, parsed as ncuwrap parses a binary's stdout."""
    docs = json.loads((DATA / name).read_text())
    return [parse_binary_output(json.dumps(d), source=name) for d in docs]


def test_parse_binary_output_types_everything():
    runs = recorded("handmade_transpose_runs.json")
    assert len(runs) == 3
    r = runs[0].result("naive")
    assert r.kernel == "transpose_naive" and r.verified and r.sizes == {"rows": 4096, "cols": 4096}
    assert r.times_ms == (0.20, 0.21, 0.19, 0.20, 0.25)
    assert runs[0].env["cc"] == "9.0" and runs[0].iters == 5
    assert not runs[2].result("swizzled64_float4").verified


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
    assert run_stats([0.20, 0.21, 0.19, 0.20, 0.25]) == RunStats(0.20, 0.19, 0.25)
    runs = recorded("handmade_transpose_runs.json")
    s = summarize([r.result("naive").times_ms for r in runs])
    assert [x.median_ms for x in s.runs] == [0.20, 0.22, 0.18]
    assert s.median_ms == 0.20 and s.min_ms == 0.17 and s.max_ms == 0.25
    assert s.spread_pct == pytest.approx(20.0)
    with pytest.raises(BenchError, match="no timing samples"):
        run_stats([])


def test_spec_peaks_of_an_h200_record():
    env = recorded("handmade_transpose_runs.json")[0].env
    peaks = spec_peaks(env)
    assert peaks.dram_gbps == pytest.approx(4917.636)
    assert peaks.fp32_tflops == pytest.approx(256 * 132 * 1.98e9 / 1e12)  # 66.9
    assert peaks.fp16_tensor_tflops == pytest.approx(4096 * 132 * 1.98e9 / 1e12)  # 1070
    assert spec_peaks({"cc": "5.2", "sm_count": 2, "sm_clock_khz": 1}).fp32_tflops is None


def test_ceiling_is_the_faster_copy():
    ceiling = bench_mod.ceiling_from_runs(MANIFEST.get("copy_ceiling"), recorded("handmade_copy_ceiling_runs.json"))
    assert ceiling.source == "copy_ceiling/copy_float4"
    assert ceiling.gbps == pytest.approx(2 * 134217728 * 4 / 0.28e-3 / 1e9)


def test_metrics_from_formulas():
    v = MANIFEST.get("transpose").variant("swizzled64_float4")
    env = recorded("handmade_transpose_runs.json")[0].env
    ceiling = bench_mod.Ceiling(gbps=4000.0, source="copy_ceiling/copy_float4")
    m = bench_mod.compute_metrics(v, {"rows": 4096, "cols": 4096}, 0.04, spec_peaks(env), ceiling)
    assert m.gbps == pytest.approx(134217728 / 0.04e-3 / 1e9)
    assert m.tflops is None  # flops formula is 0
    assert m.pct_of_peak == pytest.approx(m.gbps / 4917.636 * 100)
    assert m.pct_of_ceiling == pytest.approx(m.gbps / 40)
    g = MANIFEST.get("gemm").variant("tensor_core")
    m = bench_mod.compute_metrics(g, {"m": 4096, "n": 4096, "k": 4096}, 0.25, spec_peaks(env), ceiling)
    assert m.tflops == pytest.approx(2 * 4096**3 / 0.25e-3 / 1e12)
    assert m.pct_of_ceiling is None  # compute peaks are not compared with the copy ceiling


def test_binary_argv():
    assert binary_argv(Path("/c/gemm"), ["naive", "tensor_core"], 2, 1, {"m": 256}) == [
        "/c/gemm", "--variant", "naive", "--variant", "tensor_core", "--warmup", "2", "--iters", "1", "--size", "m=256",
    ]
    assert binary_argv(Path("/c/gemm"), None, 5, 20)[1:3] == ["--variant", "all"]


@pytest.fixture
def replayed(monkeypatch):
    """run_bench with the build and the binaries replaced by the hand-made recordings."""
    recordings = {
        "copy_ceiling": iter(recorded("handmade_copy_ceiling_runs.json")),
        "transpose": iter(recorded("handmade_transpose_runs.json")),
    }
    calls = []

    def fake_build_many(names, arch, manifest=None, **kw):
        return [BuildResult(n, Path(f"/cache/{n}"), "sm_90", True, "0" * 64, ()) for n in names]

    def fake_run_binary(binary, variants, warmup, iters, sizes=None, timeout_s=0):
        calls.append((binary.name, variants, warmup, iters, sizes))
        return next(recordings[binary.name])

    monkeypatch.setattr(bench_mod, "build_many", fake_build_many)
    monkeypatch.setattr(bench_mod, "run_binary", fake_run_binary)
    monkeypatch.setattr(bench_mod, "query_clocks", lambda: None)
    monkeypatch.setattr(libmod, "cupy_version", lambda: None)
    monkeypatch.setattr(bench_mod, "__version__", "0.0.test")
    return calls


def test_report_from_recorded_runs_matches_golden(replayed):
    report = bench_mod.run_bench(["transpose"], variants=["naive", "swizzled64_float4"], runs=3, with_library=False)
    assert replayed == [("copy_ceiling", None, 5, 20, None)] * 3 + [("transpose", ["naive", "swizzled64_float4"], 5, 20, None)] * 3
    text = json.dumps(report, indent=2) + "\n"
    path = DATA / "bench_report_handmade.golden.json"
    if os.environ.get("NCUWRAP_REGEN") == "1":
        path.write_text(text)
    assert text == path.read_text(), f"report differs from {path}; if intended, regenerate with NCUWRAP_REGEN=1"
    by = {(b["name"], b["variant"]): b for b in report["benchmarks"]}
    naive, best = by[("transpose", "naive")], by[("transpose", "swizzled64_float4")]
    assert report["schema"] == "ncuwrap.bench/v1"
    assert [r["median_ms"] for r in naive["runs"]] == [0.20, 0.22, 0.18]
    assert naive["median_ms"] == 0.20 and naive["spread_pct"] == pytest.approx(20.0)
    assert best["pct_of_ceiling"] == pytest.approx(3355.4432 / (1073741824 / 0.28e-3 / 1e9) * 100)
    assert not best["verified"]  # one of the three runs was wrong
    assert ("copy_ceiling", "memcpy_d2d") not in by  # the ceiling is measured, but listed only when asked for
    assert "\n" not in bench_mod.render_table(report).splitlines()[0]


def test_ceiling_benchmark_is_run_once_and_reported(replayed):
    report = bench_mod.run_bench(["copy_ceiling"], runs=3, with_library=False)
    assert [c[0] for c in replayed] == ["copy_ceiling"] * 3
    by = {b["variant"]: b for b in report["benchmarks"]}
    assert by["memcpy_d2d"]["kernel"] == "[no kernel: copy_ceiling/memcpy_d2d]"  # compare needs a name
    assert by["copy_float4"]["pct_of_ceiling"] == pytest.approx(100.0)
    assert report["ceiling"]["source"] == "copy_ceiling/copy_float4"


def test_library_comparison_advice(replayed, monkeypatch):
    def fake_measure(library, sizes, warmup, iters, runs=1):
        assert library is Library.transpose_copy and sizes == {"rows": 4096, "cols": 4096}
        return libmod.LibraryTiming(library, "cupy.ascontiguousarray(a.T)", "13.6.0", (0.05,) * 5)

    monkeypatch.setattr(libmod, "measure", fake_measure)
    report = bench_mod.run_bench(["transpose"], variants=["naive", "swizzled64_float4"], runs=3, with_ceiling=False)
    by = {b["variant"]: b for b in report["benchmarks"]}
    assert report["ceiling"] is None and by["naive"]["pct_of_ceiling"] is None
    assert by["naive"]["library"]["library_speedup"] == pytest.approx(4.0)
    assert by["naive"]["library"]["advice"] == "the library is 4.0x faster: use it"
    assert by["swizzled64_float4"]["library"]["advice"] == "this kernel is 1.2x faster than the library"


def test_library_without_cupy_is_reported_not_fatal(replayed, monkeypatch):
    monkeypatch.setattr(libmod, "measure", lambda *a, **k: None)
    report = bench_mod.run_bench(["transpose"], variants=["naive"], runs=3, with_ceiling=False)
    assert report["benchmarks"][0]["library"] == {
        "name": "transpose_copy", "available": False, "note": "CuPy is not installed: pip install ncuwrap[gpu]",
    }


def test_variant_needs_one_benchmark():
    with pytest.raises(BenchError, match="--variant and --size need exactly one benchmark"):
        bench_mod.run_bench(["transpose", "vecadd"], variants=["naive"])
    with pytest.raises(InputError, match="has no variant 'nope'"):
        bench_mod.run_bench(["transpose"], variants=["nope"])
    with pytest.raises(InputError, match="has no size 'q'"):
        bench_mod.run_bench(["transpose"], sizes={"q": 1})
