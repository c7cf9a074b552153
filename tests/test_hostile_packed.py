"""Inputs read through a stand-in file (issue 22): a gzipped export's errors name the file the user gave,
unpacking stops early on a file that inflates far more than any export, and temporary names fit the file
system's limit. The damaged files are SYNTHETIC, made here (from real H200 exports where they need one)."""

from __future__ import annotations

import gzip
from pathlib import Path

from conftest import run_cli

DATA = Path(__file__).resolve().parent / "data"
RAW = DATA / "h200" / "transpose" / "transposeNaive.raw.csv"


def one_line(capsys, *args) -> str:
    code, out, err = run_cli(capsys, *args)
    assert (code, out) == (2, ""), err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    return err.strip()


def test_a_damaged_csv_gz_names_the_given_file(tmp_path, capsys):
    given = tmp_path / "export.csv.gz"
    given.write_bytes(gzip.compress(b"not, an, export\n1, 2, 3\n"))
    err = one_line(capsys, "diagnose", given)
    assert err.startswith(f"ncuwrap: error: {given}: not an Nsight Compute CSV export")
    assert "ncuwrap-" not in err  # no temporary folder


def test_a_truncated_row_in_a_csv_gz_names_the_given_file(tmp_path, capsys):
    text = RAW.read_text()
    given = tmp_path / "cut.raw.csv.gz"
    given.write_bytes(gzip.compress(text[: len(text) - 200].encode()))
    err = one_line(capsys, "diagnose", given)
    assert f"ncuwrap: error: {given}: " in err and "ncuwrap-" not in err


def test_a_csv_gz_that_inflates_a_thousandfold_stops_early(tmp_path, capsys, monkeypatch):
    from ncuwrap.core import packed

    monkeypatch.setattr(packed, "RATIO_AFTER", 1 << 20)
    given = tmp_path / "bomb.csv.gz"
    with gzip.open(given, "wb") as fh:
        fh.write(RAW.read_bytes()[:2000])
        fh.write(b" " * (64 << 20))
    err = one_line(capsys, "diagnose", given)
    assert err.startswith(f"ncuwrap: error: {given}: inflates more than 250 times its size")


def test_a_long_legal_output_name_is_written(tmp_path, capsys):
    out = tmp_path / ("x" * 245 + ".json")  # 250 bytes: legal; its temporary name must fit too
    code, _, err = run_cli(capsys, "diagnose", DATA / "h200" / "vecadd" / "bench_add.raw.csv", "-f", "json", "-o", out)
    assert code == 0, err
    assert out.is_file() and not [p for p in tmp_path.iterdir() if p.name.startswith(".")]


def test_a_long_legal_gz_name_is_unpacked(tmp_path, capsys):
    given = tmp_path / ("y" * 240 + ".raw.csv.gz")
    given.write_bytes(gzip.compress(RAW.read_bytes()))
    code, out, err = run_cli(capsys, "diagnose", given)
    assert code == 0, err
    assert "transposeNaive" in out


def test_a_huge_sparse_csv_without_a_line_break_is_refused_at_once(tmp_path, capsys):
    """500 GB in the issue; 64 GiB here (sparse: no disk used). The header search stops at 16 MiB."""
    import time

    given = tmp_path / "sparse.csv"
    with given.open("wb") as fh:
        fh.truncate(64 << 30)
    start = time.monotonic()
    err = one_line(capsys, "diagnose", given)
    assert time.monotonic() - start < 20
    assert err == (f"ncuwrap: error: {given}: not an Nsight Compute CSV export (no '\"ID\",' header line in its first 16 MiB); "
                   "export one with 'ncu --import REPORT --csv --page raw > FILE.csv'")


def test_a_damaged_nsys_export_names_the_nsys_rep(tmp_path, capsys, monkeypatch):
    """A .nsys-rep is read through a temporary SQLite export: what is wrong with it names the .nsys-rep."""
    fake = DATA / "profile" / "fake_nsys" / "nsys"
    bad = tmp_path / "bad.sqlite"
    bad.write_bytes((DATA / "h200" / "nsys" / "bench.sqlite").read_bytes()[:20000])  # SYNTHETIC: cut short
    monkeypatch.setenv("FAKE_NSYS_SQLITE", str(bad))
    report = tmp_path / "run.nsys-rep"
    report.write_bytes((DATA / "h200" / "nsys" / "bench.nsys-rep").read_bytes())
    err = one_line(capsys, "timeline", report, "--nsys-path", fake)
    assert err.startswith(f"ncuwrap: error: {report}: ") and "ncuwrap-nsys-" not in err
