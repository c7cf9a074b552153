"""HTML report (`--format html`): structure, escaping, self-containment, size, and a real browser.

The browser test renders a real multi-kernel fixture (tests/multi.py: the four real H200 transpose
reports shown together, one kernel renamed to a hostile C++ name with dataclasses.replace) in
Debian's headless Chromium, reads its console and its DOM, and leaves a screenshot in the test's
temp folder. It is skipped only where chromium is not installed, and fails instead on CI (CI=true),
where .ci/run installs it.
"""

from __future__ import annotations

import dataclasses
import os
import re
import shutil
import struct
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest
from markupsafe import Markup

from ncuwrap.kernel.diagnosis import diagnose
from ncuwrap.render import Format, render
from ncuwrap.render.html import diagnosis as html, environment, svg
from ncuwrap.kernel.shown import PAGE
from ncuwrap.core.launch_selection import LaunchSelection
from tests.conftest import DATA, H200, run_cli
from tests.multi import four_transposes, hostile, scaled, single

HOSTILE = '<script>alert("x")</script>ns::k<float, 4>(T&, a|b) &amp; `tick`'
SVG_NAMESPACE = "http://www.w3.org/2000/svg"


class Page(HTMLParser):
    """Tags, attributes and text of an HTML document (what the structural checks read)."""

    def __init__(self, text: str):
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict]] = []
        self.text: list[str] = []
        self.stack: list[str] = []
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))

    def handle_startendtag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))

    def handle_data(self, data):
        self.text.append(data)

    def all(self, tag: str, **attrs) -> list[dict]:
        return [a for t, a in self.tags if t == tag and all(a.get(k) == v or (k == "class_" and v in (a.get("class") or "").split()) for k, v in attrs.items())]

    def with_class(self, tag: str, cls: str) -> list[dict]:
        return [a for t, a in self.tags if t == tag and cls in (a.get("class") or "").split()]

    @property
    def content(self) -> str:
        return "".join(self.text)


def assert_self_contained(text: str) -> None:
    """No script, no external style/font/image/link: the file must open offline from a mail."""
    page = Page(text)
    for tag in ("script", "link", "img", "iframe", "object", "embed", "base", "audio", "video", "source", "use", "image"):
        assert not page.all(tag), f"<{tag}> in the report"
    for tag, attrs in page.tags:
        assert "src" not in attrs, f"<{tag} src=...>"
        href = attrs.get("href") or attrs.get("xlink:href")
        assert href is None or href.startswith("#"), f"<{tag} href={href!r}> leaves the page"
        assert not any(name.startswith("on") for name in attrs), f"event handler on <{tag}>"
    without_namespace = text.replace(f'xmlns="{SVG_NAMESPACE}"', "")
    for needle in ("http://", "https://", "url(", "@import", "@font-face", "javascript:"):
        assert needle not in without_namespace, f"{needle!r} in the report"
    csp = page.all("meta", **{"http-equiv": "Content-Security-Policy"})
    assert csp and "default-src 'none'" in csp[0]["content"]


# ---------------------------------------------------------------------------------------------
# Structure on real reports


def test_single_report_page_has_every_part_the_issue_asks_for():
    text = render(single("transposePadded"), Format.html)
    page = Page(text)
    assert_self_contained(text)
    content = page.content
    assert page.all("section", id="summary") and page.all("section", id="environment")
    # Summary: one line per kernel with verdict, limiter, headline, share.
    summary = text[text.index('id="summary"'):text.index("</section>", text.index('id="summary"'))]
    assert summary.count("<tr>") == 2  # header + one kernel
    assert "no issue found" in summary and "100.0%" in summary
    # Per kernel: verdict and why, the decision path with its numbers; no stop signal at 65% of DRAM.
    assert "Why memory-bound:" in content and "dram is the busiest unit (65% of peak), ahead of the SMs (35%)." in content
    assert "max(sm_pct, memory_pct) < busy" in content and "busy = 60" in content and "holds: memory" in content
    assert len(page.with_class("div", "stop")) == 0
    # Charts: bandwidth, SOL, occupancy; no roofline (the kernel does no FP32 work: a point at 0 says nothing).
    assert len(page.with_class("svg", "chart")) == 3 and not page.with_class("figure", "roofline")
    flat = " ".join(content.split())
    assert "No roofline: the kernel does no FP32 arithmetic (0 FLOP/s); the bandwidth chart shows where it stands." in flat
    assert "3.11 TB/s of 4.81 TB/s (65%)" in content
    assert "The Speed-of-Light % of a unit is its busiest sub-unit" in flat
    # 100% theoretical occupancy: nothing caps it, whatever ncu names as the block limit.
    assert "Occupancy: every warp slot can be filled (100% theoretical)." in flat and "limited by" not in flat
    # One kernel: no table of contents; every rule evaluated: no "Not evaluated" section.
    assert not page.all("nav") and not page.all("section", id="not-evaluated")
    assert "open" in page.with_class("details", "kernel")[0]
    # Environment block.
    for label, value in [("GPU", "NVIDIA H200"), ("compute capability", "9.0"), ("Nsight Compute", "2025.3.1.0"),
                         ("clock control", "base (ncu default)"), ("cache control", "all (ncu default)"),
                         ("report", "tests/data/h200/transpose/transposePadded.ncu-rep.gz"),
                         ("report sha256", "0cdc312002affcc10ac5703efd9037774176980992563288d60cb8c3f8db4b13"),
                         ("rules", "ncuwrap-default version 1 (ncuwrap:rules/default.yaml)")]:
        assert re.search(rf"<dt>{re.escape(label)}</dt><dd>(<span[^>]*>)?{re.escape(value)}<", text), label
    assert "<dt>driver</dt><dd><span class=\"note\">not recorded in the report</span>" in text
    assert "ncu --set full -k transposePadded -s 5 -c 1 -f -o /root/out/p/transposePadded ./transpose<" in text


def test_report_without_roofline_counters_says_what_was_not_collected():
    text = render(diagnose(H200 / "vecadd" / "bench_add.ncu-rep"), Format.html)
    assert_self_contained(text)
    page = Page(text)
    content = " ".join(page.content.split())
    assert not page.with_class("figure", "roofline")
    assert content.count("No roofline: 7 of its counters not collected; re-profile with --section SpeedOfLight --section "
                         "SpeedOfLight_RooflineChart (or 'ncuwrap profile --collect targeted').") == 2  # both kernels
    assert "2.96 TB/s (peak not collected)" in content
    assert "no issue found by the rules evaluated (4 rules not evaluated)" in content
    # What could not be evaluated is said once, for the report, with one command.
    (section,) = page.all("section", id="not-evaluated")
    assert ("4 rules could not be evaluated on 2 launches: the report lacks 8 metrics. To evaluate them, re-profile with "
            "--section MemoryWorkloadAnalysis_Tables (or 'ncuwrap profile --collect targeted').") in content
    assert "Rules: shared_bank_conflicts, local_memory_spill, atomic_contention, at_roofline" in content


def test_multi_kernel_page_ranks_by_time_and_details_each_kernel():
    text = render(four_transposes(), Format.html)
    assert_self_contained(text)
    page = Page(text)
    names = [m.group(1) for m in re.finditer(r'<td class="kname" data-label="kernel" title="\w+"><a href="#k\d">([^<]+)</a>', text)]
    assert names == ["transposeNaive", "transposeShared", "copyKernel", "transposePadded"]
    assert len(page.with_class("details", "kernel")) == 4
    assert ["open" in d for d in page.with_class("details", "kernel")] == [True, True, True, False]
    # 12 kernel charts (none does FP32 work: no roofline) and the fix-first bars.
    assert len(page.with_class("svg", "chart")) == 13
    toc = text[text.index("<nav"):text.index("</nav>")]
    assert re.findall(r'href="#(k\d|summary|environment)"', toc) == ["summary", "k1", "k2", "k3", "k4", "environment"]
    assert len(page.with_class("div", "stop")) == 0  # none of the four is at its roof under ncu (padded: DRAM 65%)
    assert "four real single-kernel reports shown together" in page.content


def test_a_kernel_at_the_roofline_gets_the_stop_signal_with_compute_advice():
    text = render(diagnose(DATA / "h200_ncuwrap" / "diag" / "fma_many_accumulators.ncu-rep.gz"), Format.html)
    page = Page(text)
    content = " ".join(page.content.split())
    assert len(page.with_class("div", "stop")) == 1
    assert "Stop here. At the roofline: sm at 95% of its peak with no costly waste found." in content
    assert "The SMs are at 95% of their peak, close to it (their busiest pipe, fma, at 84% of its own)" in content  # compute advice
    assert "measure the uninstrumented effective bandwidth" not in content.lower()


def test_many_kernels_stay_small_and_readable():
    """Synthetic scale data (tests/multi.py): 1,000 launches repeating the four real verdicts (250 launches of
    each kernel, all alike). Every kernel gets its section before any kernel's second launch does; of each
    kernel's 250 launches only its longest is listed (none differs: same verdict, same time)."""
    text = render(scaled(1000), Format.html)
    assert len(text.encode("utf-8")) < 400_000
    page = Page(text)
    sections = page.with_class("details", "kernel")
    assert len(sections) == PAGE.detail
    heads = [text[text.index(f'id="{s["id"]}"'):].split("</summary>")[0] for s in sections]
    for kernel in ("copyKernel", "transposeNaive", "transposeShared", "transposePadded"):
        assert any(kernel in h for h in heads), kernel
    rest = text[text.index('<section id="rest">'):]
    assert rest.count("<tr>") == 1 + 3  # the three kernels whose longest launch is below the top 25
    assert "975 more launches" in page.content and "3 of them are listed under" in page.content
    assert page.content.count("(1 listed: the longest and those that differ)") == 4
    assert_self_contained(text)


def test_cli_writes_the_html_file(tmp_path, capsys):
    out = tmp_path / "report.html"
    code, _, err = run_cli(capsys, "diagnose", H200 / "transpose" / "transposeShared.ncu-rep.gz", "-f", "html", "-o", out)
    assert code == 0 and f"wrote {out}" in err
    assert out.read_text(encoding="utf-8") == render(single("transposeShared"), Format.html)


# ---------------------------------------------------------------------------------------------
# Escaping


def test_hostile_kernel_name_is_text_never_markup():
    """A real report's Diagnosis with its kernel renamed (dataclasses.replace) to a hostile C++ name."""
    text = render(hostile(HOSTILE), Format.html)
    assert "<script" not in text
    assert_self_contained(text)
    page = Page(text)
    assert HOSTILE in page.content  # shows as written once the entities are decoded
    assert f"void {HOSTILE}(float *, const float *)" in page.content


def test_the_template_environment_escapes_and_refuses_undefined_names():
    import jinja2

    env = environment()
    assert env.from_string("{{ x }}").render(x="<b>&") == "&lt;b&gt;&amp;"
    with pytest.raises(jinja2.UndefinedError):
        env.from_string("{{ missing }}").render()
    assert env.get_template("diagnosis.html").environment.autoescape  # autoescape is on for .html files


def test_svg_charts_escape_every_text_they_hold():
    chart = svg.percent_bars('title <b>"', [('<script>alert(1)</script>', [50.0]), ("&amp;", [None])], ['series "&<'])
    assert isinstance(chart, Markup)
    assert "<script" not in chart and "&lt;script&gt;" in chart and "&amp;amp;" in chart
    assert 'aria-label="title &lt;b&gt;&#34;"' in chart
    assert "not collected" in chart
    # Control and bidi characters shown as escapes, as in every format.
    chart = svg.percent_bars("t", [("\x1b[31mk\u202e", [50.0])], ["s"])
    assert "\\x1b[31mk\\u202e" in chart and "\x1b" not in chart and "\u202e" not in chart


def _synthetic_flops(kernel, flops: float):
    """The real padded kernel's roofline with a made-up FP32 rate (synthetic, labelled): the roofline
    path of kernels that compute. Its points use the kernel's real bytes/s at each level."""
    from ncuwrap.kernel.metrics import MEMORY_LEVELS
    from ncuwrap.kernel.verdict import RooflinePoint

    chart = kernel.chart_metrics
    points = tuple(RooflinePoint(level, flops / chart[key], flops, chart[key]) for level, key, _ in MEMORY_LEVELS if chart.get(key))
    return dataclasses.replace(kernel.roofline, flops_per_s=flops, points=points)


def test_roofline_draws_one_point_per_memory_level_and_both_sides_of_a_comparison():
    real = single("transposePadded").kernels[0]
    assert real.roofline.flops_per_s == 0 and real.roofline.drawable and not real.roofline.says_something
    assert svg.roofline([real.roofline]) is None
    one = svg.roofline([_synthetic_flops(real, 2e12)])
    assert one.count('class="point"') == 3 + 3  # DRAM, L2, L1 points and their key
    assert "No FP32 arithmetic" not in one
    assert re.search(r"DRAM: 0\.644 FLOP/byte, 2 TFLOP/s", one)
    two = svg.roofline([_synthetic_flops(real, 2e12), _synthetic_flops(real, 8e12)], ["before", "after"])
    assert two.count('class="point"') == 6 + 3 and two.count('stroke-dasharray="4 3"') == 3
    assert "before: DRAM" in two and "after: DRAM" in two
    zero_peak = dataclasses.replace(_synthetic_flops(real, 2e12), peak_flops_per_s=0)
    assert svg.roofline([zero_peak]) is None
    assert html.roofline_note([zero_peak]) == "No roofline: the report's peak FP32 rate or memory peaks are zero."
    # One side without roofline counters (vecadd's report), the other with: roofs drawn, both sides explained.
    vecadd = diagnose(H200 / "vecadd" / "bench_add.ncu-rep").kernels[0].roofline
    assert vecadd.missing and svg.roofline([vecadd]) is None
    mixed = svg.roofline([vecadd, _synthetic_flops(real, 2e12)], ["before", "after"])
    assert "No point for before: its report lacks" in mixed
    no_work = svg.roofline([real.roofline, _synthetic_flops(real, 2e12)], ["before", "after"])
    assert "No FP32 arithmetic (before): 0 FLOP/s," in no_work


# ---------------------------------------------------------------------------------------------
# Real browser


CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


def _chromium(tmp_path: Path, url: str, *args: str) -> subprocess.CompletedProcess:
    if not CHROMIUM:
        if os.environ.get("CI"):
            pytest.fail("chromium is not installed on CI; .ci/run must install Debian's 'chromium' package")
        pytest.skip("chromium is not installed (apt-get install chromium); CI runs this test")
    profile = tmp_path / "chromium-profile"
    argv = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
            "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-extensions",
            f"--user-data-dir={profile}", "--enable-logging=stderr", "--v=0", *args, url]
    return subprocess.run(argv, capture_output=True, text=True, timeout=120, check=False)


def _console(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if ":CONSOLE" in line]


def _png_size(path: Path) -> tuple[int, int]:
    head = path.read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", head[16:24])


def test_console_capture_sees_errors_and_blocked_loads(tmp_path):
    """The harness itself: a page that logs an error and tries an external load is caught."""
    text = render(single("transposePadded"), Format.html)
    broken = text.replace("</main>", '<img src="file:///nonexistent/pixel.png"><script>console.error("control")</script></main>')
    page = tmp_path / "control.html"
    page.write_text(broken, encoding="utf-8")
    run = _chromium(tmp_path, page.as_uri(), "--dump-dom")
    console = _console(run.stderr)
    # The image and the inline script are both refused by the report's Content-Security-Policy.
    assert any("Loading the image 'file:///nonexistent/pixel.png' violates" in line for line in console), run.stderr[-2000:]
    assert any("Executing inline script violates" in line for line in console), run.stderr[-2000:]
    # Without that policy, a console error reaches the log as well.
    plain = tmp_path / "plain.html"
    plain.write_text('<!DOCTYPE html><p>x</p><script>console.error("control error")</script>', encoding="utf-8")
    console = _console(_chromium(tmp_path, plain.as_uri(), "--dump-dom").stderr)
    assert any('"control error"' in line for line in console)


def test_real_multi_kernel_report_in_headless_chromium(tmp_path):
    """Four real transpose reports shown together, transposeShared renamed to a hostile C++ name."""
    base = four_transposes()
    kernels = tuple(dataclasses.replace(k, name=HOSTILE, display_name=f"void {HOSTILE}(float *, const float *)")
                    if k.name == "transposeShared" else k for k in base.kernels)
    diagnosis = dataclasses.replace(base, kernels=kernels)
    page = tmp_path / "report.html"
    page.write_text(render(diagnosis, Format.html), encoding="utf-8")

    shot = tmp_path / "report.png"
    run = _chromium(tmp_path, page.as_uri(), f"--screenshot={shot}", "--window-size=1400,2000")
    assert run.returncode == 0, run.stderr[-2000:]
    assert _console(run.stderr) == []
    assert shot.is_file() and _png_size(shot) == (1400, 2000) and shot.stat().st_size > 50_000

    run = _chromium(tmp_path, page.as_uri(), "--dump-dom")
    assert run.returncode == 0, run.stderr[-2000:]
    assert _console(run.stderr) == []
    dom = Page(run.stdout)
    # The browser built the charts: 4 per kernel, bars with a width, roofs drawn.
    assert len(dom.with_class("svg", "chart")) == 13  # with the fix-first bars
    bars = dom.with_class("rect", "bar")
    assert len(bars) >= 4 * (4 + 2 + 3) and all(float(b["width"]) >= 0 for b in bars)
    assert sum(float(b["width"]) > 0 for b in bars) >= 30
    assert len(dom.with_class("polyline", "roof")) == 0  # no kernel here does FP32 work
    # The hostile name is text in the DOM, and no script element exists.
    assert not dom.all("script")
    assert HOSTILE in dom.content
    assert f"void {HOSTILE}(float *, const float *)" in dom.content
    (tmp_path / "dom.html").write_text(run.stdout, encoding="utf-8")


def test_the_roofline_of_a_tensor_core_kernel_is_its_type_s_roof():
    (k,) = diagnose(DATA / "realworld" / "blas.raw.csv.gz", select=LaunchSelection(kernel="nvjet_sm90_tst_320x128")).kernels
    chart = svg.roofline([k.roofline])
    assert "Roofline (bf16 tensor)" in chart and "bf16 tensor peak 856 TFLOP/s" in chart
    assert "No bf16 tensor arithmetic" not in chart and chart.count('class="point"') >= 3


def test_a_long_name_is_shortened_in_tables_and_whole_in_its_section():
    """A 900-character template name (like torch's distribution kernels) must not widen the summary or
    the contents: they show it shortened, with the whole name as the cell's title and in the section."""
    from ncuwrap.render.names import short

    long = "at::native::kernel<" + ", ".join(f"T{i}" for i in range(150)) + ">"
    text = render(hostile(long), Format.html)
    page = Page(text)
    (cell,) = page.with_class("td", "kname")
    assert cell["title"] == long and short(long) == "at::native::kernel‹…›"
    assert re.search(r'<td class="kname" data-label="kernel" title="[^"]+">(<a href="#k\d+">)?at::native::kernel‹…›(</a>)?</td>', text)
    assert f"void {long}(float *, const float *)" in page.content  # the section's signature, whole

