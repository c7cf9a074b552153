"""Hostile names in every output format (terminal table, Markdown, HTML, JSON) of every document
(kernel diagnosis, compare, timeline).

Each input is a real capture from tests/data with kernels, a process and an API call renamed in the
file itself (the raw CSV's "Kernel Name" and "Process Name" cells, the nsys SQLite's StringIds), saved
under a hostile file name, then read by the ordinary loaders: the names travel the whole way from
ingest to output. The names carry HTML and script injection, Markdown injection (pipes, backticks, a
javascript: link, raw ``<details>``, a leading ``#`` after a newline), terminal control sequences (SGR
colour, an OSC 8 hyperlink, CR, BS, BEL), Unicode bidi overrides and a very long C++ signature.

What must hold: HTML has no element or attribute that came from a name; Markdown tables keep their
column count and no raw HTML, link or heading comes from a name; terminal output holds no control
character but the newline (with colour on, none but the renderer's own SGR styles); JSON gives back
every name exactly as written.
"""

from __future__ import annotations

import csv
import json
import re
import shutil
import sqlite3
import unicodedata

import pytest

from ncuwrap.kernel.compare import compare
from ncuwrap.kernel.diagnosis import diagnose
from ncuwrap.render import Format, render
from ncuwrap.render import names as N
from ncuwrap.render.escape import terminal
from ncuwrap.timeline.compare import compare_timelines
from ncuwrap.timeline.diagnosis import diagnose_timeline
from ncuwrap.kernel.document import expand
from ncuwrap.timeline.options import TimelineOptions
from tests.conftest import DATA, H200, run_cli
from tests.test_render_html import Page
from tests.test_render_markdown import assert_clean_gfm, gfm

NAME = ('<script>alert(1)</script>"><img src=x onerror=alert(1)> a|b `tick` ``two`` [link](javascript:alert(1)) '
        '<details><summary>open</summary> *em* _u_ ~~s~~ &amp; &#60;\n# heading\r\x08\x07 \x1b[31mred\x1b[0m '
        '\x1b]8;;http://evil.example\x07click\x1b]8;;\x07 \u202eevil\u202c \u2066iso\u2069 \x9b2J')
# ncu's short name of a kernel is its signature up to the parameters, less a return type (up to the
# last space): a name meant to survive whole has tabs where NAME has spaces.
NCU_NAME = NAME.replace(" ", "\t")
# Under 60 characters: shown whole in table cells and headings, where longer names are shortened.
SHORT = "k|x`y`<b>[a](javascript:x)\u202e\x1b[2J|#|"
LONG = "ns::detail::" + "very_long_template_name_" * 30 + "<float, (int)4, " + "T" * 200 + ">"
PROCESS = "proc " + NAME
FILE = "<img src=x onerror=alert(1)>`|#[l](javascript:alert(1))\x1b[31m\u202e\n"
# The start of every name, the same in each format.
SHOWN = '<script>alert(1)</script>"><img'
SHORT_SHOWN = "k|x`y`<b>[a](javascript:x)\\u202e\\x1b[2J|#|"


def shown(kind: str) -> list[str]:
    """How the names of a document start in every output (control characters as escapes)."""
    return [*((SHOWN,) if kind != "compare" else ()), *((SHORT_SHOWN,) if kind not in ("timeline", "timeline_compare") else ())]
# What a name may never bring into an output: its own elements (the HTML report has <details> and
# <summary> of its own) and attributes.
EVIL_TAGS = {"script", "img"}

MULTI = DATA / "h200_ncuwrap" / "multi" / "two_processes.raw.csv"
TRANSPOSE = H200 / "transpose"
BENCH_SQLITE = H200 / "nsys" / "bench.sqlite"


def rename_ncu_csv(source, target, kernels: dict[str, str], processes: dict[str, str] = {}):
    """A copy of a raw ncu CSV with "Kernel Name" cells (full signatures) and "Process Name" cells (by
    process id) replaced."""
    with open(source, newline="", encoding="utf-8") as f:
        rows = list(csv.reader(f))
    header = rows[0]
    kernel, pid, process = header.index("Kernel Name"), header.index("Process ID"), header.index("Process Name")
    for row in rows[2:]:
        row[kernel] = kernels.get(row[kernel], row[kernel])
        row[process] = processes.get(row[pid], row[process])
    with open(target, "w", newline="", encoding="utf-8") as f:
        csv.writer(f, quoting=csv.QUOTE_ALL).writerows(rows)
    return target


def hostile_dir(tmp_path_factory):
    folder = tmp_path_factory.mktemp("hostile") / FILE
    folder.mkdir()
    return folder


@pytest.fixture(scope="module")
def docs(tmp_path_factory):
    """Every document kind, each from real captures with hostile names: {kind: (result, names)}."""
    folder = hostile_dir(tmp_path_factory)
    multi = rename_ncu_csv(MULTI, folder / f"{FILE}.raw.csv",
                           {"void ops::strided_copy<8>(float *, const float *, int)": f"void {NCU_NAME}(float *, const float *, int)",
                            "void scale_add<double, 1>(T1 *, const T1 *, T1, int)": f"void {LONG}(T1 *, const T1 *, T1, int)",
                            "void scale_add<float, 4>(T1 *, const T1 *, T1, int)": f"void {SHORT}(T1 *, const T1 *, T1, int)"},
                           {"2751": PROCESS})
    diagnosis = diagnose(multi)
    shared, padded = (rename_ncu_csv(TRANSPOSE / f"{k}.raw.csv", folder / f"{FILE}{k}.raw.csv",
                                     {f"{k}(float *, const float *)": f"{SHORT}(float *, const float *)"})
                      for k in ("transposeShared", "transposePadded"))
    paired = compare(diagnose(shared), diagnose(padded))
    unpaired = compare(diagnosis, diagnose(MULTI))

    capture = folder / f"{FILE}.sqlite"
    shutil.copy(BENCH_SQLITE, capture)
    with sqlite3.connect(capture) as db:
        for old, new in (("strided_add", NAME), ("strided_add(const float *, const float *, float *, int)", f"{NAME}(const float *)"),
                         ("coalesced_add", LONG), ("coalesced_add(const float *, const float *, float *, int)", f"{LONG}(const float *)"),
                         ("cudaMemcpy_v3020", f"cudaMemcpy{NAME}")):
            assert db.execute("UPDATE StringIds SET value = ? WHERE value = ?", (new, old)).rowcount == 1, old
    # Without steps (its loop of one kernel would leave the other out): every name is in the window.
    timeline = diagnose_timeline(capture, timeline=TimelineOptions(steps="none"))
    # Two timelines: the hostile kernels are the ones AFTER adds, the bench's own the ones it removes.
    timelines = compare_timelines(diagnose_timeline(BENCH_SQLITE, timeline=TimelineOptions(steps="none")), timeline)
    return {"diagnosis": diagnosis, "compare": paired, "compare_unpaired": unpaired, "timeline": timeline, "timeline_compare": timelines}


KINDS = ("diagnosis", "compare", "compare_unpaired", "timeline", "timeline_compare")


def test_the_names_reach_the_documents(docs):
    """The loaders keep the names as written: the tests below see them in every document."""
    d = docs["diagnosis"]
    assert {k.display_name for k in d.kernels} >= {f"void {NCU_NAME}(float *, const float *, int)", f"void {LONG}(T1 *, const T1 *, T1, int)"}
    assert PROCESS in {k.process_name for k in d.kernels} and FILE in d.source.path
    assert [p.name for p in docs["compare"].pairs] == [SHORT]
    assert {NCU_NAME, SHORT} <= {k.name for k in d.kernels}
    assert {k.name for k in docs["timeline"].timeline.kernels} == {NAME, LONG}
    assert f"cudaMemcpy{NAME}" in {a.name for a in docs["timeline"].timeline.api}


# ------------------------------------------------------------------ HTML


@pytest.mark.parametrize("kind", KINDS)
def test_html_has_no_markup_from_a_name(docs, kind):
    text = render(docs[kind], Format.html)
    page = Page(text)
    tags = {tag for tag, _ in page.tags}
    assert not tags & EVIL_TAGS, tags & EVIL_TAGS
    for tag, attrs in page.tags:
        assert not [a for a in attrs if a.startswith("on")], (tag, attrs)
        href = attrs.get("href") or attrs.get("xlink:href")
        assert href is None or re.fullmatch(r"#[\w-]+", href), href
        assert "src" not in attrs, (tag, attrs)
    content = page.content + " ".join(v or "" for _, a in page.tags for v in a.values())
    # The names are there, as text: with their control characters shown as escapes.
    assert all(name in content for name in shown(kind)), shown(kind)
    if kind != "compare":
        assert "<details><summary>open</summary>" in content and "\\x1b[31mred" in content and "\\u202eevil" in content
    assert not _controls(content.replace("\t", " "))  # a tab is white space in HTML
    if kind != "compare":
        assert "very_long_template_name_" in content


# ------------------------------------------------------------------ Markdown


@pytest.mark.parametrize("kind", KINDS)
def test_markdown_has_no_markup_from_a_name(docs, kind):
    text = render(docs[kind], Format.markdown)
    assert not _controls(text), _controls(text)
    html = assert_clean_gfm(text)  # tables keep their column count; no raw HTML but ncuwrap's folds
    _, tokens = gfm(text)
    inline = [c for t in tokens for c in (t.children or [])]
    assert not [c for c in inline if c.type in ("link_open", "image")], "a link from a name"
    headings = [tokens[i + 1].content for i, t in enumerate(tokens) if t.type == "heading_open"]
    assert not [h for h in headings if "heading" in h and "`" not in h], headings
    assert "javascript:" not in re.sub(r"<code>.*?</code>", "", html, flags=re.S).replace("javascript:alert(1))", "")
    assert "<script>" not in html and "<img" not in html
    codes = [c.content for c in inline if c.type == "code_inline"]
    # In code spans, as the document's names show them (ncuwrap.render.names: template arguments as
    # ‹…›, so "<b>" in a name reads as one), control characters as escapes, white space as one space.
    name = N.of(docs[kind])
    kernels = {"diagnosis": lambda d: [k.name for k in d.kernels], "timeline": lambda d: [k.demangled for k in d.timeline.kernels],
               "timeline_compare": lambda d: [k.name for k in d.kernels],
               "compare": lambda d: [p.name for p in d.pairs], "compare_unpaired": lambda d: [k.name for k in (*d.unpaired_before,
                                                                                                               *d.unpaired_after)]}[kind](docs[kind])
    hostile = [n for n in kernels if n.startswith(("<script>", "k|x", "ns::detail")) or "<script>" in n or "k|x" in n]
    assert hostile
    # Kernels only one side has are named whole (no section shows them).
    shown_as = (lambda n: n) if kind == "compare_unpaired" else name
    assert all(" ".join(terminal(shown_as(n)).split()) in codes for n in hostile), (codes, [shown_as(n) for n in hostile])


# ------------------------------------------------------------------ terminal


@pytest.mark.parametrize("color", [False, True])
@pytest.mark.parametrize("kind", KINDS)
def test_terminal_table_has_no_control_characters(docs, kind, color):
    # Short names (the default, in the section headers too since issue 39) and whole ones (--names demangled).
    for names in (N.SHORT, N.DEMANGLED):
        text = render(docs[kind], Format.table, color=color, names=names)
        if color:
            assert "\x1b[" in text  # the renderer's own styles
            text = re.sub(r"\x1b\[[0-9;]*m", "", text)
        assert not _controls(text), _controls(text)
    # The whole names, escaped: those of --names demangled.
    flat = "".join(text.split())
    assert all(name.replace(" ", "") in flat for name in shown(kind)), shown(kind)
    if kind != "compare":
        assert "\\x1b[31mred" in flat and "\\u202eevil" in flat


# ------------------------------------------------------------------ JSON


def test_json_gives_back_every_name_as_written(docs):
    d = expand(json.loads(render(docs["diagnosis"], Format.json)))
    assert {k["display_name"] for k in d["kernels"]} >= {f"void {NCU_NAME}(float *, const float *, int)", f"void {LONG}(T1 *, const T1 *, T1, int)"}
    assert PROCESS in {k["process"]["name"] for k in d["kernels"] if k.get("process")}
    assert d["source"]["path"] == str(docs["diagnosis"].source.path) and FILE in d["source"]["path"]

    c = json.loads(render(docs["compare"], Format.json))
    assert [(p["before"]["name"], p["after"]["name"]) for p in c["pairs"]] == [(SHORT, SHORT)]
    u = json.loads(render(docs["compare_unpaired"], Format.json))
    assert NCU_NAME in {k["name"] for k in u["unpaired"]["before"]}
    assert f"void {NCU_NAME}(float *, const float *, int)" in {k["display_name"] for k in u["unpaired"]["before"]}

    t = json.loads(render(docs["timeline"], Format.json))
    assert {k["name"] for k in t["top_kernels"]} == {NAME, LONG}
    assert f"{NAME}(const float *)" in {k["demangled"] for k in t["top_kernels"]}
    assert f"cudaMemcpy{NAME}" in t["api_ns"]
    assert FILE in t["source"]["path"]

    tc = json.loads(render(docs["timeline_compare"], Format.json))
    assert {f"{NAME}(const float *)", f"{LONG}(const float *)"} <= set(tc["added"])
    assert FILE in tc["after"]["source"]["path"]


# Control characters (C0 but newline, DEL, C1) and the bidi formatting characters, which reorder what
# a terminal or browser shows (CVE-2021-42574).
_CONTROL = re.compile(r"[\x00-\x09\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def _controls(text: str) -> list[str]:
    return sorted({unicodedata.name(c, hex(ord(c))) for c in _CONTROL.findall(text)})


# A kernel name with a NUL, a right-to-left override and an OSC 52 sequence (it asks the terminal to set the
# clipboard), renamed in a real nsys capture's StringIds (issue 54).
NUL_RLO_OSC = "k\x00ernel\u202elanruof\x1b]52;c;ZWNobyBvd25lZA==\x07_add"
# The same name as JSON writes it: each of those characters with JSON's own \uXXXX escape, nothing else changed.
NUL_RLO_OSC_JSON = '"k\\u0000ernel\\u202elanruof\\u001b]52;c;ZWNobyBvd25lZA==\\u0007_add"'


def test_json_gives_back_a_name_with_nul_rlo_and_osc_exactly(capsys, tmp_path):
    """The document reads back every character (json.loads), and its text holds none of them raw: the C0
    controls were escaped by JSON's rules already, the RLO was written raw (it reordered the JSON shown by
    `cat` or in a review's diff). The terminal table shows them as escapes, as before."""
    capture = tmp_path / "hostile.sqlite"
    shutil.copy(BENCH_SQLITE, capture)
    with sqlite3.connect(capture) as db:
        for old, new in (("strided_add", NUL_RLO_OSC), ("strided_add(const float *, const float *, float *, int)", f"{NUL_RLO_OSC}(int)")):
            assert db.execute("UPDATE StringIds SET value = ? WHERE value = ?", (new, old)).rowcount == 1, old
    db.close()
    code, text, err = run_cli(capsys, "timeline", capture, "-f", "json")
    assert (code, err) == (0, "")
    doc = json.loads(text)
    assert doc["limiter"] == doc["metrics"]["top_kernel"] == NUL_RLO_OSC
    assert [(k["name"], k["demangled"]) for k in doc["top_kernels"] if "ernel" in k["name"]] == [(NUL_RLO_OSC, f"{NUL_RLO_OSC}(int)")]
    assert f'  "limiter": {NUL_RLO_OSC_JSON},\n' in text
    assert f'      "demangled": {NUL_RLO_OSC_JSON[:-1]}(int)",\n' in text
    assert _controls(text.replace("\n", "")) == []

    code, text, err = run_cli(capsys, "compare", BENCH_SQLITE, capture, "-f", "json")
    assert (code, err) == (0, "")
    assert json.loads(text)["added"] == [f"{NUL_RLO_OSC}(int)"]
    assert f'    {NUL_RLO_OSC_JSON[:-1]}(int)"\n' in text and _controls(text.replace("\n", "")) == []

    code, table, err = run_cli(capsys, "timeline", capture)
    assert code == 0 and "k\\x00ernel\\u202elanruof\\x1b]52;c;ZWNobyBvd25lZA==\\x07_add" in table
    assert _controls(table.replace("\n", "")) == []
