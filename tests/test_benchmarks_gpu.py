"""On a GPU: build and run every bundled benchmark (small iteration counts) and check the results verify.

Marked ``gpu``: skipped where there is no GPU (see tests/conftest.py). These also check the launch order
the profiler relies on, by counting the timed samples, and write nothing outside pytest's tmp folders.
"""

from __future__ import annotations

import pytest

from ncuwrap.bundled.build import build_many
from ncuwrap.bundled.manifest import load_manifest
from ncuwrap.bundled.runner import gpu_problem, run_binary

pytestmark = pytest.mark.gpu

MANIFEST = load_manifest()


@pytest.fixture(scope="module")
def binaries(tmp_path_factory):
    import os

    os.environ.setdefault("NCUWRAP_CACHE", str(tmp_path_factory.mktemp("nvcc-cache")))
    return {r.name: r.binary for r in build_many(MANIFEST.names())}


def test_the_driver_sees_the_gpu():
    """The check `ncuwrap bench` makes before building (cuInit and cuDeviceGetCount through libcuda)."""
    assert gpu_problem() is None


@pytest.mark.parametrize("bench", MANIFEST.benchmarks, ids=lambda b: b.name)
def test_benchmark_runs_and_verifies(binaries, bench):
    run = run_binary(binaries[bench.name], None, warmup=1, iters=3)
    assert run.benchmark == bench.name
    assert run.env["sm_count"] > 0 and run.env["peak_dram_gbps"] > 0
    assert [r.variant for r in run.results] == [v.name for v in bench.variants]
    for r in run.results:
        assert r.verified, f"{bench.name}/{r.variant}: max error {r.max_error} on {r.checked_sizes}"
        assert len(r.times_ms) == 3 and all(t > 0 for t in r.times_ms)
        assert len(r.checked_sizes) == 2  # the odd size, then the full size: the documented launch order


@pytest.mark.parametrize("bench", MANIFEST.benchmarks, ids=lambda b: b.name)
def test_profile_args_run(binaries, bench):
    """Each variant with its manifest profile arguments (what `ncuwrap profile` runs under ncu)."""
    for v in bench.variants:
        if v.profile is None:
            continue
        args = list(v.profile.args)
        sizes = v.profile.size_overrides()
        run = run_binary(binaries[bench.name], [v.name], v.profile.warmup(default=bench.warmup), 1, sizes)
        assert run.results[0].verified, f"{bench.name}/{v.name} with {args}"


# ---------------------------------------------------------------- new in issue 12 (first run on a GPU pending)


def test_gemm_hopper_verifies_at_large_odd_sizes(binaries):
    """TMA zero-fills the tails: m and n not multiples of the 128 x 256 tile, k not of the 64-wide k-tile."""
    run = run_binary(binaries["gemm_hopper"], None, warmup=0, iters=1, sizes={"m": 4100, "n": 4360, "k": 4104})
    for r in run.results:
        assert r.verified, f"gemm_hopper/{r.variant}: max error {r.max_error} on {r.checked_sizes}"
        assert r.checked_sizes == ("333x1000x1000", "4100x4360x4104 (sampled)")


def test_gemm_hopper_states_its_k_constraint(binaries):
    import subprocess

    proc = subprocess.run([str(binaries["gemm_hopper"]), "--size", "k=4100"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2 and proc.stdout == ""
    assert "gemm_hopper needs k to be a multiple of 8" in proc.stderr and "k=4100" in proc.stderr


def test_transpose_swizzled128x64_verifies_at_8192(binaries):
    run = run_binary(binaries["transpose"], ["swizzled128x64", "swizzled64_float4"], warmup=1, iters=3, sizes={"rows": 8192, "cols": 8192})
    assert all(r.verified for r in run.results), [(r.variant, r.max_error) for r in run.results]
