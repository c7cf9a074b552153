"""Markdown report (`--format markdown`): the short form for PR comments.

Full outputs are compared with golden files under tests/golden/; after an intended change,
regenerate them with `NCUWRAP_REGEN=1 python -m pytest tests/test_render_markdown.py` and review the
diff. The GFM checks render the output with markdown-it-py (CommonMark + GFM tables and
strikethrough) and read the tokens: no raw HTML, every table intact, names shown as written.
"""

from __future__ import annotations

import re

import pytest

from ncuwrap.kernel.diagnosis import diagnose
from ncuwrap.render import Format, render
from ncuwrap.render.escape import code, escape, table
from tests.conftest import H200, golden, run_cli
from tests.multi import four_transposes, hostile, scaled, single

HOSTILE = '<script>alert("x")</script>ns::k<float, 4>(T&, a|b) &amp; `tick`'


def gfm(text: str):
    markdown_it = pytest.importorskip("markdown_it")
    md = markdown_it.MarkdownIt("commonmark").enable("table").enable("strikethrough")
    return md, md.parse(text)


# The only HTML a Markdown report holds: folded blocks of ncuwrap's own, their summary escaped as HTML.
FOLD = re.compile(r"<details><summary>[^<>]*</summary>\n|</details>\n")


def assert_clean_gfm(text: str) -> str:
    """No raw HTML but ncuwrap's folded blocks, no stray emphasis; every table's rows have the
    header's cell count. Returns the HTML."""
    md, tokens = gfm(text)
    assert not {c.type for t in tokens for c in (t.children or [])} & {"html_inline"}, "raw HTML in the Markdown"
    for t in tokens:
        if t.type == "html_block":
            assert FOLD.fullmatch(t.content), f"raw HTML in the Markdown: {t.content!r}"
    lines = text.splitlines()
    for t in tokens:
        if t.type == "table_open":
            start, end = t.map
            block = lines[start:end]
            cells = [len(re.split(r"(?<!\\)\|", row.strip())) - 2 for row in block]
            assert len(set(cells)) == 1, f"table at line {start + 1} has rows of different widths: {block}"
            assert len({len(row) for row in block}) == 1, f"table at line {start + 1} is not aligned"
    return md.render(text)


def test_escape_and_code_spans():
    assert escape("a*b_c [x](y) <b> | ~s~ `t` #1 &amp;") == r"a\*b\_c \[x\](y) \<b\> \| \~s\~ \`t\` \#1 \&amp;"
    assert code("f<T>()") == "`f<T>()`"
    assert code("a`b") == "``a`b``"
    assert code("`x`") == "`` `x` ``"
    assert table(["k", "n"], [[code("a|b"), "1"]], "lr") == "| k      |   n |\n|:-------|----:|\n| `a\\|b` |   1 |"


@pytest.mark.parametrize("name", ["transposeShared", "transposePadded"])
def test_single_report_golden(name):
    text = render(single(name), Format.markdown)
    golden(f"diagnose_{name}.md", text)
    assert_clean_gfm(text)


def test_report_with_rules_not_evaluated_golden():
    text = render(diagnose(H200 / "vecadd" / "bench_add.ncu-rep"), Format.markdown)
    golden("diagnose_bench_add.md", text)
    # Said once for the report, with one command, not once per launch.
    assert text.count("Not evaluated") == 1
    assert ("**Not evaluated** on 2 launches: `shared_bank_conflicts`, `local_memory_spill`, `atomic_contention`, `at_roofline`. "
            "8 metrics missing; re-profile with --section MemoryWorkloadAnalysis\\_Tables") in text
    assert_clean_gfm(text)


def test_multi_kernel_golden_and_stop_criterion():
    text = render(four_transposes(), Format.markdown)
    golden("diagnose_four_transposes.md", text)
    html = assert_clean_gfm(text)
    assert "Stop here" not in html  # none of the four reaches its roof under ncu
    ranked = re.findall(r"^(?:### |<details><summary>)\d\. `?(\w+)", text, flags=re.M)
    assert ranked == ["transposeNaive", "transposeShared", "copyKernel", "transposePadded"]


def test_cli_markdown_equals_the_renderer(capsys):
    code_, out, _ = run_cli(capsys, "diagnose", H200 / "transpose" / "transposeShared.ncu-rep.gz", "-f", "markdown")
    assert code_ == 0
    assert out == render(single("transposeShared"), Format.markdown)


def test_hostile_kernel_name_renders_as_written():
    """A real report's Diagnosis with its kernel renamed (dataclasses.replace) to a hostile C++ name."""
    text = render(hostile(HOSTILE), Format.markdown)
    html = assert_clean_gfm(text)
    assert "<script>" not in html
    from html import unescape

    codes = [unescape(c) for c in re.findall(r"<code>(.*?)</code>", html)]
    # Cells and heading show the name short (ncuwrap.render.names: what stands in <...> reads as template
    # arguments), its whole name once under the heading; all literal.
    from ncuwrap.render.names import short

    assert short(HOSTILE) != HOSTILE and codes.count(HOSTILE) == 1 and codes.count(short(HOSTILE)) == 2


def test_many_kernels_stay_short():
    """Synthetic scale data (tests/multi.py): 1,000 launches repeating the four real verdicts."""
    text = render(scaled(1000), Format.markdown)
    # Launches of one kernel are one row: the four kernels all show, none pushed out by the others' launches.
    assert "1000 kernel launches of 4 kernels" in text
    rows = re.findall(r"^\|\s+\d \| `(\w+)`\s+\|\s+(\d+) \|", text, flags=re.M)
    assert rows == [("transposeNaive", "250"), ("transposeShared", "250"), ("copyKernel", "250"), ("transposePadded", "250")]
    assert text.count("\n### ") == 2 and len(re.findall(r"<details><summary>\d\. ", text)) == 2  # two open sections, two folded
    assert len(text) < 20_000
    assert_clean_gfm(text)
