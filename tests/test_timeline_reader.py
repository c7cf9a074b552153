"""The columnar reader of nsys SQLite exports (issue 23): whole columns, no Python object per event,
the same values as the rows themselves, and the one-line errors of a type that changes past the first
batch the driver reads. Real H200 captures, edited where said."""

from __future__ import annotations

import gzip
import shutil
import sqlite3

import numpy as np
import pytest

from ncuwrap.core.errors import InputError
from ncuwrap.core.kernel_names import WRAPPERS, telling_name
from ncuwrap.timeline.readers import nsys_sqlite as reader
from ncuwrap.timeline.events import Labels
from tests.conftest import DATA, H200

BENCH = H200 / "nsys" / "bench.sqlite"
KERNELS = "CUPTI_ACTIVITY_KIND_KERNEL"
STEPS = DATA / "h200_ncuwrap" / "steps" / "small_launch_200.sqlite.gz"


@pytest.fixture(scope="module")
def steps_capture(tmp_path_factory):
    path = tmp_path_factory.mktemp("reader") / "small_launch_200.sqlite"
    path.write_bytes(gzip.decompress(STEPS.read_bytes()))
    return path


def _copy(tmp_path, source=BENCH):
    path = tmp_path / "capture.sqlite"
    shutil.copyfile(source, path)
    return path


def test_event_columns_are_numbers_and_categories(steps_capture):
    # 44,846 kernels and 92,402 CUDA calls: every column a numpy number column or labels (a code per
    # row into the distinct texts), never text per row.
    data = reader.read(steps_capture)
    assert (len(data.kernels), len(data.api)) == (44_846, 92_402)
    for frame in (data.kernels, data.api, data.copies, data.memsets, data.nvtx):
        kinds = {c: ("labels" if isinstance(frame[c], Labels) else frame[c].dtype.kind) for c in frame.columns}
        assert all(k == "labels" or k in "if" for k in kinds.values()), kinds
        assert all(len(frame[c]) == len(frame) for c in frame.columns)
    assert {c for c in data.kernels.columns if isinstance(data.kernels[c], Labels)} == {"name", "demangled", "mangled"}
    assert data.kernels["name"].codes.dtype == np.int32
    assert len(data.kernels["demangled"].categories) < 1_000


def test_the_reader_imports_no_pandas(steps_capture):
    # pandas costs 0.3-0.4 s of imports: a timeline is read, analysed and written without it (and without
    # pyarrow.compute, which loads it, or numpy.ma, which numpy's median of floats loads: 0.07 s on the
    # GPU host). In process here, so that the reader's imports are this process's.
    import subprocess
    import sys

    code = ("import sys; import ncuwrap.core.forked as f; f.can_fork = lambda: False; import ncuwrap.api as a; d = a.diagnose_timeline(sys.argv[1]); "
            "a.render_result(d, 'json'); print(d.bound, *(m in sys.modules for m in ('pandas', 'pyarrow.compute', 'numpy.ma', 'adbc_driver_sqlite')))")
    out = subprocess.run([sys.executable, "-c", code, str(steps_capture)], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["launch", "False", "False", "False", "True"]


def test_a_small_capture_is_read_without_arrow(tmp_path):
    # A small export (0.9 MB) is scanned by sqlite3: neither Arrow nor its driver is imported (0.04-0.06 s of
    # a whole process whose read takes 0.01 s), in process here as above.
    import subprocess
    import sys

    path = tmp_path / "input_bound.sqlite"
    path.write_bytes(gzip.decompress((STEPS.parent / "input_bound.sqlite.gz").read_bytes()))
    assert path.stat().st_size <= reader.ROWS_BY_SQLITE3_BYTES
    code = ("import sys; import ncuwrap.core.forked as f; f.can_fork = lambda: False; import ncuwrap.api as a; d = a.diagnose_timeline(sys.argv[1]); "
            "a.render_result(d, 'json'); print(d.bound, *(m in sys.modules for m in ('pandas', 'pyarrow', 'adbc_driver_manager', 'numpy.ma')))")
    out = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["transfer", "False", "False", "False", "False"]


def _both_ways(path, monkeypatch):
    """The export read by Arrow's driver, then by sqlite3 rows (each forced, whatever its size)."""
    read = []
    for limit in (-1, 1 << 40):
        monkeypatch.setattr(reader, "ROWS_BY_SQLITE3_BYTES", limit)
        try:
            read.append(reader.read(path, ranks=True))
        except InputError as exc:
            read.append(str(exc))
    return read


def _same(a, b, where: str) -> None:
    """Two reads' values alike to the dtype: numbers, labels (codes and texts), tables, facts."""
    from ncuwrap.timeline.events import Events

    if isinstance(a, Events):
        assert isinstance(b, Events) and list(a.columns) == list(b.columns) and len(a) == len(b), where
        for column in a.columns:
            _same(a[column], b[column], f"{where}.{column}")
    elif isinstance(a, Labels):
        assert isinstance(b, Labels) and a.codes.dtype == b.codes.dtype and np.array_equal(a.codes, b.codes), where
        assert list(a.categories) == list(b.categories), where
    elif isinstance(a, np.ndarray):
        assert isinstance(b, np.ndarray) and a.dtype == b.dtype, where
        assert np.array_equal(a, b, equal_nan=a.dtype.kind == "f"), where
    else:
        assert a == b, where


def test_sqlite3_rows_and_arrow_read_every_capture_alike(tmp_path, monkeypatch):
    # Every nsys export in tests/data (real H200 captures, and the bad ones: the same one-line error),
    # read both ways: the same columns, types and values, the same facts and notes.
    import dataclasses

    exports = sorted(p for p in DATA.rglob("*") if p.name.endswith((".sqlite", ".sqlite.gz")))
    assert len(exports) >= 30
    for export in exports:
        path = export
        if export.name.endswith(".gz"):
            path = tmp_path / export.name[: -len(".gz")]
            path.write_bytes(gzip.decompress(export.read_bytes()))
        arrow, rows = _both_ways(path, monkeypatch)
        if isinstance(arrow, str) or isinstance(rows, str):
            assert arrow == rows, export
            continue
        for item in dataclasses.fields(arrow):
            if item.name != "launch_index":  # a cache, filled later
                _same(getattr(arrow, item.name), getattr(rows, item.name), f"{export}: {item.name}")


def test_sqlite3_rows_keep_odd_bytes_nulls_and_a_bad_type_as_arrow_does(tmp_path, monkeypatch):
    # Text that is not UTF-8 (kept as surrogate escapes), NULL in an integer column, and a text value where
    # nsys writes an integer (the scan is then left to the driver, which names it) read alike both ways.
    path = _copy(tmp_path)
    db = sqlite3.connect(path)
    first = db.execute(f"SELECT shortName FROM {KERNELS} LIMIT 1").fetchone()[0]
    db.execute("UPDATE StringIds SET value = CAST(x'6b65726e656cff' AS TEXT) WHERE id = ?", (first,))
    db.execute(f"UPDATE {KERNELS} SET correlationId = NULL WHERE rowid = 3")
    db.commit()
    arrow, rows = _both_ways(path, monkeypatch)
    assert "kernel\udcff" in rows.kernels["name"].categories and np.isnan(rows.kernels["correlation"]).sum() == 1
    _same(arrow.kernels, rows.kernels, "kernels")
    db.execute(f"UPDATE {KERNELS} SET streamId = 'wide' WHERE rowid = 9")
    db.commit()
    db.close()
    arrow, rows = _both_ways(path, monkeypatch)
    assert arrow == rows == (f"{path}: table {KERNELS}: column streamId holds 'wide' where nsys writes an integer; "
                             "export the report again with 'nsys export --type sqlite'")


def test_values_match_the_rows_sqlite_reads(steps_capture):
    # The same kernels, names and CUDA calls as a plain sqlite3 query of the export, sorted the same way.
    data = reader.read(steps_capture)
    db = sqlite3.connect(steps_capture)
    rows = db.execute(f"SELECT k.start, k.\"end\", s.value, d.value, k.gridX, k.blockX, k.correlationId FROM {KERNELS} k "
                      "JOIN StringIds s ON s.id = k.shortName JOIN StringIds d ON d.id = k.demangledName "
                      "ORDER BY k.start, k.\"end\"").fetchall()
    k = data.kernels
    assert k["start"].tolist() == [r[0] for r in rows] and k["end"].tolist() == [r[1] for r in rows]
    # nsys's short name, but a CUTLASS launch wrapper's ("Kernel2") is its operator's (kernel_names.telling_name).
    assert k["name"].tolist() == [telling_name(r[3]) if r[2] in WRAPPERS else r[2] for r in rows]
    assert "Kernel2" in {r[2] for r in rows} and "Kernel2" not in k["name"].tolist()
    assert k["demangled"].tolist() == [r[3] for r in rows]
    assert k["gridX"].tolist() == [r[4] for r in rows] and k["blockX"].tolist() == [r[5] for r in rows]
    assert k["correlation"].tolist() == [r[6] for r in rows]
    calls = db.execute("SELECT r.start, s.value FROM CUPTI_ACTIVITY_KIND_RUNTIME r JOIN StringIds s ON s.id = r.nameId "
                       "ORDER BY r.start, r.\"end\"").fetchall()
    assert data.api["start"].tolist() == [c[0] for c in calls]
    assert data.api["name"].tolist() == [reader.api_name(c[1]) for c in calls]


def test_a_type_changing_past_the_first_batch_is_named(tmp_path):
    # The driver types a column by its first rows; a text value 100,000 rows in is still found and named.
    path = _copy(tmp_path)
    db = sqlite3.connect(path)
    for _ in range(12):
        db.execute(f"INSERT INTO {KERNELS} SELECT * FROM {KERNELS}")
    db.execute(f"UPDATE {KERNELS} SET blockY = 'tall' WHERE rowid = 150000")
    db.commit()
    db.close()
    with pytest.raises(InputError) as err:
        reader.read(path)
    assert str(err.value) == (f"{path}: table {KERNELS}: column blockY holds 'tall' where nsys writes an integer; "
                              "export the report again with 'nsys export --type sqlite'")


def test_text_null_in_the_first_rows_is_read_as_text(tmp_path, steps_capture):
    # The capture's 200 'step' ranges carry their own text; 70,000 ranges put before them carry a
    # registered string instead (text NULL): the text column is NULL for its first 70,000 rows.
    path = _copy(tmp_path, steps_capture)
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE n2 AS SELECT * FROM NVTX_EVENTS")
    db.execute("DELETE FROM NVTX_EVENTS")
    db.execute("INSERT INTO StringIds (id, value) VALUES (999999, 'registered')")
    db.executemany('INSERT INTO NVTX_EVENTS (start, "end", eventType, textId) VALUES (?, ?, 59, 999999)',
                   [(1000 + i, 1001 + i) for i in range(70_000)])
    db.execute("INSERT INTO NVTX_EVENTS SELECT * FROM n2")
    db.commit()
    db.close()
    names = reader.read(path).nvtx["name"]
    assert (names == "registered").sum() == 70_000 and (names == "step").sum() == 200


def test_null_times_are_left_out(tmp_path):
    # A kernel whose start is NULL (the schema says NOT NULL; a hand-made export may not) is dropped, not read as 0.
    path = _copy(tmp_path)
    db = sqlite3.connect(path)
    columns = [r[1] for r in db.execute(f"PRAGMA table_info({KERNELS})")]
    db.execute(f"CREATE TABLE k2 AS SELECT * FROM {KERNELS}")
    db.execute(f"DROP TABLE {KERNELS}")
    db.execute(f"CREATE TABLE {KERNELS} ({', '.join(chr(34) + c + chr(34) for c in columns)})")
    db.execute(f"INSERT INTO {KERNELS} SELECT * FROM k2")
    db.execute(f"UPDATE {KERNELS} SET start = NULL WHERE rowid = 5")
    db.commit()
    db.close()
    assert len(reader.read(path).kernels) == 51


def test_labels_share_one_text_per_distinct_name(tmp_path):
    # Two string ids with the same text (an export may repeat one) are one category.
    path = _copy(tmp_path)
    db = sqlite3.connect(path)
    first = db.execute(f"SELECT shortName FROM {KERNELS} LIMIT 1").fetchone()[0]
    text = db.execute("SELECT value FROM StringIds WHERE id = ?", (first,)).fetchone()[0]
    db.execute("INSERT INTO StringIds (id, value) VALUES (888888, ?)", (text,))
    db.execute(f"UPDATE {KERNELS} SET shortName = 888888 WHERE rowid = 1")
    db.commit()
    expected = db.execute(f"SELECT COUNT(*) FROM {KERNELS} WHERE shortName IN (?, 888888)", (first,)).fetchone()[0]
    db.close()
    names = reader.read(path).kernels["name"]
    assert names.categories.count(text) == 1
    assert expected >= 2 and (names == text).sum() == expected


def test_launch_index_finds_each_call():
    from ncuwrap.timeline.launches import LaunchIndex

    # correlationId 5 was used twice: the earlier call (40) launched it; 7 and NaN have no call.
    index = LaunchIndex(np.array([5.0, np.nan, 3.0, 5.0]), np.array([50, 10, 30, 40]))
    assert index.lookup([5, 3]).tolist() == [40.0, 30.0]
    assert np.isnan(index.lookup([7, np.nan, 1, 9])).all()


def test_a_path_with_uri_characters_is_read_and_left_alone(tmp_path):
    # The export is opened as a read-only file: URI (spaces, '#', '?', '%' in the name) by both readers,
    # and nothing is written beside it (no journal).
    folder = tmp_path / "odd dir #1"
    folder.mkdir()
    path = folder / "a b%20c?.sqlite"
    shutil.copyfile(BENCH, path)
    assert len(reader.read(path).kernels) == 52
    assert sorted(p.name for p in folder.iterdir()) == [path.name]
