"""A kernel's name in a timeline is the one that tells it apart: CUTLASS launches its kernels through wrappers
(cutlass::Kernel<Op>, Kernel2<Op>, device_kernel<Op>) whose short name, nsys's among them, is the wrapper's, so
two different GEMMs read as one "Kernel2" (the fp32 MLP's top kernel was two of them summed)."""

from __future__ import annotations

import collections
from pathlib import Path

import numpy as np
import pytest

from ncuwrap.core.kernel_names import short_name, telling_name
from ncuwrap.timeline import readers
from ncuwrap.timeline.kernel_join import matching

DATA = Path(__file__).parent / "data" / "h200_ncuwrap"

# Names as the H200 captures hold them (the profiler's and nsys's demangled names).
SGEMM_NT = "void cutlass::Kernel2<cutlass_80_simt_sgemm_128x256_8x4_nt_align1>(cutlass_80_simt_sgemm_128x256_8x4_nt_align1::Params)"
SGEMM_NN = "void cutlass::Kernel2<cutlass_80_simt_sgemm_256x128_8x4_nn_align1>(cutlass_80_simt_sgemm_256x128_8x4_nn_align1::Params)"
SGEMM_TN = "void cutlass::Kernel2<cutlass_80_simt_sgemm_128x64_8x5_tn_align1>(T1::Params)"


@pytest.mark.parametrize("name,told", [
    (SGEMM_NT, "cutlass_80_simt_sgemm_128x256_8x4_nt_align1"),
    (SGEMM_TN, "cutlass_80_simt_sgemm_128x64_8x5_tn_align1"),
    ("void cutlass::Kernel<cutlass_75_tensorop_s1688gemm_64x64_32x6_nn_align4>(T1::Params)", "cutlass_75_tensorop_s1688gemm_64x64_32x6_nn_align4"),
    ("void cutlass::device_kernel<cutlass::gemm::kernel::GemmUniversal<cute::tuple<int, int, int>, Mainloop, Epilogue>>(T1::Params)",
     "GemmUniversal"),
    # Not a CUTLASS wrapper, or nothing inside it: the short name, as nsys writes it.
    ("void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<int>, std::array<char *, 1UL>>(int, T2, T3)",
     "vectorized_elementwise_kernel"),
    ("void my::Kernel2<float>(float *)", "Kernel2"),
    ("Kernel2", "Kernel2"),
    ("void cutlass::Kernel2<>(int)", "Kernel2"),
    ("void cutlass::Kernel2<", "Kernel2"),
])
def test_the_name_that_tells_a_kernel(name, told):
    assert telling_name(name) == told
    assert short_name(name) in (told, "Kernel2", "Kernel", "device_kernel")


def _names(path: Path) -> collections.Counter:
    data, _ = readers.read(path)
    k = data.kernels
    return collections.Counter(zip(np.asarray(k["name"]).astype(str).tolist(), np.asarray(k["demangled"]).astype(str).tolist()))


def test_two_gemms_are_two_kernels_in_a_profiler_trace():
    names = _names(DATA / "op_limits" / "mlp_train_fp32.pt.trace.json.gz")
    cutlass = {pair: n for pair, n in names.items() if "cutlass::" in pair[1]}
    assert cutlass == {("cutlass_80_simt_sgemm_256x128_8x4_nn_align1", SGEMM_NN): 5,
                       ("cutlass_80_simt_sgemm_128x256_8x4_nt_align1", SGEMM_NT): 15}
    assert not any(name in ("Kernel2", "Kernel", "device_kernel") for name, _ in names)


def test_nsys_short_name_of_a_wrapper_is_replaced():
    # nsys's own shortName column says "Kernel2"; the reader takes the operator's name from the demangled one.
    names = _names(DATA / "ranks" / "balanced" / "rank0.sqlite.gz")
    assert {pair: n for pair, n in names.items() if "cutlass::" in pair[1]} == {("cutlass_80_simt_sgemm_128x64_8x5_tn_align1", SGEMM_TN): 32}


def test_ncu_s_name_still_joins_the_capture_s_kernel():
    # profile --top and --kernels join ncu's verdicts by mangled name, else by name: ncu names it by its function.
    Group = collections.namedtuple("Group", "name demangled mangled")
    g = Group("cutlass_80_simt_sgemm_128x64_8x5_tn_align1", SGEMM_TN, "_ZN7cutlass7Kernel2I42cutlass_80_simt_sgemm_128x64_8x5_tn_align1EEvNT_6ParamsE")
    assert matching([g], name=SGEMM_TN.replace("T1::Params", "cutlass_80_simt_sgemm_128x64_8x5_tn_align1::Params"), display_name="Kernel2",
                    mangled=None) == [g]


def test_tables_show_the_operator_a_wrapper_launches(capsys):
    """The timeline's top-kernel table (render.names' short form): the SGEMM of the faster_kernel capture by its
    operator, as the bound line names it, not as ``cutlass::Kernel2‹…›`` (every CUTLASS GEMM's)."""
    from ncuwrap.render.names import Names, short
    from tests.conftest import run_cli

    assert short(SGEMM_NN) == "cutlass_80_simt_sgemm_256x128_8x4_nn_align1"
    device = "void cutlass::device_kernel<cutlass::gemm::kernel::GemmUniversal<cute::tuple<int, int, int>, Mainloop, Epilogue>>(T1::Params)"
    assert short(device) == "cutlass::gemm::kernel::GemmUniversal‹…›"
    assert Names([SGEMM_NN, SGEMM_NT])(SGEMM_NT) == "cutlass_80_simt_sgemm_128x256_8x4_nt_align1"
    code, out, _ = run_cli(capsys, "timeline", DATA / "whatif_faster_kernel" / "timeline.sqlite.gz")
    assert code == 0
    table = out[out.index("Top kernels"):]
    assert "cutlass::Kernel2" not in out and table.split("\n")[2].split()[:2] == ["cutlass_80_simt_sgemm_256x128_8x4_nn_align1", "319"]
