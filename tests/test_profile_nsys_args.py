"""``ncuwrap profile --nsys-trace / --nsys-arg``: Nsight Systems' options passed on, on a CPU.

The stand-in nsys and ncu (tests/data/profile/fake_nsys, fake_ncu) record the argv they get, so every
nsys command line is checked word for word; --top replays the real H200 run of tests/data/h200_ncuwrap/top
(as tests/test_profile_top.py does), so the run with the options passed on must still print what the
H200 printed. A refused option is one line, exit code 2, before anything runs.
"""

from __future__ import annotations

import json
import re
import shlex
import sys
from pathlib import Path

import pytest

from ncuwrap.core.errors import InputError
from ncuwrap.profile import ProfileOptions, profile
from ncuwrap.profile.collection import plan_collection
from ncuwrap.profile.targets import Target
from ncuwrap.timeline import nsysrep
from ncuwrap.timeline.capture import capture
from ncuwrap.timeline.nsysrep import NsysOptions
from ncuwrap.timeline.options import TimelineOptions
from tests.conftest import (DATA, ROOT, charts_apart, headers_apart, roofline_advice_apart, run_cli, bound_apart, next_steps_apart, summary_apart,
                            top_kernels_apart, with_estimates_now, with_lines_hint, with_roofline_advice)

TOP_RUN = ROOT / DATA / "h200_ncuwrap" / "top"
FAKE_NCU = ROOT / "tests" / "data" / "profile" / "fake_ncu" / "ncu"
FAKE_NSYS = ROOT / "tests" / "data" / "profile" / "fake_nsys" / "nsys"
DEFAULT_HEAD = ["--trace=cuda,nvtx,osrt", "--sample=none", "--cpuctxsw=none", "--cuda-graph-trace=node"]


@pytest.fixture
def calls(monkeypatch, tmp_path):
    """The stand-ins' argv logs, read by tool name ("ncu", "nsys"); runs in tmp_path."""
    logs = {"ncu": tmp_path / "ncu.jsonl", "nsys": tmp_path / "nsys.jsonl"}
    monkeypatch.setenv("FAKE_NCU_ARGV_LOG", str(logs["ncu"]))
    monkeypatch.setenv("FAKE_NSYS_ARGV_LOG", str(logs["nsys"]))
    for name in ("FAKE_NCU_MODE", "FAKE_NCU_STREAM", "FAKE_NCU_VERSION", "FAKE_NCU_KERNELS", "FAKE_NCU_CSV",
                 "FAKE_NCU_MANGLED_CSV", "FAKE_NSYS_SQLITE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr("ncuwrap.profile.rundir.nvidia_smi", lambda: {"error": "no GPU in tests"})
    monkeypatch.chdir(tmp_path)
    return lambda tool: [json.loads(line) for line in logs[tool].read_text().splitlines()] if logs[tool].exists() else []


def _replay_top(monkeypatch):
    """The stand-ins hand out the H200 --top run's capture and exports."""
    monkeypatch.setenv("FAKE_NSYS_SQLITE", str(TOP_RUN / "timeline.sqlite.gz"))
    monkeypatch.setenv("FAKE_NCU_CSV", str(TOP_RUN / "report.raw.csv"))
    monkeypatch.setenv("FAKE_NCU_MANGLED_CSV", str(TOP_RUN / "report.mangled.csv"))
    consoles = re.findall(r'==PROF== Profiling "(.+)": .* - (\d+) passes', (TOP_RUN / "ncu.log").read_text())
    monkeypatch.setenv("FAKE_NCU_KERNELS", ",".join(f"{name}:{passes}" for name, passes in consoles))


def _prog(tmp_path: Path) -> Path:
    path = tmp_path / "prog"
    path.write_text("#!/bin/sh\necho hello from the program\n")
    path.chmod(0o755)
    return path


def _one_line_error(code, out, err) -> str:
    assert code == 2, err
    assert out == "" and "Traceback" not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("ncuwrap: error: "), err
    return lines[0][len("ncuwrap: error: "):]


# ------------------------------------------------------------------------------- the argv, exactly


def test_top_passes_the_trace_list_and_the_nsys_args(capsys, calls, monkeypatch, tmp_path):
    _replay_top(monkeypatch)
    program = [sys.executable, "-c", "pass"]
    code, out, err = run_cli(capsys, "profile", "--top", "5", "--steps", "marked", "--ncu", FAKE_NCU, "--nsys-path", FAKE_NSYS, "-o", "top",
                             "--nsys-trace", "cuda,nvtx,osrt,cublas", "--nsys-arg=--cuda-memory-usage=true",
                             "--nsys-arg", "-e", "--nsys-arg", "CUDA_MODULE_LOADING=EAGER", "--", *program)
    assert code == 0, err
    # A Python program: nsys also records PyTorch's ops (nsysrep.PYTORCH_TRACE), for each kernel's op and line.
    profile_argv = ["profile", "--trace=cuda,nvtx,osrt,cublas", "--sample=none", "--cpuctxsw=none", "--cuda-graph-trace=node",
                    "--pytorch=autograd-nvtx", "-o", "top/timeline",
                    "--force-overwrite", "true", "--cuda-memory-usage=true", "-e", "CUDA_MODULE_LOADING=EAGER", "--", *program]
    assert calls("nsys") == [profile_argv, ["export", "--type", "sqlite", "--output", "top/timeline.sqlite", "--force-overwrite",
                                            "true", "top/timeline.nsys-rep"]]
    # commands.txt and the capture's log show the command nsys got.
    line = shlex.join([str(FAKE_NSYS), *profile_argv])
    assert f"# rank kernels by GPU time (nsys)\n{line}\n" in (tmp_path / "top" / "commands.txt").read_text()
    assert (tmp_path / "top" / "timeline.log").read_text().startswith(f"$ {line}\n")
    # ncu gets none of them, and the report is still the H200's, to the byte.
    assert not any("CUDA_MODULE_LOADING=EAGER" in call or "--cuda-memory-usage=true" in call for call in calls("ncu"))
    out, _ = next_steps_apart(out)  # issue 24's next steps came after the recording
    out, bound = bound_apart(out)
    assert bound.startswith("Bound: launch (host code (no CUDA call)) - Judged without steps, over the window from the first GPU work to the last")
    # Since issue 54, what the charts lack for want of counters is said once (the H200's targeted set then had no L2 sectors).
    out, charts = charts_apart(out)
    assert [line.split(",")[0] for line in charts] == ["L2: not collected on every launch", "L1: peak not collected on every launch"]
    recorded = (TOP_RUN / "stdout.txt").read_text().replace("/tmp/top/", "top/")
    out, rows, saves = summary_apart(out)  # issue 25's names came after the recording
    recorded, rows_then, saves_then = summary_apart(bound_apart(with_estimates_now(with_roofline_advice(with_lines_hint(recorded))))[0])
    assert (rows, saves) == (rows_then, saves_then) and len(rows) == 5
    (out, top), (recorded, top_then) = top_kernels_apart(out), top_kernels_apart(recorded)
    assert top == top_then and len(top) == 10
    cut, cut_then = out.index("top/timeline.nsys-rep  ("), recorded.index("top/timeline.nsys-rep  (")
    # Since issue 38, the at-the-roof advice quotes the unit at its roof with its numbers.
    (kernels, advice), (kernels_then, _) = roofline_advice_apart(out[:cut]), roofline_advice_apart(recorded[:cut_then])
    # Since issue 39, each kernel's section header shows its short name (tests/test_profile_top.py checks them).
    (kernels, headers), (kernels_then, headers_then) = headers_apart(kernels), headers_apart(kernels_then)
    assert kernels == kernels_then and [w for _, w in headers] == [w for _, w in headers_then] and len(headers) == 5
    assert advice and all(re.search(r"The SMs are at \d+% of their peak, close to it \(their busiest pipe, \w+, at \d+% of its own\)", a)
                          for a in advice)  # the timeline part since issue 36: tests/golden/top_replayed_timeline_part.txt


def test_nsys_passes_the_trace_list_and_the_nsys_args(capsys, calls, tmp_path):
    prog, run = _prog(tmp_path), tmp_path / "run"
    code, out, err = run_cli(capsys, "profile", "--ncu", FAKE_NCU, "--nsys", "--nsys-path", FAKE_NSYS, "-o", run,
                             "--nsys-trace", " cuda, nvtx ,", "--nsys-arg", "--stats=false", "--", prog, "x")
    assert code == 0, err
    profile_argv = ["profile", "--trace=cuda,nvtx", "--sample=none", "--cpuctxsw=none", "--cuda-graph-trace=node", "-o", str(run / "timeline"),
                    "--force-overwrite", "true", "--stats=false", "--", str(prog), "x"]
    assert calls("nsys") == [profile_argv, ["export", "--type", "sqlite", "--output", str(run / "timeline.sqlite"),
                                            "--force-overwrite", "true", str(run / "timeline.nsys-rep")]]
    assert f"# timeline (nsys)\n{shlex.join([str(FAKE_NSYS), *profile_argv])}\n" in (run / "commands.txt").read_text()
    # ncu's command line is the one without them.
    assert [c for c in calls("ncu") if c[0] == "--export"] == [
        ["--export", str(run / "report"), "--clock-control", "none", "--launch-count", "10", *plan_collection("targeted", source=True).argv(),
         str(prog), "x"]]
    assert json.loads((run / "timeline.json").read_text())["bound"] == "kernel"  # bench's loop of strided_add, found by repetition


def test_without_them_the_nsys_argv_is_unchanged():
    program = ["./prog", "-n", "5"]
    default = ["/usr/bin/nsys", "profile", *DEFAULT_HEAD, "-o", "runs/t/timeline", "--force-overwrite", "true", "--", *program]
    assert nsysrep.profile_argv("/usr/bin/nsys", Path("runs/t/timeline"), program) == default
    assert nsysrep.profile_argv("/usr/bin/nsys", Path("runs/t/timeline"), program, NsysOptions()) == default
    passed = NsysOptions(trace="cuda", extra=("--gpu-metrics-devices=all",))
    assert nsysrep.profile_argv("/usr/bin/nsys", Path("runs/t/timeline"), program, passed) == [
        "/usr/bin/nsys", "profile", "--trace=cuda", "--sample=none", "--cpuctxsw=none", "--cuda-graph-trace=node", "-o", "runs/t/timeline",
        "--force-overwrite", "true", "--gpu-metrics-devices=all", "--", *program]


# ------------------------------------------------------------------------------------- refusals

RUN_DIR = "use ncuwrap's -o instead (the capture goes to RUN_DIR/timeline.nsys-rep)"
NO_SAMPLES = "drop it (ncuwrap passes --sample=none: its analysis reads no CPU samples)"
EXPORT = ("ncuwrap exports the capture itself (to RUN_DIR/timeline.sqlite, where nsys's --export would write too); "
          "drop it, and run 'nsys export' on RUN_DIR/timeline.nsys-rep for other formats")
NEEDS_CUDA = "ncuwrap's timeline analysis needs the CUDA trace (kernels and memory copies); add cuda, e.g. --nsys-trace"
REFUSED = [
    (["--nsys-arg", "-o"], f"--nsys-arg '-o': ncuwrap sets -o itself; {RUN_DIR}"),
    (["--nsys-arg=--output=mine"], f"--nsys-arg '--output=mine': ncuwrap sets --output itself; {RUN_DIR}"),
    (["--nsys-arg", "-f"], "--nsys-arg '-f': ncuwrap sets -f itself; use ncuwrap's --force instead"),
    (["--nsys-arg=--force-overwrite=true"], "--nsys-arg '--force-overwrite=true': ncuwrap sets --force-overwrite itself; use ncuwrap's --force instead"),
    (["--nsys-arg", "-t", "--nsys-arg", "cuda"], "--nsys-arg '-t': ncuwrap sets -t itself; use ncuwrap's --nsys-trace instead"),
    (["--nsys-arg=--trace=cuda,cublas"], "--nsys-arg '--trace=cuda,cublas': ncuwrap sets --trace itself; use ncuwrap's --nsys-trace instead"),
    (["--nsys-arg", "-s", "--nsys-arg", "process-tree"], f"--nsys-arg '-s': ncuwrap sets -s itself; {NO_SAMPLES}"),
    (["--nsys-arg=--sample=process-tree"], f"--nsys-arg '--sample=process-tree': ncuwrap sets --sample itself; {NO_SAMPLES}"),
    (["--nsys-arg=--cpuctxsw=process-tree"], "--nsys-arg '--cpuctxsw=process-tree': ncuwrap sets --cpuctxsw itself; "
                                             "drop it (ncuwrap passes --cpuctxsw=none: its analysis reads no context switches)"),
    (["--nsys-arg=--export=sqlite,json"], f"--nsys-arg '--export=sqlite,json': {EXPORT}"),
    (["--nsys-trace", "nvtx,osrt"], f"--nsys-trace 'nvtx,osrt': {NEEDS_CUDA} cuda,nvtx,osrt"),
    (["--nsys-trace", "cudnn,cublas"], f"--nsys-trace 'cudnn,cublas': {NEEDS_CUDA} cuda,cudnn,cublas"),
    (["--nsys-trace", ""], f"--nsys-trace '': {NEEDS_CUDA} cuda"),
]


@pytest.mark.parametrize("args, message", REFUSED, ids=[" ".join(args) for args, _ in REFUSED])
def test_refused_in_one_line_before_anything_runs(capsys, calls, tmp_path, args, message):
    run = tmp_path / "run"
    code, out, err = run_cli(capsys, "profile", "--ncu", FAKE_NCU, "--nsys", "--nsys-path", FAKE_NSYS, "-o", run, *args,
                             "--", _prog(tmp_path))
    assert _one_line_error(code, out, err) == message
    assert calls("ncu") == [] and calls("nsys") == [] and not run.exists()


def test_refused_with_top_before_nsys_runs(capsys, calls, tmp_path):
    code, out, err = run_cli(capsys, "profile", "--top", "3", "--ncu", FAKE_NCU, "--nsys-path", FAKE_NSYS, "-o", tmp_path / "run",
                             "--nsys-arg=-o", "--", _prog(tmp_path))
    assert _one_line_error(code, out, err) == f"--nsys-arg '-o': ncuwrap sets -o itself; {RUN_DIR}"
    assert calls("ncu") == [] and calls("nsys") == [] and not (tmp_path / "run").exists()


@pytest.mark.parametrize("args, flag", [(["--nsys-trace", "cuda"], "--nsys-trace"), (["--nsys-arg=--stats=true"], "--nsys-arg")])
def test_refused_without_nsys_or_top(capsys, calls, tmp_path, args, flag):
    code, out, err = run_cli(capsys, "profile", "--ncu", FAKE_NCU, "-o", tmp_path / "run", *args, "--", _prog(tmp_path))
    assert _one_line_error(code, out, err) == f"{flag}: ncuwrap runs nsys only with --nsys or --top; add one of them, or drop {flag}"
    assert calls("ncu") == [] and not (tmp_path / "run").exists()


def test_refused_before_a_bundled_build(capsys, calls, monkeypatch):
    monkeypatch.setattr("ncuwrap.profile.targets.resolve", lambda *a, **k: pytest.fail("built before the nsys options were checked"))
    code, out, err = run_cli(capsys, "profile", "--ncu", FAKE_NCU, "--nsys", "--nsys-trace", "nvtx", "transpose/naive")
    assert _one_line_error(code, out, err) == f"--nsys-trace 'nvtx': {NEEDS_CUDA} cuda,nvtx"


def test_the_library_refuses_them_too(tmp_path):
    """profile() and capture() check the options they are given, before the run folder is made."""
    owned = NsysOptions(extra=("--output=x",))
    message = f"--nsys-arg '--output=x': ncuwrap sets --output itself; {RUN_DIR}"
    with pytest.raises(InputError) as refused:
        profile(Target(argv=("./prog",), label="prog"), tmp_path / "run", ProfileOptions(nsys=True, nsys_options=owned),
                find_tool=lambda ncu: pytest.fail("ncu looked up before the nsys options were checked"))
    assert str(refused.value) == message
    with pytest.raises(InputError) as refused:
        capture(["./prog"], tmp_path / "capture", timeline=TimelineOptions(nsys=FAKE_NSYS), options=NsysOptions(trace="osrt"))
    assert str(refused.value) == f"--nsys-trace 'osrt': {NEEDS_CUDA} cuda,osrt"
    assert not (tmp_path / "run").exists() and not (tmp_path / "capture").exists()


def test_help_lists_both_flags(capsys):
    code, out, _ = run_cli(capsys, "profile", "--help")
    assert code == 0
    flat = " ".join(out.split())
    assert ("--nsys-trace LIST nsys's --trace list when ncuwrap runs nsys (timeline -- PROGRAM, profile --nsys or --top; "
            "default: cuda,nvtx,osrt); must include cuda, e.g. cuda,nvtx,osrt,cublas.") in flat
    assert ("--nsys-arg ARG Any other nsys profile argument when ncuwrap runs nsys (as --nsys-trace), one word each (repeatable), "
            "passed just before the program; options ncuwrap sets itself are refused.") in flat
