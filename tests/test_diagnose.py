"""Verdicts on real H200 reports, from each kind of input, and full outputs compared."""

from __future__ import annotations

import json

import pytest

from ncuwrap.kernel.diagnosis import diagnose
from ncuwrap.render import Format
from ncuwrap.core.launch_selection import LaunchSelection
from ncuwrap.kernel.metrics import KERNEL
from tests.conftest import H200, golden, golden_json, run_cli

FORMS = [".ncu-rep.gz", ".raw.csv", ".raw_base.csv"]

EXPECTED = {
    # kernel: (bound, limiter, findings that must fire, findings that must not). The bound and unit are
    # the ones Nsight Compute's own SOLBottleneck rule gives on the same reports (.details.csv): naive
    # "identify the L2 bottleneck", padded "identify the DRAM bottleneck", copy "low compute throughput
    # and memory bandwidth utilization ... below 60%" (latency-bound; DRAM is its busiest unit at 53%).
    "transposeNaive": ("memory", "l2", {"uncoalesced_global_stores"}, {"uncoalesced_global_loads", "shared_bank_conflicts"}),
    "transposeShared": ("memory", "l1tex", {"shared_bank_conflicts"}, {"uncoalesced_global_loads", "uncoalesced_global_stores", "at_roofline"}),
    "transposePadded": ("memory", "dram", set(), {"shared_bank_conflicts", "uncoalesced_global_loads", "uncoalesced_global_stores"}),
    "copyKernel": ("latency", "dram", set(), {"shared_bank_conflicts", "uncoalesced_global_loads", "uncoalesced_global_stores"}),
}


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("kernel", sorted(EXPECTED))
def test_transpose_verdicts_from_every_form(kernel, form):
    result = diagnose(H200 / "transpose" / f"{kernel}{form}")
    (k,) = result.kernels
    bound, limiter, must, must_not = EXPECTED[kernel]
    ids = set(k.finding_ids())
    assert (k.name, k.bound, k.limiter) == (kernel, bound, limiter)
    assert must <= ids, ids
    assert not (must_not & ids), ids
    assert k.not_evaluated == ()


@pytest.mark.parametrize("form", FORMS)
def test_identical_findings_across_forms(form):
    reference = {k: diagnose(H200 / "transpose" / f"{k}.ncu-rep.gz").kernels[0] for k in EXPECTED}
    for kernel, ref in reference.items():
        other = diagnose(H200 / "transpose" / f"{kernel}{form}").kernels[0]
        assert (other.bound, other.limiter, other.finding_ids()) == (ref.bound, ref.limiter, ref.finding_ids())


def test_naive_transpose_evidence_32_sectors_per_store_request():
    (k,) = diagnose(H200 / "transpose" / "transposeNaive.ncu-rep.gz").kernels
    stores = next(f for f in k.findings if f.id == "uncoalesced_global_stores")
    assert stores.severity == "high"
    assert stores.evidence["gst_sectors_per_request"] == pytest.approx(32.0, abs=0.1)
    assert stores.evidence["gst_ideal_sectors_per_request"] == pytest.approx(4.0, abs=0.01)
    assert stores.evidence["gst_excess_sectors_pct"] == pytest.approx(87.5)
    # DRAM is at 10%: the verdict is still memory, because L2 is at 76%.
    assert k.display_metrics["dram_pct"] < 11 and k.display_metrics["l2_pct"] > 76


def test_shared_transpose_evidence_32_way_conflicts():
    (k,) = diagnose(H200 / "transpose" / "transposeShared.ncu-rep.gz").kernels
    conflicts = k.findings[0]
    assert conflicts.id == "shared_bank_conflicts" and conflicts.severity == "high"
    assert conflicts.evidence["shared_ld_n_way"] == pytest.approx(32.2, abs=0.1)
    assert conflicts.title == "Shared-memory bank conflicts: 94% of shared wavefronts are replays (32.2 wavefronts per instruction)"
    # What padding buys: L1/TEX (92%) stops limiting; DRAM (30%) and the SMs take over.
    assert conflicts.severity == "high" and conflicts.estimated_speedup == pytest.approx(73.1, abs=0.1)
    assert conflicts.limited_after == "dram"


def test_padded_transpose_has_nothing_to_fix_but_is_short_of_the_dram_roof():
    (k,) = diagnose(H200 / "transpose" / "transposePadded.ncu-rep.gz").kernels
    assert (k.bound, k.limiter, k.finding_ids()) == ("memory", "dram", [])
    assert k.compared_metrics["dram_pct"] == pytest.approx(64.6, abs=0.1)  # under ncu's cache flushing, locked clocks
    assert not k.at_roofline


@pytest.mark.parametrize("form", [".ncu-rep", ".raw.csv", ".raw_base.csv", ".details.csv"])
def test_coalesced_add_both_launches(form):
    result = diagnose(H200 / "vecadd" / f"bench_add{form}")
    assert [k.name for k in result.kernels] == ["coalesced_add", "coalesced_add"]
    for k in result.kernels:
        assert k.bound == "memory"
        assert not {"uncoalesced_global_loads", "uncoalesced_global_stores"} & set(k.finding_ids())


def test_uncollected_metrics_are_reported_not_passed():
    (k, _) = diagnose(H200 / "vecadd" / "bench_add.ncu-rep").kernels
    rules = {n.rule: n for n in k.not_evaluated}
    assert set(rules) == {"shared_bank_conflicts", "local_memory_spill", "atomic_contention", "at_roofline"}
    assert rules["local_memory_spill"].message == (
        "not evaluated: l1tex__t_sectors_pipe_lsu_mem_local_op_ld.sum, l1tex__t_sectors_pipe_lsu_mem_local_op_st.sum not collected; "
        "re-profile with --section MemoryWorkloadAnalysis_Tables (or 'ncuwrap profile --collect targeted')"
    )
    assert "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum" in rules["shared_bank_conflicts"].missing
    # at_roofline cannot speak while a waste it depends on is unknown.
    assert "at_roofline" not in k.finding_ids()


def test_bound_partially_evaluated_names_the_missing_unit():
    from ncuwrap import ruleset
    from ncuwrap.kernel.diagnosis import diagnose_profile
    from ncuwrap.kernel.reading import load

    profile = load(H200 / "vecadd" / "bench_add.raw.csv")
    profile.frame = profile.frame.drop(columns=[c for c in profile.frame.columns if c.startswith("l1tex__throughput")])
    k = diagnose_profile(profile, ruleset.load(None, KERNEL)).kernels[0]
    assert (k.bound, k.limiter) == ("memory", "dram")
    bound = next(n for n in k.not_evaluated if n.rule == "bound")
    assert bound.message.startswith("partially evaluated: l1tex__throughput.avg.pct_of_peak_sustained_elapsed not collected; re-profile with --section "
                                    "SpeedOfLight")


def test_details_page_gives_the_same_bound_and_says_what_it_lacks():
    (k,) = diagnose(H200 / "transpose" / "transposeShared.details.csv").kernels
    assert (k.bound, k.limiter) == ("memory", "l1tex")
    assert k.findings == ()  # no finding can be claimed, and none is silently passed:
    assert {n.rule for n in k.not_evaluated} >= {"shared_bank_conflicts", "uncoalesced_global_stores", "at_roofline"}


def test_kernel_filter():
    from ncuwrap.core.errors import InputError

    result = diagnose("ncuwrap/samples/transpose_h200.ncu-rep.gz", select=LaunchSelection(kernel="shared"))
    assert [k.name for k in result.kernels] == ["transpose_shared"]
    with pytest.raises(InputError, match=r"--kernel '\^strided' matched no kernel of .*bench_add.raw.csv; its kernels: coalesced_add"):
        diagnose(H200 / "vecadd" / "bench_add.raw.csv", select=LaunchSelection(kernel="^strided"))


@pytest.mark.parametrize(
    "report, name",
    [
        (H200 / "transpose" / "transposeNaive.ncu-rep.gz", "diagnose_transposeNaive_rep.json"),
        (H200 / "transpose" / "transposeShared.raw.csv", "diagnose_transposeShared_raw.json"),
        (H200 / "vecadd" / "bench_add.raw_base.csv", "diagnose_bench_add_base.json"),
        (H200 / "transpose" / "copyKernel.details.csv", "diagnose_copyKernel_details.json"),
    ],
)
def test_full_json_output(capsys, report, name):
    code, out, err = run_cli(capsys, "diagnose", report, "--format", "json")
    assert code == 0, err
    data = json.loads(out)
    assert data["schema"] == "ncuwrap.diagnosis/v4"
    golden_json(name, data)


def test_json_contract_keys(capsys):
    _, out, _ = run_cli(capsys, "diagnose", H200 / "transpose" / "transposeNaive.ncu-rep.gz", "-f", "json")
    data = json.loads(out)
    assert set(data) >= {"schema", "tool", "source", "rules", "kernels"}
    assert set(data["tool"]) == {"name", "version"}
    assert set(data["source"]) == {"path", "kind", "ncu_version", "device", "compute_capability"}
    assert set(data["rules"]) >= {"path", "version"}
    kernel = data["kernels"][0]
    assert set(kernel) >= {"id", "name", "display_name", "launch", "duration_ns", "bound", "limiter", "findings", "not_evaluated", "metrics"}
    assert set(kernel["launch"]) == {"grid", "block"}
    assert set(kernel) >= {"pipe", "pipe_pct", "tensor", "estimated_gain_pct", "stalls", "ncu_rules"}
    assert set(kernel["findings"][0]) == {"id", "severity", "title", "estimated_speedup", "limited_after", "where", "evidence", "advice"}
    assert {"id", "name", "share_pct", "gain_pct", "saves_pct", "headline"} == set(data["ranking"][0])
    # Issue 20: where each waste lies (this full-set report of a build without -lineinfo: SASS only).
    assert set(kernel) >= {"where", "source_counters"} and "lines_hint" in data
    assert kernel["source_counters"] == {"origin": "ncu-rep", "by": "instruction", "instructions": 24}
    assert set(kernel["where"]) == {"waste", "label", "function", "total", "by", "covered", "lines"}
    assert set(kernel["where"]["lines"][0]) == {"file", "line", "text", "share", "value", "sass", "counters", "stalls", "instructions"}


def test_default_report_is_the_bundled_sample(capsys):
    code, out, _ = run_cli(capsys, "diagnose")
    assert code == 0
    golden("diagnose_sample_table.txt", out)


def test_every_format_is_handled(capsys, tmp_path):
    for fmt in Format:
        target = tmp_path / f"out.{fmt.value}"
        code, _, err = run_cli(capsys, "diagnose", H200 / "vecadd" / "bench_add.raw.csv", "-f", fmt.value, "-o", target)
        assert code == 0, (fmt, err)
        assert target.stat().st_size > 200


def test_table_and_markdown_tell_the_same_summary(capsys):
    report = H200 / "transpose" / "transposeShared.details.csv"
    _, table, _ = run_cli(capsys, "diagnose", report)
    _, markdown, _ = run_cli(capsys, "diagnose", report, "-f", "markdown")
    (kernel,) = diagnose(report).kernels
    headline = f"no issue found by the rules evaluated ({len(kernel.not_evaluated)} rules not evaluated)"
    # The occupancy rule needs the load sectors too (is the kernel fed by asynchronous copies?).
    assert len(kernel.not_evaluated) == 7
    # 100 columns: the summary table leaves the headline to the kernel's section.
    assert "\n  no issue found by the rules evaluated\n" in table and "\n  7 rules not evaluated (see the end)\n" in table and headline in markdown
    note = "clocks were locked to base by ncu (--clock-control base, its default)"
    _, rep_table, _ = run_cli(capsys, "diagnose", H200 / "transpose" / "transposeShared.ncu-rep.gz")
    _, rep_markdown, _ = run_cli(capsys, "diagnose", H200 / "transpose" / "transposeShared.ncu-rep.gz", "-f", "markdown")
    assert note in " ".join(rep_table.split()) and note in rep_markdown
