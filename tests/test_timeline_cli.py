"""Timelines through the command line: bad inputs end in one line naming the file (exit code 2, no
traceback); the nsys command lines are checked exactly with subprocess and shutil.which mocked, so
no nsys and no GPU are needed. A real .nsys-rep export runs only where nsys is (marked gpu)."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import threading
import time
from pathlib import Path

import pytest

from ncuwrap.core import forked, process
from ncuwrap.timeline import nsysrep
from tests.conftest import DATA, H200, ROOT, run_cli
from tests.process_helpers import FinishedPopen, alive

NSYS_DIR = H200 / "nsys"
BAD = DATA / "timeline_bad"
FAKE_NSYS = "/opt/nvidia/nsight-systems/2025.3.2/bin/nsys"
NSYS_SCRIPT = ROOT / "tests" / "data" / "profile" / "fake_nsys" / "nsys"  # FAKE nsys that runs: a script


def _one_line_error(code, out, err, path, pattern, progress=False):
    """Exit code 2 and one error line; with ``progress``, after the line saying nsys started."""
    assert code == 2, err
    assert out == ""
    lines = err.strip().splitlines()
    if progress:
        assert lines[0].startswith("nsys: capturing "), err
        lines = lines[1:]
    assert len(lines) == 1, err
    assert "Traceback" not in err
    assert lines[0].startswith(f"ncuwrap: error: {path}"), lines[0]
    assert re.search(pattern, lines[0]), lines[0]


@pytest.mark.parametrize("path, pattern", [
    (BAD / "no_kernels.sqlite", r"no CUPTI_ACTIVITY_KIND_KERNEL table \(CUDA kernel activity\); .*nsys profile --trace=cuda"),
    (BAD / "truncated.sqlite", r"corrupt or truncated SQLite database \(database disk image is malformed\); export the report again"),
    (BAD / "not_sqlite.sqlite", r"not an SQLite database \(no 'SQLite format 3' header\)"),
    (BAD / "capture.qdstrm", r"an unfinished Nsight Systems capture \(.qdstrm\).*QdstrmImporter.*libdw.so.1.*LD_LIBRARY_PATH"),
    (BAD / "missing.sqlite", r"no such file; check the path"),
])
def test_bad_timeline(capsys, path, pattern):
    code, out, err = run_cli(capsys, "diagnose", path)
    _one_line_error(code, out, err, path, pattern)


def test_empty_sqlite(capsys, tmp_path):
    path = tmp_path / "empty.sqlite"
    path.touch()
    code, out, err = run_cli(capsys, "diagnose", path)
    _one_line_error(code, out, err, path, r"the file is empty")


def test_nsys_rep_without_nsys(capsys, monkeypatch):
    monkeypatch.setattr(nsysrep.shutil, "which", lambda name: None)
    path = NSYS_DIR / "bench.nsys-rep"
    code, out, err = run_cli(capsys, "diagnose", path)
    _one_line_error(code, out, err, path, r"needs nsys to export it to SQLite, and nsys is not on PATH; .*nsys export --type sqlite")


class FakeNsys:
    """FAKE nsys: stands in for subprocess.run (nsys export) and subprocess.Popen (nsys profile, which
    goes through ncuwrap.core.process); records each argv and plays nsys's part (writes its output files)."""

    def __init__(self, profile=None, export_rc=0):
        self.calls: list[list[str]] = []
        self.profile = profile or self.good_profile
        self.export_rc = export_rc

    @staticmethod
    def good_profile(argv):
        out = Path(argv[argv.index("-o") + 1])
        shutil.copyfile(ROOT / NSYS_DIR / "bench.nsys-rep", f"{out}.nsys-rep")
        return subprocess.CompletedProcess(argv, 0, "Collecting data...\nGenerated:\n", "")

    def __call__(self, argv, **kwargs):
        # Text as Python reads file names (a Latin-1 name nsys echoes never fails the read), or the text of popen below.
        assert kwargs.get("capture_output") and (kwargs.get("text") or kwargs.items() >= process.TOOL_TEXT.items()), kwargs
        self.calls.append(list(argv))
        if argv[1] == "export":
            if self.export_rc:
                return subprocess.CompletedProcess(argv, self.export_rc, "", "Error: cannot open report file\n")
            shutil.copyfile(ROOT / NSYS_DIR / "bench.sqlite", argv[argv.index("--output") + 1])
            return subprocess.CompletedProcess(argv, 0, "", "")
        if argv[1] == "profile":
            return self.profile(argv)
        raise AssertionError(f"unexpected command {argv}")

    def popen(self, argv, **kwargs):
        assert kwargs["start_new_session"] and kwargs["stdin"] == subprocess.DEVNULL, kwargs
        done = self(argv, capture_output=True, text=True)
        return FinishedPopen(done.stdout.encode(), done.stderr.encode(), done.returncode)

    def install(self, monkeypatch, which=None):
        monkeypatch.setattr(nsysrep.shutil, "which", which or (lambda name: FAKE_NSYS if name in ("nsys", FAKE_NSYS) else None))
        monkeypatch.setattr(nsysrep.subprocess, "run", self)
        monkeypatch.setattr(process.subprocess, "Popen", self.popen)
        # The calls are recorded in this process: a capture read in a forked child would record them there.
        monkeypatch.setattr(forked, "can_fork", lambda: False)
        return self


@pytest.fixture
def fake_nsys(monkeypatch):
    return FakeNsys().install(monkeypatch)


def test_export_argv():
    assert nsysrep.export_argv("nsys", Path("in.nsys-rep"), Path("/tmp/x/in.sqlite")) == [
        "nsys", "export", "--type", "sqlite", "--output", "/tmp/x/in.sqlite", "--force-overwrite", "true", "in.nsys-rep"]


def test_profile_argv():
    assert nsysrep.profile_argv("/usr/bin/nsys", Path("runs/t/timeline"), ["./prog", "-n", "5"]) == [
        "/usr/bin/nsys", "profile", "--trace=cuda,nvtx,osrt", "--sample=none", "--cpuctxsw=none", "--cuda-graph-trace=node", "-o", "runs/t/timeline",
        "--force-overwrite", "true", "--", "./prog", "-n", "5"]


@pytest.mark.parametrize("program, python", [
    (["python", "train.py"], True), (["python3", "-m", "pkg.train"], True), (["/opt/venv/bin/python3.12", "t.py"], True),
    (["./train.py", "--lr", "1"], True), (["./prog", "-n", "5"], False), (["pythonista"], False), (["torchrun", "train.py"], False), ([], False)])
def test_is_python(program, python):
    assert nsysrep.is_python(program) is python


def test_profile_argv_of_a_python_program_records_pytorch_ops():
    options = nsysrep.NsysOptions().for_program(["python3", "train.py"])
    assert nsysrep.profile_argv("/usr/bin/nsys", Path("runs/t/timeline"), ["python3", "train.py"], options) == [
        "/usr/bin/nsys", "profile", "--trace=cuda,nvtx,osrt", "--sample=none", "--cpuctxsw=none", "--cuda-graph-trace=node",
        "--pytorch=autograd-nvtx", "-o", "runs/t/timeline", "--force-overwrite", "true", "--", "python3", "train.py"]
    # --nsys-arg --pytorch=... replaces ncuwrap's; a program that is not Python gets none.
    given = nsysrep.NsysOptions(extra=("--pytorch=autograd-shapes-nvtx",)).for_program(["python3", "train.py"])
    assert nsysrep.profile_argv("nsys", Path("t"), ["python3", "train.py"], given) == [
        "nsys", "profile", "--trace=cuda,nvtx,osrt", "--sample=none", "--cpuctxsw=none", "--cuda-graph-trace=node", "-o", "t",
        "--force-overwrite", "true", "--pytorch=autograd-shapes-nvtx", "--", "python3", "train.py"]
    assert "--pytorch=autograd-nvtx" not in nsysrep.profile_argv("nsys", Path("t"), ["./prog"], nsysrep.NsysOptions().for_program(["./prog"]))


def test_nsys_rep_is_exported_then_diagnosed(capsys, fake_nsys):
    rep = NSYS_DIR / "bench.nsys-rep"
    code, out, err = run_cli(capsys, "diagnose", rep, "-f", "json")
    assert code == 0, err
    (argv,) = fake_nsys.calls
    assert argv[:5] == [FAKE_NSYS, "export", "--type", "sqlite", "--output"]
    assert Path(argv[5]).name == "bench.sqlite" and Path(argv[5]).parent != ROOT / NSYS_DIR  # a temporary folder
    assert argv[6:] == ["--force-overwrite", "true", str(rep)]
    assert not Path(argv[5]).exists()  # the temporary export is gone
    doc = json.loads(out)
    assert doc["source"]["path"] == str(rep) and doc["source"]["kind"] == "nsys-rep"
    code, out2, _ = run_cli(capsys, "diagnose", NSYS_DIR / "bench.sqlite", "-f", "json")
    same = json.loads(out2)
    for d in (doc, same):
        d.pop("source")
    assert doc == same


def test_failed_export_names_the_report(capsys, monkeypatch):
    FakeNsys(export_rc=1).install(monkeypatch, which=lambda name: FAKE_NSYS)
    rep = NSYS_DIR / "bench.nsys-rep"
    code, out, err = run_cli(capsys, "diagnose", rep)
    _one_line_error(code, out, err, rep, r"'nsys export --type sqlite' failed \(Error: cannot open report file\)")


@pytest.fixture
def program(tmp_path):
    prog = tmp_path / "vecadd"
    prog.write_text("#!/bin/sh\nexit 0\n")
    prog.chmod(0o755)
    return prog


def test_timeline_command_runs_nsys_exports_and_writes_the_run_folder(capsys, fake_nsys, tmp_path, program):
    run = tmp_path / "run"
    code, out, err = run_cli(capsys, "timeline", "-o", run, "--", program, "-n", "5")
    assert code == 0, err
    assert fake_nsys.calls == [
        [FAKE_NSYS, "profile", "--trace=cuda,nvtx,osrt", "--sample=none", "--cpuctxsw=none", "--cuda-graph-trace=node", "-o", str(run / "timeline"),
         "--force-overwrite", "true", "--", str(program), "-n", "5"],
        [FAKE_NSYS, "export", "--type", "sqlite", "--output", str(run / "timeline.sqlite"), "--force-overwrite", "true",
         str(run / "timeline.nsys-rep")],
    ]
    assert sorted(p.name for p in run.iterdir()) == ["timeline.html", "timeline.json", "timeline.log", "timeline.nsys-rep", "timeline.sqlite"]
    doc = json.loads((run / "timeline.json").read_text())
    assert doc["schema"] == "ncuwrap.timeline/v1" and doc["bound"] == "kernel"  # its 25 strided_add launches, found by repetition
    assert doc["source"] == {"path": str(run / "timeline.nsys-rep"), "kind": "nsys-rep", "nsys_version": "2025.3.2.0",
                             "export_schema": "3.20.3", "device": "NVIDIA H200"}
    assert "<svg" in (run / "timeline.html").read_text()
    assert "Bound: kernel (strided_add)" in out
    assert err == (f"nsys: capturing {program} -n 5 ...\n"
                   f"run folder: {run} (timeline.nsys-rep, timeline.sqlite, timeline.json, timeline.html, timeline.log)\n")
    # The commands, and what nsys printed as it came (through the process runner), in order.
    assert (run / "timeline.log").read_text() == (
        f"$ {FAKE_NSYS} profile --trace=cuda,nvtx,osrt --sample=none --cpuctxsw=none --cuda-graph-trace=node -o {run / 'timeline'} --force-overwrite true "
        f"-- {program} -n 5\nCollecting data...\nGenerated:\n"
        f"$ {FAKE_NSYS} export --type sqlite --output {run / 'timeline.sqlite'} --force-overwrite true {run / 'timeline.nsys-rep'}\n")


def test_timeline_command_never_overwrites_a_run_folder(capsys, fake_nsys, tmp_path, program):
    run = tmp_path / "run"
    run.mkdir()
    (run / "notes.txt").write_text("mine")
    code, out, err = run_cli(capsys, "timeline", "-o", run, "--", program)
    _one_line_error(code, out, err, run, r"a run folder already exists here; pass --force")
    assert fake_nsys.calls == []
    code, out, err = run_cli(capsys, "timeline", "-o", run, "--force", "--", program)
    assert code == 0, err
    assert (run / "notes.txt").read_text() == "mine"  # --force replaces only the timeline files


def test_timeline_command_when_only_a_qdstrm_comes_out(capsys, monkeypatch, tmp_path, program):
    def importer_fails(argv):
        out = Path(argv[argv.index("-o") + 1])
        Path(f"{out}.qdstrm").write_bytes(b"raw stream")
        return subprocess.CompletedProcess(argv, 0, "Collecting data...\n", (
            "/opt/nvidia/nsight-systems/host-linux-x64/QdstrmImporter: error while loading shared libraries: "
            "libdw.so.1: cannot open shared object file: No such file or directory\n"))

    fake = FakeNsys(profile=importer_fails).install(monkeypatch, which=lambda name: FAKE_NSYS)
    run = tmp_path / "run"
    code, out, err = run_cli(capsys, "timeline", "-o", run, "--", program)
    qdstrm = run / "timeline.qdstrm"
    _one_line_error(code, out, err, qdstrm, r"QdstrmImporter, which did not run \(libdw.so.1 could not be loaded\).*LD_LIBRARY_PATH"
                                            r".*QdstrmImporter -i .*timeline.log", progress=True)
    assert [c[1] for c in fake.calls] == ["profile"]  # nothing exported, nothing diagnosed


def test_timeline_command_when_the_program_fails(capsys, monkeypatch, tmp_path, program):
    def crashes(argv):
        return subprocess.CompletedProcess(argv, 3, "Collecting data...\n",
                                           "starting\nCUDA error at vecadd.cu:42: invalid argument\nProcess exited with 3\n")

    FakeNsys(profile=crashes).install(monkeypatch, which=lambda name: FAKE_NSYS)
    run = tmp_path / "run"
    code, out, err = run_cli(capsys, "timeline", "-o", run, "--", program)
    _one_line_error(code, out, err, program, r"failed under nsys with exit code 3 \(.*CUDA error at vecadd.cu:42: invalid argument \| "
                                             r"Process exited with 3\); full output in .*timeline.log", progress=True)


def test_timeline_command_without_nsys(capsys, monkeypatch, tmp_path, program):
    monkeypatch.setattr(nsysrep.shutil, "which", lambda name: None)
    code, out, err = run_cli(capsys, "timeline", "-o", tmp_path / "run", "--", program)
    _one_line_error(code, out, err, "nsys", r"nsys: not found on PATH; .*--nsys-path")
    assert not (tmp_path / "run").exists()


def test_timeline_command_with_a_missing_program(capsys, fake_nsys, tmp_path):
    code, out, err = run_cli(capsys, "timeline", "-o", tmp_path / "run", "--", "./no-such-program")
    _one_line_error(code, out, err, "./no-such-program", r"no such program")
    assert fake_nsys.calls == []


@pytest.mark.gpu
@pytest.mark.skipif(shutil.which("nsys") is None, reason="needs nsys on PATH to export the .nsys-rep")
def test_real_nsys_export_gives_the_same_timeline():
    from ncuwrap.timeline.diagnosis import diagnose_timeline

    from_rep = diagnose_timeline(NSYS_DIR / "bench.nsys-rep").to_json()
    from_sqlite = diagnose_timeline(NSYS_DIR / "bench.sqlite").to_json()
    # bench is strided_add launched 25 times, no copy in its window: kernel-bound, read the same from either file.
    assert from_rep["bound"] == from_sqlite["bound"] == "kernel"
    assert from_rep["source"]["kind"] == "nsys-rep" and from_sqlite["source"]["kind"] == "nsys-sqlite"
    for key in ("breakdown_ns", "amdahl"):
        assert from_rep[key] == from_sqlite[key], key


def test_a_missing_column_is_named(capsys, tmp_path):
    """Another nsys version's schema: the kernel table's 'end' column under another name."""
    import sqlite3

    path = tmp_path / "renamed.sqlite"
    shutil.copyfile(ROOT / BAD / "no_api.sqlite", path)
    with sqlite3.connect(path) as db:
        db.execute('ALTER TABLE CUPTI_ACTIVITY_KIND_KERNEL RENAME COLUMN "end" TO "stop"')
    code, out, err = run_cli(capsys, "diagnose", path)
    _one_line_error(code, out, err, path, r"table CUPTI_ACTIVITY_KIND_KERNEL has no column 'end' \(nsys export schema 3.20.3\)")


# ------------------------------------------------- ncuwrap timeline FILE: a capture made before, read as it is


def test_timeline_reads_a_sqlite_export_without_nsys(capsys, monkeypatch, tmp_path):
    """No nsys anywhere: the .sqlite is read, the verdict printed in full, and nothing is written."""
    monkeypatch.setattr(nsysrep.shutil, "which", lambda name: None)
    monkeypatch.chdir(tmp_path)  # where a run folder would go
    path = ROOT / NSYS_DIR / "bench.sqlite"
    code, out, err = run_cli(capsys, "timeline", path, "-f", "json")
    assert (code, err) == (0, "")
    doc = json.loads(out)
    assert doc.pop("source") == {"path": str(path), "kind": "nsys-sqlite", "nsys_version": "2025.3.2.0",
                                 "export_schema": "3.20.3", "device": "NVIDIA H200"}
    expected = json.loads((ROOT / "tests" / "golden" / "timeline_bench.json").read_text())
    expected.pop("source")
    assert doc == expected
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("fmt, golden", [("markdown", "timeline_bench.md"), ("table", "timeline_bench_table.txt"),
                                         ("html", "timeline_bench.html")])
def test_timeline_of_a_file_prints_what_diagnose_prints(capsys, fmt, golden):
    path = NSYS_DIR / "bench.sqlite"
    code, out, err = run_cli(capsys, "timeline", path, "-f", fmt)
    assert (code, err) == (0, "")
    assert out == run_cli(capsys, "diagnose", path, "-f", fmt)[1]
    assert out.rstrip("\n") == (ROOT / "tests" / "golden" / golden).read_text().rstrip("\n")


def test_timeline_of_a_nsys_rep_exports_it_first(capsys, fake_nsys):
    rep = NSYS_DIR / "bench.nsys-rep"
    code, out, err = run_cli(capsys, "timeline", rep, "-f", "json")
    assert (code, err) == (0, "")
    ((argv),) = fake_nsys.calls
    assert argv[:5] == [FAKE_NSYS, "export", "--type", "sqlite", "--output"] and argv[6:] == ["--force-overwrite", "true", str(rep)]
    assert json.loads(out)["source"]["kind"] == "nsys-rep" and json.loads(out)["bound"] == "kernel"


@pytest.mark.parametrize("path, pattern", [
    (BAD / "missing.sqlite", r"no such file; check the path$"),
    (BAD / "truncated.sqlite", r"corrupt or truncated SQLite database"),
    (BAD / "capture.qdstrm", r"an unfinished Nsight Systems capture \(.qdstrm\)"),
    (NSYS_DIR / "bench.nsys-rep", r"needs nsys to export it to SQLite, and nsys is not on PATH"),
])
def test_timeline_of_a_bad_file_is_one_line(capsys, monkeypatch, path, pattern):
    monkeypatch.setattr(nsysrep.shutil, "which", lambda name: None)
    code, out, err = run_cli(capsys, "timeline", path)
    _one_line_error(code, out, err, path, pattern)


@pytest.mark.parametrize("name", ["transpose_h200.ncu-rep.gz", "report.raw.csv"])
def test_an_nsight_compute_report_points_to_diagnose(capsys, name):
    path = Path("ncuwrap/samples") / name
    code, out, err = run_cli(capsys, "timeline", path)
    assert (code, out) == (2, "")
    assert err == (f"ncuwrap: error: {path}: an Nsight Compute report, not a timeline; diagnose it with "
                   f"'ncuwrap diagnose {path}'\n")


def test_a_file_takes_no_arguments(capsys, tmp_path):
    """(-o given with a capture is the file of its verdict: tests/test_output_safety.py.)"""
    path = NSYS_DIR / "bench.sqlite"
    code, out, err = run_cli(capsys, "timeline", path, "-n", "5", "-o", tmp_path / "out.txt")
    _one_line_error(code, out, err, path, r"a capture is read as it is, with no arguments after it \(-n 5\); "
                                          r"to capture a program, give it after '--'$")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="needs /proc to check processes")
def test_ctrl_c_stops_nsys_and_the_program(capsys, monkeypatch, tmp_path):
    """The stand-in nsys (a real process, tests/data/profile/fake_nsys) runs a program that sleeps;
    a real SIGINT to ncuwrap (what a terminal's Ctrl-C sends) stops nsys and the program together."""
    monkeypatch.setattr(process, "STOP_GRACE_S", (0.5, 0.5))
    pidfile = tmp_path / "sleep.pid"
    prog = tmp_path / "prog"
    prog.write_text(f"#!/bin/sh\nsleep 300 &\necho $! > {pidfile}.tmp\nmv {pidfile}.tmp {pidfile}\nwait\n")
    prog.chmod(0o755)

    def ctrl_c_once_the_program_runs():
        deadline = time.monotonic() + 60
        while not pidfile.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        os.kill(os.getpid(), signal.SIGINT)

    # A test run started in the background by a non-interactive shell inherits SIGINT ignored, which Python
    # keeps: the Ctrl-C is then what a terminal would deliver only with the default handler back.
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        threading.Thread(target=ctrl_c_once_the_program_runs, daemon=True).start()
        run = tmp_path / "run"
        code, out, err = run_cli(capsys, "timeline", "--nsys-path", NSYS_SCRIPT, "-o", run, "--", prog)
    finally:
        signal.signal(signal.SIGINT, previous)
    assert (code, out, err) == (130, "", f"nsys: capturing {prog} ...\n")  # typer turns Ctrl-C into exit code 130
    sleep_pid = int(pidfile.read_text())
    deadline = time.monotonic() + 5
    while alive(sleep_pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(sleep_pid), "the program survived Ctrl-C"
    assert (run / "timeline.log").read_text().startswith(f"$ {NSYS_SCRIPT} profile --trace=cuda,nvtx,osrt")


def test_timeline_command_passes_the_nsys_options_on(capsys, fake_nsys, tmp_path, program):
    run = tmp_path / "run"
    code, out, err = run_cli(capsys, "timeline", "-o", run, "--nsys-trace", "cuda,nvtx,cublas", "--nsys-arg", "--stats=false",
                             "--nsys-arg=--cuda-memory-usage=true", "--", program, "-n", "5")
    assert code == 0, err
    assert fake_nsys.calls[0] == [
        FAKE_NSYS, "profile", "--trace=cuda,nvtx,cublas", "--sample=none", "--cpuctxsw=none", "--cuda-graph-trace=node", "-o", str(run / "timeline"),
        "--force-overwrite", "true", "--stats=false", "--cuda-memory-usage=true", "--", str(program), "-n", "5"]
    assert (run / "timeline.log").read_text().startswith(
        f"$ {FAKE_NSYS} profile --trace=cuda,nvtx,cublas --sample=none --cpuctxsw=none --cuda-graph-trace=node -o {run / 'timeline'} --force-overwrite true "
        f"--stats=false --cuda-memory-usage=true -- {program} -n 5\n")


@pytest.mark.parametrize("args, message", [
    (["--nsys-arg=-o", "--", "PROGRAM"], "--nsys-arg '-o': ncuwrap sets -o itself; use ncuwrap's -o instead (the capture goes to "
                                         "RUN_DIR/timeline.nsys-rep)"),
    (["--nsys-trace", "nvtx", "--", "PROGRAM"], "--nsys-trace 'nvtx': ncuwrap's timeline analysis needs the CUDA trace (kernels and "
                                                "memory copies); add cuda, e.g. --nsys-trace cuda,nvtx"),
    (["--nsys-trace", "cuda", str(ROOT / NSYS_DIR / "bench.sqlite")],
     "--nsys-trace: applies when ncuwrap runs nsys (ncuwrap timeline [--per-rank] -- PROGRAM); a capture made before is read as "
     "it is: drop --nsys-trace"),
    (["--nsys-arg=--stats=false", "--ranks", "RUN"],
     "--nsys-arg: applies when ncuwrap runs nsys (ncuwrap timeline [--per-rank] -- PROGRAM); a capture made before is read as "
     "it is: drop --nsys-arg"),
], ids=["owned-option", "no-cuda", "existing-capture", "ranks"])
def test_timeline_command_refuses_nsys_options_it_cannot_pass(capsys, fake_nsys, tmp_path, program, args, message):
    run = tmp_path / "run"
    args = [str(program) if a == "PROGRAM" else str(run) if a == "RUN" else a for a in args]
    code, out, err = run_cli(capsys, "timeline", *args)
    assert (code, out, err) == (2, "", f"ncuwrap: error: {message}\n")
    assert fake_nsys.calls == [] and not run.exists()


def test_a_folder_is_pointed_at_ranks(capsys, tmp_path):
    # Issue 25: a folder given as the program was run as one ("permission denied") before.
    code, out, err = run_cli(capsys, "timeline", tmp_path)
    assert (code, out) == (2, "") and err == (f"ncuwrap: error: {tmp_path}: a folder, not a program or a capture; for one capture per "
                                              f"rank run 'ncuwrap timeline --ranks {tmp_path}', to capture a program give it after '--'\n")
