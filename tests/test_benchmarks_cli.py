"""``ncuwrap list``, ``build`` and ``bench`` through the console entry point (no GPU, no nvcc needed)."""

from __future__ import annotations

import json
import os
from pathlib import Path

from ncuwrap.benchmarks import bench as bench_mod
from ncuwrap.benchmarks import build as build_mod
from ncuwrap.benchmarks.build import BuildResult, KernelResources
from ncuwrap.benchmarks.manifest import load_manifest
from tests.conftest import run_cli

GOLDEN_LIST = Path(__file__).resolve().parent / "data" / "benchmarks" / "list.golden.json"


def test_list_json_matches_golden(capsys):
    code, out, err = run_cli(capsys, "list", "--format", "json")
    assert code == 0 and err == ""
    if os.environ.get("NCUWRAP_REGEN") == "1":
        GOLDEN_LIST.write_text(out)
    assert out == GOLDEN_LIST.read_text(), f"differs from {GOLDEN_LIST}; if intended, regenerate with NCUWRAP_REGEN=1"
    doc = json.loads(out)
    assert [b["name"] for b in doc] == load_manifest().names()
    for b in doc:
        assert {"name", "lesson", "kernels"} <= set(b) and b["lesson"]
    assert json.loads(out)[1]["kernels"] == [
        "transpose_copy", "transpose_naive", "transpose_shared", "transpose_padded", "transpose_swizzled64",
    ]


def test_list_table(capsys):
    code, out, _ = run_cli(capsys, "list")
    lines = out.splitlines()
    assert code == 0 and lines[0].startswith("copy_ceiling ")
    assert any(line.strip() == "variants: copy, naive, shared_tile, padded_tile, swizzled64_float4" for line in lines)


def test_commands_have_help_text():
    from ncuwrap.cli import app

    names = {c.name: c for c in app.registered_commands}
    for name in ("list", "build", "bench"):
        assert names[name].callback.__doc__, name


def test_build_needs_a_name_or_all(capsys):
    code, _, err = run_cli(capsys, "build")
    assert code == 2 and err.startswith("ncuwrap: error: give a benchmark NAME or --all (benchmarks: copy_ceiling, ")
    code, _, err = run_cli(capsys, "build", "nope", "--arch", "sm_90")
    assert code == 2 and "no benchmark named 'nope'" in err
    code, _, err = run_cli(capsys, "build", "vecadd", "--all")
    assert code == 2 and "not both" in err


def test_build_reports_cache_and_spills(capsys, monkeypatch):
    seen = {}

    def fake_build_many(names, arch, jobs=None, force=False, **kw):
        seen.update(names=names, arch=arch, force=force)
        return [BuildResult("spill", Path("/c/spill"), arch, True, "k", (KernelResources("spill_local", 32, 72, 176, 172, 0),))]

    monkeypatch.setattr(build_mod, "build_many", fake_build_many)
    monkeypatch.setattr(build_mod, "detect_arch", lambda: build_mod.ArchChoice("sm_90", "no GPU found: building for sm_90"))
    code, out, err = run_cli(capsys, "build", "spill")
    assert code == 0 and seen == {"names": ["spill"], "arch": "sm_90", "force": False}
    assert err == "note: no GPU found: building for sm_90\n"
    assert out == "spill            sm_90  cached  /c/spill  (spills: spill_local)\n"


def test_missing_nvcc_exit_code(capsys, monkeypatch):
    monkeypatch.setattr(build_mod.shutil, "which", lambda name: None)
    monkeypatch.delenv("CUDA_HOME", raising=False)
    monkeypatch.delenv("CUDA_PATH", raising=False)
    code, _, err = run_cli(capsys, "build", "vecadd", "--arch", "sm_90")
    assert code == 2 and err.startswith("ncuwrap: error: nvcc: not found on PATH")


def fake_report(verified=True):
    return {
        "schema": "ncuwrap.bench/v1",
        "tool": {"name": "ncuwrap", "version": "x"},
        "env": {"gpu": "G", "cc": "9.0", "sm_count": 132, "driver_version": "13.0", "runtime_version": "13.0"},
        "ceiling": {"gbps": 4000.0, "source": "copy_ceiling/copy_float4"},
        "benchmarks": [
            {"name": "vecadd", "variant": "float4", "kernel": "vecadd_float4", "verified": verified, "median_ms": 0.2,
             "spread_pct": 1.0, "gbps": 4026.5, "tflops": 0.33, "pct_of_peak": 82.0, "pct_of_ceiling": 100.7,
             "library": {"advice": "on par with the library"}, "runs": []},
        ],
    }


def test_bench_writes_json_and_table(capsys, monkeypatch, tmp_path):
    seen = {}

    def fake_run_bench(names, **kw):
        seen.update(names=names, **{k: kw[k] for k in ("variants", "sizes", "runs", "with_library", "with_ceiling")})
        return fake_report()

    monkeypatch.setattr(bench_mod, "run_bench", fake_run_bench)
    out_file = tmp_path / "bench.json"
    code, out, err = run_cli(
        capsys, "bench", "vecadd", "--variant", "float4", "--size", "n=1024", "--runs", "2", "--no-library", "-o", str(out_file)
    )
    assert code == 0
    assert seen == {
        "names": ["vecadd"], "variants": ["float4"], "sizes": {"n": 1024}, "runs": 2, "with_library": False, "with_ceiling": True,
    }
    assert json.loads(out_file.read_text()) == fake_report()
    assert err == f"wrote {out_file}\n"
    assert out.splitlines()[1] == "copy ceiling: 4000 GB/s (copy_ceiling/copy_float4)"
    assert "vecadd           float4               yes     0.2000" in out and "on par with the library" in out
    code, _, err = run_cli(capsys, "bench", "vecadd", "-o", str(out_file))
    assert code == 2 and "already exists; pass --force" in err
    code, _, err = run_cli(capsys, "bench", "vecadd", "--size", "n=big")
    assert code == 2 and "expected KEY=POSITIVE_INTEGER" in err


def test_bench_wrong_result_exits_1_after_printing(capsys, monkeypatch):
    monkeypatch.setattr(bench_mod, "run_bench", lambda names, **kw: fake_report(verified=False))
    code, out, err = run_cli(capsys, "bench", "vecadd", "--format", "json")
    assert json.loads(out)["benchmarks"][0]["verified"] is False
    assert code == 1 and "wrong results (not verified against the CPU reference): vecadd/float4" in err
