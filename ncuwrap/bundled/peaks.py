"""Spec peaks of a GPU from its environment record: DRAM bandwidth, FP32 and FP16 tensor throughput.

DRAM comes from the binary's own record (2 x memory clock x bus width / 8). Compute peaks are
per-SM-per-clock rates (dense, from NVIDIA's architecture whitepapers) x SM count x boost clock; an
architecture missing from the tables gets no compute peak rather than a guessed one.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ncuwrap.bundled.manifest import Peak

# FP32 FLOP per clock per SM (2 x FP32 lanes).
FP32_FLOP_PER_CLK_PER_SM = {
    "7.0": 128,
    "7.5": 128,
    "8.0": 128,
    "8.6": 256,
    "8.7": 256,
    "8.9": 256,
    "9.0": 256,
    "10.0": 256,
    "12.0": 256,
}
# Dense FP16 tensor-core FLOP per clock per SM with FP32 accumulation (data-center parts only: GeForce
# parts of the same compute capability run FP32 accumulation at half rate). 9.0 is the wgmma rate;
# mma.sync kernels cannot reach it.
FP16_TENSOR_FLOP_PER_CLK_PER_SM = {"7.0": 1024, "8.0": 2048, "9.0": 4096}


@dataclass(frozen=True)
class SpecPeaks:
    """The device's data-sheet peaks (DRAM bandwidth, FP32 and FP16 tensor throughput) that '% of peak' compares with; from :func:`spec_peaks`."""
    dram_gbps: float | None
    fp32_tflops: float | None
    fp16_tensor_tflops: float | None

    def for_kind(self, kind: Peak) -> float | None:
        """The peak in the unit the metric uses: GB/s for dram, TFLOP/s for the compute peaks."""
        return {
            Peak.dram: self.dram_gbps,
            Peak.fp32: self.fp32_tflops,
            Peak.fp16_tensor: self.fp16_tensor_tflops,
            Peak.none: None,
        }[kind]

    def to_json(self) -> dict[str, float | None]:
        return {"dram_gbps": self.dram_gbps, "fp32_tflops": self.fp32_tflops, "fp16_tensor_tflops": self.fp16_tensor_tflops}


def spec_peaks(env: Mapping[str, Any]) -> SpecPeaks:
    cc = str(env.get("cc", ""))
    sms = env.get("sm_count")
    clock_khz = env.get("sm_clock_khz")

    def compute(table: Mapping[str, int]) -> float | None:
        if cc not in table or not sms or not clock_khz:
            return None
        return table[cc] * sms * clock_khz * 1e3 / 1e12

    dram = env.get("peak_dram_gbps")
    return SpecPeaks(
        dram_gbps=float(dram) if dram else None,
        fp32_tflops=compute(FP32_FLOP_PER_CLK_PER_SM),
        fp16_tensor_tflops=compute(FP16_TENSOR_FLOP_PER_CLK_PER_SM),
    )
