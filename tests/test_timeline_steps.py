"""The steady state of a whole program (ncuwrap.timeline.steps), on REAL captures from an NVIDIA H200:
PyTorch programs that mark each iteration with an NVTX range ``step`` (workloads/steps,
captured by capture_steps.sh; tests/data/h200_ncuwrap/steps/README.md) and the H200 x2 DDP captures
(tests/data/h200_ncuwrap/ranks).

Every step's GPU busy share is checked against the same share computed by hand from the SQLite
(tests/steps_by_hand.py); the verdicts are what a GPU engineer gives these programs; full outputs in
every format against golden files (NCUWRAP_REGEN=1 rewrites them).
"""

from __future__ import annotations

import gzip
import json
import re
from pathlib import Path

import pytest

from ncuwrap.timeline import steps as S
from ncuwrap.timeline.diagnosis import diagnose_timeline
from ncuwrap.timeline.readers.nsys_sqlite import read
from ncuwrap.timeline.options import TimelineOptions
from tests import steps_by_hand
from tests.conftest import DATA, golden, golden_json, run_cli

STEPS = DATA / "h200_ncuwrap" / "steps"
RANKS = DATA / "h200_ncuwrap" / "ranks"

# capture -> (bound, limiter, what a GPU engineer calls its steady state)
CASES = {
    "gpu_train": ("kernel", None, "GPU-bound training: the GPU's work fills every step after the first"),
    "small_launch": ("launch", "host code (no CUDA call)", "a tiny model: the host feeds the GPU a few us of work per ms"),
    "decode_eager": ("launch", "host code (no CUDA call)", "eager decoding: a launch per op, the GPU mostly idle"),
    "graph_decode": ("kernel", None, "the same decoding replayed from one CUDA graph: the GPU is the limit"),
    "input_bound": ("transfer", "H2D", "a pageable host batch copied each step: the copy is the step"),
}


def _unpacked(root: Path, gz: Path) -> Path:
    out = root / gz.name[: -len(".gz")]
    if not out.exists():
        out.write_bytes(gzip.decompress(gz.read_bytes()))
    return out


@pytest.fixture(scope="module")
def captures(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("steps")
    found = {gz.name[: -len(".sqlite.gz")]: _unpacked(root, gz) for gz in sorted(STEPS.glob("*.sqlite.gz"))}
    for case in ("balanced", "slow1"):
        for rank in (0, 1):
            (root / case).mkdir(exist_ok=True)
            found[f"ddp_{case}_rank{rank}"] = _unpacked(root / case, RANKS / case / f"rank{rank}.sqlite.gz")
    return found


@pytest.fixture(scope="module")
def diagnoses(captures) -> dict:
    return {name: diagnose_timeline(path) for name, path in captures.items()}


def _step_name(name: str) -> str:
    return "train_step" if name.startswith("ddp_") else "step"


# -- every step against the hand computation --------------------------------------------------------

def test_the_captures_are_all_there(captures):
    assert set(CASES) | {"small_launch_200", "graph_decode_pergraph"} <= set(captures)


@pytest.mark.parametrize("name", [*CASES, "small_launch_200", "graph_decode_pergraph", "ddp_balanced_rank0", "ddp_slow1_rank1"])
def test_each_step_matches_the_hand_computation(captures, name):
    data = read(captures[name])
    found = S.measure(data)
    hand = steps_by_hand.steps(captures[name], _step_name(name))
    assert found is not None and found.count == len(hand)
    for mine, ref in zip(found.records, hand):
        assert (mine.start_ns, mine.end_ns, mine.begin_ns, mine.paced_by) == (ref["start"], ref["end"], ref["begin"], ref["paced_by"])
        assert (mine.period_ns, mine.host_period_ns) == (ref["period"], ref["host_period"])
        assert (mine.gpu_work_ns, mine.gpu_busy_ns) == (ref["work"], ref["busy"])
        assert mine.gpu_busy_pct == pytest.approx(ref["busy_pct"], abs=1e-9)
        assert mine.launches == ref["launches"]


@pytest.mark.parametrize("name", CASES)
def test_the_steady_busy_share_is_the_hand_one(diagnoses, captures, name):
    """steps.gpu_busy_pct in the JSON: the median over the steady steps of the hand-computed shares."""
    doc = diagnoses[name].to_json()
    hand = steps_by_hand.steps(captures[name], "step")
    steady = [h["busy_pct"] for h in hand[doc["steps"]["warmup"]["count"]:]]
    steady.sort()
    mid = len(steady) // 2
    median = steady[mid] if len(steady) % 2 else (steady[mid - 1] + steady[mid]) / 2
    assert doc["steps"]["gpu_busy_pct"] == pytest.approx(median, abs=0.01)


# -- the verdicts ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", CASES)
def test_the_steady_state_verdict(diagnoses, name):
    bound, limiter, _ = CASES[name]
    d = diagnoses[name]
    assert d.bound == bound, d.why
    if limiter is not None:
        assert d.limiter == limiter
    assert d.timeline.steps is not None and d.to_json()["window"]["scope"] == "steady steps"


GPU_IDLE_FINDINGS = {"tiny_kernels", "gpu_idle_gaps", "sync_after_each_launch"}


@pytest.mark.parametrize("name", [*CASES, "small_launch_200", "graph_decode_pergraph"])
def test_the_headline_never_contradicts_a_high_finding(diagnoses, name):
    """A GPU-bound verdict (kernel, transfer) with a HIGH finding that says the GPU sits idle, or a
    host-bound one with a HIGH finding that the copies dominate, is a report that argues with itself."""
    d = diagnoses[name]
    high = {f.id for f in d.findings if f.severity == "high"}
    if d.bound in ("kernel", "transfer"):
        assert not high & GPU_IDLE_FINDINGS, (d.bound, high)
    if d.bound == "launch":
        assert "memcpy_dominates" not in high


def test_warmup_detected_in_the_gpu_bound_training(diagnoses):
    steps = diagnoses["gpu_train"].timeline.steps
    assert steps.warmup >= 1 and not steps.warmup_set
    assert steps.records[0].period_ns > 10 * steps.period_ns  # the first step: lazy loading, autotuning
    assert steps.startup_ns > 1e9  # imports and model set-up before the first step


def test_warmup_can_be_set(captures, capsys):
    d = diagnose_timeline(captures["gpu_train"], timeline=TimelineOptions(warmup=0))
    assert d.timeline.steps.warmup == 0 and d.timeline.steps.warmup_set
    assert d.timeline.steps.warmup_why == "the first 0 steps, as given (--warmup 0)"
    code, out, err = run_cli(capsys, "timeline", str(captures["gpu_train"]), "--warmup", "3", "-f", "json")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["steps"]["warmup"] == {"count": 3, "how": "set", "why": "the first 3 steps, as given (--warmup 3)",
                                      "ns": doc["steps"]["steps"][3]["start_ns"] - doc["steps"]["steps"][0]["start_ns"]}


def test_too_many_warmup_steps_is_one_line(captures, capsys):
    path = captures["gpu_train"]
    count = len(steps_by_hand.steps(path, "step"))
    code, out, err = run_cli(capsys, "timeline", str(path), "--warmup", str(count))
    assert code == 2 and out == ""
    assert err == (f"ncuwrap: error: {path}: --warmup {count}: the capture has {count} steps; give 0 to {count - 1} warm-up steps, "
                   "so that at least one steady step is left\n")


def test_too_many_warmup_steps_for_ranks_names_the_capture(captures, capsys):
    folder = captures["ddp_slow1_rank0"].parent
    code, out, err = run_cli(capsys, "timeline", "--ranks", str(folder), "--workers", "0", "--warmup", "8")
    assert code == 2 and out == ""
    assert err == (f"ncuwrap: error: {folder / 'rank0.sqlite'}: --warmup 8: the capture has 8 steps; give 0 to 7 warm-up steps, "
                   "so that at least one steady step is left\n")


def test_warmup_without_steps_is_one_line(capsys):
    path = DATA / "h200_ncuwrap" / "nsys" / "e2e.sqlite"
    code, out, err = run_cli(capsys, "timeline", str(path), "--warmup", "1")
    assert code == 2 and out == ""
    assert err.startswith(f"ncuwrap: error: {path}: --warmup 1: the capture has no steps (none is marked or found by repetition)") and err.count("\n") == 1


def test_a_step_pattern_of_no_match_falls_back_to_the_capture(captures):
    # No range matches: the steps are found by repetition instead (auto); with --steps marked, none.
    d = diagnose_timeline(captures["small_launch"], timeline=TimelineOptions(step_range="^no such range$"))
    assert d.timeline.steps.found_by == "repetition" and d.timeline.steps.count == 30
    d = diagnose_timeline(captures["small_launch"], timeline=TimelineOptions(step_range="^no such range$", steps="marked"))
    assert d.timeline.steps is None and d.to_json()["window"]["scope"] == "first to last GPU work"
    assert any(n.rule == "bound" and "step_gpu_busy_pct unknown: no steps: none is marked" in n.message for n in d.not_evaluated)


def test_cuda_graph_kernels_are_named_with_node_tracing(diagnoses):
    node, whole = diagnoses["graph_decode"].timeline, diagnoses["graph_decode_pergraph"].timeline
    assert not any(k.name.startswith("CUDA graph") for k in node.kernels)
    assert all(k.name.startswith("CUDA graph") for k in whole.kernels[:1])
    assert any("traced as a whole" in n for n in diagnoses["graph_decode_pergraph"].notes)


# -- every format shows start-up, warm-up and the steady steps ---------------------------------------

@pytest.mark.parametrize("fmt,suffix", [("table", "table.txt"), ("markdown", "md"), ("html", "html"), ("json", "json")])
def test_every_format_shows_the_phases(captures, capsys, monkeypatch, fmt, suffix):
    monkeypatch.chdir(captures["gpu_train"].parent)
    code, out, err = run_cli(capsys, "timeline", captures["gpu_train"].name, "-f", fmt)
    assert code == 0, err
    if fmt == "json":
        doc = json.loads(out)
        golden_json("timeline_steps_gpu_train.json", doc)
        assert {"count", "warmup", "period_ns", "gpu_work_ns", "gpu_busy_pct", "steps"} <= set(doc["steps"])
        return
    golden(f"timeline_steps_gpu_train.{suffix}", out)
    text = re.sub(r"<[^>]+>", " ", out)
    for word in ("start-up", "warm-up", "steady"):
        assert word in text


# -- ranks -----------------------------------------------------------------------------------------------

def test_ranks_leave_the_warmup_out_and_compare_the_straggler_with_the_other_rank(captures):
    from ncuwrap.timeline.ranks.diagnosis import diagnose_ranks

    d = diagnose_ranks(captures["ddp_slow1_rank0"].parent, workers=0)
    assert [r.steps.warmup for r in d.ranks] == [2, 2] and [r.steps.count for r in d.ranks] == [6, 6]
    m = d.set.metrics
    r0, r1 = d.set.row(0), d.set.row(1)
    assert m["straggler_rank"] == 1 and m["compute_others_median_ns"] == r0.compute_ns
    assert m["imbalance"] == pytest.approx(r1.compute_ns / r0.compute_ns)
    assert 10 < m["step_imbalance_median"] < 20 and m["step_imbalance_max_step"] >= 2
