"""workloads/whatif_faster_kernel/capture.sh without a GPU: the stand-in nsys and ncu of tests/data/profile hand out
the H200's ``profile --top 5`` run (tests/data/h200_ncuwrap/top), a stub program prints a JSON line as prog.py
does, so the steps, their order, the logs and what is packed into the one file that comes back are checked here;
the script itself runs on the H200."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tarfile

from tests.conftest import ROOT

SCRIPT = ROOT / "workloads" / "whatif_faster_kernel" / "capture.sh"
RUN = ROOT / "tests" / "data" / "h200_ncuwrap" / "top"
PROFILE = ROOT / "tests" / "data" / "profile"


def test_capture_script_runs_each_step_and_packs_one_file(tmp_path):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "nvidia-smi").write_text("#!/bin/sh\necho 'NVIDIA H200, 580.0'\n")
    (bin_dir / "python3").write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n')  # this interpreter, its packages with it
    for tool in ("nvidia-smi", "python3"):
        (bin_dir / tool).chmod(0o755)
    stub = tmp_path / "prog.py"
    stub.write_text("import json, sys\nprint(json.dumps({'program': 'whatif_faster_kernel', 'variant': sys.argv[-1], 'step_ms_mean': 0.5}))\n")
    consoles = re.findall(r'==PROF== Profiling "(.+)": .* - (\d+) passes', (RUN / "ncu.log").read_text())
    out = tmp_path / "out"
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}", "OUT": str(out), "NO_WHEELS": "1", "FK_PROGRAM": str(stub), "DEADLINE_S": "300",
           "NCU": str(PROFILE / "fake_ncu" / "ncu"), "NSYS": str(PROFILE / "fake_nsys" / "nsys"),
           "FAKE_NCU_ARGV_LOG": str(tmp_path / "ncu.jsonl"), "FAKE_NSYS_ARGV_LOG": str(tmp_path / "nsys.jsonl"),
           "FAKE_NSYS_SQLITE": str(RUN / "timeline.sqlite.gz"), "FAKE_NCU_CSV": str(RUN / "report.raw.csv"),
           "FAKE_NCU_MANGLED_CSV": str(RUN / "report.mangled.csv"), "FAKE_NCU_KERNELS": ",".join(f"{n}:{p}" for n, p in consoles)}
    for name in ("FAKE_NCU_MODE", "FAKE_NCU_STREAM", "FAKE_NCU_VERSION", "PYTHONPATH"):
        env.pop(name, None)
    done = subprocess.run(["bash", str(SCRIPT)], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert sorted(p.name for p in out.iterdir()) == ["whatif_faster_kernel.tgz"]
    with tarfile.open(out / "whatif_faster_kernel.tgz") as tgz:
        names = {n.removeprefix("./") for n in tgz.getnames()}
        text = {n: tgz.extractfile(m).read() for n, m in ((n.removeprefix("./"), m) for n, m in zip(tgz.getnames(), tgz.getmembers()))
                if m.isfile()}
    assert {"summary.txt", "env.txt", "plain.jsonl", "profile.stdout.txt", "profile.stderr.txt", "timeline_kernels.txt", "timeline_kernels.json",
            "run/timeline.sqlite.gz", "run/report.raw.csv", "run/report.mangled.csv", "run/verdict.json", "run/profile.json"} <= names
    # The plain runs interleaved, slow first; then the profile of the slow variant; then the prediction.
    plain = [json.loads(line)["variant"] for line in text["plain.jsonl"].decode().splitlines()]
    assert plain == ["slow", "fixed"] * 3
    summary = text["summary.txt"].decode()
    order = [summary.index(s) for s in ("plain slow run 1 rc=0", "plain fixed run 3 rc=0", "profile rc=0", "timeline --kernels rc=0", "all done")]
    assert order == sorted(order)
    nsys = [json.loads(line) for line in (tmp_path / "nsys.jsonl").read_text().splitlines()]
    profiled = [call for call in nsys if call[0] == "profile"]
    assert len(profiled) == 1 and profiled[0][-5:] == ["--", "python3", str(stub), "--variant", "slow"]
    assert "faster_kernel: ~" in text["timeline_kernels.txt"].decode()
    assert json.loads(text["timeline_kernels.json"])["what_if"]["kernel_verdicts"]["report"].endswith("/run")
    assert sum(len(v) for v in text.values()) < 8 << 20
