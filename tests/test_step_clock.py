"""Every step time a timeline report prints, held against the program's own clock, on REAL H200 captures.

Each program of tests/data/h200_ncuwrap/{steps,unmarked,pinned} timed its own steps while nsys captured it
(time.perf_counter() at each step's start, the last step to the loop's end: the JSON line at the end of
NAME.log), and so did each program of tests/data/h200_ncuwrap/clock (perf_counter around its timed loop,
one synchronize before and after it). The report's mean steady step (the steady window over its steps),
its median step and the step without the tracer are checked against those clocks: the period of a
step is where its pace is set, not the host's start-to-start (ncuwrap.timeline.steps).
"""

from __future__ import annotations

import json
import statistics
from pathlib import Path

import pytest

from ncuwrap.timeline.pipeline import diagnose_timeline
from tests.conftest import DATA

ROOT = DATA / "h200_ncuwrap"


def _own_clock(log: Path) -> dict:
    """The program's JSON line (the last line of its log that is one)."""
    line = [x for x in log.read_text(encoding="utf-8", errors="replace").splitlines() if x.startswith("{")][-1]
    return json.loads(line)


# Programs that timed each step (a step synchronises with the GPU, so its host time is its time).
PER_STEP = sorted(p for folder in ("steps", "unmarked", "pinned") for p in (ROOT / folder).glob("*.sqlite.gz")
                  if (p.parent / p.name.replace(".sqlite.gz", ".log")).exists())


@pytest.mark.parametrize("capture", PER_STEP, ids=lambda p: f"{p.parent.name}/{p.name[:-len('.sqlite.gz')]}")
def test_the_step_is_the_programs_own_clock(capture):
    clock = _own_clock(capture.parent / capture.name.replace(".sqlite.gz", ".log"))
    walls = clock["step_wall_ms"]
    d = diagnose_timeline(capture)
    steps = d.timeline.steps
    assert steps is not None
    # The program's steps after the report's warm-up: the same iterations (one step each, marked or found; a
    # found loop's last step cut short at its last launch is left out of the steady steps).
    assert steps.count == len(walls), (steps.count, len(walls))
    own = walls[steps.warmup:steps.warmup + len(steps.steady)]
    mean, median = statistics.mean(own), statistics.median(own)
    assert steps.mean_period_ns / 1e6 == pytest.approx(mean, rel=0.02)
    assert steps.period_ns / 1e6 == pytest.approx(median, rel=0.03)
    # The headline of compare and the JSON say the same figures.
    doc = d.to_json()["steps"]
    assert doc["mean_period_ns"] == pytest.approx(steps.mean_period_ns, abs=1e-3)
    assert doc["period_ns"] == pytest.approx(steps.period_ns, abs=1e-3)
    # Busy shares add up: the steady steps' busy time is the window's.
    assert sum(r.gpu_busy_ns for r in steps.steady) == d.timeline.window_ns - d.timeline.breakdown_ns["idle"]
