"""The op limits' counting (issue 51): an op's inputs read from the shapes text (ncuwrap.timeline.oplimits.inputs),
its FLOPs and minimal bytes (ncuwrap.timeline.oplimits.counts), the peaks (ncuwrap.core.peaks) and the precision a
kernel's name says.

SYNTHETIC DATA: the shapes texts here are written by hand in the layouts the readers give (a PyTorch profiler
trace's [dims, types, strides, concrete]; nsys's sizes alone), each count checked against its formula worked out
by hand. The counts on real captures are checked in tests/test_oplimits.py.
"""

from __future__ import annotations

import math

import orjson
import pytest

from ncuwrap.core import peaks as P
from ncuwrap.timeline.oplimits import counts as C
from ncuwrap.timeline.oplimits.analysis import kernel_dtype
from ncuwrap.timeline.oplimits.inputs import MAX_ELEMENTS, Tensor, TensorList, Value, parse

F32, BF16 = "float", "c10::BFloat16"


def kineto(*args) -> str:
    """A PyTorch profiler trace's shapes text of ``args``: (dims, type[, strides]) for a tensor, ("", value) for a value."""
    dims, types, strides, concrete = [], [], [], []
    for a in args:
        if isinstance(a[0], list):
            dims.append(a[0]), types.append(a[1]), strides.append(a[2] if len(a) > 2 else _contiguous(a[0])), concrete.append("")
        else:
            dims.append([]), types.append("Scalar" if a[1] != "" else ""), strides.append([]), concrete.append(a[1])
    return orjson.dumps([dims, types, strides, concrete]).decode()


def _contiguous(dims):
    out, step = [], 1
    for d in reversed(dims):
        out.append(step)
        step *= d
    return out[::-1]


def nsys(*sizes) -> str:
    return orjson.dumps([list(sizes), None, None, None]).decode()


def work(name, text, hint=None):
    result = C.count(name, parse(text), hint)
    assert isinstance(result, C.Work), result
    return result


# -- reading the inputs ----------------------------------------------------------------------------

def test_a_profiler_trace_gives_tensors_values_and_lists():
    x = parse(orjson.dumps([[[2, 3], [], [[4], [5, 6]]], [BF16, "Scalar", "TensorList"], [[3, 1], [], [[1], [6, 1]]], ["", "1.5", ""]]).decode())
    assert x.full
    assert x.args[0] == Tensor((2, 3), "bf16", (3, 1), BF16)
    assert x.args[1] == Value("1.5") and x.value(1).number() == 1.5
    assert x.args[2] == TensorList((Tensor((4,), None, (1,)), Tensor((5, 6), None, (6, 1))))
    assert [t.numel for t in x.tensors()] == [6, 4, 30]


def test_nsys_sizes_alone_leave_dtypes_and_values_unknown():
    x = parse(nsys([6144, 1024], [], [4096]))
    assert not x.full
    assert x.args[0] == Tensor((6144, 1024)) and x.args[1] is None and x.tensor(2).dims == (4096,)
    assert x.dtype() is None


def test_an_expanded_input_is_read_once():
    t = parse(kineto(([16384, 1024], "long int", [1, 0]))).tensor(0)
    assert t.numel == 16384 * 1024 and t.stored == 16384 and t.nbytes() == 16384 * 8


@pytest.mark.parametrize("text", [None, "", "not json", "{}", "[1, 2, 3]", "[[1], null, null, null, 5]", '"[[[2]]]"'])
def test_a_text_not_of_the_layout_reads_as_no_inputs(text):
    assert parse(text) is None


@pytest.mark.parametrize("dims", [[-1, 4], [2**62, 2], [1.5, 2], ["8", 2], [True, 2], [2] * 17, [2**30, 2**30]])
def test_hostile_sizes_make_that_input_unknown(dims):
    x = parse(kineto((dims, F32, [1] * len(dims)), ([4], F32)))
    assert x.args[0] is None and x.tensor(1).dims == (4,)
    # Counting an op with it says the sizes are not recorded, never raises.
    assert isinstance(C.count("aten::mm", x), C.NotModelled)


def test_a_count_past_a_double_stays_an_integer():
    big = [2**25, 2**25]  # 2**50 elements: the largest tensor read
    x = parse(kineto((big, F32), (big, F32)))
    w = C.count("aten::add", x)
    assert w.flop == 2**50 and w.bytes == 3 * 4 * 2**50 and math.prod(big) == MAX_ELEMENTS
    mm = C.count("aten::mm", parse(kineto((big, F32), (big, F32))))
    assert mm.flop == 2 * 2**75 and isinstance(mm.flop, int)


def test_an_unknown_dtype_is_said_unknown_not_guessed():
    x = parse(kineto(([8, 8], "c10::qint8"), ([8, 8], "c10::qint8")))
    assert x.tensor(0).dtype is None and x.tensor(0).type_name == "c10::qint8"
    w = C.count("aten::mm", x)
    assert w.flop == 2 * 8**3 and w.bytes is None and w.dtype is None


def test_strides_of_another_rank_are_ignored():
    t = parse(kineto(([4, 4], F32, [4]))).tensor(0)
    assert t.strides is None and t.stored == 16


# -- matrix products -------------------------------------------------------------------------------

def test_mm_counts_two_flop_per_multiply_add_and_each_operand_once():
    w = work("aten::mm", kineto(([6144, 1024], F32), ([1024, 4096], F32)))
    assert w.kind == C.MATMUL and w.flop == 2 * 6144 * 1024 * 4096
    assert w.bytes == 4 * (6144 * 1024 + 1024 * 4096 + 6144 * 4096) and w.dtype == "fp32"
    assert w.shapes == "6144x1024 @ 1024x4096"


def test_addmm_adds_the_bias_once_per_output():
    w = work("aten::addmm", kineto(([4096], BF16), ([6144, 1024], BF16), ([1024, 4096], BF16, [1, 1024]), ("", "1"), ("", "1")))
    assert w.flop == 2 * 6144 * 1024 * 4096 + 6144 * 4096
    assert w.bytes == 2 * (4096 + 6144 * 1024 + 1024 * 4096 + 6144 * 4096) and w.dtype == "bf16"


def test_bmm_baddbmm_matmul_and_linear():
    assert work("aten::bmm", kineto(([8, 64, 32], F32), ([8, 32, 16], F32))).flop == 2 * 8 * 64 * 32 * 16
    assert work("aten::baddbmm", kineto(([8, 64, 16], F32), ([8, 64, 32], F32), ([8, 32, 16], F32))).flop == 2 * 8 * 64 * 32 * 16 + 8 * 64 * 16
    # matmul broadcasts the batch: [2, 1, 64, 32] @ [3, 32, 16] is 6 products.
    assert work("aten::matmul", kineto(([2, 1, 64, 32], F32), ([3, 32, 16], F32))).flop == 2 * 6 * 64 * 32 * 16
    # linear: [16, 1024, 1024] by a [3072, 1024] weight and a bias.
    lin = work("aten::linear", kineto(([16, 1024, 1024], F32), ([3072, 1024], F32), ([3072], F32)))
    assert lin.flop == 2 * 16 * 1024 * 1024 * 3072 + 16 * 1024 * 3072


def test_matrix_products_that_do_not_multiply_are_not_modelled():
    assert isinstance(C.count("aten::mm", parse(kineto(([4, 5], F32), ([6, 7], F32)))), C.NotModelled)
    assert isinstance(C.count("aten::bmm", parse(kineto(([2, 4, 5], F32), ([3, 5, 7], F32)))), C.NotModelled)


def test_scaled_mm_takes_fp8_operands_and_the_out_dtype():
    e4m3 = "c10::Float8_e4m3fn"
    text = kineto(([4096, 8192], e4m3), ([8192, 2048], e4m3, [1, 8192]), ([], F32), ([], F32), ("", ""), ("", ""), ("", "15"), ("", "False"))
    w = work("aten::_scaled_mm", text)
    assert w.dtype == "fp8_e4m3" and w.flop == 2 * 4096 * 8192 * 2048
    assert w.bytes == 4096 * 8192 + 8192 * 2048 + 2 * 4096 * 2048 + 4 + 4  # fp8 operands, a bf16 result, two fp32 scales


def test_nsys_matrix_products_take_the_kernels_dtype():
    w = work("aten::mm", nsys([6144, 1024], [1024, 4096]), hint="bf16")
    assert w.flop == 2 * 6144 * 1024 * 4096 and w.bytes == 2 * (6144 * 1024 + 1024 * 4096 + 6144 * 4096) and w.dtype == "bf16"
    assert work("aten::mm", nsys([8, 8], [8, 8])).bytes is None


# -- convolutions ----------------------------------------------------------------------------------

def test_cudnn_convolution_from_stride_padding_and_dilation():
    # [32, 64, 56, 56] by [128, 64, 3, 3], stride 2, padding 1: a 28x28 output.
    text = kineto(([32, 64, 56, 56], F32), ([128, 64, 3, 3], F32), ("", "[1, 1]"), ("", "[2, 2]"), ("", "[1, 1]"), ("", "1"),
                  ("", "False"), ("", "False"), ("", "True"))
    w = work("aten::cudnn_convolution", text)
    out = 32 * 128 * 28 * 28
    assert w.kind == C.CONV and w.flop == 2 * out * 64 * 9 and w.allow_tf32 is True
    assert w.bytes == 4 * (32 * 64 * 56 * 56 + 128 * 64 * 9 + out)
    assert w.shapes.endswith("-> 32x128x28x28")


def test_grouped_convolution_counts_its_groups_channels():
    # Depthwise: 64 groups, weight [64, 1, 3, 3], stride 1, padding 1.
    text = kineto(([8, 64, 32, 32], F32), ([64, 1, 3, 3], F32), ([64], F32), ("", "[1, 1]"), ("", "[1, 1]"), ("", "[1, 1]"),
                  ("", "False"), ("", "[0, 0]"), ("", "64"))
    w = work("aten::convolution", text)
    out = 8 * 64 * 32 * 32
    assert w.flop == 2 * out * 1 * 9 + out


def test_convolution_backward_needs_no_stride():
    text = kineto(([32, 128, 28, 28], F32), ([32, 64, 56, 56], F32), ([128, 64, 3, 3], F32), ("", "[128]"), ("", "[2, 2]"), ("", "[1, 1]"),
                  ("", "[1, 1]"), ("", "False"), ("", "[0, 0]"), ("", "1"), ("", "[True, True, False]"))
    w = work("aten::convolution_backward", text)
    assert w.flop == 2 * 2 * (32 * 128 * 28 * 28) * 64 * 9


def test_nsys_convolution_forward_lacks_its_stride():
    got = C.count("aten::cudnn_convolution", parse(nsys([32, 64, 56, 56], [128, 64, 3, 3], [], [], [], [], [], [], [])))
    assert isinstance(got, C.NotModelled) and "nsys does not record them" in got.reason


# -- attention -------------------------------------------------------------------------------------

Q = [4, 16, 2048, 64]  # [B, H, L, E]


@pytest.mark.parametrize("causal, pairs", [("True", 2048 * 2049 // 2), ("False", 2048 * 2048)])
def test_sdpa_counts_the_pairs_its_mask_keeps(causal, pairs):
    text = kineto((Q, BF16), (Q, BF16), (Q, BF16), ("", ""), ("", "0."), ("", causal), ("", ""), ("", "False"))
    w = work("aten::scaled_dot_product_attention", text)
    assert w.kind == C.ATTENTION and w.flop == 4 * 4 * 16 * pairs * 64
    assert w.bytes == 2 * 4 * math.prod(Q) + 4 * 4 * 16 * 2048  # q, k, v, out, and the fp32 log-sum-exp


def test_flash_layout_puts_the_heads_third():
    flash = [4, 2048, 16, 64]  # [B, L, H, E]
    args = [(flash, BF16)] * 3 + [("", "")] * 4 + [("", "0."), ("", "True")]
    w = work("aten::_flash_attention_forward", kineto(*args))
    assert w.flop == 4 * 4 * 16 * (2048 * 2049 // 2) * 64


def test_attention_backward_is_five_products():
    args = [(Q, BF16)] * 5 + [([4, 16, 2048], F32)] + [("", "")] * 4 + [("", "0."), ("", "True")]
    w = work("aten::_scaled_dot_product_flash_attention_backward", kineto(*args))
    assert w.flop == 2 * 4 * 16 * (2048 * 2049 // 2) * (3 * 64 + 2 * 64)


def test_grouped_query_attention_multiplies_the_query_heads():
    k = [4, 4, 2048, 64]
    text = kineto((Q, BF16), (k, BF16), (k, BF16), ("", ""), ("", "0."), ("", "False"), ("", ""), ("", "True"))
    w = work("aten::scaled_dot_product_attention", text)
    assert w.flop == 4 * 4 * 16 * 2048 * 2048 * 64
    assert w.bytes == 2 * (math.prod(Q) + 2 * math.prod(k) + math.prod(Q)) + 4 * 4 * 16 * 2048


def test_efficient_attention_reads_its_mask_type():
    flash = [4, 2048, 16, 64]
    base = [(flash, BF16)] * 3 + [("", "")] * 5 + [("", "0.")]
    assert work("aten::_efficient_attention_forward", kineto(*base, ("", "1"))).flop == 4 * 4 * 16 * (2048 * 2049 // 2) * 64
    assert work("aten::_efficient_attention_forward", kineto(*base, ("", "0"))).flop == 4 * 4 * 16 * 2048 * 2048 * 64
    assert isinstance(C.count("aten::_efficient_attention_forward", parse(kineto(*base, ("", "2")))), C.NotModelled)


def test_nsys_attention_does_not_know_its_mask():
    got = C.count("aten::scaled_dot_product_attention", parse(nsys(Q, Q, Q, [], [], [], [], [])))
    assert isinstance(got, C.NotModelled) and "causal" in got.reason


# -- memory-bound ops ------------------------------------------------------------------------------

def test_elementwise_broadcasts_and_counts_each_input_once():
    w = work("aten::add", kineto(([4096, 1024], F32), ([1024], F32), ("", "1")))
    assert w.kind == C.ELEMENTWISE and w.flop == 4096 * 1024
    assert w.bytes == 4 * (4096 * 1024 + 1024 + 4096 * 1024) and w.written == 4 * 4096 * 1024


def test_in_place_writes_its_first_input():
    w = work("aten::mul_", kineto(([4096, 1024], BF16), ([], F32)))
    assert w.written == 2 * 4096 * 1024 and w.bytes == 2 * 4096 * 1024 + 4 + 2 * 4096 * 1024


def test_copy_and_cast_move_bytes_with_no_flop():
    w = work("aten::copy_", kineto(([1024, 1024], BF16), ([1024, 1024], F32), ("", "False")))
    assert w.kind == C.COPY and w.flop == 0 and w.bytes == 4 * 1024 * 1024 + 2 * 1024 * 1024
    cast = work("aten::_to_copy", kineto(([1024], F32), ("", "15"), ("", ""), ("", ""), ("", ""), ("", "False"), ("", "")))
    assert cast.bytes == 1024 * (4 + 2)


def test_fill_only_writes_and_a_comparison_writes_bools():
    assert work("aten::fill_", kineto(([1 << 20], F32), ("", "0"))).bytes == 4 << 20
    assert work("aten::gt", kineto(([1 << 20], F32), ("", "0"))).bytes == (4 << 20) + (1 << 20)


def test_reductions_write_what_is_kept():
    w = work("aten::sum", kineto(([16384, 1024], BF16), ("", "[0]"), ("", "True"), ("", "")))
    assert w.kind == C.REDUCTION and w.flop == 16384 * 1024 and w.bytes == 2 * (16384 * 1024 + 1024)
    whole = work("aten::sum", kineto(([64, 64], F32), ("", "")))
    assert whole.bytes == 4 * (64 * 64 + 1)
    assert isinstance(C.count("aten::sum", parse(nsys([64, 64], []))), C.NotModelled)


def test_layer_norm_writes_its_output_and_row_statistics():
    w = work("aten::native_layer_norm", kineto(([16, 1024, 1024], BF16), ("", "[1024]"), ([1024], BF16), ([1024], BF16), ("", "1e-05")))
    rows = 16 * 1024
    assert w.kind == C.NORM and w.written == 2 * rows * 1024 + 4 * 2 * rows
    assert w.bytes == 2 * rows * 1024 + 2 * 2 * 1024 + w.written


def test_softmax_and_its_backward():
    assert work("aten::_softmax", kineto(([4096, 4096], BF16), ("", "-1"), ("", "True"))).bytes == 4096 * 4096 * (2 + 4)
    back = work("aten::_softmax_backward_data", kineto(([4096, 4096], F32), ([4096, 4096], F32), ("", "-1"), ("", "15")))
    assert back.bytes == 4096 * 4096 * (4 + 4 + 2)
    # Its dim is its third argument (after grad_output and output): the row it reduces over, as the forward's.
    assert back.row == 4096
    assert work("aten::_softmax_backward_data", kineto(([8, 4096], F32), ([8, 4096], F32), ("", "0"), ("", "6"))).row == 8


def test_embedding_and_its_backward():
    assert work("aten::index_select", kineto(([32768, 1024], F32), ("", "0"), ([16384], "long int"))).bytes == 16384 * 8 + 2 * 4 * 16384 * 1024
    back = work("aten::embedding_dense_backward", kineto(([16, 1024, 1024], F32), ([16, 1024], "long int"), ("", "32768"), ("", "-1"), ("", "False")))
    assert back.bytes == 4 * 16 * 1024 * 1024 + 8 * 16 * 1024 + 4 * 32768 * 1024


def test_lists_whose_sizes_are_not_recorded_are_said_so():
    # As gpu_train.pt.trace.json.gz records AdamW(fused=True) over its 51 parameters: no list's sizes.
    text = ('[[[],[],[],[],[],[],[],[],[],[],[],[],[],[],[]],["TensorList","TensorList","TensorList","TensorList","TensorList","TensorList",'
            '"Scalar","Scalar","Scalar","Scalar","Scalar","Scalar","Scalar","",""],[[],[],[],[],[],[],[],[],[],[],[],[],[],[],[]],'
            '["","","","","","","0.0001","0.90000000000000002","0.999","0.01","1e-08","False","False","",""]]')
    got = C.count("aten::_fused_adamw_", parse(text))
    assert isinstance(got, C.NotModelled) and "at most 30" in got.reason


def test_fused_adam_reads_four_lists_and_writes_three():
    lists = [[[1024, 1024], [1024]]] * 5
    values = ["0.001", "0.9", "0.999", "0.01", "1e-08", "False", "False"]  # lr, betas, weight decay, eps, amsgrad, maximize
    text = orjson.dumps([lists[:4] + [[], []] + [[]] * 7, ["TensorList"] * 6 + ["Scalar"] * 7, [[[1024, 1], [1]]] * 4 + [[], []] + [[]] * 7,
                         [""] * 6 + values]).decode()
    w = work("aten::_fused_adamw_", text, hint="fp32")
    n = 1024 * 1024 + 1024
    assert w.bytes == 4 * n * (4 + 3) and w.written == 4 * n * 3


def test_an_op_with_no_formula_is_none():
    assert C.count("aten::cumsum", parse(kineto(([8], F32)))) is None
    assert isinstance(C.count("aten::mm", None), C.NotModelled)


# -- units and peaks -------------------------------------------------------------------------------

def test_the_h200s_peaks_from_the_bundled_table():
    p = P.peaks(P.DeviceFacts(name="NVIDIA H200"))
    assert p.sm_count == 132 and p.sm_clock_hz == 1.98e9 and p.dram_bytes_per_s == 4.8e12
    assert p.of(P.FP32) == 256 * 132 * 1.98e9
    assert p.of(P.BF16_TENSOR) == 4096 * 132 * 1.98e9 == 16 * p.of(P.FP32)
    assert p.of(P.TF32_TENSOR) * 2 == p.of(P.FP16_TENSOR) == p.of(P.FP8_TENSOR) / 2
    assert p.sources == ("compute capability, SM count, maximum SM clock, memory bandwidth from the bundled table "
                         "(NVIDIA H200 Tensor Core GPU data sheet (H200 SXM: 4.8 TB/s HBM3e))",)


def test_what_the_capture_records_wins_over_the_table():
    facts = P.DeviceFacts(name="NVIDIA H200", cc="9.0", sm_count=132, sm_clock_hz=1.98e9, dram_bytes_per_s=4814304000000.0, recorded_by="nsys")
    p = P.peaks(facts)
    assert p.dram_bytes_per_s == 4814304000000.0 and p.sources == ("compute capability, SM count, maximum SM clock, memory bandwidth from nsys",)


def test_an_unknown_device_gets_no_peak():
    p = P.peaks(P.DeviceFacts(name="Some GPU"))
    assert p.of(P.FP32) is None and p.of(P.HBM) is None and p.sources == ()
    hostile = P.peaks(P.DeviceFacts(name="NVIDIA H200", sm_count=-5, sm_clock_hz=float("inf"), dram_bytes_per_s=float("nan")))
    assert hostile.sm_count == 132 and hostile.sm_clock_hz == 1.98e9 and hostile.dram_bytes_per_s == 4.8e12


@pytest.mark.parametrize("name, dtype", [
    # Real kernel names of the H200 captures (tests/data/h200_ncuwrap/kineto/gpu_train.pt.trace.json.gz).
    ("void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, std::array<char*, 3ul> >(int, "
     "at::native::CUDAFunctor_add<float>, std::array<char*, 3ul>)", "fp32"),
    ("void at::native::reduce_kernel<128, 4, at::native::ReduceOp<c10::BFloat16, at::native::func_wrapper_t<c10::BFloat16, "
     "at::native::sum_functor<c10::BFloat16, float, c10::BFloat16>", "bf16"),
    ("void at::native::(anonymous namespace)::CatArrayBatchedCopy<at::native::(anonymous namespace)::OpaqueType<2u>, unsigned int, 4, 64, 64>", "2-byte"),
    ("cudnn_generated_fort_native_sdpa_sm90_flash_fprop_wgmma_f16_knob_7_64x128x64_4x1x1_cga1x1x1_kernel0_0", None),
    ("sm90_xmma_gemm_f32f32_tf32f32_f32_tn_n_tilesize128x128x32_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas", "tf32"),
    ("ampere_sgemm_128x64_nn", "fp32"),
])
def test_the_precision_a_kernels_name_says(name, dtype):
    assert kernel_dtype(name) == dtype
