"""Run a benchmark binary and read its JSON; the statistics of its timing samples.

The binary's output format is documented in ``kernels/common/bench.cuh``; :func:`parse_binary_output`
checks it and turns it into typed records, so the rest of ncuwrap never reads raw dictionaries.
:func:`require_gpu` says, before anything is built or run, when there is no GPU to run them on.
"""

from __future__ import annotations

import ctypes
import json
import os
import shutil
import statistics
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ncuwrap.core import process
from ncuwrap.bundled.report import RunTiming
from ncuwrap.core.errors import BenchError, InputError

_RUN_TIMEOUT_S = 1800
_DRIVER_LIBRARY = "nvcuda.dll" if os.name == "nt" else "libcuda.so.1"


class NoGpuError(BenchError):
    """No NVIDIA driver, or a driver that sees no GPU: the benchmarks can be built here but not run."""


@dataclass(frozen=True)
class VariantRun:
    """One variant's result from one process run of a binary."""

    variant: str
    kernel: str | None
    verified: bool
    max_error: float | None
    checked_sizes: tuple[str, ...]
    sizes: Mapping[str, int]
    times_ms: tuple[float, ...]
    extra: Mapping[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class BinaryRun:
    """Everything one process run of a binary printed."""

    benchmark: str
    env: Mapping[str, Any]
    warmup: int | None
    iters: int | None
    results: tuple[VariantRun, ...]

    def result(self, variant: str) -> VariantRun:
        for r in self.results:
            if r.variant == variant:
                return r
        raise BenchError(f"{self.benchmark}: the binary printed no result for variant {variant!r}")


@dataclass(frozen=True)
class Summary:
    """Statistics over several process runs: each run's own, the median of their medians and the spread."""

    runs: tuple[RunTiming, ...]
    median_ms: float
    min_ms: float
    max_ms: float
    spread_pct: float  # (largest run median - smallest) / median, in percent


def run_stats(times_ms: Sequence[float]) -> RunTiming:
    if not times_ms:
        raise BenchError("no timing samples: run with --iters >= 1")
    return RunTiming(median_ms=statistics.median(times_ms), min_ms=min(times_ms), max_ms=max(times_ms))


def summarize(runs: Sequence[Sequence[float]]) -> Summary:
    """Per-run median/min/max and the across-run median and spread of the run medians."""
    stats = tuple(run_stats(r) for r in runs)
    if not stats:
        raise BenchError("no runs to summarize")
    medians = [s.median_ms for s in stats]
    median = statistics.median(medians)
    spread = (max(medians) - min(medians)) / median * 100.0 if median > 0 else 0.0
    return Summary(
        runs=stats,
        median_ms=median,
        min_ms=min(s.min_ms for s in stats),
        max_ms=max(s.max_ms for s in stats),
        spread_pct=spread,
    )


def parse_binary_output(text: str, source: str) -> BinaryRun:
    """Check and type the JSON document a benchmark binary printed; ``source`` names it in errors."""
    try:
        doc = json.loads(text)
    except ValueError:
        raise InputError(f"{source}: not the JSON document a benchmark binary prints; rebuild with `ncuwrap build`") from None
    if not isinstance(doc, dict) or not isinstance(doc.get("results"), list) or "benchmark" not in doc:
        raise InputError(f"{source}: missing 'benchmark' or 'results'; is this a benchmark binary's output?")
    results = []
    for i, r in enumerate(doc["results"]):
        try:
            results.append(
                VariantRun(
                    variant=str(r["variant"]),
                    kernel=r.get("kernel"),
                    verified=bool(r["verified"]),
                    max_error=None if r.get("max_error") is None else float(r["max_error"]),
                    checked_sizes=tuple(str(s) for s in r.get("checked_sizes", [])),
                    sizes={str(k): int(v) for k, v in r.get("sizes", {}).items()},
                    times_ms=tuple(float(t) for t in r["times_ms"]),
                    extra={str(k): float(v) for k, v in (r.get("extra") or {}).items() if v is not None},
                )
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise InputError(f"{source}: results[{i}] is malformed ({exc.__class__.__name__}: {exc})") from None
    return BinaryRun(
        benchmark=str(doc["benchmark"]),
        env=doc.get("env") or {},
        warmup=doc.get("warmup"),
        iters=doc.get("iters"),
        results=tuple(results),
    )


def binary_argv(
    binary: Path, variants: Sequence[str] | None, warmup: int, iters: int, sizes: Mapping[str, int] | None = None
) -> list[str]:
    """The command line of one process run."""
    argv = [str(binary)]
    for v in variants or ["all"]:
        argv += ["--variant", v]
    argv += ["--warmup", str(warmup), "--iters", str(iters)]
    for key, value in (sizes or {}).items():
        argv += ["--size", f"{key}={value}"]
    return argv


def run_binary(
    binary: Path,
    variants: Sequence[str] | None,
    warmup: int,
    iters: int,
    sizes: Mapping[str, int] | None = None,
    timeout_s: float = _RUN_TIMEOUT_S,
) -> BinaryRun:
    """Run the binary once. Exit 1 (a wrong result) still returns the run, with ``verified`` false."""
    argv = binary_argv(binary, variants, warmup, iters, sizes)
    try:
        proc = subprocess.run(argv, capture_output=True, timeout=timeout_s, check=False, env=process.environment(), **process.TOOL_TEXT)
    except subprocess.TimeoutExpired:
        raise BenchError(f"{binary.name}: did not finish in {timeout_s:.0f} s; try fewer --iters or smaller sizes") from None
    except OSError as exc:
        raise BenchError(f"{binary.name}: cannot be run ({exc.strerror}); rebuild it with `ncuwrap build {binary.name}`") from None
    if proc.returncode not in (0, 1):
        why = (proc.stderr.strip().splitlines() or [f"exit code {proc.returncode}"])[0]
        raise BenchError(f"{binary.name}: {why.removeprefix('error: ')}")
    return parse_binary_output(proc.stdout, source=binary.name)


def gpu_problem() -> str | None:
    """Why no benchmark binary can run here (no NVIDIA driver, or one that sees no GPU); None when one can.

    Asks the driver itself (cuInit, cuDeviceGetCount through its library), which is what the binaries
    need; nvidia-smi is only named in the answer, as the usual sign of an installed driver."""
    try:
        driver = ctypes.CDLL(_DRIVER_LIBRARY)
    except OSError:
        smi = shutil.which("nvidia-smi")
        also = "and nvidia-smi is not on PATH" if smi is None else f"although {smi} exists"
        return f"no NVIDIA driver found ({_DRIVER_LIBRARY} cannot be loaded, {also})"
    count = ctypes.c_int(0)
    status = driver.cuInit(0)
    if status == 0:
        status = driver.cuDeviceGetCount(ctypes.byref(count))
    if status == 0 and count.value > 0:
        return None
    name = ctypes.c_char_p()
    if status == 0 or driver.cuGetErrorName(status, ctypes.byref(name)) != 0 or not name.value:
        what = f"{count.value} devices" if status == 0 else f"error {status}"
    else:
        what = name.value.decode(errors="replace")
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    hint = f", CUDA_VISIBLE_DEVICES={visible!r}" if visible is not None else ""
    return f"the NVIDIA driver ({_DRIVER_LIBRARY}) sees no GPU ({what}{hint})"


def require_gpu(names: Sequence[str]) -> None:
    """Raise NoGpuError, naming what was looked for and what still works here, when no GPU can run ``names``."""
    why = gpu_problem()
    if why is not None:
        build = f"ncuwrap build {names[0]}" if len(names) == 1 else "ncuwrap build --all"
        raise NoGpuError(f"no GPU: {why}; run `ncuwrap bench` on a machine with an NVIDIA GPU (`{build}` still compiles here)")
