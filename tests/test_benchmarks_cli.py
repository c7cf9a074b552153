"""``ncuwrap list``, ``build`` and ``bench`` through the console entry point (no GPU, no nvcc needed)."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from ncuwrap.bundled import bench as bench_mod
from ncuwrap.bundled import build as build_mod
from ncuwrap.bundled import report as report_mod
from ncuwrap.bundled import runner as runner_mod
from ncuwrap.bundled.build import BuildResult, KernelResources
from ncuwrap.bundled.manifest import load_manifest
from ncuwrap.bundled.runner import gpu_problem
from tests.conftest import ROOT, golden, has_gpu, run_cli

def test_list_json_matches_golden(capsys):
    code, out, err = run_cli(capsys, "list", "--format", "json")
    assert code == 0 and err == ""
    golden("benchmarks_list.json", out)
    doc = json.loads(out)
    assert [b["name"] for b in doc] == load_manifest().names()
    for b in doc:
        assert {"name", "lesson", "kernels"} <= set(b) and b["lesson"]
    assert json.loads(out)[1]["kernels"] == [
        "transpose_copy", "transpose_naive", "transpose_shared", "transpose_padded", "transpose_swizzled64", "transpose_swizzled128x64",
    ]


def test_list_table(capsys):
    code, out, _ = run_cli(capsys, "list")
    lines = out.splitlines()
    assert code == 0 and lines[0].startswith("copy_ceiling ")
    assert any(line.strip() == "variants: copy, naive, shared_tile, padded_tile, swizzled64_float4, swizzled128x64" for line in lines)


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


VECADD_REPORT = ROOT / "tests" / "data" / "h200_ncuwrap" / "bench_pairs" / "vecadd.json"  # `ncuwrap bench vecadd` on the H200


def test_bench_writes_json_and_table(capsys, monkeypatch, tmp_path):
    seen = {}
    recorded = report_mod.read(VECADD_REPORT)

    def fake_run_bench(names, **kw):
        seen.update(names=names, **{k: kw[k] for k in ("variants", "sizes", "runs", "with_library", "with_ceiling")})
        return recorded

    monkeypatch.setattr(bench_mod, "run_bench", fake_run_bench)
    out_file = tmp_path / "bench.json"
    code, out, err = run_cli(
        capsys, "bench", "vecadd", "--variant", "float4", "--size", "n=1024", "--runs", "2", "--no-library", "-o", str(out_file)
    )
    assert code == 0
    assert seen == {
        "names": ["vecadd"], "variants": ["float4"], "sizes": {"n": 1024}, "runs": 2, "with_library": False, "with_ceiling": True,
    }
    assert out_file.read_text() == VECADD_REPORT.read_text()  # the same bytes `ncuwrap bench -o` wrote on the H200
    assert err == f"wrote {out_file}\n"
    # Laid out for the tests' 100 columns; no library column where none was compared (--no-library).
    assert out == (
        "NVIDIA H200 (cc 9.0, 132 SMs), driver 13.0, runtime 13.0\n"
        "\n"
        " benchmark   variant     ok    median ms   spread%   GB/s   TFLOP/s   %peak   %ceil\n"
        " ──────────────────────────────────────────────────────────────────────────────────\n"
        " vecadd      coalesced   yes      0.1865       0.1   4319      0.36      90       -\n"
        " vecadd      float4      yes      0.1867       0.1   4313      0.36      90       -\n"
        " vecadd      strided     yes      1.7598       0.2    458      0.04      10       -\n"
        "\n"
    )
    code, _, err = run_cli(capsys, "bench", "vecadd", "-o", str(out_file))
    assert code == 2 and "already exists; pass --force" in err
    code, _, err = run_cli(capsys, "bench", "vecadd", "--size", "n=big")
    assert code == 2 and "expected KEY=POSITIVE_INTEGER" in err


def test_bench_wrong_result_exits_1_after_printing(capsys, monkeypatch):
    recorded = report_mod.read(VECADD_REPORT)
    wrong = dataclasses.replace(recorded, benchmarks=tuple(
        dataclasses.replace(b, verified=False) if b.variant == "float4" else b for b in recorded.benchmarks))
    monkeypatch.setattr(bench_mod, "run_bench", lambda names, **kw: wrong)
    code, out, err = run_cli(capsys, "bench", "vecadd", "--format", "json")
    assert [b["verified"] for b in json.loads(out)["benchmarks"]] == [True, False, True]
    assert code == 1 and err == "ncuwrap: error: wrong results (not verified against the CPU reference): vecadd/float4\n"


@pytest.mark.skipif(has_gpu(), reason="checks the answer on a machine without a GPU")
def test_bench_without_a_gpu_says_so_before_building(capsys, monkeypatch, tmp_path):
    """Real: this machine has no NVIDIA driver. Nothing is built (the cache stays empty) and nothing runs."""
    monkeypatch.setenv("NCUWRAP_CACHE", str(tmp_path / "cache"))
    code, out, err = run_cli(capsys, "bench", "vecadd")
    assert (code, out) == (2, "")
    assert err == (
        f"ncuwrap: error: no GPU: {gpu_problem()}; run `ncuwrap bench` on a machine with an NVIDIA GPU "
        "(`ncuwrap build vecadd` still compiles here)\n"
    )
    assert "no NVIDIA driver found (libcuda.so.1 cannot be loaded" in err or "sees no GPU" in err
    code, _, err = run_cli(capsys, "bench", "--all")
    assert code == 2 and err.endswith("(`ncuwrap build --all` still compiles here)\n")
    assert not (tmp_path / "cache").exists()


class _FakeDriver:
    """The driver library's three entry points gpu_problem calls, answering as a driver that sees no GPU."""

    def cuInit(self, flags):
        return 100  # CUDA_ERROR_NO_DEVICE

    def cuDeviceGetCount(self, count):
        raise AssertionError("not asked after cuInit failed")

    def cuGetErrorName(self, status, name):
        name._obj.value = b"CUDA_ERROR_NO_DEVICE"
        return 0


def test_a_driver_without_a_device_is_named(monkeypatch):
    monkeypatch.setattr(runner_mod.ctypes, "CDLL", lambda name: _FakeDriver())
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")
    assert gpu_problem() == "the NVIDIA driver (libcuda.so.1) sees no GPU (CUDA_ERROR_NO_DEVICE, CUDA_VISIBLE_DEVICES='')"
