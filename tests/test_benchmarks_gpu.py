"""On a GPU: build and run every bundled benchmark (small iteration counts) and check the results verify.

Marked ``gpu``: skipped where there is no GPU (see tests/conftest.py). These also check the launch order
the profiler relies on, by counting the timed samples, and write nothing outside pytest's tmp folders.
"""

from __future__ import annotations

import pytest

from ncuwrap.benchmarks.build import build_many
from ncuwrap.benchmarks.manifest import load_manifest
from ncuwrap.benchmarks.runner import gpu_problem, run_binary

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
