"""On a GPU: representative bundled variants profiled with --collect targeted and with --collect full
give the same verdicts, and `ncuwrap profile -- ./own_program` works for a program that is not bundled.

Skipped without a GPU (conftest), ncu or nvcc. The sweep over all 42 profiled variants, with pass counts
and wall times, is benchmarks/targeted_vs_full.py (it does not fit a test run); scripts/test-gpu runs this
file and tests/test_benchmarks_gpu.py as separate parts, each well inside one device call.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import run_cli
from ncuwrap.kernel.document import expand

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not shutil.which("ncu") or not shutil.which("nvcc"), reason="needs ncu and nvcc on PATH"),
]

ROOT = Path(__file__).resolve().parent.parent
OWN = ROOT / "tests" / "data" / "programs" / "own_program.cu"


# One variant per kind of verdict the rules give: stores, bank conflicts, divergence, atomics, a
# tensor-core compute kernel, and a stream at the roofline.
REPRESENTATIVE = [("transpose", "naive"), ("transpose", "shared_tile"), ("divergence", "per_lane"),
                  ("reduction", "atomic_per_element"), ("gemm", "tensor_core"), ("vecadd", "coalesced")]


def _variants():
    from ncuwrap.bundled.manifest import load_manifest

    profiled = {(b.name, v.name) for b in load_manifest().benchmarks for v in b.variants if v.profile is not None}
    assert set(REPRESENTATIVE) <= profiled
    return REPRESENTATIVE


@pytest.fixture(scope="module")
def tool():
    from ncuwrap.profile.ncu_tool import ncu_tool

    return ncu_tool()


@pytest.mark.parametrize("family, variant", _variants(), ids=lambda x: x)
def test_targeted_gives_the_verdicts_of_full(family, variant, tmp_path, tool):
    from ncuwrap.profile import ProfileOptions, profile, same_verdicts, targets, verdicts

    target = targets.bundled(family, variant)
    runs = {}
    for collect in ("targeted", "full"):
        # Diagnosed from ncu's CSV export; the stop line has its own test below.
        options = ProfileOptions(collect=collect, ncu=tool.path, bench=False)
        runs[collect] = profile(target, tmp_path / collect, options, find_tool=lambda _path: tool)
    targeted, full = runs["targeted"], runs["full"]
    print(f"{family}/{variant}: targeted {targeted.passes_total} passes {targeted.wall_s:.2f} s, "
          f"full {full.passes_total} passes {full.wall_s:.2f} s")
    assert len(targeted.launches) == len(full.launches) == 1
    assert same_verdicts(targeted.diagnosis, full.diagnosis), (verdicts(targeted.diagnosis), verdicts(full.diagnosis))
    assert {n.rule for k in targeted.diagnosis.kernels for n in k.not_evaluated} <= \
        {n.rule for k in full.diagnosis.kernels for n in k.not_evaluated}
    assert targeted.passes_total < full.passes_total


def test_profile_prints_the_stop_line_measured_now(capsys, tmp_path):
    # The padded transpose against the copy ceiling at the same bytes, timed uninstrumented for this
    # run (one process run here to keep the suite short; the default is 3): 88% on the H200 in
    # three runs, short of the 90% line, with the swizzled float4 variants past it.
    run = tmp_path / "run"
    code, out, err = run_cli(capsys, "profile", "transpose_padded", "-o", run, "--bench-runs", "1", "-f", "json")
    assert code == 0, err
    line = json.loads(out)["stop_line"]
    assert (line["benchmark"], line["variant"], line["yardstick"], line["runs"]) == ("transpose", "padded_tile",
                                                                                  "the copy ceiling at the same bytes", 1)
    assert 70 <= line["pct"] <= 100 and line["value"] > 2500
    assert line["decision"] == ("stop" if line["pct"] >= 90 else "go on")
    if line["decision"] == "go on":
        assert line["further"]["variant"] in ("swizzled64_float4", "swizzled128x64")
    bench = json.loads((run / "bench.json").read_text())
    assert bench["schema"] == "ncuwrap.bench/v1" and {e["variant"] for e in bench["benchmarks"]} >= {"padded_tile", "swizzled64_float4"}
    code, table, err = run_cli(capsys, "diagnose", run)
    assert code == 0 and "\nStop line\n  padded_tile: " in table


@pytest.fixture(scope="module")
def own_program(tmp_path_factory):
    folder = tmp_path_factory.mktemp("own")
    binary = folder / "own_program"
    subprocess.run(["nvcc", "-O3", "-arch=sm_90", "-lineinfo", "-o", str(binary), str(OWN)], check=True)
    return binary


def test_profile_a_program_that_is_not_bundled(capsys, tmp_path, own_program):
    run = tmp_path / "run"
    code, out, err = run_cli(capsys, "profile", "-o", run, "--", own_program)
    assert code == 0, err
    profile = json.loads((run / "profile.json").read_text())
    assert profile["status"] == "ok"
    assert [launch["kernel"] for launch in profile["launches"]] == ["fill"] + ["scale_rows", "scale_columns"] * 3
    assert all(launch["passes"] for launch in profile["launches"])
    verdict = json.loads((run / "verdict.json").read_text())
    columns = [k for k in expand(verdict)["kernels"] if k["name"] == "scale_columns"]
    assert all(any(f["id"] == "uncoalesced_global_loads" for f in k["findings"]) for k in columns)


def test_profile_program_from_python_on_the_gpu(tmp_path, own_program):
    """ncuwrap.profile_program runs the real ncu as the command does and returns the diagnosis it prints."""
    import ncuwrap

    d = ncuwrap.profile_program([str(own_program)], output=tmp_path / "run",
                                 launches=ncuwrap.LaunchSelection(kernel="scale_columns", launch_count=1))
    assert [k.name for k in d.kernels] == ["scale_columns"]
    assert any(f.id == "uncoalesced_global_loads" for f in d.kernels[0].findings)
    profile = json.loads((tmp_path / "run" / "profile.json").read_text())
    assert profile["status"] == "ok" and [launch["kernel"] for launch in profile["launches"]] == ["scale_columns"]


def test_nth_launch_of_each_kernel_on_a_real_program(capsys, tmp_path, own_program):
    run = tmp_path / "run"
    code, out, err = run_cli(capsys, "profile", "--nth-launch", "2", "-o", run, "--", own_program)
    assert code == 0, err
    launches = json.loads((run / "profile.json").read_text())["launches"]
    assert sorted(launch["kernel"] for launch in launches) == ["scale_columns", "scale_rows"]  # fill runs once
    assert all("launch 2 of" in launch["launch"] for launch in launches)


def test_real_failures_are_one_line(capsys, tmp_path, own_program):
    code, out, err = run_cli(capsys, "profile", "-k", "no_such_kernel", "-o", tmp_path / "a", "--", own_program)
    assert code == 2 and "matched no launch" in err.splitlines()[-1]
    code, out, err = run_cli(capsys, "profile", "-o", tmp_path / "b", "--", own_program, "--fail")
    assert code == 2
    assert "exit code 3" in err.splitlines()[-1] and "failing on purpose" in err.splitlines()[-1]
