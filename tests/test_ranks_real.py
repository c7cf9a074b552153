"""``ncuwrap timeline --ranks`` on REAL multi-GPU captures: workloads/ranks/ddp_step.py (DDP, NCCL
all-reduce of the gradients, 8 steps, each an NVTX range ``train_step``) under torchrun on an NVIDIA
H200 x2 (NVLink, NCCL 2.28.9), one nsys report per rank, by workloads/ranks/capture_ranks.sh
(tests/data/h200_ncuwrap/ranks, README there).

- ``balanced``: both ranks do the same work;
- ``slow1``: rank 1 runs about 20 ms of extra matrix products per step (``--slow-rank 1 --slow-ms 20``),
  so rank 0 waits for it inside every all-reduce.

Full outputs against golden files (NCUWRAP_REGEN=1 rewrites them), and the facts the outputs must
show, asserted one by one.
"""

from __future__ import annotations

import gzip
import json
from collections import Counter
from pathlib import Path

import pytest

from ncuwrap.timeline.ranks.analysis import is_nccl
from ncuwrap.timeline.ranks.diagnosis import diagnose_ranks
from ncuwrap.timeline.readers.nsys_sqlite import read
from tests.conftest import DATA, golden, golden_json, run_cli

RANKS = DATA / "h200_ncuwrap" / "ranks"
CASES = ("balanced", "slow1")
MS = 1_000_000
ALL_REDUCE = "ncclDevKernel_AllReduce_Sum_f32_RING_LL"


@pytest.fixture(scope="module")
def captures(tmp_path_factory) -> Path:
    """The committed exports (gzipped) as ``<tmp>/<case>/rank{0,1}.sqlite``."""
    root = tmp_path_factory.mktemp("h200x2")
    for case in CASES:
        (root / case).mkdir()
        gzipped = sorted((RANKS / case).glob("rank*.sqlite.gz"))
        assert [p.name for p in gzipped] == ["rank0.sqlite.gz", "rank1.sqlite.gz"]
        for gz in gzipped:
            (root / case / gz.name[: -len(".gz")]).write_bytes(gzip.decompress(gz.read_bytes()))
    return root


@pytest.fixture(scope="module")
def diagnoses(captures) -> dict:
    return {case: diagnose_ranks(captures / case, workers=0) for case in CASES}


# -- full outputs -------------------------------------------------------------------------------

@pytest.mark.parametrize("case", CASES)
def test_table_matches_golden(captures, capsys, monkeypatch, case):
    monkeypatch.chdir(captures)  # relative paths: the output does not depend on where pytest puts tmp files
    code, out, err = run_cli(capsys, "timeline", "--ranks", case, "--workers", "0")
    assert code == 0, err
    golden(f"ranks_h200x2_{case}_table.txt", out)


@pytest.mark.parametrize("case", CASES)
def test_json_matches_golden(captures, capsys, monkeypatch, case):
    monkeypatch.chdir(captures)
    code, out, err = run_cli(capsys, "timeline", "--ranks", case, "--workers", "0", "--format", "json")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["schema"] == "ncuwrap.ranks/v1" and doc["source"]["analysed_on"] == "this process (no Dask)"
    golden_json(f"ranks_h200x2_{case}.json", doc)


def test_dask_gives_the_same_result(captures, capsys, monkeypatch):
    # The default path: each capture analysed by a task on a local Dask cluster of worker processes.
    monkeypatch.chdir(captures)
    code, out, err = run_cli(capsys, "timeline", "--ranks", "slow1", "--workers", "2", "--format", "json")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["source"].pop("analysed_on") == "Dask LocalCluster, 2 worker processes"
    expected = json.loads((Path(__file__).parent / "golden" / "ranks_h200x2_slow1.json").read_text())
    expected["source"].pop("analysed_on")
    assert doc == expected


# -- what the outputs must show -----------------------------------------------------------------

def test_slow1_names_rank1_the_straggler_and_rank0_waits_for_it(diagnoses):
    d = diagnoses["slow1"]
    r0, r1 = d.ranks
    assert d.straggler == 1 and [r.rank for r in d.ranks if r.rank == d.straggler] == [1]
    assert (d.bound, d.limiter) == ("communication", "waiting for rank 1")
    # The idle time of the warm-up steps is gone with them: no gpus_idle finding.
    assert [f.id for f in d.findings] == ["straggler", "rank_waits_in_nccl", "exposed_communication"]
    # The 6 steady steps (2 of warm-up left out on both ranks): rank 1's extra matrix products, ~18.5 ms
    # in each step, against the other rank's compute (not a median that includes rank 1 itself).
    assert (r0.compute_ns, r1.compute_ns) == (7_688_494, 119_023_164)
    assert d.set.metrics["imbalance"] == pytest.approx(119_023_164 / 7_688_494)
    assert d.set.metrics["step_imbalance_median"] == pytest.approx(15.536, abs=1e-3)
    # Rank 0 sits in its all-reduce kernels while rank 1 computes: 114 ms of waiting, at least the
    # ~18 ms a step rank 1 adds in each of the 6 steps; the straggler itself waits for nobody.
    waits = [row.wait_ns for row in d.set.rows]
    assert waits == [113_624_801, 0]
    assert waits[0] > 6 * 18 * MS and r0.nccl_ns > 15 * r1.nccl_ns
    assert d.set.metrics["wait_rank"] == 0 and d.set.metrics["wait_max_pct"] == pytest.approx(86.42, abs=0.01)
    # Both ranks' steps take as long (the all-reduce ends when the last rank joins): the step-time spread
    # cannot name the straggler, the compute time can.
    assert r0.steps.median_ns == pytest.approx(r1.steps.median_ns, rel=1e-3)


def test_balanced_names_no_straggler(diagnoses):
    d = diagnoses["balanced"]
    r0, r1 = d.ranks
    assert d.straggler is None and "straggler" not in [f.id for f in d.findings]
    assert d.set.metrics["imbalance"] < 1.02 and abs(r0.compute_ns - r1.compute_ns) < 0.2 * MS
    assert (d.bound, d.limiter) == ("communication", "NCCL transfers")  # 268 MB of gradients against ~1.3 ms of compute a step
    # With the two warm-up steps left out (before, rank 1 waited 91 ms there: rank 0 entered the loop 22 ms
    # later and took 17 ms longer in its first step), rank 1 waits 3.6 ms in the 6 steady steps.
    assert [row.wait_ns for row in d.set.rows] == [0, 3_623_641]
    assert r0.steps.start_ns - r1.steps.start_ns == 15_913_210
    assert [f.id for f in d.findings] == ["rank_waits_in_nccl", "exposed_communication", "gpus_idle"]


@pytest.mark.parametrize("case", CASES)
def test_nccl_kernels_recognised_by_their_real_names(captures, diagnoses, case):
    for rank in (0, 1):
        kernels = read(captures / case / f"rank{rank}.sqlite").kernels
        flagged = is_nccl(kernels["name"])
        assert Counter(kernels["name"][flagged]) == {ALL_REDUCE: 29, "ncclDevKernel_Broadcast_RING_LL": 5,
                                                     "ncclDevKernel_AllGather_RING_LL": 1}
        assert not any("nccl" in name.lower() for name in kernels["name"][~flagged])  # gemm, elementwise... are compute
        # In the 6 steady steps: 24 all-reduces (4 a step); the warm-up steps' 5 all-reduces and DDP's 2
        # broadcasts (bucket rebuild), and the 3 broadcasts and the all-gather of its construction, are left out.
        assert diagnoses[case].ranks[rank].nccl_kernels == 24
    assert diagnoses[case].set.metrics["nccl_kernel_count"] == 48


@pytest.mark.parametrize("case", CASES)
def test_steps_come_from_nvtx_and_bound_the_window(diagnoses, case):
    d = diagnoses[case]
    for r in d.ranks:
        # 8 ranges train_step (ddp_step.py) among 46: NCCL's own ranges (ncclAllReduce...) are no steps.
        assert (r.steps.name, r.steps.all_count, r.steps.warmup, r.steps.count, r.nvtx_ranges) == ("train_step", 8, 2, 6, 46)
        assert r.steps.max_ns < 30 * MS  # the first step (CUDA, cuBLAS and NCCL warm-up, >300 ms) is left out
        # The window is the steps (0.4-0.5 s), not the 5.8-6.1 s capture of start-up and teardown.
        assert r.window_scope == "steps"
        assert r.window_ns == r.steps.end_ns - r.steps.start_ns  # the steps end with torch.cuda.synchronize()
        assert r.capture_ns > 10 * r.window_ns
        assert sum(r.breakdown_ns.values()) == r.window_ns
    # Median steady steps (their periods, start to the next step's start): 3.0-3.1 ms balanced, 21.9 ms with
    # rank 1 slowed by ~18-20 ms a step.
    expected = {"balanced": [3_044_874.0, 3_101_672.0], "slow1": [21_948_569.5, 21_949_097.0]}[case]
    assert [r.steps.median_ns for r in d.ranks] == expected
    assert d.set.metrics["step_count"] == 6


def test_communication_hidden_under_compute(diagnoses):
    # DDP all-reduces gradient buckets during the backward pass: on the rank that arrives last, ~40%
    # of its NCCL time runs under compute kernels; the waiting rank's waits are exposed.
    slow1, balanced = diagnoses["slow1"], diagnoses["balanced"]
    assert slow1.ranks[1].hidden_pct == pytest.approx(40.74, abs=0.01)
    assert balanced.ranks[0].hidden_pct == pytest.approx(39.75, abs=0.01)
    assert slow1.ranks[0].hidden_pct < 3 and balanced.ranks[1].hidden_pct < 35
    for d in (slow1, balanced):
        for r in d.ranks:
            assert r.breakdown_ns["nccl"] == r.nccl_ns - r.nccl_hidden_ns  # exposed + hidden = all NCCL time


def test_the_gzipped_captures_are_read_as_they_are(capsys, captures, diagnoses):
    # Issue 25: `timeline --ranks` refused the .sqlite.gz captures (and diagnose a .sqlite.gz); each is now
    # unpacked to a private temporary file, bounded, and gives what its .sqlite gives.
    for case in CASES:
        gz = diagnose_ranks(RANKS / case, workers=0)
        plain = diagnoses[case]
        assert _without_paths(gz.to_json()) == _without_paths(plain.to_json())
        assert [r["path"].rsplit("/", 1)[-1] for r in gz.to_json()["ranks"]] == ["rank0.sqlite.gz", "rank1.sqlite.gz"]
    code, out, err = run_cli(capsys, "diagnose", RANKS / "slow1" / "rank1.sqlite.gz", "-f", "json")
    assert code == 0, err
    code, plain_out, err = run_cli(capsys, "diagnose", captures / "slow1" / "rank1.sqlite", "-f", "json")
    gz_doc, plain_doc = json.loads(out), json.loads(plain_out)
    assert gz_doc["source"]["path"].endswith("rank1.sqlite.gz")
    assert {k: v for k, v in gz_doc.items() if k != "source"} == {k: v for k, v in plain_doc.items() if k != "source"}


def test_a_damaged_gzip_capture_is_one_line_naming_it(capsys, tmp_path):
    bad = tmp_path / "rank0.sqlite.gz"
    bad.write_bytes(b"\x1f\x8b\x08\x00not really gzip")
    code, out, err = run_cli(capsys, "diagnose", bad)
    assert (code, out) == (2, "") and err.count("\n") == 1 and err.startswith(f"ncuwrap: error: {bad}: not a readable gzip file")
    code, out, err = run_cli(capsys, "timeline", "--ranks", tmp_path, "--workers", "0")
    assert code == 2 and err.count("\n") == 1 and f"{bad}: not a readable gzip file" in err


def _without_paths(doc):
    """A document with every file path and folder left out (the rest must match to the byte)."""
    if isinstance(doc, dict):
        return {k: _without_paths(v) for k, v in doc.items() if k not in ("path", "folder", "source")}
    if isinstance(doc, list):
        return [_without_paths(v) for v in doc]
    return doc


def test_the_default_analyses_small_captures_here_and_says_why(tmp_path):
    """The real 2-GPU capture (2.6 MB): starting a cluster would cost more than it saves (measured: 1.6 s
    here, 7.3 s on a 2-worker cluster on 2 cores), so the default analyses it in this process."""
    from ncuwrap.timeline.ranks.diagnosis import choose_workers, diagnose_ranks

    d = diagnose_ranks(DATA / "h200_ncuwrap" / "ranks" / "slow1")
    assert d.workers == ("this process (no Dask: 2 captures, ~10 MiB to read: too little for a cluster to pay on "
                         f"{__import__('os').cpu_count()} core{'s' if __import__('os').cpu_count() != 1 else ''}; --workers N starts one)")
    # Eight ranks of 300 MB each (sparse files of that size: only their size is read) on 16 cores: a cluster.
    big = []
    for r in range(8):
        path = tmp_path / f"rank{r}.sqlite"
        with open(path, "wb") as fh:
            fh.truncate(300 << 20)
        big.append(path)
    assert choose_workers(big, 16) == (8, "8 captures, ~2,400 MiB to read: 8 workers save more than the cluster's start")
    assert choose_workers(big, 1)[0] == 0 and choose_workers(big[:1], 16)[0] == 0
    # A gzipped capture counts what it unpacks to (4x).
    assert choose_workers([p.rename(p.with_suffix(".sqlite.gz")) for p in big[:2]], 16)[1].startswith("2 captures, ~2,400 MiB")
