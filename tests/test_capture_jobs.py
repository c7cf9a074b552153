"""workloads/clock/capture.sh and workloads/op_limits/capture.sh without a GPU: their job loop is the preamble's
(workloads/common/preamble.sh, run_jobs): each job started only before the deadline, logged as it starts and ends
(or as skipped), then packed; 'all done' and the listing last. Stand-ins for nsys, ncu, nvidia-smi and the
programs (python3 runs this interpreter for ``-c``; a program prints its JSON line) check the lines logged and the
files packed; the scripts themselves run on the H200."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tarfile

import pytest

from tests.conftest import ROOT

STAND_INS = {
    "python3": f'''
case "${{1:-}}" in -c|-m) exec "{sys.executable}" "$@";; esac
trace=""; prev=""; for a in "$@"; do [ "$prev" = --kineto ] && trace=$a; prev=$a; done
[ -n "$trace" ] && echo '{{"traceEvents": []}}' | gzip -n > "$trace"
echo "{{\\"program\\": \\"$(basename "${{1:-none}}" .py)\\", \\"step_ms_mean\\": 1.5}}"
''',
    "nsys": r'''
case "$1" in
  --version) echo "NVIDIA Nsight Systems version 2025.3.1"; exit 0;;
  export) for a; do last=$a; done; prev=""; for a; do [ "$prev" = --output ] && out=$a; prev=$a; done; echo "export of $last" > "$out";;
  profile)
    [ "${2:-}" = --help ] && { echo "--pytorch=autograd-nvtx autograd-shapes-nvtx"; exit 0; }
    o=""; prev=""; while [ $# -gt 0 ]; do [ "$prev" = -o ] && o=$1; [ "$1" = -- ] && { shift; break; }; prev=$1; shift; done
    "$@"; rc=$?; echo REP > "$o.nsys-rep"; exit $rc;;
esac
''',
    "ncu": r'''
case " $* " in *" --version "*) echo "NVIDIA (R) Nsight Compute Command Line Profiler 2025.3.1.0"; exit 0;; esac
case " $* " in *" --query-metrics "*) echo "lts__t_bytes Counter"; exit 0;; esac
case " $* " in *" --import "*) echo '"ID","Kernel Name"'; exit 0;; esac
''',
    "nvidia-smi": "echo 'NVIDIA H200, 580.0'",
}
SCRIPTS = {"clock": ("workloads/clock/capture.sh", "recapture", "recapture.tar"),
           "op_limits": ("workloads/op_limits/capture.sh", "kineto_fp8", "matmul.tar")}


def _run(tmp_path, script: str, deadline: str, jobs: list[str]) -> tuple[list[str], dict[str, set[str]]]:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    for name, body in STAND_INS.items():
        (bin_dir / name).write_text(f"#!/bin/bash\n{body}")
        (bin_dir / name).chmod(0o755)
    out = tmp_path / "out"
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}", "NO_WHEELS": "1", "DEADLINE_S": deadline, "WORK_ROOT": str(tmp_path),
           "NSYS": str(bin_dir / "nsys"), "NCU": str(bin_dir / "ncu")}
    for name in ("PYTHONPATH", "CLOCK_PROGRAMS", "OP_PROGRAMS", "CAL_PROGRAM"):
        env.pop(name, None)
    done = subprocess.run(["bash", script, str(out), *jobs], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and done.stderr == "", done.stderr[-2000:]
    packed = {}
    for tar in sorted(out.iterdir()):
        with tarfile.open(tar) as t:
            packed[tar.name] = {n.removeprefix("./") for n in t.getnames()}
    with tarfile.open(out / "meta.tar") as t:
        clock_log = t.extractfile("meta/clock.log").read().decode()
    return [re.sub(r"^\[\d+\.\ds \d\d:\d\d:\d\d\] ", "", line) for line in clock_log.splitlines()], packed


@pytest.mark.parametrize("which", sorted(SCRIPTS))
def test_each_job_is_logged_run_and_packed(tmp_path, which):
    script, job, tar = SCRIPTS[which]
    lines, packed = _run(tmp_path, script, "300", [job, "bogus"])
    logged = [line for line in lines if line.startswith(("job ", "unknown job", "all done"))]
    assert logged == [f"job {job} start", f"job {job} done", "job bogus start", "unknown job bogus", "job bogus done", "all done"]
    # The listing of OUT and of each kept folder, last, in clock.log and packed with it.
    listed = lines[lines.index("all done") + 1:]
    assert f"{tmp_path / 'out'}:" in listed and f"{tmp_path / f'{which}_work'}/keep/meta:" in listed
    assert sorted(packed) == sorted(["meta.tar", tar])
    assert {"meta/clock.log", "meta/env.txt"} <= packed["meta.tar"]


@pytest.mark.parametrize("which", sorted(SCRIPTS))
def test_past_the_deadline_each_job_is_skipped_and_still_packed(tmp_path, which):
    script, job, _ = SCRIPTS[which]
    lines, packed = _run(tmp_path, script, "0", [job, "bogus"])
    assert [line for line in lines if line.startswith(("job ", "all done"))] == [f"job {job} SKIPPED (past 0s)", "job bogus SKIPPED (past 0s)",
                                                                                    "all done"]
    assert sorted(packed) == ["meta.tar"]
