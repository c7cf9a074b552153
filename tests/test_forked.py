"""Work run in a forked child (ncuwrap.core.forked): its result, its errors and its death come back to the
parent as they would in process; a cancelled child is gone; and a timeline is measured that way."""

from __future__ import annotations

import os
import signal
import threading
from pathlib import Path

import pytest

from ncuwrap.core import forked
from ncuwrap.core.errors import InputError
from ncuwrap.core.forked import Forked
from tests.conftest import H200


@pytest.fixture
def forks(monkeypatch):
    """Fork even where an earlier test left a thread behind (Dask's offload thread, after a cluster test):
    the work here takes no lock such a thread could hold."""
    monkeypatch.setattr(forked, "can_fork", lambda: True)


def _crashed(how: str) -> InputError:
    return InputError(f"capture: the reader crashed ({how})")


def test_the_result_comes_from_a_child(forks):
    work = Forked(lambda: (os.getpid(), {"x": [1.5, None]}), _crashed)
    assert work.pid is not None  # this test process has one thread: the work was forked
    pid, value = work.result()
    assert pid != os.getpid() and value == {"x": [1.5, None]}


def test_an_input_error_is_raised_as_it_was(forks):
    def work():
        raise InputError("capture.sqlite: table X is empty; export it again")

    with pytest.raises(InputError, match=r"^capture.sqlite: table X is empty; export it again$"):
        Forked(work, _crashed).result()


def test_an_error_that_does_not_pickle_keeps_its_text(forks):
    class Local(Exception):  # a class defined in a function cannot be pickled
        pass

    def work():
        raise Local("odd")

    with pytest.raises(RuntimeError, match=r"^Local: odd$"):
        Forked(work, _crashed).result()


def test_a_child_that_dies_is_one_line(forks):
    def work():
        os.kill(os.getpid(), signal.SIGSEGV)

    with pytest.raises(InputError, match=r"^capture: the reader crashed \(signal SIGSEGV\)$"):
        Forked(work, _crashed).result()


def test_cancel_ends_the_child_and_its_temporary_files_go(forks, tmp_path):
    marker = tmp_path / "made"

    def work():
        import tempfile

        with tempfile.TemporaryDirectory(dir=tmp_path) as held:  # as an unpacked .sqlite.gz is held
            marker.write_text(held)
            threading.Event().wait(60)

    work_ = Forked(work, _crashed)
    pid = work_.pid
    for _ in range(2000):  # the child has made its folder (and written its name: the file is there before its text)
        if marker.exists() and marker.read_text():
            break
        threading.Event().wait(0.005)
    held = Path(marker.read_text())
    assert held.is_dir()
    work_.cancel()
    with pytest.raises(ChildProcessError):  # reaped: no such child left
        os.waitpid(pid, os.WNOHANG)
    assert not held.exists()  # SIGTERM unwound the child: its temporary folder is gone
    work_.cancel()  # twice is harmless


def test_with_threads_running_the_work_runs_in_process():
    stop = threading.Event()
    thread = threading.Thread(target=stop.wait)
    thread.start()
    try:
        work = Forked(os.getpid, _crashed)
        assert work.pid is None and work.result() == os.getpid()
    finally:
        stop.set()
        thread.join()


def test_a_timeline_measured_in_a_child_is_the_one_measured_in_process(forks, monkeypatch):
    from ncuwrap.render import render
    from ncuwrap.timeline.diagnosis import diagnose_timeline

    capture = H200 / "nsys" / "bench.sqlite"
    child = render(diagnose_timeline(capture), "json")
    monkeypatch.setattr(forked, "can_fork", lambda: False)  # now in process
    assert render(diagnose_timeline(capture), "json") == child


def test_a_bad_rules_file_is_said_before_the_capture_and_the_child_is_stopped(forks, monkeypatch, tmp_path, capsys):
    from tests.conftest import run_cli

    children = []

    def fork():
        pid = real_fork()
        if pid:
            children.append(pid)
        return pid

    real_fork = os.fork
    monkeypatch.setattr(forked.os, "fork", fork)
    bad = tmp_path / "bad.yaml"
    bad.write_text("version: [\n")
    empty = tmp_path / "empty.sqlite"
    empty.write_bytes(b"SQLite format 3\x00" + b"\x00" * 100)
    code, out, err = run_cli(capsys, "diagnose", empty, "--rules", bad)
    assert code == 2 and str(bad) in err and "SQLite" not in err
    assert len(children) == 1
    with pytest.raises(ChildProcessError):  # reaped: no child left behind
        os.waitpid(children[0], os.WNOHANG)


def test_with_threads_the_work_is_forked_all_the_same():
    # The .ncu-rep reader's: NVIDIA's reader never runs in the caller's process, even while a thread runs
    # (a gzipped report's digest).
    stop = threading.Event()
    thread = threading.Thread(target=stop.wait)
    thread.start()
    try:
        work = Forked(os.getpid, _crashed, with_threads=True)
        assert work.pid is not None and work.result() != os.getpid()
    finally:
        stop.set()
        thread.join()


def _summed(requests) -> tuple[int, list]:
    seen = list(requests)
    return os.getpid(), seen


def test_the_requests_reach_the_work_in_order_and_end_at_the_result(forks):
    work = Forked(_summed, _crashed, asks=True)
    other = Forked(_summed, _crashed, asks=True)  # forked after: it holds a copy of the first one's end
    for i in range(3):
        work.ask((i, [i] * 50_000))  # more than a pipe's buffer in all: the child reads while they come
    other.ask("x")
    pid, seen = work.result()
    assert pid != os.getpid() and seen == [(i, [i] * 50_000) for i in range(3)]
    assert other.result()[1] == ["x"]


def test_in_process_the_requests_are_given_at_the_end(monkeypatch):
    monkeypatch.setattr(forked, "can_fork", lambda: False)
    work = Forked(_summed, _crashed, asks=True)
    work.ask(1)
    work.ask(2)
    assert work.pid is None and work.result() == (os.getpid(), [1, 2])


def test_a_child_asked_after_it_died_is_one_line(forks):
    def work(requests):
        os.kill(os.getpid(), signal.SIGKILL)

    started = Forked(work, _crashed, asks=True)
    for i in range(200):
        started.ask([i] * 1000)  # more than a pipe holds: a broken pipe is not the caller's error
    with pytest.raises(InputError, match=r"^capture: the reader crashed \(signal SIGKILL\)$"):
        started.result()
