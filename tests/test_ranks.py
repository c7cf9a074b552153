"""``ncuwrap timeline --ranks DIR`` (issue 13): one nsys capture per rank, analysed on Dask.

Real data: the H200 single-GPU captures copied as ranks (they hold NO NCCL kernel): each rank's
breakdown must be exactly the single-timeline analysis of the same file. NCCL logic (hidden
communication, waits, the straggler): the SYNTHETIC exports of tests/synthetic_ranks.py, whose
expected values are worked out by hand there, until a real 2-GPU capture is committed.
"""

from __future__ import annotations

import gzip
import math
import json
import shutil
from pathlib import Path

import pytest

from ncuwrap.render import render
from ncuwrap.timeline.diagnosis import diagnose_timeline
from ncuwrap.timeline.ranks.files import find
from ncuwrap.timeline.ranks.diagnosis import diagnose_ranks
from ncuwrap.timeline.options import TimelineOptions
from tests.conftest import DATA, H200, run_cli
from tests.synthetic_ranks import MS, NCCL_KERNEL, Run, write_rank, write_run

BENCH = H200 / "nsys" / "bench.sqlite"
TRANSPOSE = H200 / "nsys" / "transpose.sqlite"
TOP_GZ = DATA / "h200_ncuwrap" / "top" / "timeline.sqlite.gz"

# The formats the timeline readers take, as the messages name them (ncuwrap.timeline.readers.described).
ANY_CAPTURE = "an nsys capture (.nsys-rep, .sqlite or .sqlite.gz), or a PyTorch profiler trace (.json or .json.gz)"


def _copies(folder: Path, source: Path, n: int, stem: str = "rank{}") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for i in range(n):
        shutil.copyfile(source, folder / f"{stem.format(i)}.sqlite")
    return folder


@pytest.fixture(scope="module")
def top_sqlite(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("top") / "timeline.sqlite"
    path.write_bytes(gzip.decompress(TOP_GZ.read_bytes()))
    return path


def _same(a, b) -> bool:
    """Equal, NaN equal to NaN (a value measured in a forked child comes back as another NaN object)."""
    return a == b or (isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b))


# -- real captures as ranks (no NCCL kernel in them) -------------------------------------------------

@pytest.mark.parametrize("source", ["bench", "top"])
def test_rank_breakdown_is_the_single_timeline_breakdown(tmp_path, top_sqlite, source):
    real = BENCH if source == "bench" else top_sqlite
    d = diagnose_ranks(_copies(tmp_path / "ranks", real, 2), workers=0)
    single = diagnose_timeline(real).timeline
    for r in d.ranks:
        expected = {("compute" if c == "kernel" else c): v for c, v in single.breakdown_ns.items()}
        assert {c: v for c, v in r.breakdown_ns.items() if c != "nccl"} == expected
        assert r.breakdown_ns["nccl"] == 0 and r.nccl_kernels == 0 and r.nccl_ns == 0
        assert r.timeline.metrics.keys() == single.metrics.keys()
        assert all(_same(r.timeline.metrics[k], v) for k, v in single.metrics.items()), single.metrics
        assert sum(r.breakdown_ns.values()) == r.window_ns
    assert d.set.metrics["imbalance"] == 1.0
    assert [f.id for f in d.findings if f.id == "straggler"] == []
    assert any("no NCCL kernel in any capture" in n for n in d.notes)


def test_real_capture_identity_and_nvtx(top_sqlite, tmp_path):
    d = diagnose_ranks(_copies(tmp_path / "r", top_sqlite, 2), workers=0, timeline=TimelineOptions(step_range=r"^cub::DeviceRadixSort$"))
    r = d.ranks[0]
    assert (r.hostname, r.command, r.start_utc_ns, r.device) == ("vm", "python3", 1796065788580446395, "NVIDIA H200")
    assert r.nvtx_ranges == 18  # 18 push/pop ranges; the domain-create marker is no range
    # 6 sorts; the first, 3.8x slower than the later ones' median, is warm-up.
    assert r.steps.name == "cub::DeviceRadixSort" and (r.steps.all_count, r.steps.warmup, r.steps.count) == (6, 1, 5)
    assert d.set.metrics["step_spread"] == 1.0


def test_no_step_ranges_leaves_the_step_rule_not_evaluated(tmp_path):
    d = diagnose_ranks(_copies(tmp_path / "r", BENCH, 2), workers=0, timeline=TimelineOptions(steps="marked"))
    assert d.ranks[0].nvtx_ranges is None and d.ranks[0].steps is None
    (step,) = [n for n in d.not_evaluated if n.rule == "step_spread"]
    assert "no NVTX range named like a step" in step.message


# -- the NCCL logic on SYNTHETIC captures ----------------------------------------------------------

def test_synthetic_straggler_waits_and_hidden_communication(tmp_path):
    d = diagnose_ranks(write_run(tmp_path / "r", Run(slow_rank=1, extra_ns=5 * MS)), workers=0)
    r0, r1 = d.ranks
    # Per step: rank 0 computes 10 ms, rank 1 15 ms; the all-reduce starts 1 ms before each rank's
    # compute ends and ends 2 ms after rank 1 joined; a 0.5 ms optimizer kernel follows.
    assert (r0.compute_ns, r1.compute_ns) == (3 * 10_500_000, 3 * 15_500_000)
    assert (r0.nccl_ns, r1.nccl_ns) == (3 * 7 * MS, 3 * 2 * MS)
    assert (r0.nccl_hidden_ns, r1.nccl_hidden_ns) == (3 * MS, 3 * MS)
    assert (r0.breakdown_ns["nccl"], r1.breakdown_ns["nccl"]) == (3 * 6 * MS, 3 * MS)
    assert r0.breakdown_ns["idle"] == r1.breakdown_ns["idle"] == 2 * 3_500_000
    # compute + exposed NCCL is the single timeline's kernel time, exactly.
    for r in d.ranks:
        assert r.breakdown_ns["compute"] + r.breakdown_ns["nccl"] == r.timeline.breakdown_ns["kernel"]
    m = d.set.metrics
    assert (m["straggler_rank"], m["straggler_wait_ns"], m["wait_rank"], m["wait_max_ns"]) == (1, 0, 0, 15 * MS)
    # The straggler against the other rank (itself left out), in the whole window and step by step.
    assert m["imbalance"] == pytest.approx(46.5 / 31.5) and m["compute_others_median_ns"] == 31_500_000
    assert m["step_imbalance_median"] == m["step_imbalance_max"] == pytest.approx(15.5 / 10.5)
    assert m["comm_hidden_pct"] == pytest.approx(100 * 6 / 27)
    # A step's time is its period (start to the next step's start, 20 ms), not its range's 16.5 ms.
    assert (m["step_count"], m["step_median_ns"], m["step_spread"]) == (3, 20_000_000, 1.0)
    assert d.bound == "compute" and d.limiter == "sm90_xmma_gemm_bf16bf16_bf16f32"
    assert [f.id for f in d.findings] == ["straggler", "rank_waits_in_nccl", "exposed_communication"]
    assert d.findings[0].title.startswith("Rank 1 is the straggler: 46.5 ms of compute against 31.5 ms on the other ranks (median; 1.48x)")
    assert d.straggler == 1
    assert [row.wait_ns for row in d.set.rows] == [15 * MS, 0]


def test_synthetic_much_slower_rank_is_communication_bound(tmp_path):
    d = diagnose_ranks(write_run(tmp_path / "r", Run(slow_rank=1, extra_ns=20 * MS, step_ns=40 * MS)), workers=0)
    assert (d.bound, d.limiter) == ("communication", "waiting for rank 1")
    # Against the other rank, not the median of both (which with two ranks is their mean, 61.5 ms).
    assert d.set.metrics["imbalance"] == pytest.approx(91.5 / 31.5)
    assert d.findings[0].id == "straggler" and d.findings[0].severity == "high"


def test_synthetic_window_is_the_steps_not_the_startup(tmp_path):
    # A real capture spends most of its time before the first step (the H200 x2 DDP run: 5.4 s of 6 s);
    # the window is the steps, so 5 s of start-up and its NCCL broadcast change nothing.
    run = Run(slow_rank=1, extra_ns=5 * MS)
    plain = diagnose_ranks(write_run(tmp_path / "plain", run), workers=0)
    late = diagnose_ranks(write_run(tmp_path / "late", Run(slow_rank=1, extra_ns=5 * MS, startup_ns=5_000 * MS)), workers=0)
    for a, b in zip(plain.ranks, late.ranks):
        assert (b.window_scope, b.window_ns, b.capture_ns) == ("steps", a.window_ns, a.window_ns + 5_000 * MS)
        assert b.breakdown_ns == a.breakdown_ns and (b.nccl_ns, b.nccl_kernels) == (a.nccl_ns, a.nccl_kernels)
    assert late.set.metrics == plain.set.metrics
    assert [f.id for f in late.findings] == ["straggler", "rank_waits_in_nccl", "exposed_communication"]
    assert any(n.startswith("windows are the steady steps ('train_step', after the warm-up)") and
               "rank 0: 56.5 ms of 5.06 s, 0 warm-up steps left out" in n for n in late.notes)
    # Without steps (a pattern matching no range), the window is the whole capture, start-up included.
    whole = diagnose_ranks(tmp_path / "late", workers=0, timeline=TimelineOptions(step_range="^no such range$"))
    assert [(r.window_scope, r.window_ns) for r in whole.ranks] == [("capture", 5_056_500_000)] * 2
    assert whole.ranks[0].nccl_kernels == late.ranks[0].nccl_kernels + 1  # the start-up broadcast
    assert not any(n.startswith("windows are the steps") for n in whole.notes)


def test_synthetic_balanced_ranks_have_no_straggler(tmp_path):
    d = diagnose_ranks(write_run(tmp_path / "r", Run(ranks=4)), workers=0)
    assert d.set.metrics["imbalance"] == 1.0
    assert "straggler" not in [f.id for f in d.findings] and d.straggler is None
    assert d.set.metrics["wait_max_ns"] == 0
    assert d.set.metrics["comm_limiter"] == "NCCL transfers"


def test_idle_ranks_are_input_bound(tmp_path):
    d = diagnose_ranks(write_run(tmp_path / "r", Run(step_ns=60 * MS)), workers=0)
    assert d.bound == "input" and d.set.metrics["idle_pct"] >= 40


def test_nested_step_ranges_count_once(tmp_path):
    import sqlite3

    folder = write_run(tmp_path / "r", Run())
    for rank in (0, 1):
        db = sqlite3.connect(folder / f"rank{rank}.sqlite")
        db.execute("INSERT INTO NVTX_EVENTS VALUES (1000000, 2000000, 59, 'optimizer.step', NULL, 1)")  # inside step 0
        db.execute("INSERT INTO NVTX_EVENTS VALUES (1000000, 2000000, 59, 'forward', NULL, 1)")
        db.commit()
        db.close()
    d = diagnose_ranks(folder, workers=0)
    assert d.ranks[0].steps.count == 3 and d.ranks[0].nvtx_ranges == 5


# -- Dask: real clusters ---------------------------------------------------------------------------

def _without_runner(doc: dict) -> dict:
    doc = dict(doc)
    doc["source"] = {k: v for k, v in doc["source"].items() if k != "analysed_on"}
    return doc


def test_local_cluster_of_processes_gives_the_serial_result(tmp_path):
    folder = write_run(tmp_path / "r", Run(ranks=3, slow_rank=2, extra_ns=3 * MS))
    serial = diagnose_ranks(folder, workers=0)
    parallel = diagnose_ranks(folder, workers=2)  # a real LocalCluster of 2 worker processes
    assert parallel.workers == "Dask LocalCluster, 2 worker processes"
    assert _without_runner(parallel.to_json()) == _without_runner(serial.to_json())


@pytest.fixture(scope="module")
def cluster():
    """A real in-process cluster (threads: quick to start) reached through its scheduler address."""
    from distributed import LocalCluster

    with LocalCluster(n_workers=1, threads_per_worker=2, processes=False, dashboard_address=None) as c:
        yield c


def test_existing_scheduler(tmp_path, cluster, top_sqlite):
    folder = _copies(tmp_path / "r", top_sqlite, 2)
    shutil.copyfile(BENCH, tmp_path / "r" / "rank2.sqlite")
    d = diagnose_ranks(folder, scheduler=cluster.scheduler_address, allow_mixed=True)
    assert d.workers == f"Dask scheduler {cluster.scheduler_address}"
    assert [r.path for r in d.ranks] == [str(folder / f"rank{i}.sqlite") for i in range(3)]
    assert d.set.metrics["straggler_rank"] in (0, 1)  # the PyTorch capture computes longest


def test_an_error_inside_a_worker_is_one_line(capsys, tmp_path, cluster):
    folder = write_run(tmp_path / "r", Run())
    bad = folder / "rank1.sqlite"
    bad.write_bytes(bad.read_bytes()[:3000])  # the header survives; the tables do not
    code, out, err = run_cli(capsys, "timeline", "--ranks", folder, "--scheduler", cluster.scheduler_address)
    assert code == 2 and out == ""
    assert err.startswith(f"ncuwrap: error: {bad}: corrupt or truncated SQLite database") and err.count("\n") == 1


def test_unreachable_scheduler(capsys, tmp_path):
    folder = write_run(tmp_path / "r", Run())
    code, out, err = run_cli(capsys, "timeline", "--ranks", folder, "--scheduler", "tcp://127.0.0.1:9")
    assert code == 2 and out == ""
    assert err.startswith("ncuwrap: error: tcp://127.0.0.1:9: cannot reach a Dask scheduler") and err.count("\n") == 1


# -- naming rule and bad input -----------------------------------------------------------------------

def test_naming_rule(tmp_path):
    a = _copies(tmp_path / "a", BENCH, 1, "run.rank_{}")
    shutil.copyfile(BENCH, a / "run.rank_1.nsys-rep")  # the .sqlite export of the same report is read
    shutil.copyfile(BENCH, a / "run.rank_1.sqlite")
    assert [(f.rank, f.path.name) for f in find(a).files] == [(0, "run.rank_0.sqlite"), (1, "run.rank_1.sqlite")]
    b = tmp_path / "b"
    b.mkdir()
    for pid in (10012, 9977, 10003):  # report.<pid>: natural order, numbers compared as numbers
        shutil.copyfile(BENCH, b / f"report.{pid}.sqlite")
    found = find(b)
    assert [f.path.name for f in found.files] == ["report.9977.sqlite", "report.10003.sqlite", "report.10012.sqlite"]
    assert not found.by_name
    d = diagnose_ranks(b, workers=0)
    assert d.notes[0] == ("no file is named rankN: ranks numbered 0..N-1 in the order of the file names: rank 0 = report.9977.sqlite, "
                          "rank 1 = report.10003.sqlite, rank 2 = report.10012.sqlite")


def _bad(tmp_path, case) -> tuple[Path, str]:
    f = tmp_path / "ranks"
    f.mkdir()
    if case == "missing-rank":
        _copies(f, BENCH, 1)
        shutil.copyfile(BENCH, f / "rank2.sqlite")
        return f, f"{f}: rank 1 missing (found 2 captures, ranks up to 2); add the missing rank's capture, or analyse a complete set"
    if case == "mixed-programs":
        shutil.copyfile(BENCH, f / "rank0.sqlite")
        shutil.copyfile(TRANSPOSE, f / "rank1.sqlite")
        return f, (f"{f}/rank1.sqlite: a capture of './transpose' while {f}/rank0.sqlite (rank 0) captured './bench': "
                   "the folder mixes runs; keep only the captures of one run")
    if case == "mixed-times":
        run = Run()
        write_rank(f / "rank0.sqlite", run, 0)
        write_rank(f / "rank1.sqlite", run, 1, start_utc_ns=run.start_utc_ns + 3600 * 10**9)
        return f, (f"{f}/rank1.sqlite: captured 60 minutes after the other ranks (more than 10 minutes apart): the folder "
                   "mixes runs; keep only the captures of one run")
    if case == "not-nsys":
        _copies(f, BENCH, 1)
        (f / "rank1.sqlite").write_text("loss 0.31\n")
        return f, (f"{f}/rank1.sqlite: not an SQLite database (no 'SQLite format 3' header); give the output of "
                   "'nsys export --type sqlite' or the .nsys-rep itself")
    if case == "empty":
        return f, (f"{f}: nothing to read as a rank (it is empty); give one file per rank, {ANY_CAPTURE} "
                   "(with 'nsys profile -o DIR/rank%q{RANK} ...': see docs/ranks.md)")
    if case == "only-logs":
        (f / "train.log").write_text("x")
        return f, (f"{f}: nothing to read as a rank (it holds train.log); give one file per rank, {ANY_CAPTURE} "
                   "(with 'nsys profile -o DIR/rank%q{RANK} ...': see docs/ranks.md)")
    if case == "some-unnamed":
        _copies(f, BENCH, 2)
        shutil.copyfile(BENCH, f / "extra.sqlite")
        return f, (f"{f}/extra.sqlite: not named rankN while rank0.sqlite is; name every capture rank<N> "
                   "(nsys profile -o rank%q{RANK}) or move the others out of the folder")
    if case == "duplicate":
        _copies(f, BENCH, 2)
        shutil.copyfile(BENCH, f / "rank01.sqlite")
        return f, f"{f}/rank1.sqlite: rank 1 again (also rank01.sqlite); keep one capture per rank in the folder"
    if case == "a-file":
        return BENCH, (f"{BENCH}: not a folder; --ranks takes the folder holding one nsys capture per rank "
                       f"(to diagnose one capture, run 'ncuwrap timeline {BENCH}')")
    raise AssertionError(case)


@pytest.mark.parametrize("case", ["missing-rank", "mixed-programs", "mixed-times", "not-nsys", "empty", "only-logs", "some-unnamed",
                                  "duplicate", "a-file"])
def test_bad_input_is_one_line(capsys, tmp_path, case):
    folder, message = _bad(tmp_path, case)
    code, out, err = run_cli(capsys, "timeline", "--ranks", folder, "--workers", "0")
    assert (code, out, err) == (2, "", f"ncuwrap: error: {message}\n")


def test_mixed_runs_can_be_allowed(capsys, tmp_path):
    folder, _ = _bad(tmp_path, "mixed-programs")
    code, out, err = run_cli(capsys, "timeline", "--ranks", folder, "--workers", "0", "--allow-mixed", "-f", "json")
    assert code == 0 and json.loads(out)["notes"][0].startswith("mixed runs allowed")


@pytest.mark.parametrize("args, message", [
    (["--ranks", "DIR", "./prog"], "--ranks DIR analyses captures made before: give no program (./prog) with it"),
    (["--workers", "2", "run.sqlite"], "--scheduler, --workers and --allow-mixed apply to --ranks DIR only"),
    (["--step-range", "(", "--ranks", "."], "--step-range '(': not a valid regular expression"),
    ([], "no program given; run 'ncuwrap timeline -- ./program args' or 'ncuwrap timeline --ranks DIR'"),
])
def test_option_misuse(capsys, args, message):
    code, out, err = run_cli(capsys, "timeline", *args)
    assert code == 2 and out == "" and err.startswith(f"ncuwrap: error: {message}")


# -- outputs ---------------------------------------------------------------------------------------

def test_json_schema_and_every_format(capsys, tmp_path):
    folder = write_run(tmp_path / "r", Run(slow_rank=1, extra_ns=5 * MS))
    code, out, _ = run_cli(capsys, "timeline", "--ranks", folder, "--workers", "0", "-f", "json")
    doc = json.loads(out)
    assert code == 0 and doc["schema"] == "ncuwrap.ranks/v1"
    assert (doc["bound"], doc["straggler"], doc["source"]["ranks"]) == ("compute", 1, 2)
    assert [r["nccl_wait_ns"] for r in doc["ranks"]] == [15_000_000, 0]
    assert doc["ranks"][0]["breakdown_ns"] == {"compute": 31_500_000, "nccl": 18_000_000, "memcpy_htod": 0, "memcpy_dtoh": 0,
                                               "memcpy_dtod": 0, "memcpy_other": 0, "memset": 0, "idle": 7_000_000}
    # Each step's period: 20 ms to the next step's start, the last to its range's end (16.5 ms).
    assert doc["ranks"][1]["steps"] == {"name": "train_step", "count": 3, "median_ns": 20_000_000, "min_ns": 16_500_000,
                                        "max_ns": 20_000_000, "total_ns": 56_500_000, "warmup": 0, "all_count": 3,
                                        "warmup_why": "no leading step takes more than 1.5x the median period of the 2 steps after the first (18.2 ms)"}
    code, table, _ = run_cli(capsys, "timeline", "--ranks", folder, "--workers", "0")
    assert code == 0 and "Bound: compute (sm90_xmma_gemm_bf16bf16_bf16f32)" in table
    assert "1 *" in table and "rank 1    [" in table
    d = diagnose_ranks(folder, workers=0)
    md = render(d, "markdown")
    assert "| `1 *`" in md and "#### MEDIUM: Rank 1 is the straggler" in md
    html = render(d, "html")
    assert "<svg" in html and 'class="straggler"' in html and "rank 1, NCCL (exposed): 3.00 ms (5.3%)" in html


def test_hostile_kernel_name_is_escaped(tmp_path):
    name = "evil|`<b>x</b>`\x1b[31m"
    folder = tmp_path / "r"
    folder.mkdir()
    run = Run(compute_name=name, step_ns=12 * MS)
    for rank in (0, 1):
        write_rank(folder / f"rank{rank}.sqlite", run, rank)
    d = diagnose_ranks(folder, workers=0)
    assert d.limiter == name
    md, html, table = render(d, "markdown"), render(d, "html"), render(d, "table")
    assert "<b>" not in md and "evil\\|\\`\\<b\\>x\\</b\\>\\`\\\\x1b\\[31m" in md
    assert "<b>x" not in html and "evil|`&lt;b&gt;x&lt;/b&gt;`\\x1b[31m" in html
    assert "\x1b" not in table


def test_nccl_kernel_names():
    import pandas as pd

    from ncuwrap.timeline.ranks.analysis import is_nccl

    names = pd.Series([NCCL_KERNEL, "ncclKernel_AllReduce_RING_LL_Sum_float", "ncclDevKernel_Generic", "ncclSymkDevKernel_AllReduce",
                       "sm90_gemm", "void at::native::nccl_like_kernel<float>", "NCCLish"])
    assert is_nccl(names).tolist() == [True, True, True, True, False, False, False]


def test_hostile_host_name_is_escaped_in_the_rank_table(tmp_path):
    """The rank table printed a rank's host name raw (its notes line escaped it): issue 22. SYNTHETIC captures."""
    folder = tmp_path / "r"
    folder.mkdir()
    run = Run(step_ns=12 * MS, host="node\x1b]0;pwned\x07[bold]x")
    for rank in (0, 1):
        write_rank(folder / f"rank{rank}.sqlite", run, rank)
    table = render(diagnose_ranks(folder, workers=0), "table", width=200)
    assert "\x1b" not in table and "\x07" not in table
    assert "node\\x1b]0;pwned\\x07[bold]x" in table  # shown as written: rich markup would have swallowed "[bold]"


@pytest.mark.parametrize("name, collective", [
    ("ncclDevKernel_AllReduce_Sum_f32_RING_LL", "AllReduce"),  # the real H200 x2 captures' (NCCL 2.28)
    ("ncclKernel_AllReduce_RING_LL_Sum_float", "AllReduce"),  # before NCCL 2.19
    ("ncclDevKernel_AllGather_RING_LL", "AllGather"),
    ("ncclDevKernel_ReduceScatter_Sum_bf16_RING_LL", "ReduceScatter"),
    ("ncclKernel_Reduce_RING_LL_Sum_half", "Reduce"),
    ("ncclDevKernel_Broadcast_RING_LL", "Broadcast"),
    ("ncclDevKernel_SendRecv", "SendRecv"),
    ("ncclDevKernel_Generic", "other"),  # NCCL 2.19+: one kernel runs any collective
])
def test_nccl_kernels_are_named_by_collective(name, collective):
    from ncuwrap.timeline.ranks.analysis import collective_of

    assert collective_of(name) == collective


def test_real_captures_communicate_by_all_reduce_only(capsys):
    """The real H200 x2 DDP captures: every NCCL kernel of the steady steps is an all-reduce, and its row
    is the rank's whole NCCL time and hidden part."""
    d = diagnose_ranks(DATA / "h200_ncuwrap" / "ranks" / "slow1", workers=0)
    for r in d.set.ranks:
        (c,) = r.collectives
        assert (c.name, c.kernels, c.ns, c.hidden_ns) == ("AllReduce", r.nccl_kernels, r.nccl_ns, r.nccl_hidden_ns)
    (total,) = d.set.collectives()
    assert (total.kernels, total.ns, total.hidden_ns) == (48, 127_379_099, 6_117_736)
    assert [c["name"] for c in d.to_json()["collectives"]] == ["AllReduce"]


def test_synthetic_collectives_hidden_and_exposed(tmp_path):
    """SYNTHETIC (tests/synthetic_ranks.py): an FSDP-like step, a 3 ms all-gather under each step's
    compute beside the all-reduce: the gather is hidden whole, the all-reduce as without it."""
    plain = diagnose_ranks(write_run(tmp_path / "plain", Run(slow_rank=1, extra_ns=5 * MS)), workers=0)
    d = diagnose_ranks(write_run(tmp_path / "fsdp", Run(slow_rank=1, extra_ns=5 * MS, gather_ns=3 * MS)), workers=0)
    for r, before in zip(d.set.ranks, plain.set.ranks):
        by = {c.name: c for c in r.collectives}
        steps = r.steps.count
        assert (by["AllGather"].kernels, by["AllGather"].ns, by["AllGather"].hidden_ns) == (steps, steps * 3 * MS, steps * 3 * MS)
        assert by["AllGather"].exposed_ns == 0 and by["AllGather"].hidden_pct == 100
        assert (by["AllReduce"].ns, by["AllReduce"].hidden_ns) == (before.nccl_ns, before.nccl_hidden_ns)
        assert r.nccl_exposed_ns == before.nccl_exposed_ns  # hidden communication exposes nothing
    assert [c.name for c in d.set.collectives()] == ["AllReduce", "AllGather"]  # most time first
    text = render(d, "table", width=120)
    assert "Communication by collective" in text and "AllGather" in text
    md = render(d, "markdown")
    section = md.split("### Communication by collective")[1].split("###")[0]
    assert "| `AllGather` |       6 | 18.00 ms | 100.0% |     0 ns |" in section and "`AllReduce`" in section
    assert "<h2>Communication by collective</h2>" in render(d, "html")
