"""Why a matrix product runs far below its limit (issue 51, item 3): the tile and wave arithmetic by hand, the causes
named on real H200 captures with their numbers, the thresholds, and the section in every format.

The real captures (tests/data/h200_ncuwrap): kineto/host_prep.pt.trace.json.gz (a host-bound MLP, batch 256, fp32),
kineto/small_launch.pt.trace.json.gz (a launch-bound MLP of 32-row products), clock/kineto/decode_eager.pt.trace.json.gz
(token-by-token decoding: one-row products), and op_limits/ (the programs of issue 51, every product 62-80% of its peak).
"""

from __future__ import annotations

import html
import json
import math
import re
from pathlib import Path

import pytest

from ncuwrap.core import peaks as P
from ncuwrap.render import op_limits as R
from ncuwrap.timeline import readers
from ncuwrap.timeline import steps as steps_module
from ncuwrap.timeline.oplimits import analysis, counts
from ncuwrap.timeline.oplimits import advice as A
from ncuwrap.timeline.oplimits.inputs import parse
from ncuwrap.timeline.oplimits.model import FAR_BELOW_PCT, MIN_WORK_PCT, MatmulAdvice, OpRow
from tests import op_limits_checks as C
from tests.conftest import run_cli

DATA = Path(__file__).parent / "data" / "h200_ncuwrap"
HOST_PREP = DATA / "kineto" / "host_prep.pt.trace.json.gz"
SMALL = DATA / "kineto" / "small_launch.pt.trace.json.gz"
DECODE = DATA / "clock" / "kineto" / "decode_eager.pt.trace.json.gz"
H200_SMS = 132
H200 = P.peaks(P.DeviceFacts(name="NVIDIA H200"))


def _limits(path: Path):
    data, _ = readers.read(path)
    return analysis.measure(data, steps_module.measure(data))


# -- the tile a kernel's name says -------------------------------------------------------------------

@pytest.mark.parametrize("name, tile", [
    # cuBLAS nvjet (the H200 captures'): tile, k step x stages; the fp8 one, and one that splits k.
    ("nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_NNT", (256, 128, 64, 4, False)),
    ("nvjet_sm90_qqtst_144x128_128x6_1x2_h_bz_coopA_algo2_TNN", (144, 128, 128, 6, False)),
    ("nvjet_sm90_tst_128x128_64x6_1x2_h_bz_splitK_NTT", (128, 128, 64, 6, True)),
    # cuBLAS xmma: sm90 (no stage count in the name), sm80 (stage3).
    ("sm90_xmma_gemm_f32f32_tf32f32_f32_nn_n_tilesize128x256x32_warpgroupsize2x1x1_execute_segment_k_off_kernel__5x_cublas", (128, 256, 32, None, False)),
    ("sm80_xmma_gemm_f32f32_f32f32_f32_nt_n_tilesize32x32x8_stage3_warpsize1x2x1_ffma_aligna4_alignc4_execute_kernel__5x_cublas", (32, 32, 8, 3, False)),
    # CUTLASS 2 (as cuBLAS runs it, in a template argument) and CUTLASS 3.
    ("void cutlass::Kernel2<cutlass_80_simt_sgemm_128x64_8x5_tn_align1>(cutlass_80_simt_sgemm_128x64_8x5_tn_align1::Params)", (128, 64, 8, 5, False)),
    ("cutlass3x_sm90_tensorop_gemm_bf16_bf16_f32_bf16_bf16_128x256x64_1x2x1_0_tnn_align8_warpspecialized_cooperative_epi_tma",
     (128, 256, 64, None, False)),
    ("ampere_bf16_s16816gemm_bf16_128x64_ldg8_f2f_stages_32x5_nn", (128, 64, 32, 5, False)),
])
def test_the_tile_in_a_kernels_name(name, tile):
    t = A.kernel_tile(name)
    assert (t.rows, t.cols, t.k, t.stages, t.split_k) == tile and t.word in name


@pytest.mark.parametrize("name", [
    "void sgemm_largek_lds64<true, false, 5, 5, 4, 4, 4, 34>(float*, float const*, float const*, int, int, int, int, int, int, float const*, "
    "float const*, float, float, int, int, int*, int*)",
    "void gemv2T_kernel_val<int, int, float, float, float, float, 128, 16, 2, 2, false, false>(float, float)",
    "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, std::array<char*, 3ul> >(int, T2, T3)",
    "nvjet_sm90_tst_0x128_64x4_1x2_h_bz_NNT", "nvjet_sm90_tst_99999x128_64x4_1x2_h_bz_NNT", ""])
def test_a_name_that_says_no_tile(name):
    assert A.kernel_tile(name) is None


def test_the_gemm_among_an_ops_kernels():
    # The GEMM is the kernel whose name gives a tile, even where a split-K reduction or an epilogue beside it takes longer.
    names = ["void cublasLt::splitKreduce_kernel<32, 16, int, float>(float*)", "cutlass_80_simt_sgemm_64x64_8x5_nn_align1", "scal_kernel"]
    assert A.gemm_kernel(names, [5000, 3000, 9000]) == 1
    assert A.gemm_kernel(["scal_kernel", "sgemm_largek_lds64", "epilogue"], [780, 7610, 1200]) == 1  # no tile named: the most time
    assert A.gemm_kernel([], []) is None


# -- tiles, blocks and waves, by hand -----------------------------------------------------------------

def _gemm(m, n, k, batch=1, size=2):
    return counts.Gemm(batch, m, n, k, size * batch * m * k, size * batch * k * n, size * batch * m * n)


def test_a_persistent_kernels_waves_and_padding():
    # 8192^3 bf16 with nvjet's 320x128 tiles, launched as 2 x 66 blocks on 132 SMs (the matmul_bf16 capture):
    # ceil(8192/320) = 26 row tiles x 64 column tiles = 1,664 tiles; 1,664 / 132 = 12.6: 13 waves, the last with
    # 1,664 - 12 x 132 = 80; the waves' block time idle 1 - 1,664 / (13 x 132) = 3.03%; the tiles cover 26 x 320 = 8,320
    # rows for 8,192: 1 - 8,192 / 8,320 = 1.54% of their work is padding.
    t = A.tiling(_gemm(8192, 8192, 8192), "nvjet_sm90_tst_320x128_64x3_1x2_h_bz_coopB_NNT", (2, 66, 1), H200_SMS)
    assert (t.tiles, t.blocks, t.persistent, t.split, t.waves, t.last_wave) == (1664, 132, True, None, 13, 80)
    assert t.idle_pct == pytest.approx(100 * (1 - 1664 / 1716)) and t.padded_pct == pytest.approx(100 * (1 - 8192 / 8320))
    assert A._wave_tail(t) is None  # 3% idle: under NAMED_LOSS_PCT


def test_a_wave_with_one_tile_in_it():
    # 133 tiles of 128x128 on 132 persistent blocks: 2 waves, the second with one tile; 1 - 133 / 264 = 49.6% idle.
    t = A.tiling(_gemm(133 * 128, 128, 4096), "nvjet_sm90_tst_128x128_64x6_1x2_h_bz_coopA_NNT", (132, 1, 1), H200_SMS)
    tail = A._wave_tail(t)
    assert (tail.waves, tail.last, tail.slots, tail.tiles) == (2, 1, 132, 133) and tail.idle_pct == pytest.approx(100 * (1 - 133 / 264))


def test_split_k_and_too_little_work():
    # host_prep's first layer, 256x4096 @ 4096x1024 fp32, on CUTLASS's 128x64 tiles: 2 x 16 = 32 tiles; the kernel ran
    # 32 x 1 x 8 = 256 blocks: k split 8 ways. Waves: 256 blocks of a kernel that is not persistent on 132 SMs, how many an
    # SM runs at once not recorded: unknown. 132 tiles need ceil(132 / 16) = 9 row tiles: m = 9 x 128 = 1,152.
    gemm = _gemm(256, 1024, 4096, size=4)
    t = A.tiling(gemm, "cutlass_80_simt_sgemm_128x64_8x5_tn_align1", (32, 1, 8), H200_SMS)
    assert (t.tiles, t.split, t.persistent, t.waves) == (32, 8, False, None)
    few = A._few_tiles(gemm, t)
    assert (few.units, few.what, few.split, few.dim, few.size, few.need) == (32, "tiles", 8, "m", 256, 1152)
    # A batch of 4 products of 64x64 on 64x64 tiles: 4 tiles; 132 need a batch of 132.
    batched = _gemm(64, 64, 64, batch=4)
    few = A._few_tiles(batched, A.tiling(batched, "cutlass_80_tensorop_bf16_s16816gemm_bf16_64x64_32x6_tn_align8", (1, 1, 4), H200_SMS))
    assert (few.units, few.dim, few.size, few.need) == (4, "batch", 4, 132)
    # No tile in the name: only the blocks are counted, and how far m would have to grow is not known.
    t = A.tiling(_gemm(32, 64, 64), "void sgemm_largek_lds64<true, false, 5, 5, 4, 4, 4, 34>(float*)", (2, 1, 4), H200_SMS)
    few = A._few_tiles(_gemm(32, 64, 64), t)
    assert (t.tiles, t.blocks, t.waves, few.units, few.what, few.need) == (None, 8, 1, 8, "blocks", None)


def test_a_grid_that_fits_the_tile_the_other_way():
    # 100 x 300 on 128x64 tiles: along m 1 x 5 = 5 tiles, the other way ceil(100/64) x ceil(300/128) = 2 x 3 = 6; a grid
    # of 6 blocks fits only the other way.
    t = A.tiling(_gemm(100, 300, 64), "cutlass_80_simt_sgemm_128x64_8x5_nn_align1", (6, 1, 1), H200_SMS)
    assert (t.tiles, t.transposed, t.split, t.oriented) == (6, True, 1, (64, 128))
    assert t.padded_pct == pytest.approx(100 * (1 - 100 * 300 / (128 * 384)))


def test_the_alignment_granule_is_sixteen_bytes():
    assert [A.granule(d) for d in ("fp32", "bf16", "fp16", "fp8_e4m3", "fp64", "int64", None, "tf32")] == [4, 8, 8, 16, 2, None, None, None]
    bad = A._misaligned(_gemm(1000, 4096, 4100), "bf16")
    assert bad.dims == (("k", 4100, 4104),) and bad.granule == 8
    assert A._misaligned(_gemm(1, 1000, 100), "fp8_e4m3").dims == (("n", 1000, 1008), ("k", 100, 112))  # m = 1: a vector, not checked
    assert A._misaligned(_gemm(1000, 4096, 4100), None) is None


def test_a_short_k_loop():
    # k = 64 split 2 ways: 32 a block, 4 steps of an 8-deep loop, no more than the 5 stages of CUTLASS's 64x64_8x5.
    gemm = _gemm(32, 64, 64, size=4)
    short = A._short_k(gemm, A.tiling(gemm, "cutlass_80_simt_sgemm_64x64_8x5_nn_align1", (1, 1, 2), H200_SMS))
    assert (short.slice_k, short.steps, short.stages, short.split) == (32, 4, 5, 2)
    assert A._short_k(_gemm(32, 64, 4096), A.tiling(_gemm(32, 64, 4096), "cutlass_80_simt_sgemm_64x64_8x5_nn_align1", (1, 1, 1), 132)) is None


def test_the_size_that_reaches_the_ridge():
    # 1x256 @ 256x1024 + bias 1024, fp32: F(m) = (2 x 256 x 1024 + 1024) m = 525,312 m; bytes A 1,024 m, out 4,096 m, B
    # 1,048,576 and the bias 4,096 fixed. The ridge R = 66.9 TFLOP/s / 4.8 TB/s = 13.939: 525,312 m >= R (5,120 m +
    # 1,052,672) holds from m = 32.3: 33 rows. Grown alone, n or k keeps the row's 0.5 FLOP/B.
    ridge = H200.flops[P.FP32] / H200.dram_bytes_per_s
    gemm = counts.Gemm(1, 1, 1024, 256, 1024, 1048576, 4096, 4096, "n")
    assert A._to_ridge(gemm, 525312, 1057792, ridge) == ("m", 1, 33)
    assert 525312 * 33 >= ridge * (5120 * 33 + 1052672) > 525312 * 32


# -- which products are advised ---------------------------------------------------------------------

def _row(pct: float, time_ns: int = 1000, shapes='[[[256,4096],[4096,1024]],["float","float"],[[4096,1],[1024,1]],["",""]]') -> OpRow:
    """A synthetic mm row (SYNTHETIC) whose rate is ``pct`` of the FP32 peak."""
    work = counts.count("aten::mm", parse(shapes))
    peak = H200.flops[P.FP32]
    time = work.flop / (pct / 100 * peak) * 1e9
    return OpRow(op="aten::mm", shapes=work.shapes, kind=work.kind, dtype=work.dtype, dtype_how="recorded", forward_op=None, calls=1, kernels=1,
                 time_ns=math.floor(time), flop=work.flop, bytes=work.bytes, unit=P.FP32, unit_how="", peak_flops=peak,
                 peak_bytes_per_s=H200.dram_bytes_per_s, share_pct=1.0, gemm=work.gemm, kernel="sm80_xmma_gemm_tilesize64x64x8_stage3",
                 grid=(4, 16, 4))


def test_far_below_is_under_half_of_the_limit_and_a_percent_of_the_kernels():
    below, at = _row(FAR_BELOW_PCT - 0.1), _row(FAR_BELOW_PCT)
    assert below.pct_of_limit < FAR_BELOW_PCT <= at.pct_of_limit
    assert len(A.advise((below, at), 100 * below.time_ns, H200_SMS)) == 1
    # Its time against the steps' kernel time: at least MIN_WORK_PCT.
    assert A.advise((below,), round(below.time_ns * 100 / MIN_WORK_PCT), H200_SMS) != ()
    assert A.advise((below,), round(below.time_ns * 100 / MIN_WORK_PCT) + 2, H200_SMS) == ()
    # A product whose dims hold a 0 is not advised on (there is no work to lay out).
    empty = _row(10, shapes='[[[0,4096],[4096,1024]],["float","float"],[[4096,1],[1024,1]],["",""]]')
    assert A.advise((empty,), 1000, H200_SMS) == ()


# -- on the real captures ---------------------------------------------------------------------------

@pytest.fixture(scope="module")
def host_prep():
    return _limits(HOST_PREP)


def test_host_preps_first_layer_has_too_few_tiles(host_prep):
    # 8 steady steps; the op's kernels 770,974 ns of the steps' 2,431,279 ns of kernels: 31.7%.
    (first, *rest) = host_prep.advice
    assert first.to_json() == {
        "op": "aten::addmm", "shapes": "256x4096 @ 4096x1024 + 1024", "dtype": "fp32", "calls": 8, "time_ns": 770974, "share_pct": 0.2464,
        "work_pct": 31.7106, "limit": "fp32", "pct_of_limit": 33.3084, "gemm": {"batch": 1, "m": 256, "n": 1024, "k": 4096}, "granule": 4,
        "tiling": {"kernel": "void cutlass::Kernel2<cutlass_80_simt_sgemm_128x64_8x5_tn_align1>(cutlass_80_simt_sgemm_128x64_8x5_tn_align1::Params)",
                   "tile": {"rows": 128, "cols": 64, "k": 8, "stages": 5, "word": "cutlass_80_simt_sgemm_128x64_8x5_tn_align1", "split_k": False,
                            "stream_k": False},
                   "blocks": 256, "sms": 132, "tiles": 32, "transposed": False, "split": 8, "persistent": False, "padded_pct": 0, "waves": None,
                   "wave_units": None, "last_wave": None, "slots": None, "idle_pct": None},
        "causes": [{"cause": "too_little_work", "tiles": 32, "sms": 132, "blocks": 256, "split": 8, "dim": "m", "size": 256, "need": 1152}]}
    assert (host_prep.kernel_ns, host_prep.steps) == (2431279, 8)
    assert R.cause_lines(first) == [("too little work:", "32 tiles of 128x64 for 132 SMs; the kernel splits k 8 ways to run 256 blocks (their "
                                     "partial sums added after); m = 256 would have to be at least 1,152 for as many tiles as SMs at this tile")]
    # Its second layer's 256 tiles of 32x32 fill the SMs, are aligned, and reach past the ridge: no check here explains its 23.5%.
    second = rest[0]
    assert (second.row.shapes, round(second.row.pct_of_limit, 1), second.causes, second.tiling.tiles) == (
        "256x1024 @ 1024x1024 + 1024", 23.5, (), 256)
    assert R.cause_lines(second)[-1][0] == "none found:"
    # Five products are far below; the reports show three, and count the rest.
    assert [round(a.work_pct, 1) for a in host_prep.advice] == [31.7, 11.2, 6.5, 5.5, 1.3]
    assert R.advice_rest(host_prep) == "2 more, 6.8% of the kernels' time (--format json lists them)"


def test_decodes_one_row_products_are_memory_bound_by_their_shape():
    limits = _limits(DECODE)
    first = limits.advice[0]
    assert (first.row.op, first.row.shapes, first.row.limit, first.row.calls) == ("aten::addmm", "1x256 @ 256x1024 + 1024", P.HBM, 30)
    assert [c.to_json() for c in first.causes] == [
        {"cause": "memory_bound", "flop_per_byte": 0.4966, "ridge_flop_per_byte": 13.9392, "reach_pct": 3.5627, "dim": "m", "size": 1, "need": 33},
        {"cause": "short_calls", "bytes_per_call": 1057792, "ns_per_call": 2614.4333, "ns_at_peak": 220.3733}]
    assert R.cause_lines(first) == [
        ("memory-bound:", "its shape gives 0.497 FLOP a byte (its FLOPs over its minimal bytes), under the ridge point's 13.9 (the FP32 CUDA cores' "
         "peak over HBM's): at HBM's peak it would reach 3.6% of its unit's peak; m = 1 would have to be at least 33 to reach it"),
        ("short calls:", "each call moves 1.06 MB in 2.61 us; HBM's peak would move them in 220 ns")]
    assert R.tiling_text(first) == ("its kernel internal::gemvx::kernel‹…›: its name gives no tile (tiles, padding and the k loop not checked); 256 "
                                    "blocks for 132 SMs (how many an SM runs at once is not recorded: the waves are not known)")
    # Every one-row product of the step: memory-bound, m = 1 to be batched to 32-36 rows.
    assert all(a.gemm.m == 1 and a.causes[0].cause == "memory_bound" and 32 <= a.causes[0].need <= 36 for a in limits.advice)


def test_small_launchs_32_row_products():
    limits = _limits(SMALL)
    mm = limits.advice[1]
    assert (mm.row.op, mm.row.shapes, mm.row.forward_op) == ("aten::mm", "32x64 @ 64x64", "aten::addmm")
    # One 64x64 tile over a 32x64 product (half of it padding), its k of 64 split over the grid's 2 blocks (a splitKreduce
    # kernel adds them: the op's second kernel), 4 steps of 8 each, fewer than the 5 stages.
    assert sorted({k.split("<")[0].split()[-1] for k in _kernels(SMALL, mm)}) == ["cublasLt::splitKreduce_kernel", "cutlass::Kernel2"]
    assert [(c.cause, c.to_json()) for c in mm.causes][1:4] == [
        ("too_little_work", {"cause": "too_little_work", "tiles": 1, "sms": 132, "blocks": 2, "split": 2, "dim": "m", "size": 32, "need": 8448}),
        ("tile_padding", {"cause": "tile_padding", "padded_pct": 50, "covered": [64, 64]}),
        ("short_k", {"cause": "short_k", "k": 64, "slice_k": 32, "step": 8, "steps": 4, "stages": 5, "split": 2})]
    assert R.tiling_text(mm) == ("its kernel cutlass_80_simt_sgemm_64x64_8x5_nn_align1: tiles of 64x64 (its name; 64 along m), 1 over the 32x64 "
                                 "product; 2 blocks, 2 a tile (k split 2 ways) on 132 SMs: one wave")


def _kernels(path: Path, a) -> list[str]:
    data, _ = readers.read(path)
    return [str(data.kernels["demangled"][int(i)]) for i in a.row.rows]


NEAR_PEAK = [(name, suffix) for name in ("matmul_fp32", "matmul_tf32", "matmul_bf16", "matmul_fp8", "mlp_train_fp32", "mlp_train_bf16",
                                         "transformer") for suffix in (C.NSYS, C.KINETO) if (C.DATA / f"{name}{suffix}").exists()]


@pytest.mark.parametrize("name, suffix", NEAR_PEAK, ids=lambda v: v)
def test_the_products_near_their_peak_get_no_advice(name, suffix):
    _, limits = C.capture(name, suffix)
    products = [r for r in limits.rows if r.kind == counts.MATMUL]
    assert products and min(r.pct_of_limit for r in products) >= FAR_BELOW_PCT and limits.advice == ()


def test_the_tiles_past_the_edge_are_what_ncu_counts_more():
    # matmul_bf16 under nsys: nvjet's 320x128 tiles over 8192x8192 on 132 persistent blocks. The tensor cores' operations ncu
    # counted are the model's FLOPs times 8,320 / 8,192 exactly: the padding the tiling computes.
    _, limits = C.capture("matmul_bf16", C.NSYS)
    (row,) = limits.rows
    t = A.tiling(row.gemm, row.kernel, row.grid, limits.peaks.sm_count)
    (mm,), _ = C.ncu_checks("matmul_bf16", C.NSYS)
    assert (t.tiles, t.waves, t.last_wave, row.grid) == (1664, 13, 80, (2, 66, 1))
    assert mm.ncu_flop / mm.model_flop == 1 / (1 - t.padded_pct / 100) == 8320 / 8192
    # The fp8 product's 144x128 tiles: 57 x 64 = 3,648 tiles in 28 waves, the last with 3,648 - 27 x 132 = 84.
    _, fp8 = C.capture("matmul_fp8", C.KINETO)
    t = A.tiling(fp8.rows[0].gemm, fp8.rows[0].kernel, fp8.rows[0].grid, 132)
    assert (t.tiles, t.persistent, t.waves, t.last_wave) == (3648, True, 28, 84)
    # Under 10% of padding is no cause; the tiling's words give it: 57 x 144 = 8,208 rows cover 8,192.
    advice = MatmulAdvice(row=fp8.rows[0], gemm=fp8.rows[0].gemm, granule=16, tiling=t, causes=(), work_pct=100.0)
    assert R.tiling_text(advice) == ("its kernel nvjet_sm90_qqtst_144x128_128x6_1x2_h_bz_coopA_algo2_TNN: tiles of 144x128 (its name; 144 along m), "
                                     "3,648 over the 8192x8192 product (0.2% of their work past its edge); 132 blocks, at most one an SM, each "
                                     "looping over tiles (a persistent kernel): 3,648 tiles over them make 28 waves, the last with 84")


# -- every format -----------------------------------------------------------------------------------

@pytest.mark.parametrize("fmt", ["table", "markdown", "html", "json"])
def test_the_advice_in_every_format(capsys, monkeypatch, fmt):
    monkeypatch.setenv("COLUMNS", "2000")
    code, out, err = run_cli(capsys, "timeline", str(HOST_PREP), "-f", fmt)
    assert code == 0, err
    limits = _limits(HOST_PREP)
    if fmt == "json":
        doc = json.loads(out)["op_limits"]
        assert doc["advice"] == [a.to_json() for a in limits.advice] and len(doc["advice"]) == 5
        json.dumps(doc["advice"], allow_nan=False)
        return
    shown = html.unescape(out) if fmt == "html" else out.replace("\\_", "_") if fmt == "markdown" else out
    first = limits.advice[0]
    for text in (R.advice_title(limits), R.advice_head(first), R.tiling_text(first), R.cause_lines(first)[0][1], R.advice_rest(limits)):
        assert text in shown, (fmt, text)
    # Three products shown, the other two counted.
    assert len(re.findall(r"of the kernels' time \(\d", shown)) == 3
    if fmt == "html":
        assert "FP32 CUDA cores&#39; peak" in out and "<li><strong>too little work:</strong>" in out


def test_a_capture_with_no_advice_shows_no_section(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")
    code, out, _ = run_cli(capsys, "timeline", str(C.DATA / "matmul_bf16.sqlite.gz"))
    assert code == 0 and "Ops against their limits" in out and "far below their limit" not in out
