"""How an nsys SQLite export is opened (issue 42): truly read-only, and a locked file said as such.

Each input is a copy of the real H200 capture bench.sqlite in tmp_path. What must hold: reading a file
makes nothing beside it (a WAL-mode file opened with mode=ro got a -shm and a -wal, and in a read-only
folder failed as "corrupt"); a file another program is writing is read with SQLite's locks, its
write-ahead log included, and a lock held is one line that says so (it read "corrupt or truncated ...
export again", which sends the user the wrong way).
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3

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


def test_a_locked_file_says_so(capsys, tmp_path):
    path = _copy(tmp_path)
    writer = sqlite3.connect(path, isolation_level=None)
    try:
        writer.execute("BEGIN EXCLUSIVE")
        writer.execute("UPDATE StringIds SET value = 'x' WHERE id = 1")
        code, out, err = run_cli(capsys, "timeline", path)
    finally:
        writer.close()
    assert (code, out) == (2, "")
    assert err == (f"ncuwrap: error: {path}: another program is writing the database (database is locked); wait until it has "
                   "finished (nsys export, or the program holding it), then run again\n")
