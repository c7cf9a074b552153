"""How an nsys SQLite export is opened (issues 42 and 54): truly read-only, and a file being written said as such.

Each input is a copy of the real H200 capture bench.sqlite in tmp_path, the writers real SQLite connections (in
another process where it matters). What must hold: reading a file writes nothing beside it, the folder's names,
sizes and times as they were (a WAL-mode file opened with mode=ro got a -shm and a -wal, and in a read-only
folder failed as "corrupt"; one with its -wal beside it got a -shm); what a -wal or hot -journal beside it holds
is read, through a private copy; a write lock held on it, by this process or another, is one line saying the
file is being written (a lock held without a journal was read as immutable, exit 0; before issue 42 a lock read
"corrupt or truncated ... export again", which sends the user the wrong way).
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time

import pytest

from tests.conftest import H200, run_cli

BENCH_SQLITE = H200 / "nsys" / "bench.sqlite"


def _copy(tmp_path, name="bench.sqlite"):
    path = tmp_path / name
    shutil.copy(BENCH_SQLITE, path)
    return path


def _limiter(capsys, path) -> str:
    code, out, err = run_cli(capsys, "timeline", path, "-f", "json")
    assert (code, err) == (0, ""), err
    return json.loads(out)["limiter"]


def test_a_wal_mode_file_is_read_with_nothing_made_beside_it(capsys, tmp_path):
    path = _copy(tmp_path)
    with sqlite3.connect(path) as db:
        assert db.execute("PRAGMA journal_mode=WAL").fetchone() == ("wal",)
    db.close()
    before = sorted(os.listdir(tmp_path))
    assert before == ["bench.sqlite"]
    assert _limiter(capsys, path) == "strided_add"
    assert sorted(os.listdir(tmp_path)) == before


def test_a_write_ahead_log_holding_pages_is_read(capsys, tmp_path):
    """A writer's log not yet copied into the file: its pages are part of the database (immutable would
    read the file without them)."""
    path = _copy(tmp_path)
    writer = sqlite3.connect(path)
    try:
        writer.execute("PRAGMA journal_mode=WAL")
        writer.execute("PRAGMA wal_autocheckpoint=0")
        assert writer.execute("UPDATE StringIds SET value = 'renamed_in_the_log' WHERE value = 'strided_add'").rowcount == 1
        writer.commit()
        assert os.path.getsize(f"{path}-wal") > 0
        assert _limiter(capsys, path) == "renamed_in_the_log"
    finally:
        writer.close()


def _being_written(path, holder) -> str:
    return (f"ncuwrap: error: {path}: the file is being written by another program ({holder}); wait until it has finished "
            "(nsys export, or the program writing it), then run again\n")


def test_a_locked_file_says_so(capsys, tmp_path):
    """A writer in this process (an API caller's connection): its lock is seen, and kept (a close of the file
    by the probe would have dropped it)."""
    path = _copy(tmp_path)
    writer = sqlite3.connect(path, isolation_level=None)
    try:
        writer.execute("BEGIN EXCLUSIVE")
        writer.execute("UPDATE StringIds SET value = 'x' WHERE id = 1")
        code, out, err = run_cli(capsys, "timeline", path)
        assert (code, out, err) == (2, "", _being_written(path, f"process {os.getpid()} holds a write lock on it"))
        other = subprocess.run([sys.executable, "-c", _READS, str(path)], capture_output=True, text=True)
        assert other.stdout == "database is locked\n"  # the writer still holds its lock
        writer.execute("ROLLBACK")
    finally:
        writer.close()


# Another process that opens the capture, takes an exclusive lock with BEGIN EXCLUSIVE and writes nothing yet
# (no journal beside the file), says so and holds it until its stdin closes.
_HOLDS = """
import sqlite3, sys
db = sqlite3.connect(sys.argv[1], isolation_level=None)
db.execute(f"PRAGMA journal_mode={sys.argv[2]}")
db.execute("BEGIN EXCLUSIVE")
print("locked", flush=True)
sys.stdin.read()
"""
_READS = """
import sqlite3, sys
try:
    sqlite3.connect(sys.argv[1], timeout=0).execute("SELECT count(*) FROM StringIds").fetchone()
    print("read")
except sqlite3.OperationalError as exc:
    print(exc)
"""


@pytest.mark.parametrize("mode", ["delete", "wal"])
def test_a_file_another_process_holds_an_exclusive_lock_on_is_refused(capsys, tmp_path, mode):
    """It was read as immutable (exit 0), which ignores the lock and can see the file half written (issue 54)."""
    path = _copy(tmp_path)
    holder = subprocess.Popen([sys.executable, "-c", _HOLDS, str(path), mode], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline() == "locked\n"
        code, out, err = run_cli(capsys, "timeline", path)
    finally:
        holder.communicate("")
    where = "it" if mode == "delete" else "bench.sqlite-shm"  # WAL mode: the writer's lock is in the -shm index
    assert (code, out, err) == (2, "", _being_written(path, f"process {holder.pid} holds a write lock on {where}"))


def _left_by_a_killed_writer(folder, shm: bool):
    """bench.sqlite in WAL mode with a kernel renamed in its -wal, as a writer killed before its checkpoint
    leaves it: the file, its -wal and (``shm``) its -shm index; without it, as a copy of the two is handed on."""
    path = _copy(folder)
    subprocess.run([sys.executable, "-c", """
import os, sqlite3, sys
db = sqlite3.connect(sys.argv[1])
db.execute("PRAGMA journal_mode=WAL")
db.execute("PRAGMA wal_autocheckpoint=0")
db.execute("UPDATE StringIds SET value = 'renamed_in_the_log' WHERE value = 'strided_add'")
db.commit()
os._exit(0)
""", str(path)], check=True)
    assert os.path.getsize(f"{path}-wal") > 0
    if not shm:
        os.unlink(f"{path}-shm")
    return path


def _listing(folder) -> dict:
    """Every name in ``folder`` with its size and times, and the folder's own times."""
    info = {name: os.stat(folder / name) for name in os.listdir(folder)}
    return {".": os.stat(folder).st_mtime_ns, **{name: (s.st_size, s.st_mtime_ns, s.st_ctime_ns) for name, s in info.items()}}


@pytest.mark.parametrize("shm", [False, True], ids=["wal", "wal-and-shm"])
def test_a_write_ahead_log_left_beside_the_file_is_read_and_nothing_is_written_there(capsys, tmp_path, monkeypatch, shm):
    """Its pages are read (a copy of the file and the log, in a private folder of $TMPDIR, removed after), and
    the folder is as it was: the same names, sizes and times. A 'read-only' connection made a -shm index beside
    it, or rewrote the one there (issue 54)."""
    given, scratch = tmp_path / "given", tmp_path / "tmp"
    given.mkdir()
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    path = _left_by_a_killed_writer(given, shm)
    before = _listing(given)
    assert sorted(before) == [".", "bench.sqlite", *(["bench.sqlite-shm"] if shm else []), "bench.sqlite-wal"]
    time.sleep(0.01)  # a write now would change a time
    assert _limiter(capsys, path) == "renamed_in_the_log"
    assert _listing(given) == before
    assert list(scratch.iterdir()) == []


def test_a_hot_journal_left_beside_the_file_is_rolled_back_in_a_copy(capsys, tmp_path):
    """A writer killed in the middle of a transaction that spilled into the file (a cache of one page): the file
    holds half its writes, its -journal what they replaced. Read as the writer left it, the file is rolled
    back in a private copy, and the folder left as it was."""
    path = _copy(tmp_path)
    subprocess.run([sys.executable, "-c", """
import os, sqlite3, sys
db = sqlite3.connect(sys.argv[1])
db.execute("PRAGMA cache_size=1")
db.execute("UPDATE StringIds SET value = 'half_written' WHERE value = 'strided_add'")
db.execute("UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET start = start + 1")
os._exit(0)
""", str(path)], check=True)
    with sqlite3.connect(f"{path.as_uri()}?immutable=1", uri=True) as db:
        assert db.execute("SELECT count(*) FROM StringIds WHERE value = 'half_written'").fetchone() == (1,)  # in the file
    db.close()
    before = _listing(tmp_path)
    assert sorted(before) == [".", "bench.sqlite", "bench.sqlite-journal"]
    time.sleep(0.01)
    assert _limiter(capsys, path) == "strided_add"
    assert _listing(tmp_path) == before


def test_a_file_changed_while_it_was_read_is_refused(capsys, tmp_path, monkeypatch):
    """A writer that comes and goes during an immutable read: the file read may be half written."""
    from ncuwrap.timeline.readers import nsys_sqlite

    path = _copy(tmp_path)
    real = nsys_sqlite._read

    def read_while_written(*args):
        found = real(*args)
        with sqlite3.connect(path) as db:
            db.execute("UPDATE StringIds SET value = 'later' WHERE value = 'strided_add'")
        db.close()
        return found

    monkeypatch.setattr(nsys_sqlite, "_read", read_while_written)
    code, out, err = run_cli(capsys, "timeline", path)
    assert (code, out, err) == (2, "", _being_written(path, "it changed while it was read"))
