"""Spec peaks of a GPU from its environment record: DRAM bandwidth, FP32 and FP16 tensor throughput.

DRAM comes from the binary's own record (2 x memory clock x bus width / 8). Compute peaks are
per-SM-per-clock rates (dense, from NVIDIA's architecture whitepapers: the tables of
:mod:`ncuwrap.core.peaks`) x SM count x boost clock; an architecture missing from the tables gets no
compute peak rather than a guessed one.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ncuwrap.bundled.manifest import Peak
from ncuwrap.core.peaks import FP16_TENSOR_FLOP_PER_CLK_PER_SM, FP32_FLOP_PER_CLK_PER_SM


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
