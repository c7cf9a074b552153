"""How far each op is from its limit (issue 51) on real H200 captures: the step's FLOPs against the programs' hand
counts, each op's row, what is not modelled, the remedies' edits, and the section in every format.

tests/data/h200_ncuwrap/kineto/gpu_train.pt.trace.json.gz: a 4-layer GPT-like transformer trained in bf16
autocast (benchmarks/device/steps/gpu_train.py), recorded by torch.profiler with record_shapes=True; its
arguments and its own step timings are in kineto_gpu_train.log.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from ncuwrap.core import peaks as P
from ncuwrap.timeline import steps as steps_module
from ncuwrap.timeline import readers
from ncuwrap.timeline.oplimits import analysis, counts, remedies

DATA = Path(__file__).parent / "data" / "h200_ncuwrap"
KINETO = DATA / "kineto"
GPU_TRAIN = KINETO / "gpu_train.pt.trace.json.gz"


def _program_line(log: Path) -> dict:
    """The program's own JSON line of a capture's log."""
    return next(json.loads(line) for line in log.read_text(encoding="utf-8").splitlines() if line.startswith("{"))


def gpt_flop(p: dict) -> float:
    """A training step of gpu_train.py counted by hand: each Linear's 2·m·k·n forward, twice that backward (the input's
    and the weight's gradients), its bias added once per output; the tied head 2·T·d·V three times; causal attention
    2·B·H·P·(E + E) forward and 2·B·H·P·(3E + 2E) backward (QKᵀ recomputed) with P = S·(S + 1)/2 pairs."""
    t, d, v, layers = p["batch"] * p["seq"], p["dim"], p["vocab"], p["layers"]
    e = d // p["heads"]
    linear = 2 * t * (3 * d * d + d * d + 4 * d * d + 4 * d * d)  # qkv, proj, up, down
    bias = t * (3 * d + d + 4 * d + d)
    head = 2 * t * d * v
    pairs = p["seq"] * (p["seq"] + 1) // 2
    attention = 2 * p["batch"] * p["heads"] * pairs * (2 * e) + 2 * p["batch"] * p["heads"] * pairs * (5 * e)
    return layers * (3 * linear + bias + attention) + 3 * head


@pytest.fixture(scope="module")
def gpu_train():
    data, _ = readers.read(GPU_TRAIN)
    found = steps_module.measure(data)
    return data, found, analysis.measure(data, found)


def test_the_transformers_flop_a_step_are_the_hand_count(gpu_train):
    _, found, limits = gpu_train
    program = _program_line(KINETO / "kineto_gpu_train.log")
    hand = gpt_flop(program)
    matrix = sum(r.flop for r in limits.rows if r.kind in counts.TENSOR_KINDS) / limits.steps
    # The matrix products and attention are the hand count's own terms: equal to a part in a million.
    assert matrix == pytest.approx(hand, rel=1e-6)
    # The memory-bound ops add their one FLOP an element: under 0.5%.
    assert hand < limits.step_flop < 1.005 * hand
    # Achieved TFLOP/s against the hand count over the program's own steady step (its clock, under the profiler).
    by_hand = hand / (program["steady_wall_ms_median"] * 1e-3)
    assert limits.achieved_flops == pytest.approx(by_hand, rel=0.10)
    assert limits.step_ns == pytest.approx(found.mean_period_ns)


def test_the_step_runs_on_the_bf16_tensor_cores(gpu_train):
    _, _, limits = gpu_train
    assert limits.dtype == "bf16" and limits.dtype_unit == P.BF16_TENSOR and limits.tf32 is None
    assert limits.peak_flops == 4096 * 132 * 1.98e9
    assert limits.mfu_pct == pytest.approx(100 * limits.achieved_flops / limits.peak_flops)
    # The trace records the SMs and the compute capability; the clock and the bandwidth are the data sheet's.
    assert limits.peaks.sources == ("compute capability, SM count from the trace's deviceProperties",
                                    "maximum SM clock, memory bandwidth from the bundled table (NVIDIA H200 Tensor Core GPU data sheet "
                                    "(H200 SXM: 4.8 TB/s HBM3e))")


def test_the_lm_heads_forward_is_one_row(gpu_train):
    data, _, limits = gpu_train
    head = next(r for r in limits.rows if r.op == "aten::mm" and r.shapes == "16384x1024 @ 1024x32768")
    assert (head.calls, head.kernels, head.dtype, head.dtype_how, head.forward_op) == (4, 4, "bf16", "recorded", None)
    assert head.flop == 4 * 2 * 16384 * 1024 * 32768 and head.bytes == 4 * 2 * (16384 * 1024 + 1024 * 32768 + 16384 * 32768)
    assert head.unit == P.BF16_TENSOR and head.unit_how == "bf16 inputs (recorded)" and head.limit == P.BF16_TENSOR
    # Its kernel time is its kernels' own: the rows it names in data.kernels.
    ends, starts = (np.asarray(data.kernels[c], dtype=np.int64)[head.rows] for c in ("end", "start"))
    assert head.time_ns == int((ends - starts).sum()) and np.array_equal(head.ns, ends - starts)
    assert {data.kernels["demangled"][int(i)] for i in head.rows} == {"nvjet_sm90_tst_320x128_64x3_1x2_h_bz_coopB_TNT"}
    assert head.pct_of_limit == pytest.approx(100 * head.flop / (head.time_ns * 1e-9) / limits.peak_flops)


def test_backward_ops_name_their_forward_op(gpu_train):
    _, _, limits = gpu_train
    backward = {(r.op, r.forward_op) for r in limits.rows if r.forward_op}
    assert {("aten::_cudnn_attention_backward", "aten::_scaled_dot_product_cudnn_attention"),
            ("aten::native_layer_norm_backward", "aten::native_layer_norm"), ("aten::mm", "aten::addmm"),
            ("aten::gelu_backward", "aten::gelu"), ("aten::_log_softmax_backward_data", "aten::_log_softmax")} <= backward


def test_what_is_not_modelled_is_said_with_its_time(gpu_train):
    _, _, limits = gpu_train
    assert [(u.op, u.reason) for u in limits.unmodelled] == [
        ("aten::_fused_adamw_", "its lists' sizes are not recorded (PyTorch records a list of at most 30 tensors)"),
        ("aten::_foreach_add_", "its lists' sizes are not recorded (PyTorch records a list of at most 30 tensors)"),
        ("aten::arange", "no formula for this op")]
    assert limits.modelled_ns + sum(u.time_ns for u in limits.unmodelled) == limits.kernel_ns
    assert 95 < limits.modelled_pct < 100


def test_the_memory_bound_ops_run_against_hbm(gpu_train):
    _, _, limits = gpu_train
    softmax = next(r for r in limits.rows if r.op == "aten::_log_softmax")
    assert softmax.kind == counts.SOFTMAX and softmax.limit == P.HBM and softmax.bytes == 4 * 16384 * 32768 * (4 + 4)
    # No op moves its minimal bytes faster than HBM's peak, no matrix product beats its unit's.
    assert all(r.bytes_pct is None or r.bytes_pct < 100 for r in limits.rows)
    assert all(r.flop_pct < 100 for r in limits.rows if r.kind in counts.TENSOR_KINDS)


def test_fusion_edits_each_chain_into_one_kernel(gpu_train):
    data, _, limits = gpu_train
    edits = remedies.kernel_edits(limits, remedies.FUSION)
    # 16 of its 160 runs (3 ops, a reduction over rows too long to keep on chip whose result the next ops use) would
    # move more fused, their rows read again (67.1 MB against 39.9 MB): they are left as they are.
    fused = [c for c in limits.chains if c.fused_kernel_bytes < c.bytes]
    assert (len(limits.chains), len(fused)) == (160, 144)
    assert {(c.ops, c.passes, c.bytes, c.fused_kernel_bytes) for c in limits.chains if c.fused_kernel_bytes >= c.bytes} == {(3, 2, 39_854_080, 67_112_960)}
    assert len(edits) == sum(c.kernels for c in fused) and len(edits.removed) == len(edits) - len(fused)
    for chain in limits.chains:
        assert chain.fused_bytes < chain.bytes  # one pass always moves less
    first = limits.chains[0]
    at = dict(edits.as_dict())
    assert at[int(first.rows[0])] == round(first.fused_bytes / first.bytes_per_s * 1e9)
    prediction = remedies.predict(limits, remedies.FUSION)
    assert prediction.step_ns == pytest.approx(limits.step_ns - edits.saved_ns / limits.steps)
    # Mixed precision already: nothing to lower.
    assert remedies.predict(limits, remedies.LOWER_PRECISION) is None
    assert len(remedies.kernel_edits(limits, remedies.LOWER_PRECISION)) == 0
    with pytest.raises(ValueError):
        remedies.kernel_edits(limits, "faster")


def test_a_capture_without_shapes_has_no_op_limits():
    data, _ = readers.read(KINETO / "cost_gpu_train_backtrace1.sqlite.gz")  # autograd-nvtx: op ranges, no sizes
    assert data.ops is not None and not (data.ops["shapes"].codes >= 0).any()
    assert analysis.measure(data, steps_module.measure(data)) is None


def test_the_json_is_clean(gpu_train):
    _, _, limits = gpu_train
    doc = limits.to_json()
    text = json.dumps(doc, allow_nan=False)
    assert "NaN" not in text and "Infinity" not in text
    assert set(doc) >= {"step_flop", "step_bytes", "step_min_bytes", "achieved_tflops", "peak_tflops", "dtype", "ops"}
    assert set(doc["ops"][0]) >= {"op", "calls", "time_ns", "flop", "bytes", "achieved_flops", "achieved_bytes_per_s", "limit", "pct_of_limit"}
    assert doc["achieved_tflops"] == pytest.approx(limits.achieved_flops / 1e12, rel=1e-4)
    assert math.isclose(doc["step_min_bytes"], limits.step_min_bytes)


# SYNTHETIC DATA: the real gpu_train trace with hostile shapes written into its ops' args.
HOSTILE_DIMS = [[[2**70, 2]], [[-4, 8]], [[1.5e300, 2]], "not a list", [[[[[[[[[[1]]]]]]]]]], [[2**40, 2**40, 2**40]], [[0, 1024]], None,
                [[]] * 5000]


def _hostile_trace(tmp_path) -> Path:
    import gzip

    doc = json.loads(gzip.decompress(GPU_TRAIN.read_bytes()))
    ops = [e for e in doc["traceEvents"] if e.get("cat") == "cpu_op" and "Input Dims" in (e.get("args") or {})]
    for i, e in enumerate(ops[:2000]):
        args = e["args"]
        args["Input Dims"] = HOSTILE_DIMS[i % len(HOSTILE_DIMS)]
        if i % 3 == 0:
            args["Input type"] = ["c10::Weird<float>", 7, None]
        if i % 5 == 0:
            args["Concrete Inputs"] = ["[1, 2", "True", {"a": 1}]
    # Deep nesting (within orjson's 1,024 levels) and a number past a double, as raw text: the reader keeps an op's
    # shapes as text, and a text that does not parse reads as none.
    text = json.dumps(doc).replace('"Input Dims": null', '"Input Dims": ' + "[" * 300 + "]" * 300, 1).replace('"not a list"', "[[1e999]]", 1)
    path = tmp_path / "hostile.pt.trace.json"
    path.write_text(text, encoding="utf-8")
    return path


def test_hostile_shapes_never_raise_and_give_clean_json(tmp_path, capsys):
    from tests.conftest import run_cli

    path = _hostile_trace(tmp_path)
    data, _ = readers.read(path)
    assert (data.ops["shapes"].codes >= 0).sum() > 1000  # the hostile texts are kept (one over 64 KiB is not) and read below
    limits = analysis.measure(data, steps_module.measure(data))
    reasons = {u.reason for u in limits.unmodelled}
    assert "its operands' sizes are not recorded" in reasons or "its input's sizes are not recorded" in reasons
    code, out, err = run_cli(capsys, "timeline", str(path), "-f", "json")
    assert code == 0, err
    doc = json.loads(out)
    json.dumps(doc, allow_nan=False)
    assert all(math.isfinite(op["achieved_flops"]) and op["flop"] >= 0 for op in doc["op_limits"]["ops"])
