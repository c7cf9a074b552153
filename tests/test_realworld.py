"""Verdicts on the real-world corpus: 99 library kernels captured on the H200 (tests/data/realworld).

cuBLAS, cuDNN, flash attention, CUB, torch, Triton and torch.compile kernels, each diagnosed from its
raw-page export with Nsight Compute's own rule results from the details page beside it. The
expectations were written before the counters were looked at (expected.yaml); revisions.yaml says,
kernel by kernel, where they were revised after looking and why (benchmarks/realworld_score.py scores
both and writes docs/realworld.md).
"""

from __future__ import annotations

import json
import sys
from functools import lru_cache

import pytest

from ncuwrap import ruleset
from ncuwrap.kernel.diagnosis import diagnose
from ncuwrap.kernel.metrics import KERNEL
from tests.conftest import DATA, ROOT

RW = DATA / "realworld"
GROUPS = ("blas", "dnn", "ops", "triton")
sys.path.insert(0, str(ROOT / "benchmarks"))


@lru_cache(maxsize=None)
def group(name: str):
    return diagnose(RW / f"{name}.raw.csv.gz", ncu_rules=RW / f"{name}.details.csv.gz")


def kernel(key: str):
    name, index = key.split("/")
    return group(name).kernels[int(index)]


@lru_cache(maxsize=1)
def scored():
    import realworld_score

    return realworld_score.score(RW)


def test_every_verdict_is_the_recorded_one():
    import realworld_score

    assert realworld_score.verdicts_json(scored()) == json.loads((RW / "verdicts.json").read_text())


def test_scores_and_the_promises_of_the_issue():
    import realworld_score

    s = realworld_score.summary(scored())
    assert s["kernels"] == 99
    assert s["ncuwrap_right_revised"] / s["kernels"] >= 0.95
    assert s["ncuwrap_right"] > 5 * s["ncu_right"]  # against the expectations written before looking
    assert s["ncuwrap_behind_ncu"] == []  # never behind ncu's rules
    assert s["high_below_threshold"] == []  # no HIGH finding estimated under gain_minor


def test_every_kernel_is_mapped_to_its_case():
    cases = json.loads((RW / "cases.json").read_text())
    for name in GROUPS:
        assert len(cases[name]) == len(group(name).kernels)
        assert all(c["function"] in k.display_name for c, k in zip(cases[name], group(name).kernels))


def test_cublas_bf16_gemm_is_compute_bound_on_the_tensor_pipe_at_its_roof():
    k = kernel("blas/2")  # nvjet 8192^3 bf16: L1 94.4% vs SM 93.3% once read as memory-bound
    assert (k.bound, k.pipe) == ("compute", "tensor")
    assert k.tensor["dtype"] == "bf16" and k.tensor["pct_of_peak"] == pytest.approx(93.3, abs=0.1)
    assert k.tensor["flops_per_s"] == pytest.approx(7.98e14, rel=0.01)  # 798 TFLOP/s
    assert k.compared_metrics["memory_pct"] == pytest.approx(47.9, abs=0.1)  # wgmma's shared-memory operand reads are the tensor pipe's
    assert [f.id for f in k.findings] == ["at_roofline"]
    assert "(their busiest pipe, tensor, at 93% of its own)" in k.findings[0].advice and "bandwidth" not in k.findings[0].advice


@pytest.mark.parametrize("key, dtype", [("blas/3", "fp16"), ("blas/4", "tf32"), ("blas/7", "fp64"), ("blas/10", "fp8"), ("triton/2", "bf16")])
def test_tensor_core_kernels_are_judged_against_their_type(key, dtype):
    k = kernel(key)
    assert (k.bound, k.pipe, k.tensor["dtype"]) == ("compute", "tensor", dtype)


def test_cp_async_gemms_are_not_uncoalesced_for_want_of_an_ideal():
    for key in ("blas/5", "blas/7"):  # cuBLAS SGEMM and DGEMM load through LDGSTS: no access width for them
        k = kernel(key)
        assert "uncoalesced_global_loads" not in k.finding_ids()
        assert k.compared_metrics.get("gld_excess_sectors_pct") in (None, 0)
    assert kernel("blas/5").pipe == "fma"


def test_conflicts_of_a_fraction_of_a_percent_are_not_findings():
    for key in ("blas/2", "blas/3", "blas/12"):
        k = kernel(key)
        assert all(f.severity == "minor" for f in k.findings if f.id == "shared_bank_conflicts")


def test_wave_quantization_is_estimated_not_shouted():
    k = kernel("dnn/3")  # 120 blocks, one per SM, on 132 SMs
    (grid,) = [f for f in k.findings if f.id == "grid_too_small"]
    assert grid.severity == "medium" and grid.estimated_speedup == pytest.approx(9.1, abs=0.1)


def test_a_store_of_one_sector_per_request_is_not_uncoalesced():
    k = kernel("dnn/5")  # cuDNN's workspace init: one thread writes 504 words
    assert "uncoalesced_global_stores" not in k.finding_ids()


def test_latency_bound_verdicts_name_the_stall():
    k = kernel("ops/11")  # CUB's decoupled look-back scan at 57% of DRAM
    assert k.bound == "latency"
    # Warps wait at the block barrier of the tile scan (59%), then on global loads (27%).
    assert [(s.reason, round(s.share_pct)) for s in k.stalls] == [("barrier", 59), ("long_scoreboard", 27), ("short_scoreboard", 5)]
    assert "Warps wait mostly on barrier (59% of stall cycles), then long_scoreboard (27%)." in k.why


def test_hot_atomics_in_a_library_kernel():
    k = kernel("ops/41")  # scatter_add of 16M values onto 64 addresses
    assert k.headline.id == "atomic_contention" and k.headline.severity == "high"


def test_no_high_finding_below_the_threshold_and_findings_ranked_by_gain():
    minor = ruleset.load(None, KERNEL).setting("gain_minor")
    for name in GROUPS:
        for k in group(name).kernels:
            for f in k.findings:
                if f.severity == "high":
                    assert f.estimated_speedup >= minor
            gains = [f.estimated_speedup or 0 for f in k.findings if f.severity in ("high", "medium")]
            levels = [f.severity for f in k.findings if f.severity in ("high", "medium")]
            assert levels == sorted(levels)  # high before medium
            assert gains == sorted(gains, key=lambda g: -g) or len(set(levels)) > 1


def test_ncu_rules_stand_beside_the_findings():
    k = kernel("ops/29")  # log-softmax backward: ncu estimates 66% for uncoalesced shared accesses
    rules = {r.rule: r for r in k.ncu_rules}
    assert rules["UncoalescedSharedAccess"].estimated_speedup == pytest.approx(66.21, abs=0.01)
    assert rules["UncoalescedSharedAccess"].counterpart == "shared_bank_conflicts"
    assert rules["UncoalescedSharedAccess"].agreement.startswith("differ: ncuwrap estimates")


def test_the_report_ranks_what_to_fix_first():
    ranking = group("ops").ranking()
    assert ranking[0].saves_pct == max(p.saves_pct or 0 for p in ranking)
    first = ranking[0]
    assert first.saves_pct == pytest.approx(first.share_pct * first.gain_pct / 100, abs=0.01)


def test_targeted_columns_give_the_full_sets_verdicts_on_every_corpus_kernel(tmp_path):
    """--collect targeted on library kernels: the corpus's --set full exports cut to the columns a real
    targeted export has (the --top run on the H200, tests/data/h200_ncuwrap/top, minus the warp stall
    ratios targeted no longer collects, plus the metrics it has asked for by name since) give every one
    of the 99 kernels the same bound, limiter, findings and severities."""
    import csv
    import gzip
    import io

    from ncuwrap import ruleset
    from ncuwrap.profile import collection as collections_
    from ncuwrap.profile import verdicts
    from ncuwrap.profile.collection import STALL_RATIOS

    header = next(csv.reader(open(DATA / "h200_ncuwrap" / "top" / "report.raw.csv")))
    keep = set(header) - STALL_RATIOS
    assert len(header) - len(keep) == 19
    asked = set(collections_.plan_collection("targeted", ruleset.load(None, KERNEL)).metrics)
    assert asked - set(header) >= {"lts__t_requests_srcunit_tex.sum", "sm__mio_pq_read_cycles_active.avg.pct_of_peak_sustained_elapsed"}
    keep |= asked
    total = 0
    for name in ("blas", "dnn", "ops", "triton"):
        full_path = DATA / "realworld" / f"{name}.raw.csv.gz"
        rows = list(csv.reader(io.StringIO(gzip.decompress(full_path.read_bytes()).decode())))
        columns = [i for i, h in enumerate(rows[0]) if h in keep]
        cut = tmp_path / f"{name}.raw.csv"
        with cut.open("w", newline="") as fh:
            csv.writer(fh, quoting=csv.QUOTE_ALL).writerows([r[i] for i in columns] for r in rows)
        full, targeted = verdicts(diagnose(full_path)), verdicts(diagnose(cut))
        assert targeted == full, name
        assert len(columns) < len(rows[0]) / 4  # a real cut: 520 of 2,238 columns
        total += len(full)
    assert total == 99
