"""Only true sentences (issue 24): what a report says must hold for the data it read. Each test
reads a real H200 capture where an earlier version said something false."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from ncuwrap.cli import app
from tests.conftest import run_cli

DATA = Path(__file__).parent / "data"
DETAILS = DATA / "h200" / "transpose" / "transposeNaive.details.csv"


def _json(*args) -> dict:
    result = CliRunner().invoke(app, ["diagnose", *map(str, args), "--format", "json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def _text(*args) -> str:
    result = CliRunner().invoke(app, ["diagnose", *map(str, args)], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    return result.output


def test_an_unevaluated_counterpart_neither_agrees_nor_differs():
    # A details-page export has no sector counters: ncuwrap cannot evaluate coalescing there, so
    # "ncuwrap found no such waste" (said before) was false.
    kernel = _json(DETAILS)["kernels"][0]
    rules = {r["rule"]: r["agreement"] for r in kernel["ncu_rules"]}
    assert rules["UncoalescedGlobalAccess"] == ("not evaluated here: ncuwrap could not evaluate uncoalesced_global_loads, "
                                                "uncoalesced_global_stores (metrics missing)")
    assert rules["AchievedOccupancy"] == "not evaluated here: ncuwrap could not evaluate low_achieved_occupancy (metrics missing)"
    assert "found no such waste" not in _text(DETAILS)


def test_no_issue_found_only_when_every_rule_was_evaluated():
    text = _text(DETAILS)
    assert "no issue found by the rules evaluated" in text
    assert "no issue found\n" not in text
    # Nothing to win is unknown, not 0%, while estimated findings could not be evaluated.
    assert _json(DETAILS)["kernels"][0]["estimated_gain_pct"] is None
    # The same kernel from its raw page: every rule evaluated, and the finding is there.
    raw = _json(DATA / "h200" / "transpose" / "transposeNaive.raw.csv")["kernels"][0]
    assert [f["id"] for f in raw["findings"]] == ["uncoalesced_global_stores"] and raw["estimated_gain_pct"] > 50


def test_a_mostly_idle_timeline_leads_with_its_idle_time(capsys):
    # The GPU idles 86% of this capture (CPU verification between phases): "copies take 77% of the
    # GPU's busy time" alone (said before) read as if copies bounded the run.
    # Its timed loops are found by repetition (the one with the most GPU time judged: 55 launches of
    # transposeNaive back to back, the GPU busy all of it); judged without steps, from its first GPU work to
    # its last (start-up left out), the GPU is busy 23%: the host limits it (issue 36), and the headline
    # says so with the figure.
    doc = _json(DATA / "h200" / "nsys" / "transpose.sqlite")
    assert doc["bound"] == "kernel" and doc["steps"]["found_by"] == "repetition" and doc["steps"]["gpu_busy_pct"] > 95
    code, out, _ = run_cli(capsys, "timeline", str(DATA / "h200" / "nsys" / "transpose.sqlite"), "--steps", "none", "-f", "json")
    doc = json.loads(out)
    assert doc["bound"] == "launch" and doc["limiter"] == "host code (no CUDA call)"
    assert doc["why"].startswith("Judged without steps, over the window from the first GPU work to the last (466.0 ms, start-up left "
                                 "out). The GPU is busy 23% of it: the host limits the program")
    e2e = _json(DATA / "h200_ncuwrap" / "nsys" / "e2e.sqlite")
    assert e2e["bound"] == "launch" and e2e["why"].startswith("Judged without steps")
    # A capture whose GPU is busy most of the window after start-up keeps the plain sentence.
    bench = _json(DATA / "h200" / "nsys" / "bench.sqlite")
    assert bench["why"].startswith("Kernels take")  # its timed loop, found by repetition, 97% busy
