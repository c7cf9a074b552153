"""Hostile nsys SQLite exports (issue 10, A6): each is a copy of the real H200 capture bench.sqlite
with one table, row or type changed; one line naming the file, exit code 2, never a hang."""

from __future__ import annotations

import json
import shutil
import signal
import sqlite3

import pytest

from tests.conftest import H200, run_cli

BENCH = H200 / "nsys" / "bench.sqlite"
KERNELS = "CUPTI_ACTIVITY_KIND_KERNEL"
AGAIN = "export the report again with 'nsys export --type sqlite'"


def _edited(tmp_path, *statements: str):
    path = tmp_path / "bench.sqlite"
    shutil.copyfile(BENCH, path)
    db = sqlite3.connect(path)
    for sql in statements:
        db.execute(sql)
    db.commit()
    db.close()
    return path


@pytest.mark.parametrize("statements, message", [
    # A view that never ends, standing in place of the kernel table.
    ((f"DROP TABLE {KERNELS}",
      f'CREATE VIEW {KERNELS} AS WITH RECURSIVE r(start, "end", shortName, demangledName) AS '
      '(SELECT 1, 2, 1, 1 UNION ALL SELECT start + 1, "end" + 1, 1, 1 FROM r) SELECT * FROM r'),
     f"{KERNELS} is a view, not a table as nsys writes it; {AGAIN}"),
    ((f"UPDATE {KERNELS} SET start = 'abc' WHERE rowid = 7",), f"table {KERNELS}: column start holds 'abc' where nsys writes an integer; {AGAIN}"),
    ((f"UPDATE {KERNELS} SET \"end\" = x'00ff' WHERE rowid = 7",), f"table {KERNELS}: column end holds a 2-byte blob where nsys writes an integer; {AGAIN}"),
    ((f"UPDATE {KERNELS} SET start = 1.5e30 WHERE rowid = 7",), f"table {KERNELS}: column start holds 1.5e+30 where nsys writes an integer; {AGAIN}"),
    ((f"UPDATE {KERNELS} SET gridX = 'wide' WHERE rowid = 7",), f"table {KERNELS}: column gridX holds 'wide' where nsys writes an integer; {AGAIN}"),
    (("UPDATE CUPTI_ACTIVITY_KIND_MEMCPY SET bytes = 'lots' WHERE rowid = 1",),
     f"table CUPTI_ACTIVITY_KIND_MEMCPY: column bytes holds 'lots' where nsys writes an integer; {AGAIN}"),
    (("UPDATE CUPTI_ACTIVITY_KIND_MEMCPY SET copyKind = 'x' WHERE rowid = 1",),
     f"table CUPTI_ACTIVITY_KIND_MEMCPY: column copyKind holds 'x' where nsys writes an integer; {AGAIN}"),
    # Every kernel ends before it starts (an IndexError before).
    ((f'UPDATE {KERNELS} SET start = "end" + 1000',),
     f"none of the 52 kernels has a usable start and end (each ends before it starts, or is missing a time); {AGAIN}"),
], ids=["recursive-view", "text-start", "blob-end", "real-start", "text-grid", "text-bytes", "text-copy-kind", "all-inverted"])
def test_hostile_sqlite(capsys, tmp_path, statements, message):
    path = _edited(tmp_path, *statements)
    signal.alarm(60)
    try:
        code, out, err = run_cli(capsys, "diagnose", path)
    finally:
        signal.alarm(0)
    assert code == 2 and out == ""
    assert err == f"ncuwrap: error: {path}: {message}\n"


def test_unusable_kernels_are_left_out(capsys, tmp_path):
    # One kernel ending before it starts and one off the clock: left out, the other 50 diagnosed.
    path = _edited(tmp_path, f'UPDATE {KERNELS} SET start = "end" + 1000 WHERE rowid = 3',
                   f"UPDATE {KERNELS} SET start = -5 WHERE rowid = 4")
    code, out, err = run_cli(capsys, "timeline", path, "--steps", "none", "-f", "json")  # every kernel, not the loop's
    assert code == 0, err
    assert json.loads(out)["kernels"]["count"] == 50


def test_query_budget_stops_a_long_read(capsys, tmp_path, monkeypatch):
    # The real kernel table grown to 52 * 2**12 rows; with the budget lowered, the read is stopped.
    path = _edited(tmp_path, *[f"INSERT INTO {KERNELS} SELECT * FROM {KERNELS}"] * 12)
    monkeypatch.setattr("ncuwrap.timeline.readers.nsys_sqlite.STEPS_FLOOR", 1_000_000)
    monkeypatch.setattr("ncuwrap.timeline.readers.nsys_sqlite.STEPS_PER_BYTE", 0)
    code, out, err = run_cli(capsys, "diagnose", path)
    assert code == 2 and out == ""
    assert err == (f"ncuwrap: error: {path}: reading it took more than 1,000,000 SQLite steps, far more than an nsys export needs; "
                   "export the report again with 'nsys export --type sqlite'\n")
