"""What to do next (issue 24): every kernel no costly finding explains gets the lever for what limits
it, from the rules' `next` entries, on real H200 reports (the seeds' copy kernel, cuBLAS, cuDNN and
PyTorch kernels, the bundled benchmarks)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ncuwrap import ruleset
from ncuwrap.cli import app
from ncuwrap.kernel.diagnosis import diagnose
from ncuwrap.core.errors import RulesError
from ncuwrap.core.rules_choice import RulesChoice
from ncuwrap.kernel.metrics import KERNEL

DATA = Path(__file__).parent / "data"
REAL = DATA / "realworld"


def _steps(report) -> dict[str, tuple[str, str | None]]:
    """function name (first 40 characters) -> (verdict label, next step id)."""
    out = {}
    for k in diagnose(report).kernels:
        out.setdefault(k.name[:40], (k.verdict_label, k.next_step.id if k.next_step else None))
    return out


def test_a_latency_bound_copy_gets_more_bytes_in_flight():
    # The seeds' copy kernel: every unit under 60%, warps on long_scoreboard 94%; it used to end in
    # "no issue found" and nothing else.
    (k,) = diagnose(DATA / "h200" / "transpose" / "copyKernel.ncu-rep.gz").kernels
    assert k.bound == "latency" and not k.issues
    assert k.next_step.id == "bytes_in_flight" and k.next_step.undecided == ()
    assert k.next_step.title == "More bytes in flight: wider loads, more independent loads per thread"
    assert k.next_step.advice.startswith("Warps wait on global memory (long_scoreboard, 94% of stall cycles) while no unit")
    assert "achieved occupancy 81%" in k.next_step.advice
    text = CliRunner().invoke(app, ["diagnose", str(DATA / "h200" / "transpose" / "copyKernel.ncu-rep.gz")], env={"COLUMNS": "200"}).output
    assert "\n  next: More bytes in flight: wider loads, more independent loads per thread\n" in text


def test_library_kernels_get_the_lever_of_their_limiter():
    steps = _steps(REAL / "blas.raw.csv.gz")
    # cuBLAS's FP32 SGEMM runs on the FMA pipe: the lever is the tensor cores (TF32), not the FMA pipe.
    assert steps["sm80_xmma_gemm_f32f32_f32f32_f32_nn_n_ti"] == ("compute (fma)", "fp32_matmul_tensor_cores")
    # Tensor-core GEMMs at their type's peak; FP64 DMMA is told about less work, not FP8.
    assert steps["nvjet_sm90_tst_320x128_64x3_1x2_h_bz_coo"] == ("compute (tensor)", "tensor_pipe")
    assert steps["sm90_xmma_gemm_f64f64_f64f64_f64_nn_n_ti"] == ("compute (tensor)", "fp64_tensor_pipe")
    # PyTorch's RNG fill is integer work on the ALU; the bf16 copy streams DRAM.
    assert steps["at::<unnamed>::distribution_elementwise_"] == ("compute (alu)", "alu_pipe")
    assert steps["at::vectorized_elementwise_kernel<8, at:"] == ("memory (dram)", "dram_bandwidth")
    dnn = _steps(REAL / "dnn.raw.csv.gz")
    assert dnn["pytorch_flash::flash_bwd_dq_dk_dv_loop_s"] == ("memory (l1tex)", "l1_shared_bandwidth")
    ops = _steps(REAL / "ops.raw.csv.gz")
    assert ops["native::<unnamed>::cunn_SoftMaxForward<8"] == ("compute (xu)", "xu_pipe")
    assert ops["scan::DeviceScanKernel<scan::policy_hub<"] == ("latency (dram)", "fewer_barriers")
    # Names that merely contain "mma" (GammaBeta, AdamMath) are not matrix multiplies.
    assert ops["native::<unnamed>::multi_tensor_apply_ke"] == ("memory (dram)", "dram_bandwidth")


def test_a_costly_finding_is_the_next_step_itself():
    # Its advice says what to do; the rules' next step waits until it is fixed.
    (k,) = diagnose(DATA / "h200" / "transpose" / "transposeNaive.ncu-rep.gz").kernels
    assert [f.id for f in k.issues] == ["uncoalesced_global_stores"] and k.next_step is None


def test_kernel_kind_from_counters_without_a_telling_name():
    # The bundled FMA chain is FP32 at 84% of its peak with no shared memory: not a matrix multiply.
    (k,) = diagnose(DATA / "h200_ncuwrap" / "diag" / "fma_many_accumulators.ncu-rep.gz").kernels
    assert k.verdict_label == "compute (fma)" and k.next_step.id == "fma_pipe"


def test_every_format_carries_the_next_step():
    report = str(DATA / "h200" / "transpose" / "copyKernel.ncu-rep.gz")
    run = lambda fmt: CliRunner().invoke(app, ["diagnose", report, "-f", fmt]).output  # noqa: E731
    doc = json.loads(run("json"))
    assert doc["kernels"][0]["next_step"]["id"] == "bytes_in_flight"
    assert "**Next:** More bytes in flight: wider loads, more independent loads per thread. Warps wait on global memory" in run("markdown")
    assert '<div class="next"><strong>Next:</strong> More bytes in flight: wider loads' in run("html")


def test_user_rules_can_add_and_replace_next_steps(tmp_path):
    rules = tmp_path / "mine.yaml"
    rules.write_text("version: 1\nnext:\n  - id: bytes_in_flight\n    under: [latency]\n    when: \"stall_top == 'long_scoreboard'\"\n"
                     "    title: Ours\n    advice: \"Use our prefetcher ({stall_top_pct:.0f}%).\"\n")
    merged = ruleset.load(rules, KERNEL, extend=True)
    assert [s.id for s in merged.next][:1] == ["bytes_in_flight"] and [s.id for s in merged.next].count("bytes_in_flight") == 1
    (k,) = diagnose(DATA / "h200" / "transpose" / "copyKernel.ncu-rep.gz", RulesChoice(rules, extend=True)).kernels
    assert (k.next_step.title, k.next_step.advice) == ("Ours", "Use our prefetcher (94%).")


@pytest.mark.parametrize("entry, message", [
    ("  - id: x\n    when: \"nope > 1\"\n    title: t\n    advice: a\n", "unknown metric 'nope'"),
    ("  - id: x\n    when: \"true\"\n    title: t\n    advice: {a: b}\n", "advice given per case needs 'advice_by'"),
    ("  - id: x\n    when: \"true\"\n    title: t\n    advice: a\n  - id: x\n    when: \"true\"\n    title: t\n    advice: a\n", "duplicate id"),
    ("  - id: x\n    when: \"true\"\n    title: \"{nope}\"\n    advice: a\n", "placeholder {nope} names no metric"),
    ("  - id: x\n    when: \"kernel_kind > 2\"\n    title: t\n    advice: a\n", "'kernel_kind' is text"),
])
def test_bad_next_steps_are_refused_naming_the_entry(tmp_path, entry, message):
    rules = tmp_path / "bad.yaml"
    rules.write_text("version: 1\nnext:\n" + entry)
    with pytest.raises(RulesError, match="next step 'x'") as caught:
        ruleset.load(rules, KERNEL, extend=True)
    assert message in str(caught.value)


ADVICE = DATA / "h200_ncuwrap" / "advice"


def test_cublas_fp32_sgemms_from_pytorch_get_the_tensor_cores():
    # torch.cdist (8192 x 8192, K = 128) and a 4096^3 matmul in FP32 on the H200: cuBLAS's SIMT SGEMMs.
    # The cdist one (64x64x8 tiles) is memory (l1tex) at 93% "at the roofline"; it was told the DRAM
    # advice before. Measured there: TF32 runs the matmul 6.8-7.4x faster, cdist 1.2-1.4x (its GEMM
    # has K = 128), with a relative error of 2-3e-4 against FP64 (fp32_tf32_times.jsonl).
    kernels = {k.name.split("_tilesize")[1][:9]: k for k in diagnose(ADVICE / "fp32_matmuls.raw.csv.gz").kernels}
    cdist, matmul = kernels["64x64x8_s"], kernels["256x128x8"]
    assert (cdist.verdict_label, cdist.at_roofline, cdist.next_step.id) == ("memory (l1tex)", True, "fp32_matmul_tensor_cores")
    assert (matmul.verdict_label, matmul.at_roofline, matmul.next_step.id) == ("compute (fma)", True, "fp32_matmul_tensor_cores")
    assert matmul.next_step.advice.startswith("The multiply runs as FP32 FMAs (77% of the FP32 peak). Tensor cores run")
    assert "torch.backends.cuda.matmul.allow_tf32 = True" in cdist.next_step.advice
    times = [json.loads(line) for line in (ADVICE / "fp32_tf32_times.jsonl").read_text().splitlines()]
    by = {}
    for t in times:
        by.setdefault((t["case"], t["precision"]), []).append(t["median_ms"])
    ratio = sorted(a / b for a, b in zip(by[("matmul_4096", "fp32")], by[("matmul_4096", "tf32")]))
    assert 6.5 < ratio[0] and ratio[-1] < 7.5


def test_without_the_stall_reasons_the_next_step_says_what_they_would_decide():
    # The bundled sequential gather (latency-bound, no costly finding) collected with every metric
    # the rules read but the warp stall reasons (gather_nostall.command.txt), as a collection that
    # leaves WarpStateStats out does.
    report = ADVICE / "gather_nostall.raw.csv.gz"
    (k,) = diagnose(report).kernels
    assert k.bound == "latency" and not k.not_evaluated
    step = k.next_step
    assert step.id == "more_parallelism"
    assert [u.id for u in step.undecided] == ["bytes_in_flight", "fewer_barriers", "shared_pressure", "issue_bound", "short_kernel"]
    assert {u.how for u in step.undecided} == {"smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio not collected; "
                                               "re-profile with --section WarpStateStats (or 'ncuwrap profile --collect full')"}
    text = " ".join(CliRunner().invoke(app, ["diagnose", str(report)], env={"COLUMNS": "100"}).output.split())
    assert ("next: Nothing is saturated: more independent work in flight The busiest unit (dram) is at 53% of its peak." in text)
    assert ("not decided without the warp stall reasons: More bytes in flight; Fewer synchronizations per byte; Shared-memory "
            "pressure; Dependent instructions in a row; Warps wait for instructions or constants (re-profile with --section "
            "WarpStateStats (or 'ncuwrap profile --collect full'))") in text


def test_the_source_pages_of_a_full_set_report_are_read():
    # ncu 2025.3 exports the SASS page of a --set full report with every kernel's block twice,
    # identical; its cuda,sass page of code without line information is only ncu's notes. Both were
    # refused before ("not a source page export", "it has more launches of it").
    from ncuwrap.kernel.reading import load, source_page
    from ncuwrap.profile.pipeline import only_notes

    assert only_notes((ADVICE / "fp32_matmuls.source.csv").read_text())
    assert not only_notes("==WARNING== a note\n\"Kernel Name\",\"k\",\n")
    profile = load(ADVICE / "fp32_matmuls.raw.csv.gz")
    found, gaps = source_page(ADVICE / "fp32_matmuls.source_sass.csv.gz", profile)
    assert sorted(found) == [0, 1] and gaps == {}
    assert [len(found[i].table) for i in (0, 1)] == [2504, 7688]
    (k, _) = sorted(diagnose(ADVICE / "fp32_matmuls.raw.csv.gz", source_page=ADVICE / "fp32_matmuls.source_sass.csv.gz").kernels,
                    key=lambda k: -k.duration_ns)
    assert k.where.lines[0].instructions[0].sass.startswith("LDS.128") and k.where.lines[0].stalls[0][0] == "barrier"
