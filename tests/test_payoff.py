"""The estimates against measured speedups: bundled before/after pairs captured and timed on the H200
(tests/data/h200_ncuwrap/pairs_full, bench_pairs; benchmarks/payoff.py writes the figures of docs/payoff.md)."""

from __future__ import annotations

import json
import sys

import pytest

from ncuwrap.kernel.compare import compare_files
from tests.conftest import DATA, ROOT, run_cli

OURS = DATA / "h200_ncuwrap"
sys.path.insert(0, str(ROOT / "benchmarks"))


def test_the_payoff_table_is_what_the_captures_give():
    import payoff

    assert payoff.run() == json.loads((OURS / "payoff.json").read_text())


def test_the_page_shows_what_the_captures_give():
    # docs/payoff.md's figures are what payoff.py writes from payoff.json (its own words around them are not the script's).
    import payoff

    page = (ROOT / "docs" / "payoff.md").read_text(encoding="utf-8")
    assert payoff.written(page) == payoff.table(json.loads((OURS / "payoff.json").read_text()))
    assert len(payoff.written(page)) > 15 and "## What the model reads" in page


def test_every_pair_within_1_5x():
    rows = json.loads((OURS / "payoff.json").read_text())
    assert len(rows) == 13
    assert all(r["within"] and r["factor_off"] <= 1.5 and r["why_not"] is None for r in rows), [r["before"] for r in rows if not r["within"]]
    # Issue 24's pair: one float of a 32-byte struct, then the same floats from their own array. The
    # estimate was 4.4x (DRAM at its roof after the fix); the fixed kernel, one 4-byte load a thread,
    # reaches 52% of DRAM: 2.6x measured.
    by_name = {r["before"]: r for r in rows}
    layout = by_name["layout-aos_field"]
    assert (layout["estimated_speedup"], layout["measured_speedup"]) == (2.65, 2.62)
    # The two misses of the first table: the strided vecadd held to L2's pace by its SMs' work (4.78x
    # against 7.38x), the one-address reduction's atomics spread instead of reduced (94x against 314x).
    assert (by_name["vecadd-strided"]["estimated_speedup"], by_name["vecadd-strided"]["factor_off"]) == (8.02, 1.09)
    assert (by_name["reduction-atomic_per_element"]["estimated_speedup"], by_name["reduction-atomic_per_element"]["factor_off"]) == (256.0, 1.23)
    assert by_name["atomics-global_hotspot"]["estimated_speedup"] == 94.0
    assert by_name["divergence-per_lane"]["factor_off"] <= 1.05 and by_name["smem_banks-strided"]["factor_off"] <= 1.05


def test_compare_shows_estimated_against_measured(capsys):
    bench = OURS / "bench_pairs" / "transpose.json"
    before, after = OURS / "pairs_full" / "transpose-naive.raw.csv.gz", OURS / "pairs_full" / "transpose-padded_tile.raw.csv.gz"
    (pair,) = compare_files(before, after, before_timing=bench, after_timing=bench).pairs
    assert pair.resolved == ("uncoalesced_global_stores",)
    assert pair.estimated_speedup == pytest.approx(7.50, abs=0.01) and pair.speedup == pytest.approx(6.42, abs=0.01)
    code, out, _ = run_cli(capsys, "compare", before, after, "--before-timing", bench, "--after-timing", bench, "-f", "markdown")
    assert code == 0
    assert "*Payoff:* estimated 7.50x (87% of the time), measured 6.42x faster." in out
    doc = json.loads(run_cli(capsys, "compare", before, after, "--before-timing", bench, "--after-timing", bench, "-f", "json")[1])
    assert doc["pairs"][0]["estimate"] == {"resolved": ["uncoalesced_global_stores"], "gain_pct": pytest.approx(86.66, abs=0.01),
                                           "speedup": pytest.approx(7.4964, abs=0.0001),
                                           "label": "estimated from BEFORE's counters for the findings resolved"}


def test_each_waste_is_judged_on_the_work_it_puts_on_the_busiest_unit():
    """vecadd strided: L2's requests are the busiest work (53%). The loads' unused sectors hit in L1 (L2
    sees only the sectors used) but their misses are a request per line, 4x a coalesced load's: fixing
    them alone buys 15%. The stores are a request per sector, 80% of L2's requests: high."""
    from ncuwrap.kernel.diagnosis import diagnose

    (k,) = diagnose(OURS / "pairs_full" / "vecadd-strided.raw.csv.gz").kernels
    by_id = {f.id: f for f in k.findings}
    loads, stores = by_id["uncoalesced_global_loads"], by_id["uncoalesced_global_stores"]
    assert (loads.severity, round(loads.estimated_speedup), loads.limited_after) == ("medium", 15, "l2_requests")
    assert stores.severity == "high" and stores.limited_after == "l1tex"
