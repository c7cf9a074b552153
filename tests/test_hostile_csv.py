"""Hostile and odd ncu CSV exports (issue 10, A5), each built here from a real export by replacing
one cell, header or byte: one line naming the file, exit code 2, or the correct result."""

from __future__ import annotations

import csv
import io
import json
import time
import tracemalloc

import pytest

from ncuwrap.kernel.reading import ncu_csv
from ncuwrap.kernel.document import expand
from tests.conftest import H200, run_cli

VECADD = H200 / "vecadd" / "bench_add.raw.csv"
DETAILS = H200 / "transpose" / "copyKernel.details.csv"
AGAIN = "export the report again from the .ncu-rep"
AGAIN_IT = "export it again from the .ncu-rep"


def _rows(path=VECADD) -> list[list[str]]:
    return list(csv.reader(io.StringIO(path.read_text(encoding="utf-8"))))


def _write(path, rows, encoding="utf-8"):
    with path.open("w", newline="", encoding=encoding) as fh:
        csv.writer(fh, quoting=csv.QUOTE_ALL, lineterminator="\n").writerows(rows)
    return path


def _kernels(capsys, path) -> list[tuple]:
    code, out, err = run_cli(capsys, "diagnose", path, "-f", "json")
    assert code == 0 and err == "", err
    return [(k["id"], k["name"], k["bound"]) for k in expand(json.loads(out))["kernels"]]


def test_byte_order_mark_before_the_header(capsys, tmp_path):
    path = _write(tmp_path / "bom.raw.csv", _rows(), encoding="utf-8-sig")
    assert path.read_bytes()[:3] == b"\xef\xbb\xbf"
    assert _kernels(capsys, path) == _kernels(capsys, VECADD)


def test_quoted_newline_in_the_last_row(capsys, tmp_path):
    # Was "the CSV is truncated": the last physical line was taken for the last row.
    rows = _rows()
    rows[-1][rows[0].index("Kernel Name")] = "coalesced_add(const float *,\nconst float *, float *, int)"
    assert _kernels(capsys, _write(tmp_path / "newline.raw.csv", rows)) == _kernels(capsys, VECADD)


def test_long_kernel_name_in_the_last_row(capsys, tmp_path):
    # 200 KB: over the csv module's 128 KiB field limit (a traceback before), under ncuwrap's 1 MiB.
    rows = _rows()
    rows[-1][rows[0].index("Kernel Name")] = "k" * 200_000 + "(int)"
    assert _kernels(capsys, _write(tmp_path / "long.raw.csv", rows))[1][1] == "k" * 200_000


def test_non_finite_cell_is_no_measurement(capsys, tmp_path):
    rows = _rows()
    rows[2][rows[0].index("gpu__time_duration.sum")] = "1e999"
    kernels = _kernels(capsys, _write(tmp_path / "inf.raw.csv", rows))  # and nothing on stderr (numpy warnings)
    assert [k[0] for k in kernels] == [0, 1]


def _refused(capsys, path, message):
    code, out, err = run_cli(capsys, "diagnose", path)
    assert code == 2 and out == ""
    assert err == f"ncuwrap: error: {path}: {message}\n"


@pytest.mark.parametrize("change, message", [
    (lambda rows: [r + [r[rows[0].index("gpu__time_duration.sum")]] for r in rows],
     f"column 'gpu__time_duration.sum' appears 2 times in the header; {AGAIN}"),
    (lambda rows: rows[:2] + [["0.5"] + rows[2][1:]] + rows[3:],
     f"launch ID '0.5' is not a launch number (a whole number from 0 to 2**53); {AGAIN}"),
    (lambda rows: rows[:2] + [["1234567890123456789012345"] + rows[2][1:]] + rows[3:],
     f"launch ID '1234567890123456789012345' is not a launch number (a whole number from 0 to 2**53); {AGAIN}"),
    (lambda rows: rows[:2] + [["first"] + rows[2][1:]] + rows[3:],
     f"launch ID 'first' is not a launch number (a whole number from 0 to 2**53); {AGAIN}"),
], ids=["duplicated-column", "fractional-id", "25-digit-id", "text-id"])
def test_refused_with_one_line(capsys, tmp_path, change, message):
    _refused(capsys, _write(tmp_path / "bad.raw.csv", change(_rows())), message)


def test_huge_cell_in_a_numeric_column(capsys, tmp_path):
    # A fixed-width string array made every cell as wide as this one: 3.6 GB for a 5 MB file.
    rows = _rows()
    rows[2][rows[0].index("gpu__time_duration.sum")] = "x" * 5_000_000
    path = _write(tmp_path / "huge.raw.csv", rows)
    tracemalloc.start()
    try:
        _refused(capsys, path, "a field of 5,000,000 characters in column 'gpu__time_duration.sum'; ncu writes none over 1 MiB, "
                               "so the file is damaged: export it again from the .ncu-rep")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 300 << 20, f"peak {peak >> 20} MiB"


def test_details_page_with_many_distinct_labels(tmp_path):
    # The real details page plus 20,000 made-up labels for launch 0 (one pandas call per column took minutes).
    rows = _rows(DETAILS)
    header = rows[0]
    template = next(r for r in rows[1:] if r[header.index("Metric Name")])
    extra = []
    for i in range(20_000):
        row = list(template)
        row[header.index("Section Name")], row[header.index("Metric Name")] = "Made Up", f"Label {i}"
        row[header.index("Metric Unit")], row[header.index("Metric Value")] = "", f"{i:,}"
        extra.append(row)
    path = _write(tmp_path / "labels.details.csv", rows[:-1] + extra + rows[-1:])
    started = time.perf_counter()
    profile = ncu_csv.read(path)
    assert time.perf_counter() - started < 60
    frame = profile.frame
    assert frame["details::Made Up::Label 19999"].tolist() == [19999.0]
    assert frame["gpu__time_duration.sum"].dtype == float
    assert frame["name"].tolist() == ncu_csv.read(DETAILS).frame["name"].tolist() == ["copyKernel"]


def test_a_short_row_inside_the_file(capsys, tmp_path):
    # pandas filled the missing fields of a short row with nothing; Arrow refuses it, as it should.
    rows = _rows()
    rows[2] = rows[2][:40]
    _refused(capsys, _write(tmp_path / "short.raw.csv", rows), f"a row has 40 fields where the header has {len(rows[0])}; {AGAIN_IT}")


def test_a_row_with_more_fields_than_the_header(capsys, tmp_path):
    rows = _rows()
    rows[2] = rows[2] + ["1"]
    _refused(capsys, _write(tmp_path / "long_row.raw.csv", rows), f"the rows have more fields than the header; {AGAIN_IT}")


def test_a_short_last_row_is_a_truncated_file(capsys, tmp_path):
    rows = _rows()
    rows[-1] = rows[-1][:100]
    _refused(capsys, _write(tmp_path / "cut.raw.csv", rows), f"the CSV is truncated (last row incomplete); {AGAIN_IT}")


def test_blank_lines_between_the_header_and_the_units(capsys, tmp_path):
    path = tmp_path / "blank.raw.csv"
    text = VECADD.read_text(encoding="utf-8")
    header, rest = text.split("\n", 1)
    path.write_text(header + "\n\n\n" + rest, encoding="utf-8")
    assert _kernels(capsys, path) == _kernels(capsys, VECADD)


def test_numbers_read_as_python_reads_them(tmp_path):
    # Thousands separators, six decimals on a 4-decimal tie, exponents: each cell is the float
    # Python's float() makes of it without its commas, whichever way (whole column or cell by cell)
    # its column was converted.
    rows = _rows()
    header = rows[0]
    cells = {"gpu__time_duration.sum": ["1,234,567.891011", "12.34565"],
             "dram__bytes.sum.per_second": ["1e3", "98,765"],
             "launch__registers_per_thread": ["n/a", "32"]}
    for name, values in cells.items():
        for row, value in zip(rows[2:], values):
            row[header.index(name)] = value
    frame = ncu_csv.read(_write(tmp_path / "numbers.raw.csv", rows)).frame
    units = dict(zip(header, rows[1]))
    from ncuwrap.kernel.reading.units import scale_to_base
    for name, values in cells.items():
        want = [float(v.replace(",", "")) * scale_to_base(units[name]) if v != "n/a" else None for v in values]
        got = [None if v != v else v for v in frame[name].tolist()]
        assert got == want, name
