"""A GPU's peaks per unit: FP32 on the CUDA cores; TF32, BF16/FP16 and FP8 on the tensor cores; HBM bandwidth.

A compute peak is a dense rate per SM per clock (NVIDIA's architecture whitepapers: Volta, Ampere GA100,
Hopper GH100) times the SM count times the SM clock; an architecture or a unit missing from the tables
gets no peak rather than a guessed one. The device's SM count, clock and memory bandwidth come from the
capture where it records them (nsys's TARGET_INFO_GPU: smCount, clockRate, memoryBandwidth; a PyTorch
profiler trace's deviceProperties: numSms and the compute capability, no clock or bandwidth), and from
:data:`DEVICES` (NVIDIA's data sheets, by the name the driver gives the device) for what it does not.

The clock is the device's maximum SM clock (1.98 GHz on an H100 or H200 SXM), the one the data sheet's
FP32 figure (67 TFLOP/s) is computed at. The data sheet quotes the tensor-core figures at a lower clock
(989 TFLOP/s BF16 dense is 4,096 FLOP per SM per clock at 1.83 GHz): here every unit is taken at the same
clock, so a tensor-core peak is 8% above the data sheet's (docs/op-limits.md).

Used by the timeline's op limits (ncuwrap.timeline.oplimits) and the bundled benchmarks' spec peaks
(ncuwrap.bundled.peaks).
"""

from __future__ import annotations

from dataclasses import dataclass

# FLOP per clock per SM (2 x FP32 lanes: a fused multiply-add counts two).
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
# Dense tensor-core FLOP per clock per SM with FP32 accumulation, data-center parts only (GeForce parts of
# the same compute capability run FP32 accumulation at half rate). 9.0 is wgmma's rate; mma.sync kernels
# cannot reach it.
FP16_TENSOR_FLOP_PER_CLK_PER_SM = {"7.0": 1024, "8.0": 2048, "9.0": 4096}
BF16_TENSOR_FLOP_PER_CLK_PER_SM = {"8.0": 2048, "9.0": 4096}  # Volta has no BF16
TF32_TENSOR_FLOP_PER_CLK_PER_SM = {"8.0": 1024, "9.0": 2048}
FP8_TENSOR_FLOP_PER_CLK_PER_SM = {"9.0": 8192}

# The compute units, each with its table.
FP32 = "fp32"  # CUDA cores
TF32_TENSOR = "tf32 tensor"
BF16_TENSOR = "bf16 tensor"
FP16_TENSOR = "fp16 tensor"
FP8_TENSOR = "fp8 tensor"
HBM = "hbm"
COMPUTE_TABLES = {FP32: FP32_FLOP_PER_CLK_PER_SM, TF32_TENSOR: TF32_TENSOR_FLOP_PER_CLK_PER_SM, BF16_TENSOR: BF16_TENSOR_FLOP_PER_CLK_PER_SM,
                  FP16_TENSOR: FP16_TENSOR_FLOP_PER_CLK_PER_SM, FP8_TENSOR: FP8_TENSOR_FLOP_PER_CLK_PER_SM}
UNIT_LABELS = {FP32: "FP32 CUDA cores", TF32_TENSOR: "TF32 tensor cores", BF16_TENSOR: "BF16 tensor cores", FP16_TENSOR: "FP16 tensor cores",
               FP8_TENSOR: "FP8 tensor cores", HBM: "HBM bandwidth"}


@dataclass(frozen=True)
class BundledDevice:
    """A device's data-sheet facts: compute capability, SMs, maximum SM clock, memory bandwidth."""

    cc: str
    sm_count: int
    sm_clock_hz: float
    dram_bytes_per_s: float
    source: str


# By the name the driver reports (nvidia-smi, cudaGetDeviceProperties), SXM parts unless named.
DEVICES = {
    "NVIDIA H200": BundledDevice("9.0", 132, 1.98e9, 4.8e12, "NVIDIA H200 Tensor Core GPU data sheet (H200 SXM: 4.8 TB/s HBM3e)"),
    "NVIDIA H100 80GB HBM3": BundledDevice("9.0", 132, 1.98e9, 3.35e12, "NVIDIA H100 Tensor Core GPU data sheet (H100 SXM: 3.35 TB/s)"),
    "NVIDIA H100 PCIe": BundledDevice("9.0", 114, 1.755e9, 2.0e12, "NVIDIA H100 Tensor Core GPU data sheet (H100 PCIe: 2 TB/s)"),
    "NVIDIA H100 NVL": BundledDevice("9.0", 132, 1.785e9, 3.9e12, "NVIDIA H100 Tensor Core GPU data sheet (H100 NVL: 3.9 TB/s)"),
    "NVIDIA A100-SXM4-80GB": BundledDevice("8.0", 108, 1.41e9, 2.039e12, "NVIDIA A100 Tensor Core GPU data sheet (A100 80GB SXM: 2,039 GB/s)"),
    "NVIDIA A100-SXM4-40GB": BundledDevice("8.0", 108, 1.41e9, 1.555e12, "NVIDIA A100 Tensor Core GPU data sheet (A100 40GB SXM: 1,555 GB/s)"),
}


@dataclass(frozen=True)
class DeviceFacts:
    """What a capture says of its GPU; None where it does not say."""

    name: str | None
    cc: str | None = None  # "9.0"
    sm_count: int | None = None
    sm_clock_hz: float | None = None
    dram_bytes_per_s: float | None = None
    recorded_by: str = "the capture"  # what recorded these facts ("nsys's TARGET_INFO_GPU", ...)


@dataclass(frozen=True)
class Peaks:
    """The peaks of one device per unit (FLOP/s; B/s for HBM), with where each of its facts came from."""

    device: str | None
    cc: str | None
    sm_count: int | None
    sm_clock_hz: float | None
    dram_bytes_per_s: float | None
    flops: dict  # unit -> FLOP/s (None: no table entry for this architecture)
    sources: tuple[str, ...]  # one sentence per fact's origin

    def of(self, unit: str) -> float | None:
        """The peak of ``unit`` (FLOP/s, or B/s for HBM); None where unknown."""
        return self.dram_bytes_per_s if unit == HBM else self.flops.get(unit)

    def to_json(self) -> dict:
        return {"device": self.device, "cc": self.cc, "sm_count": self.sm_count, "sm_clock_hz": self.sm_clock_hz,
                "hbm_bytes_per_s": self.dram_bytes_per_s, "flops": dict(self.flops), "sources": list(self.sources)}


def _positive(value) -> float | None:
    try:
        number = float(value)
    except (TypeError, ValueError, OverflowError):
        return None
    return number if number > 0 and number < 1e30 else None


def peaks(facts: DeviceFacts) -> Peaks:
    """Each unit's peak from what the capture records, the rest from :data:`DEVICES` by the device's name."""
    bundled = DEVICES.get((facts.name or "").strip())
    recorded, table = [], []

    def pick(value, fallback, what):
        if value:
            recorded.append(what)
            return value
        if bundled is not None:
            table.append(what)
            return fallback
        return None

    cc = pick(facts.cc, bundled.cc if bundled else None, "compute capability")
    sms = pick(_positive(facts.sm_count), bundled.sm_count if bundled else None, "SM count")
    clock = pick(_positive(facts.sm_clock_hz), bundled.sm_clock_hz if bundled else None, "maximum SM clock")
    dram = pick(_positive(facts.dram_bytes_per_s), bundled.dram_bytes_per_s if bundled else None, "memory bandwidth")
    sources = []
    if recorded:
        sources.append(f"{', '.join(recorded)} from {facts.recorded_by}")
    if table:
        sources.append(f"{', '.join(table)} from the bundled table ({bundled.source})")
    flops = {unit: (table_[cc] * sms * clock if cc in table_ and sms and clock else None) for unit, table_ in COMPUTE_TABLES.items()}
    return Peaks(device=facts.name, cc=cc, sm_count=int(sms) if sms else None, sm_clock_hz=clock, dram_bytes_per_s=dram, flops=flops,
                 sources=tuple(sources))
