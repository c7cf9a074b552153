"""Every sentence checked against the numbers it quotes (issue 38), as properties over every kernel
report in tests/data (.ncu-rep, raw and details CSV exports) rendered in every format: a sentence a
future rule or renderer writes cannot break them without failing here.

- A unit said to be close to its peak is at ``high`` (80%) or more, and the sentence quotes the number.
- The stop finding (at_roofline) names the unit at its roof, with that unit's number.
- No advice recommends the precision the kernel already runs (FP8 advised to an FP8 GEMM).
"""

from __future__ import annotations

import dataclasses
import html
import json
import re
from functools import lru_cache
from pathlib import Path

import pytest

from ncuwrap import ruleset
from ncuwrap.kernel.diagnosis import diagnose
from ncuwrap.render import Format, render
from ncuwrap.kernel.metrics import KERNEL
from tests.conftest import DATA

# Kernel reports: ncu's binary reports and its CSV exports (the source pages are not reports).
REPORT = re.compile(r"\.(ncu-rep|raw\.csv|raw_base\.csv|details\.csv)(\.gz)?$")
REPORTS = sorted(p.relative_to(DATA) for p in DATA.rglob("*") if REPORT.search(p.name) and p.relative_to(DATA).parts[0] not in ("bad",))
HIGH = ruleset.load(None, KERNEL).constants["high"]
# A claim of saturation, and the number it must carry: "<N>% of its peak, close to it".
# (Not the general note that "a unit can be near its limit while moving a small share of its peak bytes".)
CLOSE = re.compile(r"close to (?:its|their) peak|close to it\b|(?<!can be )near (?:its|their) (?:peak|limit)", re.I)
QUOTED = re.compile(r"(\d+(?:\.\d+)?)% of (?:its|their) peak, close to it")
STOP_TITLE = re.compile(r"At the roofline: (\w+) at (\d+)% of its peak")
FP8_ADVICE = re.compile(r"FP8 on Hopper|\(bf16, fp8\)|a cheaper type \(FP8", re.I)


def plain(text: str, fmt: Format) -> str:
    """What a reader reads: the page's text (HTML tags and entities, Markdown escapes gone), one space."""
    if fmt is Format.html:
        text = html.unescape(re.sub(r"<[^>]+>", " ", text))
    elif fmt is Format.markdown:
        text = re.sub(r"\\(.)", r"\1", text)
    elif fmt is Format.json:
        text = " ".join(_strings(json.loads(text)))
    return re.sub(r"\s+", " ", text)


def _strings(doc):
    if isinstance(doc, str):
        yield doc
    elif isinstance(doc, dict):
        for v in doc.values():
            yield from _strings(v)
    elif isinstance(doc, list):
        for v in doc:
            yield from _strings(v)


@lru_cache(maxsize=None)
def _diagnosis(rel: Path):
    return diagnose(DATA / rel)


@lru_cache(maxsize=None)
def _texts(rel: Path) -> dict[Format, str]:
    d = _diagnosis(rel)
    return {fmt: plain(render(d, fmt), fmt) for fmt in Format}


def test_the_corpus_is_every_kind_of_report():
    kinds = {re.sub(r"\.gz$", "", REPORT.search(str(p)).group(0)) for p in REPORTS}
    assert kinds == {".ncu-rep", ".raw.csv", ".raw_base.csv", ".details.csv"} and len(REPORTS) >= 150
    assert HIGH == 80


@pytest.mark.parametrize("rel", REPORTS, ids=str)
def test_close_to_the_peak_only_at_high_or_more_and_the_stop_names_its_unit(rel):
    for fmt, text in _texts(rel).items():
        for sentence in re.split(r"(?<=[.!?])\s", text):
            if CLOSE.search(sentence):
                quoted = QUOTED.findall(sentence)
                assert quoted, f"{rel} ({fmt.value}): a closeness claim without its number: {sentence!r}"
                assert all(float(q) >= HIGH for q in quoted), f"{rel} ({fmt.value}): {sentence!r}"
            for unit, pct in STOP_TITLE.findall(sentence):
                assert float(pct) >= HIGH, f"{rel} ({fmt.value}): {sentence!r}"
    # The stop finding's unit is the one at its roof, by the model's numbers.
    for k in _diagnosis(rel).kernels:
        stop = next((f for f in k.findings if f.id == "at_roofline"), None)
        if stop is None:
            continue
        unit, pct = stop.evidence["busiest_unit"], stop.evidence["busiest_pct"]
        at = stop.evidence["sm_pct"] if unit == "sm" else {"dram": stop.evidence["dram_pct"], "l2": stop.evidence["l2_data_pct"],
                                                           "l1tex": stop.evidence["l1tex_net_pct"]}[unit]
        assert pct == pytest.approx(at) and pct >= HIGH, (rel, k.name)
        assert f"at {pct:.0f}% of" in stop.advice and (unit == "sm" or f"({unit})" in stop.advice), (rel, k.name, stop.advice)


def _runs_fp8(k) -> bool:
    dtype = (k.tensor or {}).get("dtype") or k.compared_metrics.get("tensor_dtype")
    return dtype in ("fp8", "int8") or bool(re.search(r"fp8|e4m3|e5m2", k.name, re.I))


@pytest.mark.parametrize("rel", [r for r in REPORTS if r.parts[0] == "realworld" or "gemm" in str(r)], ids=str)
def test_no_advice_recommends_the_precision_the_kernel_runs(rel):
    d = _diagnosis(rel)
    for k in d.kernels:
        if not _runs_fp8(k):
            continue
        alone = dataclasses.replace(d, kernels=(k,))
        for fmt in Format:
            text = plain(render(alone, fmt), fmt)
            assert not FP8_ADVICE.search(text), f"{rel} ({fmt.value}): {k.name} runs FP8 (or INT8): FP8 advised"


def test_the_fp8_gemm_of_the_corpus_is_told_what_goes_further():
    # blas/10, cuBLAS's 4096^3 fp8 GEMM (nvjet ... qqtst): at its roof on the tensor pipe.
    k = next(k for k in _diagnosis(Path("realworld/blas.raw.csv.gz")).kernels if k.id == 10)
    assert _runs_fp8(k) and k.next_step.id == "tensor_pipe"
    assert k.next_step.advice.startswith("The math already runs on the tensor cores (fp8 at 80% of that type's dense peak), in the "
                                         "cheapest dense type this GPU has up to Hopper. Near that peak only 2:4 structured sparsity")


@pytest.mark.parametrize("rel", REPORTS, ids=str)
def test_what_the_report_does_not_record_is_said_unknown(rel):
    """A CSV export records no ncu command line, so nothing tells how ncu set the clocks: no format may
    guess (the realworld captures were made with --clock-control none, and said "locks them to base")."""
    d = _diagnosis(rel)
    texts = _texts(rel)
    if d.source.clock_control is None:
        for fmt, text in texts.items():
            assert not re.search(r"locks? them to base|locked to base|clocks (?:are|were) (?:set|left)", text), (rel, fmt)
            if fmt is not Format.json:
                assert "clock control unknown (the report does not record ncu's command line)" in text, (rel, fmt)
    else:
        assert d.source.command_line and all("clock control unknown" not in text for text in texts.values())


@pytest.mark.parametrize("fmt", list(Format), ids=lambda f: f.value)
def test_busy_and_idle_stand_side_by_side_only_of_one_scope(fmt):
    """'GPU busy 11%' (the median step) stood beside 'GPU idle 91.1%' (all steady steps together): each
    busy figure now says its scope, and those of one scope add up to 100% (91.0% idle since the first
    token counts as warm-up)."""
    from ncuwrap.timeline.diagnosis import diagnose_timeline

    d = diagnose_timeline(DATA / "h200_ncuwrap" / "steps" / "decode_eager.sqlite.gz")
    text = plain(render(d, fmt), fmt)
    if fmt is not Format.json:
        assert "GPU busy 11% of the step (medians); all steady steps together: GPU busy 9.0%, idle 91.0%" in text
        together = re.search(r"all steady steps together: GPU busy ([\d.]+)%, idle ([\d.]+)%", text)
        assert float(together.group(1)) + float(together.group(2)) == pytest.approx(100, abs=0.1)
    assert d.timeline.metrics["gpu_busy_pct"] + d.timeline.metrics["idle_pct"] == pytest.approx(100)


@pytest.mark.parametrize("rel", REPORTS, ids=str)
def test_each_roofline_level_counts_all_its_traffic(rel):
    """Issue 38: L2's point counts every L2 sector, so it is never below DRAM's; L1's counts every sector L1
    looked up, and is drawn only where L1 looks up at least half as many sectors as the SMs send requests to
    L2, and the report says why not."""
    d = _diagnosis(rel)
    for k in d.kernels:
        chart = k.chart_metrics or {}
        l2, dram = chart.get("l2_bytes_per_s"), chart.get("dram_bytes_per_s")
        if l2 is not None and dram is not None and l2 == l2 and dram == dram:
            assert l2 >= 0.99 * dram, (rel, k.name, l2, dram)  # every kernel, FLOPs or not
        r = k.roofline
        if r is None:
            continue
        by = {p.level: p.bytes_per_s for p in r.points}
        if "L2" in by and "DRAM" in by:
            assert by["L2"] >= 0.99 * by["DRAM"], (rel, k.name, by)
        if r.l1_left_out is not None:
            assert "L1" not in by and r.l1_left_out[0] < 0.5 * r.l1_left_out[1], (rel, k.name)
    left_out = [k for k in d.kernels if k.roofline is not None and k.roofline.l1_left_out]
    if left_out and len(d.kernels) == 1:
        assert "no L1 point: L1 looked up" in _texts(rel)[Format.html]


def test_the_fp8_gemm_has_no_l1_point_and_says_why():
    k = next(k for k in _diagnosis(Path("realworld/blas.raw.csv.gz")).kernels if k.id == 10)
    assert [p.level for p in k.roofline.points] == ["DRAM", "L2"]
    d = dataclasses.replace(_diagnosis(Path("realworld/blas.raw.csv.gz")), kernels=(k,))
    assert ("no L1 point: L1 looked up 16,830 sectors while the SMs sent 5,377,162 requests to L2: their traffic bypasses L1 "
            "(as TMA copies and wgmma operands do), so L1 does not carry this kernel's traffic.") in plain(render(d, Format.html), Format.html)
    assert json.loads(render(d, Format.json))["kernels"][0]["roofline"]["l1_left_out"] == {"l1_sectors": 16830, "l2_requests_from_sms": 5377162}


def test_the_l1_point_counts_stores_too():
    """Issue 38: the L1 point counts every sector L1 looked up, stores included. cuBLAS corpus `blas/1`, a
    write-only RNG kernel, showed L1 at 5.92 GB/s (the LSU path's loads) beside 1.54 TB/s of DRAM writes;
    its 1,714 GB/s of L1 lookups now sit above DRAM's point, as every store passes L1 on its way."""
    k = _diagnosis(Path("realworld/blas.raw.csv.gz")).kernels[1]
    by = {p.level: p.bytes_per_s for p in k.roofline.points}
    assert by["L1"] == pytest.approx(1.71406e12, rel=1e-5) and by["L1"] > by["DRAM"] == pytest.approx(1.541981e12)
    assert k.roofline.l1_left_out is None
