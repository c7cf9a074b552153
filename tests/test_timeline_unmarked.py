"""Steps found by repetition (issue 36), on real H200 captures of six programs each captured twice: with
NVTX step ranges and without (tests/data/h200_ncuwrap/unmarked, README there), and a program with two
loops; the search's corner cases on small SYNTHETIC launch sequences (labelled as such below)."""

from __future__ import annotations

import glob
import json

import numpy as np
import pytest

from conftest import DATA, golden, run_cli
from ncuwrap.timeline import iterations as R
from ncuwrap.timeline import steps as S
from ncuwrap.timeline.launches import api_starts
from ncuwrap.timeline.options import STEP_PATTERN
from ncuwrap.timeline import readers
from ncuwrap.timeline.measured import measure

UNMARKED = DATA / "h200_ncuwrap" / "unmarked"
PROGRAMS = ("gpu_train", "small_launch", "decode_eager", "graph_decode", "input_bound", "host_prep")
# What each program's iteration is (its own loop; see workloads/steps/): steps, launches a step.
ITERATIONS = {"gpu_train": (8, 278), "small_launch": (30, 225), "decode_eager": (64, 129), "graph_decode": (64, 2),
              "input_bound": (20, 6), "host_prep": (20, 26)}


def _read(name: str):
    return readers.read(UNMARKED / f"{name}.sqlite.gz")[0]


@pytest.fixture(scope="module")
def pairs():
    out = {}
    for program in PROGRAMS:
        marked, unmarked = _read(f"{program}_marked"), _read(f"{program}_unmarked")
        out[program] = (marked, S.measure(marked), unmarked, S.measure(unmarked))
    return out


def _first_launches(data, steps) -> np.ndarray:
    """The launch index (in launch order, as the search counts them) of each step's first launch."""
    launches = S.launch_sequence(data, api_starts(data))
    return np.searchsorted(launches.times, [r.start_ns for r in steps.records])


@pytest.mark.parametrize("program", PROGRAMS)
def test_steps_found_are_the_programs_iterations(pairs, program):
    marked_data, marked, unmarked_data, found = pairs[program]
    assert marked.found is None and marked.found_by == "marked"
    assert found is not None and found.found_by == "repetition"
    steps, per_step = ITERATIONS[program]
    assert marked.count == steps
    assert abs(found.count - marked.count) <= 1
    assert found.found.loop.launches == per_step
    # The boundaries: each found step begins at the launch the marked step's first launch is (the same
    # program, run twice: its launches come in the same order).
    a, b = _first_launches(marked_data, marked), _first_launches(unmarked_data, found)
    n = min(a.size, b.size)
    assert np.abs(a[:n] - b[:n]).max() <= 1


@pytest.mark.parametrize("program", PROGRAMS)
def test_unmarked_busy_and_verdict_match_the_marked(pairs, program):
    marked_data, marked, unmarked_data, found = pairs[program]
    u = measure(unmarked_data, kind="nsys-sqlite", source_path="unmarked")
    assert u.timeline.steps.found is not None and u.timeline.scope == "capture"
    if program in ("graph_decode", "small_launch"):
        # Runs of these host-bound loops differ in their period: the marked one's NVTX calls slow each
        # graph replay's host side (0.583 against 0.508 ms a token by the program's own clock), and
        # small_launch's Python ran slower in its unmarked run (6.60 against 5.02 ms a step, its own clock).
        # The GPU work of a step is the same in both runs, and the busy share follows the period.
        assert found.gpu_work_ns == pytest.approx(marked.gpu_work_ns, rel=0.03)
        ratio = found.period_ns / marked.period_ns
        assert found.gpu_busy_pct * ratio == pytest.approx(marked.gpu_busy_pct, rel=0.05)
        return
    assert abs(found.gpu_busy_pct - marked.gpu_busy_pct) <= 3


def _verdict(path) -> dict:
    from ncuwrap.api import diagnose_timeline

    return diagnose_timeline(path).to_json()


@pytest.mark.parametrize("program", [p for p in PROGRAMS if p != "graph_decode"])
def test_unmarked_verdict_is_the_marked_one(program):
    m, u = _verdict(UNMARKED / f"{program}_marked.sqlite.gz"), _verdict(UNMARKED / f"{program}_unmarked.sqlite.gz")
    assert (u["bound"], u["limiter"]) == (m["bound"], m["limiter"])
    assert [f["id"] for f in u["findings"]] == [f["id"] for f in m["findings"]]


def test_two_loops_judge_the_one_with_most_gpu_time():
    found = S.measure(_read("two_loops_unmarked"))
    assert (found.count, found.found.loop.launches) == (8, 278)  # training: forward, backward, optimizer
    other = found.found.others
    assert [(o.count, o.launches) for o in other] == [(12, 90)]  # then 12 evaluation iterations
    assert other[0].gpu_ns < found.found.loop.gpu_ns
    assert "2 loops found, the one with the most GPU time judged" in found.found_text()


def test_unmarked_gpu_train_json_golden(capsys):
    path = UNMARKED / "gpu_train_unmarked.sqlite.gz"
    code, out, _ = run_cli(capsys, "timeline", str(path), "-f", "json")
    assert code == 0
    doc = json.loads(out)
    doc["tool"]["version"] = "VERSION"
    golden("timeline_gpu_train_unmarked.json", json.dumps(doc, indent=2) + "\n")


def test_unmarked_terminal_says_how_the_steps_were_found(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "100")
    path = UNMARKED / "two_loops_unmarked.sqlite.gz"
    code, out, _ = run_cli(capsys, "timeline", str(path))
    assert code == 0
    golden("timeline_two_loops_unmarked_table.txt", out)


def test_markdown_and_html_say_how_the_steps_were_found(capsys):
    path = str(UNMARKED / "host_prep_unmarked.sqlite.gz")
    for fmt, title in (("markdown", "### Steps (found by repetition)"), ("html", "<h2>Steps (found by repetition)</h2>")):
        code, out, _ = run_cli(capsys, "timeline", path, "-f", fmt)
        assert code == 0 and title in out
        assert "20 steps of 26 launches (19 exactly alike), periods within" in out


@pytest.mark.parametrize("choice, scope, count", [("auto", "steady steps", 8), ("marked", "first to last GPU work", None),
                                                  ("none", "first to last GPU work", None)])
def test_steps_option(capsys, choice, scope, count):
    code, out, _ = run_cli(capsys, "timeline", str(UNMARKED / "gpu_train_unmarked.sqlite.gz"), "--steps", choice, "-f", "json")
    assert code == 0
    doc = json.loads(out)
    assert doc["window"]["scope"] == scope
    assert (doc["steps"] or {}).get("count") == count
    if choice != "auto":
        # Without its steps, the GPU-bound loop is judged from its first GPU work to its last, start-up left
        # out: the first iteration's lazy loading and cuBLAS's set-up leave the GPU idle most of that, and
        # the verdict says the host (what fills the gaps), as its numbers do.
        assert doc["metrics"]["gpu_busy_pct"] < 50 and doc["bound"] == "launch"
        assert doc["why"].startswith("Judged without steps, over the window from the first GPU work to the last")
        assert any("start-up before it are left out" in n for n in doc["notes"])


def test_marked_steps_win_over_the_search(capsys):
    code, out, _ = run_cli(capsys, "timeline", str(UNMARKED / "gpu_train_marked.sqlite.gz"), "--steps", "marked", "-f", "json")
    assert code == 0 and json.loads(out)["steps"]["found_by"] == "marked"


def test_without_steps_a_host_bound_program_is_said_host_bound(capsys):
    """The host-preprocessing loop judged without steps: the GPU idles 98% of its active window, so the
    host limits it (not 'kernel' or 'transfer'), and its tiny kernels are a LOW finding: fixing them buys
    about 1%."""
    code, out, _ = run_cli(capsys, "timeline", str(UNMARKED / "host_prep_unmarked.sqlite.gz"), "--steps", "none", "-f", "json")
    doc = json.loads(out)
    assert (doc["bound"], doc["limiter"]) == ("launch", "host code (no CUDA call)")
    assert doc["why"].startswith("Judged without steps, over the window from the first GPU work to the last")
    tiny = next(f for f in doc["findings"] if f["id"] == "tiny_kernels")
    assert tiny["severity"] == "low" and doc["metrics"]["launch_fix_buys_pct"] < 5


def test_optimizer_ranges_are_not_steps():
    assert S.ranges(None) is None
    from ncuwrap.core.kernel_filter import compile_filter

    step = compile_filter(STEP_PATTERN, "--step-range", "step")
    assert not step("Optimizer.step#AdamW.step") and not step("Optimizer.zero_grad#AdamW.zero_grad")
    assert all(step(n) for n in ("step", "train_step", "step 12", "ProfilerStep#3", "Step"))


def _timeline_captures():
    files = sorted(glob.glob(str(DATA / "**" / "*.sqlite*"), recursive=True))
    return [f for f in files if "/ranks/" not in f and "timeline_bad" not in f and "/bad/" not in f]


@pytest.mark.parametrize("path", _timeline_captures(), ids=lambda p: p.split("/data/")[-1])
def test_no_gpu_verdict_over_a_mostly_idle_window(path):
    """No capture reads 'kernel' or 'transfer' over a window the GPU idles half of or more."""
    doc = _verdict(path)
    busy = doc["steps"]["gpu_busy_pct"] if doc["steps"] else doc["metrics"]["gpu_busy_pct"]
    if doc["bound"] in ("kernel", "transfer"):
        assert busy >= 50, (doc["bound"], busy)


# -- the search on SYNTHETIC launch sequences (made here, labelled: the corner cases real captures hold) --

def _launches(tokens, gaps=None) -> R.Launches:
    tokens = np.asarray(tokens, dtype=np.int64)
    times = np.cumsum(np.full(tokens.size, 10_000) if gaps is None else np.asarray(gaps)).astype(np.int64)
    names = [f"k{i}" for i in range(int(tokens.max()) + 1)]
    to_host = np.array([n == "k9" for n in names])  # token 9: a copy to the host (loss.item())
    return R.Launches(tokens=tokens, times=times, correlation=np.arange(tokens.size, dtype=float), gpu_ns=np.full(tokens.size, 1_000, dtype=np.int64),
                      to_host=to_host, names=names)


def test_synthetic_first_iteration_longer_and_an_extra_kernel():
    """SYNTHETIC: start-up, a first iteration with extra kernels (lazy loading), 20 iterations ending in a
    copy to the host, one of them with an extra kernel, then teardown."""
    unit = [1, 2, 3, 2, 3, 4, 5, 9]
    seq = [7, 7, 8] + [1, 2, 6, 6, 3, 2, 3, 4, 5, 9]
    for i in range(19):
        seq += unit if i != 10 else unit[:4] + [6] + unit[4:]
    seq += [8, 8]
    found = R.find(_launches(seq))
    assert found is not None
    assert found.loop.count == 20 and found.loop.launches == len(unit)
    assert found.loop.starts[0] == 3  # the first iteration, with its extras, is a step
    assert found.loop.exact == 18


def test_synthetic_nothing_repeats():
    """SYNTHETIC: no launch sequence repeats three times: no steps."""
    rng = np.random.default_rng(1)
    assert R.find(_launches(rng.integers(0, 50, 300))) is None
    assert R.find(_launches([1, 2, 3, 1, 2, 3])) is None


def test_synthetic_step_begins_after_the_longest_gap_without_a_copy_to_the_host():
    """SYNTHETIC: no copy to the host; the host pauses 1 ms before launch 3 of each iteration (it prepares
    the next batch): the steps begin there."""
    unit = [1, 2, 3, 4, 5]
    seq = unit * 10
    gaps = [1_000_000 if t == 3 else 10_000 for t in seq]
    found = R.find(_launches(seq, gaps))
    assert found is not None and found.loop.launches == 5
    assert all(seq[i] == 3 for i in found.loop.starts)
