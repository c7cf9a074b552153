"""The estimates against measured speedups: bundled before/after pairs captured and timed on the H200
(tests/data/h200_ncuwrap/pairs_full, bench_pairs; benchmarks/payoff.py writes docs/payoff.md)."""

from __future__ import annotations

import json
import sys

import pytest

from ncuwrap.compare import compare_files
from tests.conftest import DATA, ROOT, run_cli

OURS = DATA / "h200_ncuwrap"
sys.path.insert(0, str(ROOT / "benchmarks"))


def test_the_payoff_table_is_what_the_captures_give():
    import payoff

    assert payoff.run() == json.loads((OURS / "payoff.json").read_text())


def test_within_1_5x_except_the_two_explained_misses():
    rows = json.loads((OURS / "payoff.json").read_text())
    assert len(rows) == 13
    misses = {r["before"] for r in rows if not r["within"]}
    assert misses == {"vecadd-strided", "reduction-atomic_per_element"}
    assert all(r["why_not"] for r in rows if not r["within"])
    assert all(r["factor_off"] <= 1.5 for r in rows if r["within"])
    # Issue 24's pair: one float of a 32-byte struct, then the same floats from their own array. The
    # estimate was 4.4x (DRAM at its roof after the fix); the fixed kernel, one 4-byte load a thread,
    # reaches 52% of DRAM: 2.6x measured.
    layout = next(r for r in rows if r["before"] == "layout-aos_field")
    assert (layout["estimated_speedup"], layout["measured_speedup"]) == (2.65, 2.62)
    assert next(r for r in rows if r["before"] == "vecadd-strided")["factor_off"] == 1.55
    by_name = {r["before"]: r for r in rows}
    assert by_name["divergence-per_lane"]["factor_off"] <= 1.05 and by_name["smem_banks-strided"]["factor_off"] <= 1.05


def test_compare_shows_estimated_against_measured(capsys):
    bench = OURS / "bench_pairs" / "transpose.json"
    before, after = OURS / "pairs_full" / "transpose-naive.raw.csv.gz", OURS / "pairs_full" / "transpose-padded_tile.raw.csv.gz"
    (pair,) = compare_files(before, after, before_timing=bench, after_timing=bench).pairs
    assert pair.resolved == ("uncoalesced_global_stores",)
    assert pair.estimated_speedup == pytest.approx(6.99, abs=0.01) and pair.speedup == pytest.approx(6.42, abs=0.01)
    code, out, _ = run_cli(capsys, "compare", before, after, "--before-timing", bench, "--after-timing", bench, "-f", "markdown")
    assert code == 0
    assert "*Payoff:* estimated 6.99x (86% of the time), measured 6.42x faster." in out
    doc = json.loads(run_cli(capsys, "compare", before, after, "--before-timing", bench, "--after-timing", bench, "-f", "json")[1])
    assert doc["pairs"][0]["estimate"] == {"resolved": ["uncoalesced_global_stores"], "gain_pct": pytest.approx(85.68, abs=0.01),
                                           "speedup": pytest.approx(6.9850, abs=0.0001),
                                           "label": "estimated from BEFORE's counters for the findings resolved"}


def test_each_waste_is_judged_on_the_work_it_puts_on_the_busiest_unit():
    """vecadd strided: L2's requests are the busiest work (53%). The loads' unused sectors hit in L1 (L2
    sees only the sectors used) but their misses are a request per line, 4x a coalesced load's: fixing
    them alone buys 15%. The stores are a request per sector, 80% of L2's requests: high."""
    from ncuwrap.engine import diagnose

    (k,) = diagnose(OURS / "pairs_full" / "vecadd-strided.raw.csv.gz").kernels
    by_id = {f.id: f for f in k.findings}
    loads, stores = by_id["uncoalesced_global_loads"], by_id["uncoalesced_global_stores"]
    assert (loads.severity, round(loads.estimated_speedup), loads.limited_after) == ("medium", 15, "l2_requests")
    assert stores.severity == "high" and stores.limited_after == "l1tex"
