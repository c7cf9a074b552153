"""``ncuwrap profile`` end to end on a CPU: a stand-in ncu (tests/data/profile/fake_ncu/ncu) runs the
program, prints ncu's console lines and hands out a real H200 report. Every failure is one line and
exit code 2; Ctrl-C is 130."""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from types import SimpleNamespace

import pytest

from conftest import run_cli
from ncuwrap.profile.collection import plan_collection

ROOT = Path(__file__).resolve().parent.parent
FAKE_NCU = ROOT / "tests" / "data" / "profile" / "fake_ncu" / "ncu"
TARGETED = plan_collection("targeted", source=True)  # --source is the default


@pytest.fixture
def fake(monkeypatch, tmp_path):
    """The stand-in ncu; returns a function reading the argv it was called with."""
    argv_log = tmp_path / "ncu-argv.jsonl"
    monkeypatch.setenv("FAKE_NCU_ARGV_LOG", str(argv_log))
    for name in ("FAKE_NCU_MODE", "FAKE_NCU_STREAM", "FAKE_NCU_VERSION", "FAKE_NCU_KERNELS"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr("ncuwrap.profile.rundir.nvidia_smi", lambda: {"error": "no GPU in tests"})

    def calls():
        if not argv_log.exists():
            return []
        return [json.loads(line) for line in argv_log.read_text().splitlines()]

    return calls


def _profile_calls(calls):
    return [c for c in calls() if c and c[0] == "--export"]


def _prog(tmp_path, body="echo hello from the program", name="prog"):
    path = tmp_path / name
    path.write_text(f"#!/bin/sh\n{body}\n")
    path.chmod(0o755)
    return path


def test_profile_a_program(capsys, tmp_path, fake):
    prog = _prog(tmp_path)
    run = tmp_path / "run"
    code, out, err = run_cli(capsys, "profile", "--ncu", FAKE_NCU, "-o", run, "--", prog, "--size", "big")
    assert code == 0, err
    assert sorted(p.name for p in run.iterdir()) == ["commands.txt", "environment.json", "ncu.log", "profile.json",
                                                    "report.html", "report.ncu-rep", "report.raw.csv", "verdict.json"]
    # The exact command line ncu got.
    expected = ["--export", str(run / "report"), "--clock-control", "none", "--launch-count", "10",
                *TARGETED.argv(), str(prog), "--size", "big"]
    assert _profile_calls(fake) == [expected]
    commands = (run / "commands.txt").read_text().splitlines()
    assert commands[0] == "# profile" and shlex.split(commands[1]) == [str(FAKE_NCU), *expected]
    assert commands[3] == f"{FAKE_NCU} --import {run / 'report.ncu-rep'} --csv --page raw > {run / 'report.raw.csv'}"
    profile = json.loads((run / "profile.json").read_text())
    assert profile["status"] == "ok" and profile["error"] is None
    assert profile["files"] == sorted(p.name for p in run.iterdir())  # the documents the CLI wrote are listed too
    assert profile["passes_total"] == 38
    assert profile["launches"] == [{"index": 0, "kernel": "transposeNaive", "passes": 38,
                                    "launch": "launch 1 of the program (no kernel filter: every launch counts)"}]
    assert profile["filter"]["origin"] == "program-default" and profile["filter"]["launch_count"] == 10
    assert profile["collect"]["sections"] == ["LaunchStats", "Occupancy"]
    assert profile["wall_s"] > 0 and profile["ncu"]["version"] == "2025.3.1.0"
    verdict = json.loads((run / "verdict.json").read_text())
    assert verdict["kernels"][0]["bound"] == "memory" and verdict["kernels"][0]["limiter"] == "l2"
    assert "hello from the program" in (run / "ncu.log").read_text()
    assert (run / "report.raw.csv").read_text().startswith('"ID","Process ID"')
    assert json.loads((run / "environment.json").read_text())["ncu"]["version"] == "2025.3.1.0"
    # The screen: which kernel, passes, wall time, the folder; then the verdict.
    assert "ncu: profiled kernel 1 (transposeNaive): 38 passes" in err
    assert "profiled transposeNaive: launch 1 of the program (no kernel filter: every launch counts) (38 passes)" in err
    assert "ncu 2025.3.1.0: 38 replay passes" in err and "--clock-control none" in err
    assert f"run folder: {run}" in err
    assert "transposeNaive" in out and "Uncoalesced global stores" in out


def test_ncu_progress_on_stderr_is_followed_too(capsys, tmp_path, fake, monkeypatch):
    monkeypatch.setenv("FAKE_NCU_STREAM", "stderr")
    monkeypatch.setenv("FAKE_NCU_KERNELS", "transposeNaive:9")
    code, _, err = run_cli(capsys, "profile", "--ncu", FAKE_NCU, "-o", tmp_path / "run", "--", _prog(tmp_path))
    assert code == 0, err
    assert json.loads((tmp_path / "run" / "profile.json").read_text())["passes_total"] == 9


def test_an_existing_run_folder_is_refused_without_force(capsys, tmp_path, fake):
    prog, run = _prog(tmp_path), tmp_path / "run"
    assert run_cli(capsys, "profile", "--ncu", FAKE_NCU, "-o", run, "--", prog)[0] == 0
    before = (run / "profile.json").read_text()
    code, out, err = run_cli(capsys, "profile", "--ncu", FAKE_NCU, "-o", run, "--", prog)
    assert _one_line_error(code, out, err) == f"{run}: a run folder already exists here; pass --force to overwrite it, or choose another -o RUN_DIR"
    assert (run / "profile.json").read_text() == before
    assert len(_profile_calls(fake)) == 1  # ncu did not even run
    code, _, err = run_cli(capsys, "profile", "--ncu", FAKE_NCU, "-o", run, "--force", "--", prog)
    assert code == 0, err
    assert _profile_calls(fake)[-1][2] == "--force-overwrite"


def _one_line_error(code, out, err):
    """The error is the last line on stderr (progress lines may come before it), and only one line."""
    assert code == 2, err
    lines = err.splitlines()
    errors = [line for line in lines if line.startswith("ncuwrap: error: ")]
    assert len(errors) == 1 and lines[-1] == errors[0], err
    return errors[0][len("ncuwrap: error: "):]


def test_no_permission_to_the_counters(capsys, tmp_path, fake, monkeypatch):
    monkeypatch.setenv("FAKE_NCU_MODE", "perm")
    run = tmp_path / "run"
    message = _one_line_error(*run_cli(capsys, "profile", "--ncu", FAKE_NCU, "-o", run, "--", _prog(tmp_path)))
    assert message.startswith("no permission to read the GPU performance counters (ERR_NVGPUCTRPERM): run ncuwrap as root")
    assert "NVreg_RestrictProfilingToAdminUsers=0" in message and "--cap-add SYS_ADMIN" in message
    profile = json.loads((run / "profile.json").read_text())
    assert profile["status"] == "failed" and profile["error"] == message
    assert "ERR_NVGPUCTRPERM" in (run / "ncu.log").read_text()


def test_filter_matching_nothing_lists_the_kernels(capsys, tmp_path, fake, monkeypatch):
    monkeypatch.setenv("FAKE_NCU_MODE", "nokernels")
    message = _one_line_error(*run_cli(capsys, "profile", "--ncu", FAKE_NCU, "-o", tmp_path / "run", "-k", "scale_diag", "--", _prog(tmp_path)))
    assert message == ("the kernel filter -k 'scale_diag' matched no launch; the program launched: fill, scale_rows, scale_columns; "
                       "pass -k with one of these (a regular expression)")


def test_the_program_failed(capsys, tmp_path, fake):
    prog = _prog(tmp_path, "echo starting\necho 'error: CUDA error cudaErrorMemoryAllocation' >&2\nexit 3")
    run = tmp_path / "run"
    message = _one_line_error(*run_cli(capsys, "profile", "--ncu", FAKE_NCU, "-o", run, "--", prog))
    assert message == ("the program failed under ncu with exit code 3; its last lines: error: CUDA error cudaErrorMemoryAllocation; "
                       f"run it without ncu to reproduce, full log: {run / 'ncu.log'}")


def test_ncu_not_found(capsys, tmp_path, fake, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    message = _one_line_error(*run_cli(capsys, "profile", "-o", tmp_path / "run", "--", _prog(tmp_path)))
    assert message.startswith("ncu (Nsight Compute) is not on PATH; install Nsight Compute 2023.1 or newer")
    assert not (tmp_path / "run").exists()
    message = _one_line_error(*run_cli(capsys, "profile", "--ncu", tmp_path / "nope" / "ncu", "--", _prog(tmp_path)))
    assert message.endswith("no ncu there; pass --ncu the path of an installed Nsight Compute's ncu")


def test_ncu_on_path_is_used(capsys, tmp_path, fake, monkeypatch):
    monkeypatch.setenv("PATH", f"{FAKE_NCU.parent}:/usr/bin:/bin")
    code, _, err = run_cli(capsys, "profile", "-o", tmp_path / "run", "--", _prog(tmp_path))
    assert code == 0, err
    assert json.loads((tmp_path / "run" / "profile.json").read_text())["ncu"]["path"] == str(FAKE_NCU)


def test_ncu_too_old(capsys, tmp_path, fake, monkeypatch):
    monkeypatch.setenv("FAKE_NCU_VERSION", "2022.4.1.0")
    message = _one_line_error(*run_cli(capsys, "profile", "--ncu", FAKE_NCU, "-o", tmp_path / "run", "--", _prog(tmp_path)))
    assert message == f"{FAKE_NCU} is Nsight Compute 2022.4.1.0; ncuwrap needs 2023.1 or newer: install a newer Nsight Compute and pass --ncu /path/to/ncu"


def test_ncu_too_old_for_the_driver(capsys, tmp_path, fake, monkeypatch):
    monkeypatch.setenv("FAKE_NCU_MODE", "incompatible")
    message = _one_line_error(*run_cli(capsys, "profile", "--ncu", FAKE_NCU, "-o", tmp_path / "run", "--", _prog(tmp_path)))
    assert message.startswith(f"{FAKE_NCU} cannot profile on this driver or GPU (Failed to initialize the profiler: LibraryNotLoaded.")


def test_program_not_found(capsys, tmp_path, fake):
    message = _one_line_error(*run_cli(capsys, "profile", "--ncu", FAKE_NCU, "--", "./no_such_prog"))
    assert message.startswith("./no_such_prog: no such program; check the path")


SOURCE = ["--section", "SourceCounters"]
SOURCE_TAIL = ["--import-source", "yes"]


@pytest.mark.parametrize("collect, expected", [
    ("full", ["--set", "full", "--metrics", "dram__bytes_read.sum", *SOURCE_TAIL]),  # the full set has SourceCounters
    ("basic", ["--set", "basic", *SOURCE, "--metrics", "dram__bytes_read.sum", *SOURCE_TAIL]),
    ("SpeedOfLight,Occupancy", ["--section", "SpeedOfLight", "--section", "Occupancy", *SOURCE, "--metrics", "dram__bytes_read.sum", *SOURCE_TAIL])])
def test_collect_modes(capsys, tmp_path, fake, collect, expected):
    code, _, err = run_cli(capsys, "profile", "--ncu", FAKE_NCU, "-o", tmp_path / "run", "--collect", collect,
                           "--metrics", "dram__bytes_read.sum", "--", _prog(tmp_path))
    assert code == 0, err
    argv = _profile_calls(fake)[0]
    assert argv[argv.index("--launch-count") + 2:-1] == expected


@pytest.mark.parametrize("collect, expected", [("full", ["--set", "full"]), ("basic", ["--set", "basic"]),
                                               ("targeted", [*plan_collection("targeted").argv()])])
def test_no_source_leaves_source_counters_out(capsys, tmp_path, fake, collect, expected):
    code, _, err = run_cli(capsys, "profile", "--ncu", FAKE_NCU, "-o", tmp_path / "run", "--collect", collect, "--no-source", "--", _prog(tmp_path))
    assert code == 0, err
    argv = _profile_calls(fake)[0]
    assert argv[argv.index("--launch-count") + 2:-1] == expected
    assert "SourceCounters" not in argv and "--import-source" not in argv
    assert not (tmp_path / "run" / "report.source.csv").exists()


def test_import_source_is_ncuwraps_to_set(capsys, tmp_path, fake):
    message = _one_line_error(*run_cli(capsys, "profile", "--ncu", FAKE_NCU, "--ncu-arg=--import-source=no", "--", _prog(tmp_path)))
    assert message == "--ncu-arg '--import-source=no': ncuwrap sets --import-source itself; use ncuwrap's --source/--no-source instead"


def test_bad_collect_value(capsys, tmp_path, fake):
    message = _one_line_error(*run_cli(capsys, "profile", "--ncu", FAKE_NCU, "--collect", "Speed Of Light", "--", _prog(tmp_path)))
    assert message.startswith("--collect 'Speed Of Light': expected targeted, basic, full or a comma list of ncu section names")


def test_nth_launch_of_each_kernel(capsys, tmp_path, fake):
    code, _, err = run_cli(capsys, "profile", "--ncu", FAKE_NCU, "-o", tmp_path / "run", "-k", "scale_.*", "--nth-launch", "2",
                           "--", _prog(tmp_path))
    assert code == 0, err
    argv = _profile_calls(fake)[0]
    assert argv[:6] == ["--export", str(tmp_path / "run" / "report"), "--clock-control", "none", "--kernel-id", "::regex:scale_.*:2"]
    assert "--launch-skip" not in argv and "--launch-count" not in argv
    assert "launch 2 of transposeNaive with this grid, block and shared memory (--nth-launch 2)" in err
    message = _one_line_error(*run_cli(capsys, "profile", "--ncu", FAKE_NCU, "--nth-launch", "2", "-s", "1", "--", _prog(tmp_path)))
    assert message.startswith("--nth-launch and --launch-skip exclude each other")


def test_bundled_benchmark(capsys, tmp_path, fake, monkeypatch):
    binary = _prog(tmp_path, "echo '{\"benchmark\": \"transpose\"}'", name="transpose")
    built = []

    def build_one(name, arch=None, **kwargs):
        built.append((name, arch))
        return SimpleNamespace(binary=binary, arch="sm_90", cached=True, key="k" * 64)

    monkeypatch.setattr("ncuwrap.bundled.build.build_one", build_one)
    code, out, err = run_cli(capsys, "profile", "--ncu", FAKE_NCU, "-o", tmp_path / "run", "transpose_naive")
    assert code == 0, err
    assert built == [("transpose", None)]
    assert _profile_calls(fake) == [["--export", str(tmp_path / "run" / "report"), "--clock-control", "none",
                                     "--kernel-name", "regex:^transpose_naive$", "--launch-skip", "4", "--launch-count", "1",
                                     *TARGETED.argv(), str(binary), "--variant", "naive", "--warmup", "2", "--iters", "1"]]
    assert ("profiled transposeNaive: launch 5 of the launches matching -k ^transpose_naive$, --launch-skip 4 counts only "
            "matching launches: the first timed launch") in err
    profile = json.loads((tmp_path / "run" / "profile.json").read_text())
    assert profile["target"]["benchmark"] == "transpose" and profile["target"]["variant"] == "naive"
    assert profile["filter"]["origin"] == "bundled"


def test_bundled_names(capsys):
    from ncuwrap.bundled.manifest import load_manifest
    from ncuwrap.profile.targets import bundled_names

    names = bundled_names(load_manifest())
    for spelling in ("transpose/naive", "transpose:naive", "transpose.naive", "transpose_naive"):
        assert [(m.benchmark, m.variant) for m in names[spelling]] == [("transpose", "naive")]
    assert [(m.benchmark, m.variant) for m in names["transpose_shared"]] == [("transpose", "shared_tile")]
    assert "copy_ceiling/memcpy_d2d" not in names  # launches no kernel: nothing to profile
    code, out, err = run_cli(capsys, "profile", "--list")
    assert code == 0 and "transpose/naive" in out and "-k ^transpose_naive$" in out
    message = _one_line_error(*run_cli(capsys, "profile", "transpose/naiv"))
    assert message.startswith("TARGET 'transpose/naiv' is neither a bundled benchmark (did you mean transpose/naive")


def test_format_json(capsys, tmp_path, fake):
    code, out, err = run_cli(capsys, "profile", "--ncu", FAKE_NCU, "-o", tmp_path / "run", "-f", "json", "--", _prog(tmp_path))
    assert code == 0, err
    assert json.loads(out)["schema"] == "ncuwrap.diagnosis/v4"


def test_ctrl_c_stops_ncu_and_keeps_what_was_written(capsys, tmp_path, fake, monkeypatch):
    monkeypatch.setattr("ncuwrap.core.process.STOP_GRACE_S", (0.5, 0.5))
    prog = _prog(tmp_path, "echo ready\nsleep 300")

    def output(self, stream, line):
        if line == "ready":
            raise KeyboardInterrupt

    monkeypatch.setattr("ncuwrap.cli.profile._ScreenProgress.output", output)
    run = tmp_path / "run"
    code, out, err = run_cli(capsys, "profile", "--ncu", FAKE_NCU, "-o", run, "--", prog)
    assert code == 130
    assert f"ncuwrap: interrupted: ncu and the program were stopped; kept what was written in {run}" in err
    profile = json.loads((run / "profile.json").read_text())
    assert profile["status"] == "interrupted"
    assert "ready" in (run / "ncu.log").read_text()
    assert (run / "commands.txt").exists() and (run / "environment.json").exists()


def test_help_explains_launch_skip(capsys):
    code, out, _ = run_cli(capsys, "profile", "--help")
    assert code == 0
    flat = " ".join(out.split())
    assert "counts ONLY" in flat and "launches that match -k" in flat and "--nth-launch" in flat


FAKE_NSYS = ROOT / "tests" / "data" / "profile" / "fake_nsys" / "nsys"


def test_nsys_timeline_too(capsys, tmp_path, fake, monkeypatch):
    nsys_log = tmp_path / "nsys-argv.jsonl"
    monkeypatch.setenv("FAKE_NSYS_ARGV_LOG", str(nsys_log))
    prog, run = _prog(tmp_path), tmp_path / "run"
    code, out, err = run_cli(capsys, "profile", "--ncu", FAKE_NCU, "--nsys", "--nsys-path", FAKE_NSYS, "-o", run, "--", prog, "x")
    assert code == 0, err
    calls = [json.loads(line) for line in nsys_log.read_text().splitlines()]
    assert calls[0] == ["profile", "--trace=cuda,nvtx,osrt", "--sample=none", "--cpuctxsw=none", "--cuda-graph-trace=node", "-o", str(run / "timeline"),
                        "--force-overwrite", "true", "--", str(prog), "x"]
    for name in ("timeline.nsys-rep", "timeline.sqlite", "timeline.json", "timeline.html", "timeline.log", "report.ncu-rep", "verdict.json"):
        assert (run / name).is_file(), name
    commands = (run / "commands.txt").read_text()
    assert "# timeline (nsys)\n" in commands and "nsys: capturing the program's timeline ..." in err
    profile = json.loads((run / "profile.json").read_text())
    assert profile["timeline"] == {"report": "timeline.nsys-rep", "verdict": "timeline.json", "html": "timeline.html"}
    assert profile["files"] == sorted(p.name for p in run.iterdir())
    assert json.loads((run / "timeline.json").read_text())["bound"] == "kernel"  # its loop of strided_add, found by repetition
    assert "Bound: kernel (strided_add)" in out  # the timeline's verdict follows the kernels'


def test_nsys_missing_fails_before_ncu_runs(capsys, tmp_path, fake):
    message = _one_line_error(*run_cli(capsys, "profile", "--ncu", FAKE_NCU, "--nsys", "--nsys-path", tmp_path / "no-nsys",
                                       "-o", tmp_path / "run", "--", _prog(tmp_path)))
    assert "nsys not found" in message
    assert _profile_calls(fake) == [] and not (tmp_path / "run").exists()


# ------------------------------------------------------------------------ ncu options passed on

def _head(run):
    return ["--export", str(run / "report"), "--clock-control"]


@pytest.mark.parametrize("args, passed", [
    (["--nvtx-include", "train_step/"], ["--nvtx", "--nvtx-include", "train_step/"]),
    (["--nvtx-include", "A@outer/", "--nvtx-include", "B@", "--nvtx-exclude", "warmup/"],
     ["--nvtx", "--nvtx-include", "A@outer/", "--nvtx-include", "B@", "--nvtx-exclude", "warmup/"]),
    (["--nvtx-exclude", "warmup/"], ["--nvtx", "--nvtx-exclude", "warmup/"]),
    (["--replay-mode", "application"], ["--replay-mode", "application"]),
    (["--replay-mode", "range", "--nvtx-include", "step/"], ["--replay-mode", "range", "--nvtx", "--nvtx-include", "step/"]),
    (["--target-processes", "application-only"], ["--target-processes", "application-only"]),
    (["--cache-control", "none"], ["--cache-control", "none"]),
    (["--graph-profiling", "graph"], ["--graph-profiling", "graph"]),
    (["--cache-control", "all", "--replay-mode", "kernel", "--target-processes", "all", "--graph-profiling", "node"],
     ["--cache-control", "all", "--replay-mode", "kernel", "--target-processes", "all", "--graph-profiling", "node"]),
])
def test_ncu_options_are_passed_on(capsys, tmp_path, fake, args, passed):
    prog, run = _prog(tmp_path), tmp_path / "run"
    code, _, err = run_cli(capsys, "profile", "--ncu", FAKE_NCU, "-o", run, *args, "--", prog, "-n", "3")
    assert code == 0, err
    assert _profile_calls(fake) == [[*_head(run), "none", *passed, "--launch-count", "10", *TARGETED.argv(), str(prog), "-n", "3"]]


def test_clock_control_base_is_passed_and_said(capsys, tmp_path, fake):
    prog, run = _prog(tmp_path), tmp_path / "run"
    code, _, err = run_cli(capsys, "profile", "--ncu", FAKE_NCU, "-o", run, "--clock-control", "base", "--", prog)
    assert code == 0, err
    assert _profile_calls(fake) == [[*_head(run), "base", "--launch-count", "10", *TARGETED.argv(), str(prog)]]
    assert "clocks locked by ncu: --clock-control base" in err and "clocks left alone" not in err
    # The diagnosis reads the clock setting from the report's command line.
    assert "--clock-control base" in (run / "report.html").read_text()


def test_ncu_args_go_verbatim_just_before_the_program(capsys, tmp_path, fake):
    prog, run = _prog(tmp_path), tmp_path / "run"
    code, _, err = run_cli(capsys, "profile", "--ncu", FAKE_NCU, "-o", run, "--collect", "basic", "--nvtx-include", "s/",
                           "--ncu-arg", "--section", "--ncu-arg", "MemoryWorkloadAnalysis", "--ncu-arg=--kernel-name-base=demangled", "--", prog)
    assert code == 0, err
    assert _profile_calls(fake) == [[*_head(run), "none", "--nvtx", "--nvtx-include", "s/", "--launch-count", "10", "--set", "basic",
                                     *SOURCE, *SOURCE_TAIL, "--section", "MemoryWorkloadAnalysis", "--kernel-name-base=demangled", str(prog)]]
    # --nvtx given through --ncu-arg is not added a second time.
    code, _, err = run_cli(capsys, "profile", "--ncu", FAKE_NCU, "-o", run, "--force", "--collect", "basic", "--nvtx-include", "s/",
                           "--ncu-arg=--nvtx", "--", prog)
    assert code == 0, err
    assert _profile_calls(fake)[-1] == [*_head(run)[:2], "--force-overwrite", "--clock-control", "none", "--nvtx-include", "s/",
                                        "--launch-count", "10", "--set", "basic", *SOURCE, *SOURCE_TAIL, "--nvtx", str(prog)]


@pytest.mark.parametrize("kernel_flag", ["-k", "--kernel", "--kernel-name"])
@pytest.mark.parametrize("value", ["scale_.*", "regex:scale_.*"])
def test_kernel_name_spellings(capsys, tmp_path, fake, kernel_flag, value):
    prog, run = _prog(tmp_path), tmp_path / "run"
    code, _, err = run_cli(capsys, "profile", "--ncu", FAKE_NCU, "-o", run, kernel_flag, value, "-s", "2", "--", prog)
    assert code == 0, err
    assert _profile_calls(fake) == [[*_head(run), "none", "--kernel-name", "regex:scale_.*", "--launch-skip", "2", "--launch-count", "10",
                                     *TARGETED.argv(), str(prog)]]


@pytest.mark.parametrize("args, message", [
    (["--replay-mode", "kernels"], "--replay-mode 'kernels': expected kernel, application, range or app-range"),
    (["--target-processes", "children"], "--target-processes 'children': expected all or application-only"),
    (["--cache-control", "flush"], "--cache-control 'flush': expected all or none"),
    (["--clock-control", "boost"], "--clock-control 'boost': expected none or base"),
    (["--graph-profiling", "nodes"], "--graph-profiling 'nodes': expected node or graph"),
    (["--nvtx-include", " "], "--nvtx-include: an empty NVTX expression; give a range name, e.g. --nvtx-include 'train_step/'"),
    (["--ncu-arg=--replay-mode=application"], "--ncu-arg '--replay-mode=application': ncuwrap sets --replay-mode itself; use ncuwrap's --replay-mode instead"),
    (["--ncu-arg", "-o"], "--ncu-arg '-o': ncuwrap sets -o itself; use ncuwrap's -o instead"),
    (["--ncu-arg=--kernel-name"], "--ncu-arg '--kernel-name': ncuwrap sets --kernel-name itself; use ncuwrap's -k instead"),
    (["--ncu-arg=--clock-control"], "--ncu-arg '--clock-control': ncuwrap sets --clock-control itself; use ncuwrap's --clock-control instead"),
])
def test_bad_ncu_option_values_are_one_line(capsys, tmp_path, fake, args, message):
    run = tmp_path / "run"
    assert _one_line_error(*run_cli(capsys, "profile", "--ncu", FAKE_NCU, "-o", run, *args, "--", _prog(tmp_path))) == message
    assert _profile_calls(fake) == [] and not run.exists()  # refused before ncu ran or the folder was made


def test_bad_ncu_option_is_refused_before_a_bundled_build(capsys, tmp_path, fake, monkeypatch):
    monkeypatch.setattr("ncuwrap.profile.targets.resolve", lambda *a, **k: pytest.fail("built before the options were checked"))
    message = _one_line_error(*run_cli(capsys, "profile", "--ncu", FAKE_NCU, "--replay-mode", "x", "transpose/naive"))
    assert message == "--replay-mode 'x': expected kernel, application, range or app-range"
