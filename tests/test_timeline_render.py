"""Every output format of a timeline diagnosis: JSON is strict JSON, HTML is one self-contained page
with the stacked bar and escapes kernel names, the terminal table shows the verdict and Amdahl."""

from __future__ import annotations

import dataclasses
import json
import re

import pytest

from ncuwrap.render import Format, render
from ncuwrap.render.breakdown import text_bar
from tests.conftest import H200, run_cli, whole_capture

BENCH = H200 / "nsys" / "bench.sqlite"


@pytest.fixture(scope="module")
def bench():
    return whole_capture(BENCH)  # the whole capture: both kernels, the copies and the start-up


def test_every_format_has_a_renderer(bench):
    for fmt in Format:
        assert render(bench, fmt).strip()


def test_json_is_strict(bench):
    def refuse(value):
        raise AssertionError(f"{value} is not JSON")

    doc = json.loads(render(bench, Format.json), parse_constant=refuse)
    assert doc["schema"] == "ncuwrap.timeline/v1"
    assert set(doc["breakdown_ns"]) >= {"kernel", "memcpy_htod", "memcpy_dtoh", "memcpy_dtod", "memset", "idle"}
    assert {"id", "severity", "title", "evidence", "advice"} == set(doc["findings"][0])
    assert doc["metrics"]["pinned_memcpy_gbps"] is None  # no pinned copy in this capture: null, not NaN
    assert [k["name"] for k in doc["top_kernels"]] == ["strided_add", "coalesced_add"]


def test_html_is_self_contained_with_the_stacked_bar(bench):
    html = render(bench, Format.html)
    assert html.startswith("<!DOCTYPE html>")
    assert "<script" not in html and not re.search(r"(?:src|href)\s*=", html)
    assert "http://" not in html and "https://" not in html
    assert "default-src 'none'" in html
    bar = html[html.index("<svg"):html.index("</svg>")]
    widths = [float(w) for w in re.findall(r'<rect x="[\d.]+" y="4" width="([\d.]+)"', bar)]
    assert len(widths) == 4 and sum(widths) == pytest.approx(1000, abs=0.1)  # kernels, H2D, D2H, idle
    assert "H2D copies 16.13 ms (8.1%)" in html


def test_html_escapes_kernel_names(bench):
    evil = dataclasses.replace(bench.timeline.kernels[0], name="f<float>&<script>x</script>", demangled='g<"a">')
    timeline = dataclasses.replace(bench.timeline, kernels=(evil,) + bench.timeline.kernels[1:])
    html = render(dataclasses.replace(bench, timeline=timeline), Format.html)
    assert "<script>" not in html
    # Shown by its demangled name (short enough to stay whole), escaped in the cell and in the title.
    assert "<code title=\"g&lt;&#34;a&#34;&gt;\">g&lt;&#34;a&#34;&gt;</code>" in html


def test_table_shows_verdict_breakdown_and_amdahl(bench):
    text = render(bench, Format.table)
    assert "Bound: launch (other CUDA calls) - Judged without steps, over the window from the first GPU work to the last" in " ".join(text.split())
    assert "kernels take no time   184.84 ms     1.08x" in text
    assert "HIGH   4 copies from/to pageable host memory (256 MiB) at 10.4 GB/s" in text


def test_text_bar_is_proportional(bench):
    bar = text_bar(bench.timeline, width=60)
    assert len(bar) == 60
    assert bar.count("#") == 4 and bar.count(">") == 5 and bar.count("<") == 3 and bar.count(".") == 48


def test_diagnose_writes_html_to_a_file(capsys, tmp_path):
    out = tmp_path / "t.html"
    code, stdout, err = run_cli(capsys, "diagnose", BENCH, "-f", "html", "-o", out)
    assert code == 0 and stdout == ""
    assert "<svg" in out.read_text()
