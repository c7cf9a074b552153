"""Fuzz of the op model's input surface (ncuwrap.timeline.oplimits): SYNTHETIC shapes texts, labelled so.

A trace's op shapes reach the FLOP and byte counts: absurd dims, 0-size and negative sizes, products past any
double, unknown dtypes, texts of any layout. Whatever they hold, the counting ends without raising, and every
count is an integer or said unknown, never NaN or infinite. The same shapes, with any kernel name, grid and SM count,
reach the advice on matrix products far below their limit: it ends, and every number it gives, in the JSON and in
the words every format shows, is finite.
"""

from __future__ import annotations

import json
import math
import re

import numpy as np

from hypothesis import given
from hypothesis import strategies as st

from ncuwrap.render import op_limits as R
from ncuwrap.timeline.oplimits import counts as C
from ncuwrap.timeline.oplimits.advice import advise, kernel_tile, tiling
from ncuwrap.timeline.oplimits.inputs import parse
from ncuwrap.timeline.oplimits.model import OpRow
from tests.test_fuzz import fuzz

DIMS = st.lists(st.one_of(st.integers(-2, 8), st.integers(0, 2**64), st.floats(allow_nan=True), st.text(max_size=3), st.booleans(),
                          st.none()), max_size=6)
TYPES = st.sampled_from(["float", "c10::BFloat16", "c10::Half", "c10::Float8_e4m3fn", "double", "int", "long int", "bool",
                         "c10::qint8", "", "Scalar", "TensorList", "??"])
NAMES = st.sampled_from(sorted(C.COUNTERS) + ["aten::unknown_op", ""])


@st.composite
def shapes_texts(draw):
    n = draw(st.integers(0, 5))
    dims = [draw(DIMS) for _ in range(n)]
    types = [draw(TYPES) for _ in range(n)]
    strides = [draw(DIMS) for _ in range(n)]
    concrete = [draw(st.one_of(st.just(""), st.integers(-10, 10), st.booleans(), st.text(max_size=4))) for _ in range(n)]
    doc = draw(st.sampled_from(["ok", "ok", "short", "nested"]))
    if doc == "short":
        return json.dumps([dims, types])
    if doc == "nested":
        return json.dumps([[dims], types, strides, concrete])
    return json.dumps([dims, types, strides, concrete])


def _finite(value) -> bool:
    return value is None or isinstance(value, int) or (isinstance(value, float) and math.isfinite(value))


@fuzz(300)
@given(name=NAMES, text=shapes_texts(), hint=st.one_of(st.none(), TYPES))
def test_fuzz_op_counts(name, text, hint):
    inputs = parse(text)
    work = C.count(name, inputs, hint)
    if work is None or isinstance(work, C.NotModelled):
        return
    assert _finite(work.flop) and _finite(work.bytes)
    assert (work.flop or 0) >= 0 and (work.bytes or 0) >= 0


# -- the advice on matrix products far below their limit (ncuwrap.timeline.oplimits.advice) ----------------------------

SIZES = st.sampled_from([0, 1, 3, 7, 8, 16, 100, 1000, 4096, 2**31, 2**50, 2**62, 1, 8, 64, 256, 1024])
FLOAT_TYPES = st.sampled_from(["float", "c10::BFloat16", "c10::Half", "c10::Float8_e4m3fn", "double", "int", "??", ""])
MATMULS = st.sampled_from(["aten::mm", "aten::addmm", "aten::bmm", "aten::baddbmm", "aten::matmul", "aten::linear", "aten::_scaled_mm", "aten::mv"])
_TILED = st.builds("nvjet_sm90_tst_{}x{}_{}x{}_1x2_h_bz_{}_NNT".format, SIZES, SIZES, SIZES, SIZES, st.sampled_from(["coopA", "splitK", "streamK"]))
_CUTLASS = st.builds("void cutlass::Kernel2<cutlass_80_simt_sgemm_{0}x{1}_{2}x{3}_tn_align1>(cutlass_80_simt_sgemm_{0}x{1}_{2}x{3}_tn_align1::Params)".format,
                     SIZES, SIZES, SIZES, SIZES)
KERNELS = st.one_of(st.none(), st.text(max_size=60), _TILED, _CUTLASS, st.sampled_from([
    "sm90_xmma_gemm_f32f32_tf32f32_f32_nn_n_tilesize128x256x32_warpgroupsize2x1x1_execute_segment_k_off_kernel__5x_cublas",
    "sm80_xmma_gemm_f32f32_f32f32_f32_nt_n_tilesize32x32x8_stage3_warpsize1x2x1_ffma_aligna4_alignc4_execute_kernel__5x_cublas",
    "cutlass3x_sm90_tensorop_gemm_bf16_bf16_f32_bf16_bf16_128x256x64_1x2x1_0_tnn_align8_warpspecialized_cooperative_epi_tma",
    "void gemv2T_kernel_val<int, int, float, float, float, float, 128, 16, 2, 2, false, false>(float, float)"]))
GRIDS = st.one_of(st.none(), st.sampled_from([(2, 66, 1), (132, 1, 1), (1, 1, 2), (-1, -1, -1)]),
                  st.tuples(*[st.one_of(st.integers(-1, 3), st.integers(0, 2**31), st.just(2**62))] * 3))


_LAYOUTS = {"aten::mm": "mk kn", "aten::matmul": "mk kn", "aten::_scaled_mm": "mk kn", "aten::linear": "mk nk n", "aten::addmm": "n mk kn",
            "aten::bmm": "bmk bkn", "aten::baddbmm": "bmn bmk bkn", "aten::mv": "mk k"}


@st.composite
def matmul_texts(draw, name: str):
    """A shapes text of ``name``'s operands (SYNTHETIC): m, n, k and a batch of absurd and ordinary sizes, one dtype or
    several, strides of any kind, and the values _scaled_mm reads."""
    size = dict(zip("mnkb", (draw(SIZES) for _ in range(4))))
    dims = [[size[c] for c in operand] for operand in _LAYOUTS[name].split()]
    same = draw(FLOAT_TYPES)
    types = [draw(FLOAT_TYPES) if draw(st.booleans()) else same for _ in dims]
    strides = [[draw(st.sampled_from([0, 1, 8, 2**40])) for _ in d] for d in dims]
    extra = [[]] * 3
    values = [""] * len(dims) + [draw(st.sampled_from(["15", "6", "99", "x"])), "15", "False"]  # _scaled_mm's out_dtype among them
    return json.dumps([dims + extra, types + ["Scalar"] * 3, strides + extra, values])


def _clean_text(text: str) -> bool:
    return re.search(r"\b(nan|inf|infinity)\b", text, re.I) is None


@fuzz(300)
@given(data=st.data(), name=MATMULS, hint=st.one_of(st.none(), st.sampled_from(["fp32", "bf16", "fp8_e4m3"])),
       kernel=KERNELS, grid=GRIDS, sms=st.one_of(st.none(), st.sampled_from([0, 1, 132]), st.integers(0, 2**40)),
       fraction=st.sampled_from([1e-9, 1e-3, 0.1, 0.3, 0.49, 0.5, 1.5]), calls=st.sampled_from([0, 1, 3, 10**6]),
       peaked=st.sampled_from([True, True, True, False]), kernel_share=st.sampled_from([0.0, 0.005, 0.01, 0.3, 1.0]))
def test_fuzz_matmul_advice_is_finite_in_every_format(data, name, hint, kernel, grid, sms, fraction, calls, peaked, kernel_share):
    text = data.draw(st.one_of(matmul_texts(name), shapes_texts()))
    work = C.count(name, parse(text), hint)
    if not isinstance(work, C.Work):
        return
    peak, bandwidth = (66.9e12, 4.8e12) if peaked else (None, None)
    time_ns = max(1, int(work.flop * calls / (fraction * peak) * 1e9)) if peaked and work.flop else 1000  # at ``fraction`` of the peak
    row = OpRow(op=name, shapes=work.shapes, kind=work.kind, dtype=work.dtype, dtype_how="recorded", forward_op=None, calls=calls, kernels=calls,
                time_ns=time_ns, flop=work.flop * calls, bytes=work.bytes * calls if work.bytes is not None else None, unit="fp32", unit_how="",
                peak_flops=peak, peak_bytes_per_s=bandwidth, share_pct=50.0, gemm=work.gemm, kernel=kernel, grid=grid)
    found = advise((row,), max(1, int(time_ns / max(kernel_share, 1e-9))), sms)
    for a in found:
        json.dumps(a.to_json(), allow_nan=False)
        texts = [R.advice_head(a), R.tiling_text(a)] + [t for pair in R.cause_lines(a) for t in pair]
        assert all(_clean_text(t) for t in texts), texts
        for cause in a.causes:
            assert all(_finite(v) for v in cause.to_json().values() if isinstance(v, (int, float)) and not isinstance(v, bool))
    if work.gemm is not None and kernel is not None:
        shape = tiling(work.gemm, kernel, grid, sms)
        json.dumps(shape.to_json(), allow_nan=False)
        assert shape.waves is None or (shape.waves >= 1 and 0 < shape.last_wave <= shape.slots)
        assert shape.padded_pct is None or 0 <= shape.padded_pct < 100


@fuzz(200)
@given(name=st.one_of(st.text(max_size=200), _TILED, _CUTLASS, KERNELS.filter(lambda k: k is not None)))
def test_fuzz_kernel_tile_names(name):
    tile = kernel_tile(name)
    assert tile is None or (0 < tile.rows <= 4096 and 0 < tile.cols <= 4096 and tile.word in name)


# -- nsys's dataflow: op_id and input_op_ids (ncuwrap.timeline.readers.pytorch_nvtx), a reduction's readers' sizes ---

_ID = st.one_of(st.integers(-3, 50), st.integers(0, 2**70), st.just(0), st.sampled_from(["x", "", "1.5", "-", "0x1f"]))
_PAIRS = st.lists(st.tuples(_ID, _ID), max_size=6)


@st.composite
def range_names(draw):
    """An autograd-shapes-nvtx range name: an op, an op_id, sizes and input_op_ids, each well formed or not, truncated
    anywhere."""
    sizes = draw(st.lists(DIMS, max_size=6))
    pairs = draw(_PAIRS)
    spacing = draw(st.sampled_from([", ", ",", " , "]))
    ids = "[" + ", ".join(f"({a}{spacing}{b})" for a, b in pairs) + "]"
    text = f"{draw(NAMES)}, op_id = {draw(_ID)}, sizes = {json.dumps(sizes)}, input_op_ids = {ids}"
    cut = draw(st.one_of(st.none(), st.integers(0, len(text))))
    return text if cut is None else text[:cut]


@fuzz(300)
@given(names=st.lists(range_names(), min_size=1, max_size=8), tids=st.lists(st.integers(0, 3), min_size=8, max_size=8),
       output=st.one_of(st.none(), st.lists(st.integers(0, 2**40), max_size=5).map(tuple)), data=st.data())
def test_fuzz_input_op_ids(names, tids, output, data):
    """Whatever the range names hold, reading them ends, every link is a known producer (an op_id in (0, 2**62), an output
    >= 0) at an input the op's sizes have, and a reduction given any readers' sizes counts finite, non-negative work."""
    from ncuwrap.timeline.events import Events, Labels
    from ncuwrap.timeline.oplimits import dataflow
    from ncuwrap.timeline.readers import pytorch_nvtx

    n = len(names)
    nvtx = Events({"start": [10 * i for i in range(n)], "end": [10 * i + 5 for i in range(n)], "name": Labels.of(names),
                   "tid": [float(t) for t in tids[:n]]})
    ops, links = pytorch_nvtx.read(nvtx)
    if links is not None:
        assert ops is not None and len(links) and (links["op"] < len(ops)).all() and (links["op"] >= 0).all()
        assert ((links["producer"] > 0) & (links["producer"] < pytorch_nvtx.MAX_OP_ID)).all() and (links["output"] >= 0).all()
        assert (links["input"] >= 0).all()
        rows = np.arange(len(ops))
        sizes = dataflow.output_sizes(_Data(ops, links), rows[: data.draw(st.integers(1, len(ops)))])
        assert sizes is None or all(isinstance(d, int) and d >= 0 for d in sizes)
    for text in names:
        assert pytorch_nvtx.op_id(text) == -1 or 0 < pytorch_nvtx.op_id(text) < pytorch_nvtx.MAX_OP_ID
    inputs = parse(f"[{json.dumps(data.draw(st.lists(DIMS, max_size=4)))},null,null,null]")
    for name in ("aten::sum", "aten::mean", "aten::amax", "aten::max", "aten::_softmax"):
        work = C.count(name, inputs, "fp32", C.KernelFacts(output=output, last_dim=True))
        if work is None or isinstance(work, C.NotModelled):
            continue
        assert _finite(work.flop) and _finite(work.bytes) and _finite(work.row) and _finite(work.written)
        assert work.flop >= 0 and work.bytes >= 0 and (work.row is None or work.row >= 0)


class _Data:
    def __init__(self, ops, links):
        self.ops, self.op_inputs = ops, links
