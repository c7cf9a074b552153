"""The library doing the same job as a bundled benchmark, timed beside it through CuPy (optional).

CuPy is the ``gpu`` extra (``pip install ncuwrap[gpu]``). Without it :func:`measure` returns None and
``ncuwrap bench`` still runs the binaries.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping
from dataclasses import dataclass

from ncuwrap.bundled.manifest import Library
from ncuwrap.core.errors import BenchError

DESCRIPTIONS = {
    Library.transpose_copy: "cupy.ascontiguousarray(a.T)",
    Library.vecadd: "cupy.add",
    Library.sum: "cupy.sum (CUB)",
    Library.matmul_fp32: "cupy.matmul fp32 (cuBLAS SGEMM)",
    Library.matmul_fp16: "cupy.matmul fp16 (cuBLAS, fp32 accumulate)",
    Library.matmul_fp16_nt: "cupy.matmul(a, bt.T) fp16, bt stored n x k (cuBLAS, fp32 accumulate)",
}


@dataclass(frozen=True)
class LibraryTiming:
    """The times of a library's equivalent of a variant (CuPy), made by :func:`measure` for the bench's library comparison."""
    library: Library
    description: str
    version: str
    times_ms: tuple[float, ...]

    @property
    def median_ms(self) -> float:
        return statistics.median(self.times_ms)


def cupy_version() -> str | None:
    try:
        import cupy
    except ImportError:
        return None
    return str(cupy.__version__)


def measure(library: Library, sizes: Mapping[str, int], warmup: int, iters: int, runs: int = 1) -> LibraryTiming | None:
    """Time the library equivalent at ``sizes`` (``runs`` x ``iters`` samples); None without CuPy."""
    try:
        import cupy as cp
    except ImportError:
        return None
    try:
        fn = _workload(cp, library, sizes)
        for _ in range(warmup):
            fn()
        cp.cuda.Device().synchronize()
        samples: list[float] = []
        for _ in range(max(1, runs)):
            for _ in range(iters):
                start, stop = cp.cuda.Event(), cp.cuda.Event()
                start.record()
                fn()
                stop.record()
                stop.synchronize()
                samples.append(cp.cuda.get_elapsed_time(start, stop))
    except Exception as exc:  # CuPy raises its own CUDA error types; report them as one line
        raise BenchError(f"{library.value}: the CuPy comparison failed ({exc.__class__.__name__}: {exc})") from None
    return LibraryTiming(library, DESCRIPTIONS[library], str(cp.__version__), tuple(samples))


def _workload(cp, library: Library, sizes: Mapping[str, int]):  # noqa: ANN001, ANN202 - cupy is optional
    rng = cp.random.default_rng(0)
    if library is Library.transpose_copy:
        a = rng.random((sizes["rows"], sizes["cols"]), dtype=cp.float32)
        return lambda: cp.ascontiguousarray(a.T)
    if library is Library.vecadd:
        a = rng.random(sizes["n"], dtype=cp.float32)
        b = rng.random(sizes["n"], dtype=cp.float32)
        c = cp.empty_like(a)
        return lambda: cp.add(a, b, out=c)
    if library is Library.sum:
        a = rng.integers(0, 16, sizes["n"], dtype=cp.int32)
        return lambda: a.sum(dtype=cp.int64)
    if library in (Library.matmul_fp32, Library.matmul_fp16):
        dtype = cp.float32 if library is Library.matmul_fp32 else cp.float16
        a = rng.random((sizes["m"], sizes["k"]), dtype=cp.float32).astype(dtype)
        b = rng.random((sizes["k"], sizes["n"]), dtype=cp.float32).astype(dtype)
        return lambda: cp.matmul(a, b)
    if library is Library.matmul_fp16_nt:  # B given as its transpose (n x k), like gemm_hopper's operands
        a = rng.random((sizes["m"], sizes["k"]), dtype=cp.float32).astype(cp.float16)
        bt = rng.random((sizes["n"], sizes["k"]), dtype=cp.float32).astype(cp.float16)
        return lambda: cp.matmul(a, bt.T)
    raise BenchError(f"{library.value}: no CuPy workload defined")
