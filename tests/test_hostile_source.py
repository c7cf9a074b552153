"""Bad source pages end in one line naming the file and the fix, exit 2; source text from a report is
untrusted and escaped in every format (issue 20). The damaged and hostile pages are SYNTHETIC, made here
from the real H200 page of the naive transpose (tests/data/h200_ncuwrap/source)."""

from __future__ import annotations

import gzip
import json
import os
from pathlib import Path


from conftest import run_cli

DATA = Path(__file__).resolve().parent / "data" / "h200_ncuwrap" / "source"
RAW = DATA / "transpose-naive.raw.csv.gz"


def real_page() -> str:
    with gzip.open(DATA / "transpose-naive.source_cuda_sass.csv.gz", "rt") as fh:
        return fh.read()


def refused(capsys, page: Path) -> str:
    code, out, err = run_cli(capsys, "diagnose", RAW, "--source-page", page)
    assert code == 2, (out, err)
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert str(page) in err
    return err


def test_truncated_page(tmp_path, capsys):
    text = real_page()
    page = tmp_path / "cut.csv"
    page.write_text(text[: len(text) // 2].rsplit(",", 3)[0] + "\n")
    assert "fields where the header has" in refused(capsys, page)


def test_page_without_counters(capsys):
    """A real export with --print-source cuda: the text alone."""
    err = refused(capsys, DATA / "transpose-naive.source_cuda.csv.gz")
    assert "a source page without counters (--print-source cuda shows only the text)" in err


def test_huge_cell(tmp_path, capsys):
    text = real_page().replace("const int r = r0 + j;", "x" * 70_000, 1)
    page = tmp_path / "huge.csv"
    page.write_text(text)
    assert "a cell longer than" in refused(capsys, page)


def test_address_not_hex(tmp_path, capsys):
    page = tmp_path / "addr.csv"
    page.write_text(real_page().replace('"0x', '"zz', 1))
    assert "is not hexadecimal" in refused(capsys, page)


def test_rows_before_any_header(tmp_path, capsys):
    page = tmp_path / "headless.csv"
    lines = real_page().splitlines()
    page.write_text("\n".join([lines[0], *lines[3:]]) + "\n")
    err = refused(capsys, page)
    assert "comes before any kernel name and column header" in err


def test_empty_and_fifo(tmp_path, capsys):
    empty = tmp_path / "empty.csv"
    empty.write_bytes(b"")
    assert "the file is empty" in refused(capsys, empty)
    fifo = tmp_path / "fifo.csv"
    os.mkfifo(fifo)
    assert "named pipe" in refused(capsys, fifo)


def test_inflating_page_is_bounded(tmp_path, capsys, monkeypatch):
    """A .csv.gz that inflates far past what a page holds stops at the bound, not at the end."""
    from ncuwrap.kernel.reading import source_counters

    monkeypatch.setattr(source_counters, "MAX_PAGE_BYTES", 1 << 20)
    page = tmp_path / "bomb.csv.gz"
    lines = real_page().splitlines()
    with gzip.open(page, "wt") as fh:
        fh.write("\n".join(lines[:4]) + "\n")  # file, function, header, the first line's row
        row = lines[4] + "\n"  # one SASS row, again and again
        for _ in range(20_000):
            fh.write(row)
    assert "more than" in refused(capsys, page)


HOSTILE = "out[i] = \x1b]0;pwned\x07 `` ``` </code><script>alert(1)</script> \u202e|x|"


def hostile_page(tmp_path: Path) -> Path:
    page = tmp_path / "hostile.csv"
    text = real_page()
    line = next(ln for ln in text.splitlines() if ln.startswith('"31",'))
    page.write_text(text.replace(line, line.replace(line.split('","')[1], HOSTILE.replace('"', '""'), 1), 1))
    return page


def test_hostile_source_text_in_the_terminal(tmp_path, capsys):
    code, out, err = run_cli(capsys, "diagnose", RAW, "--source-page", hostile_page(tmp_path))
    assert code == 0, err
    assert "\x1b" not in out and "\x07" not in out and "\u202e" not in out
    assert "\\x1b]0;pwned\\x07" in out and "\\u202e" in out


def test_hostile_source_text_in_markdown(tmp_path, capsys):
    from markdown_it import MarkdownIt

    code, out, err = run_cli(capsys, "diagnose", RAW, "--source-page", hostile_page(tmp_path), "-f", "markdown")
    assert code == 0, err
    assert "\x1b" not in out and "\x07" not in out
    # The text is shown, never read as HTML: no HTML token, the <script> only inside code.
    tokens = MarkdownIt("commonmark").enable("table").parse(out)
    flat = [t for tok in tokens for t in [tok, *(tok.children or [])]]
    assert not [t for t in flat if t.type in ("html_block", "html_inline")]
    assert any(t.type == "fence" and "<script>alert(1)</script>" in t.content for t in flat)
    # The snippet's fence is longer than the longest run of backticks in it: nothing closes it early.
    block = [ln for ln in out.splitlines() if ln.strip().startswith("````")]
    assert len(block) >= 2 and all(ln.strip() == "````" for ln in block)


def test_hostile_source_text_in_html_and_json(tmp_path, capsys):
    page = hostile_page(tmp_path)
    code, out, err = run_cli(capsys, "diagnose", RAW, "--source-page", page, "-f", "html")
    assert code == 0, err
    assert "<script>" not in out and "&lt;script&gt;alert(1)&lt;/script&gt;" in out and "\x1b" not in out
    code, out, err = run_cli(capsys, "diagnose", RAW, "--source-page", page, "-f", "json")
    where = next(f for f in json.loads(out)["kernels"][0]["findings"] if f["id"] == "uncoalesced_global_stores")["where"]
    assert where["lines"][0]["text"] == HOSTILE  # JSON gives the text back exactly


def test_rules_where_must_name_a_waste(tmp_path, capsys):
    rules = tmp_path / "rules.yaml"
    text = (Path(__file__).resolve().parent.parent / "rules" / "reference.yaml").read_text()
    rules.write_text(text.replace("where: global_load_excess", "where: __import__('os')"))
    code, out, err = run_cli(capsys, "rules", "check", rules)
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert "names no per-instruction waste (one of global_load_excess, global_store_excess" in err


def test_a_gzipped_report_reads_as_the_report(tmp_path, capsys):
    """A .ncu-rep.gz (the bundled sample, the fixtures) is the report: same verdicts, named as given."""
    packed = DATA / "transpose-naive.ncu-rep.gz"
    plain = tmp_path / "transpose-naive.ncu-rep"
    plain.write_bytes(gzip.decompress(packed.read_bytes()))
    docs = []
    for path in (packed, plain):
        code, out, err = run_cli(capsys, "diagnose", path, "-f", "json")
        assert code == 0, err
        doc = json.loads(out)
        assert doc["source"]["path"] == str(path)
        docs.append(doc["kernels"])
    assert docs[0] == docs[1]


def test_a_gzipped_report_that_inflates_without_end_is_bounded(tmp_path, capsys, monkeypatch):
    from ncuwrap.kernel import reading as ingest

    monkeypatch.setattr(ingest, "MAX_UNPACKED_REPORT", 1 << 20)
    bomb = tmp_path / "bomb.ncu-rep.gz"
    with gzip.open(bomb, "wb") as fh:
        fh.write(b"NVR\x00" + b"\x00" * (4 << 20))
    code, out, err = run_cli(capsys, "diagnose", bomb)
    assert (code, out) == (2, "")
    assert err == f"ncuwrap: error: {bomb}: unpacks to more than 1 MiB, more than such a file holds; give the .ncu-rep itself\n"
