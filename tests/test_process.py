"""The process runner shared by ncu and nsys: lines of both streams in arrival order and in the log,
lines followed while still being written, Ctrl-C stopping the whole process group, the child in its
own session with no stdin. Real child processes (sh, python) stand in for the profilers."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ncuwrap.core import process as P
from tests.process_helpers import FinishedPopen, alive


class Recorder(P.Listener):
    def __init__(self):
        self.events = []

    def started(self, argv):
        self.events.append(("started", list(argv)))

    def line(self, stream, line):
        self.events.append(("line", stream, line))

    def partial(self, stream, text):
        self.events.append(("partial", stream, text))


def test_both_streams_are_kept_and_logged(tmp_path):
    log = tmp_path / "run.log"
    log.write_text("$ the command\n")  # what the caller wrote first stays first
    script = "import sys; print('to stdout'); sys.stdout.flush(); print('to stderr', file=sys.stderr); sys.exit(3)"
    recorder = Recorder()
    run = P.run([sys.executable, "-c", script], log, recorder)
    assert run.returncode == 3 and not run.interrupted and run.wall_s > 0
    assert sorted(run.lines) == [("stderr", "to stderr"), ("stdout", "to stdout")]
    assert (run.stdout, run.stderr) == ("to stdout", "to stderr")
    assert log.read_text().splitlines()[0] == "$ the command"
    assert sorted(log.read_text().splitlines()[1:]) == ["to stderr", "to stdout"]
    assert recorder.events[0] == ("started", [sys.executable, "-c", script])
    lines = sorted(e for e in recorder.events if e[0] == "line")  # a line may also come in pieces first (partial)
    assert lines == [("line", "stderr", "to stderr"), ("line", "stdout", "to stdout")]


def test_a_line_is_followed_while_it_is_written():
    run = P.ProcessRun(argv=["x"])
    recorder = Recorder()
    splitter = P.LineSplitter("stdout", run, recorder)
    for chunk in (b"0%..", b"..50%", b"..100%\n", b"tail without newline"):
        splitter.feed(chunk)
    splitter.feed(b"", final=True)
    assert recorder.events == [("partial", "stdout", "0%.."), ("partial", "stdout", "0%....50%"),
                               ("line", "stdout", "0%....50%..100%"), ("partial", "stdout", "tail without newline"),
                               ("line", "stdout", "tail without newline")]
    assert run.lines == [("stdout", "0%....50%..100%"), ("stdout", "tail without newline")]


def test_crlf_cut_between_chunks_and_utf8_cut_inside_a_character():
    run = P.ProcessRun(argv=["x"])
    splitter = P.LineSplitter("stdout", run, P.Listener())
    for chunk in (b"first\r", b"\nsecond\r", b"third \xc3", b"\xa9t\xc3\xa9\n"):
        splitter.feed(chunk)
    splitter.feed(b"", final=True)
    assert run.lines == [("stdout", "first"), ("stdout", "second"), ("stdout", "third été")]


def test_a_missing_executable_is_a_start_error():
    with pytest.raises(P.StartError) as caught:
        P.run(["/nowhere/profiler", "--version"])
    assert isinstance(caught.value.cause, FileNotFoundError) and caught.value.argv == ["/nowhere/profiler", "--version"]


def test_a_folder_is_not_executable(tmp_path):
    with pytest.raises(P.StartError) as caught:
        P.run([str(tmp_path)])
    assert isinstance(caught.value.cause, PermissionError)


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="needs /proc to check processes")
def test_ctrl_c_stops_the_whole_process_group_and_keeps_the_log(tmp_path, monkeypatch):
    """A real child (a shell) with a real grandchild (sleep): Ctrl-C in ncuwrap stops both."""
    monkeypatch.setattr(P, "STOP_GRACE_S", (0.5, 0.5))
    pidfile = tmp_path / "sleep.pid"
    script = f"trap '' INT; sleep 300 & echo $! > {pidfile}; echo ready; wait"  # ignores SIGINT: SIGTERM must follow

    class CtrlC(P.Listener):
        def line(self, stream, line):
            if line == "ready":
                raise KeyboardInterrupt  # what Python raises when the user presses Ctrl-C

    log = tmp_path / "run.log"
    start = time.monotonic()
    run = P.run(["sh", "-c", script], log, CtrlC())
    assert run.interrupted
    assert time.monotonic() - start < 15
    sleep_pid = int(pidfile.read_text())
    deadline = time.monotonic() + 5
    while alive(sleep_pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(sleep_pid), "the grandchild survived Ctrl-C"
    assert "ready" in log.read_text()
    assert run.returncode is not None and run.returncode != 0


def test_the_child_has_its_own_session(tmp_path):
    """A terminal's SIGINT (to ncuwrap's group) does not reach the child directly: ncuwrap stops it."""
    out = tmp_path / "ids"
    P.run([sys.executable, "-c", f"import os; open({str(out)!r}, 'w').write(f'{{os.getpgid(0)}} {{os.getsid(0)}}')"])
    pgid, sid = map(int, out.read_text().split())
    assert pgid != os.getpgid(0) and sid != os.getsid(0)


def test_popen_gets_the_argv_its_own_session_and_no_stdin():
    seen = {}

    def popen(argv, **kwargs):
        seen["argv"], seen["kwargs"] = argv, kwargs
        return FinishedPopen(stdout=b"out\n", stderr=b"err\n", returncode=5)

    run = P.run(("nsys", "profile", "--", "./prog"), popen=popen)
    assert seen["argv"] == ["nsys", "profile", "--", "./prog"]
    assert seen["kwargs"]["start_new_session"] is True and seen["kwargs"]["stdin"] == subprocess.DEVNULL
    assert seen["kwargs"]["stdout"] == seen["kwargs"]["stderr"] == subprocess.PIPE
    assert run.returncode == 5 and sorted(run.lines) == [("stderr", "err"), ("stdout", "out")]
