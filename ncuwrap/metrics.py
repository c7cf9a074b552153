"""Canonical metrics and the quantities derived from them.

Rules talk about *canonical* names (``dram_pct``, ``gst_sectors_per_request``...), never about raw ncu
names, because raw names differ between GPUs and ncu versions: each canonical name has a list of
aliases, the first one present wins. Derived quantities are computed for all launches at once
(vectorized) so a report of 10,000 kernels costs little more than reading it.

A quantity whose inputs were not collected is NaN, and :class:`MetricTable` remembers which raw
metric was missing so the rules can say "not evaluated: <metric> not collected; re-profile with ...".
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np
import pandas as pd


@dataclass(frozen=True)
class Canonical:
    name: str
    aliases: tuple[str, ...]
    section: str  # the ncu section that collects it (for "re-profile with" hints)
    unit: str
    description: str


@dataclass(frozen=True)
class Derived:
    name: str
    inputs: tuple[str, ...]
    compute: Callable[..., np.ndarray]
    unit: str
    description: str


def _c(name, aliases, section, unit, description):
    return Canonical(name, tuple(aliases) if isinstance(aliases, (list, tuple)) else (aliases,), section, unit, description)


CANONICAL: dict[str, Canonical] = {
    c.name: c
    for c in [
        _c("duration_ns", "gpu__time_duration.sum", "SpeedOfLight", "ns", "kernel duration under ncu (replayed, clocks as set by ncu: not a benchmark)"),
        _c("sm_pct", "sm__throughput.avg.pct_of_peak_sustained_elapsed", "SpeedOfLight", "%", "compute (SM) throughput, % of peak"),
        _c("dram_pct", ["gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed", "dram__throughput.avg.pct_of_peak_sustained_elapsed"], "SpeedOfLight", "%", "DRAM throughput, % of peak"),
        _c("l2_pct", "lts__throughput.avg.pct_of_peak_sustained_elapsed", "SpeedOfLight", "%", "L2 throughput, % of peak"),
        # The _active form is what ncu's details page shows; it is a little higher than _elapsed.
        _c("l1tex_pct", ["l1tex__throughput.avg.pct_of_peak_sustained_elapsed", "l1tex__throughput.avg.pct_of_peak_sustained_active"], "SpeedOfLight", "%", "L1/TEX throughput, % of peak"),
        _c("gld_sectors", "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum", "MemoryWorkloadAnalysis_Tables", "sector", "global load sectors"),
        _c("gld_requests", "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum", "MemoryWorkloadAnalysis_Tables", "request", "global load requests"),
        _c("gst_sectors", "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum", "MemoryWorkloadAnalysis_Tables", "sector", "global store sectors"),
        _c("gst_requests", "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum", "MemoryWorkloadAnalysis_Tables", "request", "global store requests"),
        _c("gld_bytes_per_sector", "smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.ratio", "SourceCounters", "byte/sector", "useful bytes per global load sector (32 = fully used)"),
        _c("gst_bytes_per_sector", "smsp__sass_average_data_bytes_per_sector_mem_global_op_st.ratio", "SourceCounters", "byte/sector", "useful bytes per global store sector (32 = fully used)"),
        _c("shared_ld_wavefronts", "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum", "MemoryWorkloadAnalysis_Tables", "", "shared-memory load wavefronts"),
        _c("shared_st_wavefronts", "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum", "MemoryWorkloadAnalysis_Tables", "", "shared-memory store wavefronts"),
        _c("shared_ld_instructions", ["smsp__sass_inst_executed_op_shared_ld.sum", "smsp__inst_executed_op_shared_ld.sum"], "InstructionStats", "inst", "shared-memory load instructions (warp level)"),
        _c("shared_st_instructions", ["smsp__sass_inst_executed_op_shared_st.sum", "smsp__inst_executed_op_shared_st.sum"], "InstructionStats", "inst", "shared-memory store instructions (warp level)"),
        _c("shared_ld_conflicts", "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum", "MemoryWorkloadAnalysis_Tables", "", "shared load bank conflicts"),
        _c("shared_st_conflicts", "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum", "MemoryWorkloadAnalysis_Tables", "", "shared store bank conflicts"),
        _c("waves_per_sm", "launch__waves_per_multiprocessor", "LaunchStats", "", "waves of blocks per SM"),
        _c("grid_size", "launch__grid_size", "LaunchStats", "block", "blocks in the grid"),
        _c("block_size", "launch__block_size", "LaunchStats", "thread", "threads per block"),
        _c("sm_count", ["launch__sm_count", "device__attribute_multiprocessor_count"], "LaunchStats", "SM", "SMs on the device"),
        _c("registers_per_thread", "launch__registers_per_thread", "LaunchStats", "register", "registers per thread"),
        _c("threads_per_warp_inst", "smsp__thread_inst_executed_per_inst_executed.ratio", "WarpStateStats", "thread", "active threads per executed warp instruction (32 = no divergence)"),
        _c("achieved_occupancy_pct", "sm__warps_active.avg.pct_of_peak_sustained_active", "Occupancy", "%", "achieved occupancy"),
        _c("theoretical_occupancy_pct", "sm__maximum_warps_per_active_cycle_pct", "Occupancy", "%", "theoretical occupancy"),
        _c("occ_limit_registers", "launch__occupancy_limit_registers", "Occupancy", "block", "blocks per SM allowed by registers"),
        _c("occ_limit_shared_mem", "launch__occupancy_limit_shared_mem", "Occupancy", "block", "blocks per SM allowed by shared memory"),
        _c("occ_limit_warps", "launch__occupancy_limit_warps", "Occupancy", "block", "blocks per SM allowed by the warp limit"),
        _c("occ_limit_blocks", "launch__occupancy_limit_blocks", "Occupancy", "block", "blocks per SM allowed by the block limit"),
        _c("local_ld_sectors", "l1tex__t_sectors_pipe_lsu_mem_local_op_ld.sum", "MemoryWorkloadAnalysis_Tables", "sector", "local-memory load sectors"),
        _c("local_st_sectors", "l1tex__t_sectors_pipe_lsu_mem_local_op_st.sum", "MemoryWorkloadAnalysis_Tables", "sector", "local-memory store sectors"),
        _c("spill_requests", "derived__local_spilling_requests", "MemoryWorkloadAnalysis", "request", "local-memory requests caused by register spilling"),
        _c("atomic_requests", "l1tex__t_requests_pipe_lsu_mem_global_op_atom.sum", "MemoryWorkloadAnalysis_Tables", "request", "global atomic requests"),
        _c("reduction_requests", "l1tex__t_requests_pipe_lsu_mem_global_op_red.sum", "MemoryWorkloadAnalysis_Tables", "request", "global reduction (atomic without return) requests"),
        _c("l2_atomic_max_pct", "lts__d_atomic_input_cycles_active.max.pct_of_peak_sustained_elapsed", "MemoryWorkloadAnalysis_Chart", "%", "busiest L2 slice's atomic unit, % of peak"),
        _c("l2_atomic_avg_pct", "lts__d_atomic_input_cycles_active.avg.pct_of_peak_sustained_elapsed", "MemoryWorkloadAnalysis_Chart", "%", "average L2 slice's atomic unit, % of peak"),
        _c("ffma_per_cycle", "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum.per_cycle_elapsed", "SpeedOfLight_RooflineChart", "inst/cycle", "FP32 FMA thread instructions per cycle"),
        _c("fadd_per_cycle", "smsp__sass_thread_inst_executed_op_fadd_pred_on.sum.per_cycle_elapsed", "SpeedOfLight_RooflineChart", "inst/cycle", "FP32 add thread instructions per cycle"),
        _c("fmul_per_cycle", "smsp__sass_thread_inst_executed_op_fmul_pred_on.sum.per_cycle_elapsed", "SpeedOfLight_RooflineChart", "inst/cycle", "FP32 mul thread instructions per cycle"),
        _c("smsp_cycles_per_s", "smsp__cycles_elapsed.avg.per_second", "SpeedOfLight_RooflineChart", "hz", "SM sub-partition clock"),
        _c("sm_cycles_per_s", "sm__cycles_elapsed.avg.per_second", "SpeedOfLight", "hz", "SM clock during the measurement"),
        _c("ffma_peak_per_cycle", "sm__sass_thread_inst_executed_op_ffma_pred_on.sum.peak_sustained", "SpeedOfLight_RooflineChart", "inst/cycle", "peak FP32 FMA thread instructions per cycle"),
        _c("dram_bytes_per_s", "dram__bytes.sum.per_second", "SpeedOfLight_RooflineChart", "byte/s", "DRAM bandwidth achieved"),
        _c("dram_peak_bytes_per_cycle", "dram__bytes.sum.peak_sustained", "SpeedOfLight_RooflineChart", "byte/cycle", "DRAM peak bytes per DRAM cycle"),
        _c("dram_cycles_per_s", "dram__cycles_elapsed.avg.per_second", "SpeedOfLight_RooflineChart", "hz", "DRAM clock"),
        _c("l2_bytes_per_s", "derived__lts__lts2xbar_bytes.sum.per_second", "SpeedOfLight_HierarchicalSingleRooflineChart", "byte/s", "L2 bandwidth achieved"),
        _c("l2_peak_bytes_per_cycle", "derived__lts__lts2xbar_bytes.sum.peak_sustained", "SpeedOfLight_HierarchicalSingleRooflineChart", "byte/cycle", "L2 peak bytes per cycle"),
        _c("lts_cycles_per_s", "lts__cycles_elapsed.avg.per_second", "SpeedOfLight_HierarchicalSingleRooflineChart", "hz", "L2 clock"),
        _c("l1_bytes_per_s", "derived__l1tex__lsu_writeback_bytes_mem_lgds.sum.per_second", "SpeedOfLight_HierarchicalSingleRooflineChart", "byte/s", "L1 bandwidth achieved"),
        _c("l1_peak_bytes_per_cycle", "derived__l1tex__lsu_writeback_bytes_mem_lgds.sum.peak_sustained", "SpeedOfLight_HierarchicalSingleRooflineChart", "byte/cycle", "L1 peak bytes per cycle"),
        _c("l1_cycles_per_s", "l1tex__cycles_elapsed.avg.per_second", "SpeedOfLight_HierarchicalSingleRooflineChart", "hz", "L1 clock"),
    ]
}


def _div(a, b):
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(b > 0, a / np.where(b > 0, b, 1.0), np.nan)


def _sum(*xs):
    return np.sum(xs, axis=0)


_UNITS = np.array(["dram", "l2", "l1tex"], dtype=object)


def _memory_unit(dram, l2, l1tex):
    stacked = np.vstack([dram, l2, l1tex])
    filled = np.where(np.isnan(stacked), -1.0, stacked)
    unit = _UNITS[np.argmax(filled, axis=0)].astype(object)
    unit[np.isnan(stacked).all(axis=0)] = None
    return unit


def _memory_pct(dram, l2, l1tex):
    stacked = np.vstack([dram, l2, l1tex])
    out = np.nanmax(np.where(np.isnan(stacked), -np.inf, stacked), axis=0)
    return np.where(np.isinf(out), np.nan, out)


def _busiest_unit(sm, memory, unit):
    out = np.where(np.nan_to_num(sm, nan=-1.0) >= np.nan_to_num(memory, nan=-1.0), "sm", unit).astype(object)
    out[np.isnan(sm) & np.isnan(memory)] = None
    return out


# On a tie the hardware limits come first: when registers allow as many blocks as the warp slots do,
# registers are not what limits occupancy.
_LIMITS = np.array(["warps", "blocks", "registers", "shared_mem"], dtype=object)


def _occupancy_limiter(regs, smem, warps, blocks):
    stacked = np.vstack([warps, blocks, regs, smem])
    filled = np.where(np.isnan(stacked), np.inf, stacked)
    limiter = _LIMITS[np.argmin(filled, axis=0)].astype(object)
    limiter[np.isnan(stacked).all(axis=0)] = None
    return limiter


def _ideal(sectors_per_request, bytes_per_sector):
    # Sectors a request needs when every byte fetched is used: the access width tells the ideal.
    return sectors_per_request * bytes_per_sector / 32.0


def _d(name, inputs, fn, unit, description):
    return Derived(name, tuple(inputs), fn, unit, description)


DERIVED: dict[str, Derived] = {
    d.name: d
    for d in [
        _d("memory_pct", ["dram_pct", "l2_pct", "l1tex_pct"], _memory_pct, "%", "memory throughput: the busiest of DRAM, L2, L1/TEX"),
        _d("memory_unit", ["dram_pct", "l2_pct", "l1tex_pct"], _memory_unit, "", "the busiest memory unit"),
        _d("busiest_unit", ["sm_pct", "memory_pct", "memory_unit"], _busiest_unit, "", "the unit closest to its peak: sm, dram, l2 or l1tex"),
        _d("busiest_pct", ["sm_pct", "memory_pct"], lambda a, b: np.fmax(a, b), "%", "throughput of the busiest unit, % of its peak"),
        _d("gld_sectors_per_request", ["gld_sectors", "gld_requests"], _div, "sector/request", "sectors per global load request"),
        _d("gst_sectors_per_request", ["gst_sectors", "gst_requests"], _div, "sector/request", "sectors per global store request"),
        _d("gld_ideal_sectors_per_request", ["gld_sectors_per_request", "gld_bytes_per_sector"], _ideal, "sector/request", "sectors per load request if every fetched byte were used"),
        _d("gst_ideal_sectors_per_request", ["gst_sectors_per_request", "gst_bytes_per_sector"], _ideal, "sector/request", "sectors per store request if every written byte were used"),
        _d("gld_excess_sectors_pct", ["gld_bytes_per_sector"], lambda b: 100.0 * (1.0 - b / 32.0), "%", "share of global load sector traffic that is wasted"),
        _d("gst_excess_sectors_pct", ["gst_bytes_per_sector"], lambda b: 100.0 * (1.0 - b / 32.0), "%", "share of global store sector traffic that is wasted"),
        _d("shared_ld_n_way", ["shared_ld_wavefronts", "shared_ld_instructions"], _div, "way", "wavefronts per shared load instruction (1 = conflict-free for 32-bit)"),
        _d("shared_st_n_way", ["shared_st_wavefronts", "shared_st_instructions"], _div, "way", "wavefronts per shared store instruction"),
        _d("shared_n_way", ["shared_ld_n_way", "shared_st_n_way"], lambda a, b: np.fmax(a, b), "way", "worst of load/store n-way bank conflict"),
        _d("shared_conflict_pct", ["shared_ld_conflicts", "shared_st_conflicts", "shared_ld_wavefronts", "shared_st_wavefronts"],
           lambda c1, c2, w1, w2: 100.0 * _div(c1 + c2, w1 + w2), "%", "share of shared-memory wavefronts caused by bank conflicts"),
        _d("blocks_per_sm", ["grid_size", "sm_count"], _div, "block/SM", "blocks in the grid per SM"),
        _d("divergence_pct", ["threads_per_warp_inst"], lambda t: 100.0 * (1.0 - t / 32.0), "%", "share of lanes idle per executed warp instruction"),
        _d("local_sectors", ["local_ld_sectors", "local_st_sectors"], _sum, "sector", "local-memory sectors (spills, stack arrays)"),
        _d("local_traffic_pct", ["local_sectors", "gld_sectors", "gst_sectors"], lambda l, a, b: 100.0 * _div(l, l + a + b), "%", "local-memory share of L1 load/store sector traffic"),
        _d("occupancy_ratio_pct", ["achieved_occupancy_pct", "theoretical_occupancy_pct"], lambda a, t: 100.0 * _div(a, t), "%", "achieved occupancy as % of theoretical"),
        _d("occupancy_limiter", ["occ_limit_registers", "occ_limit_shared_mem", "occ_limit_warps", "occ_limit_blocks"], _occupancy_limiter, "", "what caps blocks per SM"),
        _d("global_atomics", ["atomic_requests", "reduction_requests"], _sum, "request", "global atomic and reduction requests"),
        _d("l2_atomic_imbalance", ["l2_atomic_max_pct", "l2_atomic_avg_pct"], _div, "x", "busiest L2 slice's atomic load over the average (high = few hot addresses)"),
        _d("fp32_flops_per_s", ["ffma_per_cycle", "fadd_per_cycle", "fmul_per_cycle", "smsp_cycles_per_s"],
           lambda f, a, m, c: (2.0 * f + a + m) * c, "flop/s", "FP32 FLOP/s achieved"),
        _d("fp32_peak_flops_per_s", ["ffma_peak_per_cycle", "sm_cycles_per_s"], lambda p, c: 2.0 * p * c, "flop/s", "FP32 peak FLOP/s at the measured clock"),
        _d("dram_peak_bytes_per_s", ["dram_peak_bytes_per_cycle", "dram_cycles_per_s"], lambda p, c: p * c, "byte/s", "DRAM peak bandwidth"),
        _d("l2_peak_bytes_per_s", ["l2_peak_bytes_per_cycle", "lts_cycles_per_s"], lambda p, c: p * c, "byte/s", "L2 peak bandwidth"),
        _d("l1_peak_bytes_per_s", ["l1_peak_bytes_per_cycle", "l1_cycles_per_s"], lambda p, c: p * c, "byte/s", "L1 peak bandwidth"),
        _d("arithmetic_intensity", ["fp32_flops_per_s", "dram_bytes_per_s"], _div, "flop/byte", "FP32 FLOPs per DRAM byte"),
    ]
}

STRING_METRICS = {"memory_unit", "occupancy_limiter", "busiest_unit"}


def description(name: str) -> str:
    item = CANONICAL.get(name) or DERIVED.get(name)
    return item.description if item else name


def unit(name: str) -> str:
    item = CANONICAL.get(name) or DERIVED.get(name)
    return item.unit if item else ""


def raw_inputs(name: str) -> list[str]:
    """Raw ncu metrics (first alias of each) a canonical or derived name depends on."""
    if name in CANONICAL:
        return [CANONICAL[name].aliases[0]]
    if name in DERIVED:
        out: list[str] = []
        for inp in DERIVED[name].inputs:
            out += [m for m in raw_inputs(inp) if m not in out]
        return out
    return [name]  # a raw metric name used directly


def section_of(raw: str) -> str | None:
    for c in CANONICAL.values():
        if raw in c.aliases:
            return c.section
    return None


class MetricTable:
    """Canonical and derived metrics of every launch of a profile, computed on demand."""

    def __init__(self, frame: pd.DataFrame):
        self.frame = frame
        self.n = len(frame)
        self._values: dict[str, np.ndarray] = {}
        self._missing: dict[str, list[str]] = {}

    def get(self, name: str) -> np.ndarray:
        """Values for every launch (NaN / None where unknown)."""
        if name not in self._values:
            self._values[name], self._missing[name] = self._compute(name)
        return self._values[name]

    def missing(self, name: str) -> list[str]:
        """Raw metrics that were not collected at all, which leaves ``name`` unknown."""
        self.get(name)
        return self._missing[name]

    def known(self, name: str) -> bool:
        return name in CANONICAL or name in DERIVED or name in self.frame.columns

    def _raw(self, column: str) -> np.ndarray:
        values = self.frame[column]
        if values.dtype == object:
            return pd.to_numeric(values, errors="coerce").to_numpy(dtype=float)
        return values.to_numpy(dtype=float)

    def _compute(self, name: str) -> tuple[np.ndarray, list[str]]:
        if name in CANONICAL:
            for alias in CANONICAL[name].aliases:
                if alias in self.frame.columns:
                    return self._raw(alias), []
            return np.full(self.n, np.nan), [CANONICAL[name].aliases[0]]
        if name in DERIVED:
            item = DERIVED[name]
            args = [self.get(i) for i in item.inputs]
            missing: list[str] = []
            for i in item.inputs:
                missing += [m for m in self.missing(i) if m not in missing]
            # Partial inputs are fine for max-style quantities; the rest propagate NaN.
            return np.asarray(item.compute(*args)), missing
        if name in self.frame.columns:
            return self._raw(name), []
        return np.full(self.n, np.nan), [name]
