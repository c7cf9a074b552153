"""workloads/ncu_shapes/capture.sh without a GPU: stand-ins for ncu, nvcc, python3 and nvidia-smi log their
command lines and write what the real tools would (a report where ncu is given -o, a CSV for --import, a dump),
so the command lines, the files kept and the packing are checked here; the script itself runs on the H200."""

from __future__ import annotations

import os
import shlex
import subprocess
import tarfile

import pytest

from tests.conftest import ROOT

SCRIPT = ROOT / "workloads" / "ncu_shapes" / "capture.sh"
SHAPES = ("externc", "cluster", "graph", "basic", "nvtx", "multi", "appreplay", "cupy", "triton", "compile")

STAND_INS = {
    # ncu: a report for -o (NAME.ncu-rep), a line of CSV for --import, its version.
    "ncu": r'''
case " $* " in *" --version "*) echo "NVIDIA (R) Nsight Compute Command Line Profiler 2025.3.1.0"; exit 0;; esac
case " $* " in *" --import "*) echo '"ID","Kernel Name"'; exit 0;; esac
while [ $# -gt 0 ]; do [ "$1" = -o ] && { printf 'NVR\0stand-in' > "$2.ncu-rep"; echo "==PROF== Profiling \"k\""; }; shift; done
''',
    "nvcc": r'''
while [ $# -gt 0 ]; do [ "$1" = -o ] && { printf '#!/bin/sh\necho ok\n' > "$2"; chmod +x "$2"; }; shift; done
''',
    # python3: the dump writes its last argument; the comparison prints its JSON.
    "python3": r'''
case "$*" in *dump_ncu_report.py*) for a; do last=$a; done; echo '{}' | gzip > "$last";; esac
case "$*" in *tests.ncu_rep_compare*) echo '{"counts": {}, "wrong": []}';; esac
exit 0
''',
    "nvidia-smi": "echo 'NVIDIA H200, 580.0'",
}


def _capture(tmp_path, budget: int = 400) -> tuple[list[list[str]], str, list]:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    calls = tmp_path / "calls.log"
    for name, body in STAND_INS.items():
        tool = bin_dir / name
        tool.write_text(f'#!/bin/bash\nprintf "%s\\n" "{name} $(printf "%q " "$@")" >> {calls}\n{body}')
        tool.chmod(0o755)
    out = tmp_path / "out"
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}", "WORK": str(tmp_path / "work"), "BUDGET_S": str(budget),
           "NCU_PY": "/opt/extras"}
    done = subprocess.run(["bash", str(SCRIPT), str(out)], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    logged = [shlex.split(line) for line in calls.read_text().splitlines()]
    return logged, (out / "summary.txt").read_text(), sorted(out.iterdir())


def test_every_shape_is_captured_with_its_options_and_packed(tmp_path):
    calls, summary, files = _capture(tmp_path)
    profiled = {argv[argv.index("-o") + 1].rsplit("/", 1)[1]: argv for argv in calls if argv[0] == "ncu" and "-o" in argv}
    assert sorted(profiled) == sorted(SHAPES)
    for name, argv in profiled.items():
        assert argv[argv.index("--clock-control") + 1] == "none", name
        assert "-f" in argv and ("--launch-count" in argv), name
        if name != "basic":
            assert argv[argv.index("--set") + 1] == "full" and argv[argv.index("--import-source") + 1] == "yes", name
    assert profiled["basic"][profiled["basic"].index("--set") + 1] == "basic"
    options = {"graph": ["--graph-profiling", "graph"], "appreplay": ["--replay-mode", "application"], "multi": ["--target-processes", "all"],
               "nvtx": ["--nvtx", "--nvtx-include", "measured/"]}
    for name, wanted in options.items():
        argv = profiled[name]
        assert argv[argv.index(wanted[0]):argv.index(wanted[0]) + len(wanted)] == wanted, name
    assert profiled["multi"][-4:-1] == ["sh", "-c", '"$0" externc && "$0" externc']
    assert profiled["compile"][-1].endswith("triton_compile.py") and profiled["triton"][-1].endswith("triton_kernel.py")
    assert profiled["cupy"][-1].endswith("cupy_raw.py")
    (nvcc,) = [argv for argv in calls if argv[0] == "nvcc" and "-o" in argv]
    assert nvcc[1:5] == ["-O3", "-arch=sm_90", "-lineinfo", "-o"] and nvcc[-1].endswith("shapes.cu")
    assert sum(1 for argv in calls if argv[0] == "ncu" and "--import" in argv and "raw" in argv) == len(SHAPES)
    assert sum(1 for argv in calls if argv[0] == "python3" and any(a.endswith("dump_ncu_report.py") for a in argv)) == len(SHAPES)
    assert "SKIPPED" not in summary and "compare: exit 0" in summary
    assert [f.name for f in files] == ["ncu_shapes.tar", "summary.txt"]
    with tarfile.open(files[0]) as tar:
        names = {n.removeprefix("./") for n in tar.getnames()}
    for name in SHAPES:
        assert {f"{name}.ncu-rep.gz", f"{name}.raw.csv.gz", f"{name}.ncu_report.json.gz", f"{name}.log"} <= names, name
    assert {"summary.txt", "versions.txt", "compare.json"} <= names


@pytest.mark.parametrize("budget", [30])
def test_a_budget_too_small_skips_shapes_and_still_packs(tmp_path, budget):
    _, summary, files = _capture(tmp_path, budget)
    assert "SKIPPED" in summary and "done:" in summary
    assert [f.name for f in files] == ["ncu_shapes.tar", "summary.txt"]
