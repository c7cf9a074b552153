"""Canonical metrics and the quantities derived from them.

Rules talk about *canonical* names (``dram_pct``, ``gst_sectors_per_request``...), never about raw ncu
names, because raw names differ between GPUs and ncu versions: each canonical name has a list of
aliases, the first one present wins. Derived quantities are computed for all launches at once
(vectorized) so a report of 10,000 kernels costs little more than reading it.

A quantity whose inputs were not collected is NaN, and :class:`MetricTable` remembers which raw
metric was missing so the rules can say "not evaluated: <metric> not collected; re-profile with ...".
"""

from __future__ import annotations

import re
from itertools import repeat
from dataclasses import dataclass
from typing import Callable

from typing import TYPE_CHECKING

import numpy as np

from ncuwrap.kernel.attribution import WASTES
from ncuwrap.core.catalogue import Catalogue

if TYPE_CHECKING:
    from ncuwrap.kernel.reading.model import LaunchTable


@dataclass(frozen=True)
class Canonical:
    """A metric read from the report under one of its ncu names (aliases across ncu versions), with the section that collects it."""
    name: str
    aliases: tuple[str, ...]
    section: str  # the ncu section that collects it (for "re-profile with" hints)
    unit: str
    description: str


@dataclass(frozen=True)
class Derived:
    """A metric computed from others (its inputs and the function that computes it), for the rules and the renderers."""
    name: str
    inputs: tuple[str, ...]
    compute: Callable[..., np.ndarray]
    unit: str
    description: str
    # Inputs that refine the value when collected and are not reported missing when not (the
    # description says what stands in for them).
    optional: tuple[str, ...] = ()


# Pipe utilizations (ComputeWorkloadAnalysis), elapsed so they compare with the memory units. The
# 'shared' pipe (fp16 + tensor) is left out: it is busy whenever the tensor pipe is.
PIPES = {
    "tensor": ["sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed"],
    "fma": ["sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_elapsed", "sm__inst_executed_pipe_fma.avg.pct_of_peak_sustained_elapsed"],
    "alu": ["sm__pipe_alu_cycles_active.avg.pct_of_peak_sustained_elapsed", "sm__inst_executed_pipe_alu.avg.pct_of_peak_sustained_elapsed"],
    "fp64": ["sm__pipe_fp64_cycles_active.avg.pct_of_peak_sustained_elapsed", "sm__inst_executed_pipe_fp64.avg.pct_of_peak_sustained_elapsed"],
    "xu": ["sm__inst_executed_pipe_xu.avg.pct_of_peak_sustained_elapsed"],
    "lsu": ["sm__inst_executed_pipe_lsu.avg.pct_of_peak_sustained_elapsed"],
    "tex": ["sm__inst_executed_pipe_tex.avg.pct_of_peak_sustained_elapsed"],
    "adu": ["sm__inst_executed_pipe_adu.avg.pct_of_peak_sustained_elapsed"],
    "cbu": ["sm__inst_executed_pipe_cbu.avg.pct_of_peak_sustained_elapsed"],
    "uniform": ["sm__inst_executed_pipe_uniform.avg.pct_of_peak_sustained_elapsed"],
    "tma": ["sm__pipe_tma_cycles_active.avg.pct_of_peak_sustained_elapsed"],
}
# Tensor-core operations by input type (each multiply-add counts two), and the dense peak that type
# runs at per cycle: wgmma's on Hopper, mma.sync's where there is no wgmma metric.
TENSOR_TYPES = {
    "bf16": (["sm__ops_path_tensor_src_bf16_dst_fp32.sum"],
             ["sm__ops_path_tensor_op_hgmma_src_bf16_dst_fp32_sparsity_off.sum.peak_sustained",
              "sm__ops_path_tensor_op_hmma_src_bf16_dst_fp32_sparsity_off.sum.peak_sustained"]),
    "fp16": (["sm__ops_path_tensor_src_fp16.sum"],
             ["sm__ops_path_tensor_op_hgmma_src_fp16_sparsity_off.sum.peak_sustained",
              "sm__ops_path_tensor_op_hmma_src_fp16_dst_fp32_sparsity_off.sum.peak_sustained"]),
    "tf32": (["sm__ops_path_tensor_src_tf32_dst_fp32.sum"],
             ["sm__ops_path_tensor_op_hgmma_src_tf32_dst_fp32_sparsity_off.sum.peak_sustained",
              "sm__ops_path_tensor_op_hmma_src_tf32_dst_fp32_sparsity_off.sum.peak_sustained"]),
    "fp8": (["sm__ops_path_tensor_src_fp8_sparsity_off.sum", "sm__ops_path_tensor_src_fp8.sum"],
            ["sm__ops_path_tensor_src_fp8_sparsity_off.sum.peak_sustained", "sm__ops_path_tensor_src_fp8.sum.peak_sustained"]),
    "fp64": (["sm__ops_path_tensor_src_fp64.sum"], ["sm__ops_path_tensor_src_fp64.sum.peak_sustained"]),
    "int8": (["sm__ops_path_tensor_src_int8.sum"],
             ["sm__ops_path_tensor_op_igmma_src_int8_sparsity_off.sum.peak_sustained", "sm__ops_path_tensor_op_imma_src_int8_sparsity_off.sum.peak_sustained"]),
}
STALL_REASONS = ("long_scoreboard", "short_scoreboard", "barrier", "mio_throttle", "lg_throttle", "math_pipe_throttle", "wait", "not_selected",
                 "selected", "no_instruction", "branch_resolving", "dispatch_stall", "drain", "membar", "misc", "sleeping", "tex_throttle",
                 "imc_miss", "gmma")


def _c(name, aliases, section, unit, description):
    return Canonical(name, tuple(aliases) if isinstance(aliases, (list, tuple)) else (aliases,), section, unit, description)


CANONICAL: dict[str, Canonical] = {
    c.name: c
    for c in [
        _c("duration_ns", "gpu__time_duration.sum", "SpeedOfLight", "ns", "kernel duration under ncu (replayed, clocks as set by ncu: not a benchmark)"),
        _c("sm_pct", "sm__throughput.avg.pct_of_peak_sustained_elapsed", "SpeedOfLight", "%", "compute (SM) throughput, % of peak"),
        _c("dram_pct", ["gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed", "dram__throughput.avg.pct_of_peak_sustained_elapsed"], "SpeedOfLight", "%",
           "DRAM throughput, % of peak"),
        _c("l2_pct", "lts__throughput.avg.pct_of_peak_sustained_elapsed", "SpeedOfLight", "%", "L2 throughput, % of peak"),
        # The _active form is what ncu's details page shows; it is a little higher than _elapsed.
        _c("l1tex_pct", ["l1tex__throughput.avg.pct_of_peak_sustained_elapsed", "l1tex__throughput.avg.pct_of_peak_sustained_active"], "SpeedOfLight", "%",
           "L1/TEX throughput, % of peak"),
        _c("gld_sectors", "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum", "MemoryWorkloadAnalysis_Tables", "sector", "global load sectors"),
        _c("gld_requests", "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum", "MemoryWorkloadAnalysis_Tables", "request", "global load requests"),
        _c("gst_sectors", "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum", "MemoryWorkloadAnalysis_Tables", "sector", "global store sectors"),
        _c("gst_requests", "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum", "MemoryWorkloadAnalysis_Tables", "request", "global store requests"),
        _c("gld_bytes_per_sector", "smsp__sass_average_data_bytes_per_sector_mem_global_op_ld.ratio", "SourceCounters", "byte/sector",
           "useful bytes per global load sector (32 = fully used)"),
        _c("gst_bytes_per_sector", "smsp__sass_average_data_bytes_per_sector_mem_global_op_st.ratio", "SourceCounters", "byte/sector",
           "useful bytes per global store sector (32 = fully used)"),
        _c("shared_ld_wavefronts", "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum", "MemoryWorkloadAnalysis_Tables", "",
           "shared-memory load wavefronts"),
        _c("shared_st_wavefronts", "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum", "MemoryWorkloadAnalysis_Tables", "",
           "shared-memory store wavefronts"),
        _c("shared_ld_instructions", ["smsp__sass_inst_executed_op_shared_ld.sum", "smsp__inst_executed_op_shared_ld.sum"], "InstructionStats", "inst",
           "shared-memory load instructions (warp level)"),
        _c("shared_st_instructions", ["smsp__sass_inst_executed_op_shared_st.sum", "smsp__inst_executed_op_shared_st.sum"], "InstructionStats", "inst",
           "shared-memory store instructions (warp level)"),
        _c("shared_ld_conflicts", "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum", "MemoryWorkloadAnalysis_Tables", "",
           "shared load bank conflicts"),
        _c("shared_st_conflicts", "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum", "MemoryWorkloadAnalysis_Tables", "",
           "shared store bank conflicts"),
        _c("waves_per_sm", "launch__waves_per_multiprocessor", "LaunchStats", "", "waves of blocks per SM"),
        _c("grid_size", "launch__grid_size", "LaunchStats", "block", "blocks in the grid"),
        _c("block_size", "launch__block_size", "LaunchStats", "thread", "threads per block"),
        _c("sm_count", ["launch__sm_count", "device__attribute_multiprocessor_count"], "LaunchStats", "SM", "SMs on the device"),
        _c("cc_major", "device__attribute_compute_capability_major", "LaunchStats", "", "compute capability, major"),
        _c("cc_minor", "device__attribute_compute_capability_minor", "LaunchStats", "", "compute capability, minor"),
        _c("registers_per_thread", "launch__registers_per_thread", "LaunchStats", "register", "registers per thread"),
        _c("threads_per_warp_inst", "smsp__thread_inst_executed_per_inst_executed.ratio", "WarpStateStats", "thread",
           "active threads per executed warp instruction (32 = no divergence)"),
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
        _c("reduction_requests", "l1tex__t_requests_pipe_lsu_mem_global_op_red.sum", "MemoryWorkloadAnalysis_Tables", "request",
           "global reduction (atomic without return) requests"),
        _c("mio_pq_pct", "sm__mio_pq_read_cycles_active.avg.pct_of_peak_sustained_elapsed", "SpeedOfLight", "%",
           "SM's MIO queue read cycles, % of peak (a cycle per wavefront of a shared or global memory instruction)"),
        _c("l2_atomic_max_pct", "lts__d_atomic_input_cycles_active.max.pct_of_peak_sustained_elapsed", "MemoryWorkloadAnalysis_Chart", "%",
           "busiest L2 slice's atomic unit, % of peak"),
        _c("l2_atomic_avg_pct", "lts__d_atomic_input_cycles_active.avg.pct_of_peak_sustained_elapsed", "MemoryWorkloadAnalysis_Chart", "%",
           "average L2 slice's atomic unit, % of peak"),
        _c("ffma_per_cycle", "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum.per_cycle_elapsed", "SpeedOfLight_RooflineChart", "inst/cycle",
           "FP32 FMA thread instructions per cycle"),
        _c("fadd_per_cycle", "smsp__sass_thread_inst_executed_op_fadd_pred_on.sum.per_cycle_elapsed", "SpeedOfLight_RooflineChart", "inst/cycle",
           "FP32 add thread instructions per cycle"),
        _c("fmul_per_cycle", "smsp__sass_thread_inst_executed_op_fmul_pred_on.sum.per_cycle_elapsed", "SpeedOfLight_RooflineChart", "inst/cycle",
           "FP32 mul thread instructions per cycle"),
        _c("dfma_per_cycle", "smsp__sass_thread_inst_executed_op_dfma_pred_on.sum.per_cycle_elapsed", "SpeedOfLight_RooflineChart", "inst/cycle",
           "FP64 FMA thread instructions per cycle"),
        _c("dadd_per_cycle", "smsp__sass_thread_inst_executed_op_dadd_pred_on.sum.per_cycle_elapsed", "SpeedOfLight_RooflineChart", "inst/cycle",
           "FP64 add thread instructions per cycle"),
        _c("dmul_per_cycle", "smsp__sass_thread_inst_executed_op_dmul_pred_on.sum.per_cycle_elapsed", "SpeedOfLight_RooflineChart", "inst/cycle",
           "FP64 mul thread instructions per cycle"),
        _c("dfma_peak_per_cycle", "sm__sass_thread_inst_executed_op_dfma_pred_on.sum.peak_sustained", "SpeedOfLight_RooflineChart", "inst/cycle",
           "peak FP64 FMA thread instructions per cycle"),
        _c("smsp_cycles_per_s", "smsp__cycles_elapsed.avg.per_second", "SpeedOfLight_RooflineChart", "hz", "SM sub-partition clock"),
        _c("sm_cycles_per_s", "sm__cycles_elapsed.avg.per_second", "SpeedOfLight", "hz", "SM clock during the measurement"),
        _c("ffma_peak_per_cycle", "sm__sass_thread_inst_executed_op_ffma_pred_on.sum.peak_sustained", "SpeedOfLight_RooflineChart", "inst/cycle",
           "peak FP32 FMA thread instructions per cycle"),
        _c("dram_bytes_per_s", "dram__bytes.sum.per_second", "SpeedOfLight_RooflineChart", "byte/s", "DRAM bandwidth achieved"),
        _c("dram_read_bytes", "dram__bytes_read.sum", "MemoryWorkloadAnalysis", "byte", "bytes read from DRAM"),
        _c("dram_write_bytes", "dram__bytes_write.sum", "MemoryWorkloadAnalysis", "byte", "bytes written to DRAM"),
        _c("dram_peak_bytes_per_cycle", "dram__bytes.sum.peak_sustained", "SpeedOfLight_RooflineChart", "byte/cycle", "DRAM peak bytes per DRAM cycle"),
        _c("dram_cycles_per_s", "dram__cycles_elapsed.avg.per_second", "SpeedOfLight_RooflineChart", "hz", "DRAM clock"),
        _c("l1_peak_bytes_per_cycle", "derived__l1tex__lsu_writeback_bytes_mem_lgds.sum.peak_sustained", "SpeedOfLight_HierarchicalSingleRooflineChart",
           "byte/cycle", "L1 peak bytes per cycle"),
        _c("l1_cycles_per_s", "l1tex__cycles_elapsed.avg.per_second", "SpeedOfLight_HierarchicalSingleRooflineChart", "hz", "L1 clock"),
        # L2 data paths (the Speed-of-Light breakdown). lts__throughput can sit far above all of them on a
        # DRAM stream (an L2 sub-unit ncu does not export); ncu's own bottleneck rule then names DRAM.
        _c("l2_sectors_pct", "lts__t_sectors.avg.pct_of_peak_sustained_elapsed", "SpeedOfLight", "%", "L2 sector lookups, % of peak"),
        _c("l2_data_sectors_pct", "lts__d_sectors.avg.pct_of_peak_sustained_elapsed", "SpeedOfLight", "%", "L2 data-bank sectors, % of peak"),
        _c("l2_tag_pct", "lts__t_tag_requests.avg.pct_of_peak_sustained_elapsed", "SpeedOfLight", "%", "L2 tag requests, % of peak"),
        _c("l2_xbar_in_pct", "lts__xbar2lts_cycles_active.avg.pct_of_peak_sustained_elapsed", "SpeedOfLight", "%", "crossbar-to-L2 port busy, % of peak"),
        _c("l2_xbar_out_pct", "lts__lts2xbar_cycles_active.avg.pct_of_peak_sustained_elapsed", "SpeedOfLight", "%", "L2-to-crossbar port busy, % of peak"),
        _c("l2_read_requests", "lts__t_requests_srcunit_tex_op_read.sum", "MemoryWorkloadAnalysis_Tables", "request", "L2 read requests from L1"),
        _c("l2_write_requests", "lts__t_requests_srcunit_tex_op_write.sum", "MemoryWorkloadAnalysis_Tables", "request", "L2 write requests from L1"),
        _c("l2_tex_requests", "lts__t_requests_srcunit_tex.sum", "MemoryWorkloadAnalysis_Tables", "request", "L2 requests from L1 (all operations)"),
        # L1 data-pipe wavefronts: what the kernel's own loads and stores cost, against what wgmma's
        # shared-memory operand reads cost (counted in the same pipe).
        _c("l1_wavefronts_pct", "l1tex__data_pipe_lsu_wavefronts.sum.pct_of_peak_sustained_elapsed", "MemoryWorkloadAnalysis_Tables", "%",
           "L1 data pipe (all wavefronts), % of peak"),
        _c("shared_wavefronts_pct", "l1tex__data_pipe_lsu_wavefronts_mem_shared.sum.pct_of_peak_sustained_elapsed", "MemoryWorkloadAnalysis_Tables", "%",
           "L1 data pipe, shared-memory wavefronts, % of peak"),
        _c("shared_wavefronts", "l1tex__data_pipe_lsu_wavefronts_mem_shared.sum", "MemoryWorkloadAnalysis_Tables", "",
           "L1 data-pipe wavefronts of shared memory (all kinds)"),
        _c("gmma_pct", "sm__inst_executed_pipe_tensor_op_gmma.sum.pct_of_peak_sustained_elapsed", "ComputeWorkloadAnalysis", "%",
           "warpgroup MMA (wgmma) instructions issued, % of peak"),
        _c("gld_miss_sectors", "l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_miss.sum", "MemoryWorkloadAnalysis_Tables", "sector",
           "global load sectors that missed L1 (sent to L2)"),
        _c("local_ld_hit_pct", "l1tex__t_sector_pipe_lsu_mem_local_op_ld_hit_rate.pct", "MemoryWorkloadAnalysis_Tables", "%",
           "L1 hit rate of local-memory loads"),
        _c("l2_sectors", "lts__t_sectors.sum", "MemoryWorkloadAnalysis_Tables", "sector", "L2 sector lookups (all sources)"),
        _c("shared_atom_wavefronts", "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_atom.sum", "MemoryWorkloadAnalysis_Tables", "",
           "shared-memory atomic wavefronts"),
        _c("ldgsts_wavefronts", ["smsp__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_ldgsts.sum",
                                 "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ldgsts.sum"],
           "SourceCounters", "", "shared-memory wavefronts written by cp.async (LDGSTS)"),
        _c("ldgsts_sectors_cached", ["sm__sass_l1tex_t_sectors_pipe_lsu_mem_global_op_ldgsts_cache_access.sum",
                                     "l1tex__t_sectors_pipe_lsu_mem_global_op_ldgsts_cache_access.sum"],
           "SourceCounters", "sector", "global sectors read by cp.async through L1 (LDGSTS.ACCESS)"),
        _c("ldgsts_sectors_bypass", ["sm__sass_l1tex_t_sectors_pipe_lsu_mem_global_op_ldgsts_cache_bypass.sum"],
           "SourceCounters", "sector", "global sectors read by cp.async bypassing L1 (LDGSTS.BYPASS)"),
        _c("ldgsts_requests", ["sm__sass_l1tex_t_requests_pipe_lsu_mem_global_op_ldgsts.sum"],
           "SourceCounters", "request", "global cp.async (LDGSTS) requests"),
        _c("tma_ld_sectors", "l1tex__m_xbar2l1tex_read_sectors_mem_global_op_tma_ld.sum", "MemoryWorkloadAnalysis_Tables", "sector",
           "sectors the tensor memory accelerator (TMA) read from L2"),
        _c("tma_st_sectors", "l1tex__m_l1tex2xbar_write_sectors_mem_global_op_tma_st.sum", "MemoryWorkloadAnalysis_Tables", "sector",
           "sectors the tensor memory accelerator (TMA) wrote to L2"),
        _c("gatom_sectors", "l1tex__t_sectors_pipe_lsu_mem_global_op_atom.sum", "MemoryWorkloadAnalysis_Tables", "sector", "global atomic sectors"),
        _c("gred_sectors", "l1tex__t_sectors_pipe_lsu_mem_global_op_red.sum", "MemoryWorkloadAnalysis_Tables", "sector", "global reduction sectors"),
        _c("local_ld_requests", "l1tex__t_requests_pipe_lsu_mem_local_op_ld.sum", "MemoryWorkloadAnalysis_Tables", "request", "local-memory load requests"),
        _c("local_st_requests", "l1tex__t_requests_pipe_lsu_mem_local_op_st.sum", "MemoryWorkloadAnalysis_Tables", "request", "local-memory store requests"),
        _c("inst_executed", "smsp__inst_executed.sum", "InstructionStats", "inst", "warp instructions executed"),
        _c("issue_pct", "sm__inst_issued.avg.pct_of_peak_sustained_elapsed", "ComputeWorkloadAnalysis", "%", "instruction issue, % of peak"),
        *[_c(f"pipe_{pipe}_pct", aliases, "ComputeWorkloadAnalysis", "%", f"{pipe} pipe utilization, % of peak (elapsed)") for pipe, aliases in PIPES.items()],
        *[_c(f"tensor_ops_{dtype}", ops, "SpeedOfLight_HierarchicalTensorRooflineChart", "flop", f"tensor-core operations with {dtype} inputs")
          for dtype, (ops, _) in TENSOR_TYPES.items()],
        *[_c(f"tensor_peak_{dtype}_per_cycle", peak, "SpeedOfLight_HierarchicalTensorRooflineChart", "flop/cycle",
             f"dense tensor-core peak for {dtype} inputs, per cycle (whole GPU)")
          for dtype, (_, peak) in TENSOR_TYPES.items()],
        *[_c(f"stall_{reason}", f"smsp__average_warps_issue_stalled_{reason}_per_issue_active.ratio", "WarpStateStats", "warp/issue",
             f"warps stalled on {reason.replace('_', ' ')} per issue cycle") for reason in STALL_REASONS],
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
    # Sectors a request needs when every byte fetched is used: the access width tells the ideal. No
    # width (0: asynchronous copies only) leaves the ideal unknown, never 0.
    # A request touches at least one sector, whatever it uses of it (a lone thread's 4-byte store).
    with np.errstate(invalid="ignore"):
        ideal = np.where(bytes_per_sector > 0, sectors_per_request * np.minimum(bytes_per_sector, 32.0) / 32.0, np.nan)
        return np.where(np.isnan(ideal), np.nan, np.maximum(ideal, np.minimum(1.0, np.nan_to_num(sectors_per_request))))


def _d(name, inputs, fn, unit, description, optional=()):
    return Derived(name, tuple(inputs), fn, unit, description, tuple(optional))


def _nan0(x):
    return np.nan_to_num(np.asarray(x, dtype=float), nan=0.0)


def _l2_data_pct(sectors, data, tag, xin, xout, l2):
    stacked = np.vstack([sectors, data, tag, xin, xout])
    seen = ~np.isnan(stacked).all(axis=0)
    visible = np.nanmax(np.where(np.isnan(stacked), -np.inf, stacked), axis=0)
    return np.where(seen, visible, l2)


def _excess(sectors, bytes_per_sector, requests):
    # 0 where there is no such access; unknown (NaN) where there is traffic but no access width
    # (cp.async, TMA and other asynchronous copies have none: their waste is not measured here).
    # Every request needs one sector at least.
    with np.errstate(invalid="ignore"):
        needed = np.fmax(sectors * np.minimum(bytes_per_sector, 32.0) / 32.0, np.minimum(_nan0(requests), sectors))
        return np.where(_nan0(sectors) <= 0, 0.0, np.where(bytes_per_sector > 0, np.maximum(0.0, sectors - needed), np.nan))


def _atomic_sm_share(sectors, sms, duration_ns, hz, sm_pct, mio_pct):
    # Each pass of an atomic takes the SM's MIO queue a cycle; only where that queue is the SMs'
    # busiest work (sm_pct is the max of their sub-units) does removing the passes lower sm_pct.
    with np.errstate(divide="ignore", invalid="ignore"):
        atomic_pct = 100.0 * _div(sectors, sms * duration_ns * 1e-9 * hz)
        share = np.clip(_div(atomic_pct, sm_pct), 0.0, 1.0)
    return np.where(_nan0(mio_pct) >= 0.95 * sm_pct, np.nan_to_num(share, nan=0.0), 0.0)


def _share(part, whole):
    # A share of nothing is 0 (no traffic, no waste); of an unknown whole it is unknown.
    whole = np.asarray(whole, dtype=float)
    return np.where(np.isnan(whole), np.nan, np.where(whole > 0, _div(part, whole), 0.0))


def _argmax_named(names):
    labels = np.array(names, dtype=object)

    def pick(*values):
        stacked = np.vstack(values)
        filled = np.where(np.isnan(stacked), -np.inf, stacked)
        out = labels[np.argmax(filled, axis=0)].astype(object)
        out[np.isnan(stacked).all(axis=0) | (np.nanmax(np.where(np.isnan(stacked), -np.inf, stacked), axis=0) <= 0)] = None
        return out
    return pick


def _sum_known(*values):
    """The sum of the values known per launch; NaN where none is (not collected is not zero)."""
    stacked = np.vstack([np.asarray(v, dtype=float) for v in values])
    return np.where(np.isnan(stacked).all(axis=0), np.nan, np.nansum(stacked, axis=0))


def _max_or_last(*values):
    """The largest of all but the last value, or the last where none of them is known."""
    stacked = np.vstack(values[:-1])
    seen = ~np.isnan(stacked).all(axis=0)
    return np.where(seen, np.nanmax(np.where(np.isnan(stacked), -np.inf, stacked), axis=0), values[-1])


def _max_of(*values):
    stacked = np.vstack(values)
    out = np.nanmax(np.where(np.isnan(stacked), -np.inf, stacked), axis=0)
    return np.where(np.isinf(out), np.nan, out)


def _stall_rank(rank: int, what: str):
    # "selected" is the issuing warp itself and "not_selected" an eligible warp passed over: no stall.
    labels = np.array(STALL_REASONS, dtype=object)
    counted = np.array([r not in ("selected", "not_selected") for r in STALL_REASONS])

    def pick(*values):
        stacked = np.where(counted[:, None], np.vstack([_nan0(v) for v in values]), 0.0)
        total = stacked.sum(axis=0)
        order = np.argsort(-stacked, axis=0, kind="stable")[rank]
        top = stacked[order, np.arange(stacked.shape[1])]
        if what == "share":
            return np.where(total > 0, 100.0 * top / np.where(total > 0, total, 1.0), np.nan)
        out = labels[order].astype(object)
        out[(total <= 0) | (top <= 0)] = None
        return out
    return pick


def _roof_kind(fp32, fp64, tensor, dtype):
    f32, f64, ten = _nan0(fp32), _nan0(fp64), _nan0(tensor)
    out = np.where((ten > 0) & (ten >= f32) & (ten >= f64), "tensor", np.where((f64 > 0) & (f64 > f32), "fp64", "fp32")).astype(object)
    labels = np.array([f"{d} tensor" if d else "tensor" for d in dtype], dtype=object) if len(dtype) else out
    out = np.where(out == "tensor", labels, out).astype(object)
    out[np.isnan(np.asarray(fp32, dtype=float)) & (ten <= 0) & (f64 <= 0)] = None
    return out


def _roof_pick(kind, fp32, fp64, tensor):
    kind = np.asarray(kind, dtype=object)
    is_tensor = np.array([isinstance(k, str) and k.endswith("tensor") for k in kind], dtype=bool)
    return np.where(is_tensor, tensor, np.where(kind == "fp64", fp64, fp32))


_PIPE_NAMES = tuple(PIPES)
_TENSOR_NAMES = tuple(TENSOR_TYPES)


def _tensor_peak(dtype, sm_clock, *peaks):
    by_type = dict(zip(_TENSOR_NAMES, peaks))
    out = np.full(len(sm_clock), np.nan)
    for name, peak in by_type.items():
        out = np.where(dtype == name, peak * sm_clock, out)
    return out


# Kernels whose name says matrix multiply or convolution (cuBLAS's sgemm/xmma/nvjet, CUTLASS, cuDNN's
# implicit GEMMs, PyTorch's cdist and bmm, hand-written gemm/matmul kernels).
# "mma" only as a word of its own (not GammaBeta, AdamMath), "conv" not as "convert".
_MATMUL_NAME = re.compile(r"(?i:gemm|matmul|xmma|wmma|wgmma|nvjet|cdist|bmm|fprop|dgrad|wgrad|conv(?!ert))|(?<![A-Za-z])mma(?![a-z])")
# Without such a name, counters show a tiled FP32 GEMM: FP32 FMAs at 30% of the pipe's peak or more,
# fed from shared memory (a shared load per 100 instructions or more: cuBLAS's SGEMM issues 4; an FMA
# chain on registers none), with at least 10 FLOPs per DRAM byte (a stream has a fraction of one).
_GEMM_FP32_PEAK_SHARE, _GEMM_SHARED_LOADS, _GEMM_INTENSITY = 0.3, 0.01, 10.0
# A thread's loads counted as in flight together: an unrolled body issues a few before their use; a
# loop of many loads (grid-stride) has about as many in flight as its body unrolls.
_MAX_LOADS_IN_FLIGHT = 4.0


def _ideal_requests(requests, ideal_sectors):
    # One L2 request per 128-byte line (4 sectors) a coalesced instruction touches, at least one.
    return requests * np.fmax(1.0, ideal_sectors / 4.0)


def _beyond_share(got, ideal, total):
    """What ``got`` has beyond ``ideal``, as a share of ``total``."""
    return _share(np.maximum(0.0, got - ideal), total)


def _kernel_kind(name, fp32, fp64, fp32_peak, tensor_dtype, shared_loads, instructions, intensity):
    """What the counters (and the name) say a kernel is: 'fp32_matmul', 'fp64_matmul', 'tensor_matmul', or None."""
    f32, f64, peak = _nan0(fp32), _nan0(fp64), np.asarray(fp32_peak, dtype=float)
    # Each distinct name searched once: a report launches the same few kernels many times.
    names = list(name)
    matmul = {n: bool(_MATMUL_NAME.search(n)) for n in set(names) if isinstance(n, str)}
    named = np.fromiter(map(matmul.get, names, repeat(False)), dtype=bool, count=len(names))
    dtypes = np.asarray(tensor_dtype, dtype=object)
    no_tensor = np.equal(dtypes, None) | (dtypes != dtypes)  # None or NaN, compared element by element
    busy_fp32 = np.where(peak > 0, f32 / np.where(peak > 0, peak, 1.0), 0.0)
    # Named: FP32 math at 5% of its peak or more is the kernel's work, not an epilogue's.
    fp32_named = named & no_tensor & (f32 >= f64) & (busy_fp32 >= 0.05)
    fed = _nan0(_div(_nan0(shared_loads), np.asarray(instructions, dtype=float))) >= _GEMM_SHARED_LOADS
    fp32_tiled = no_tensor & (busy_fp32 >= _GEMM_FP32_PEAK_SHARE) & fed & (_nan0(intensity) >= _GEMM_INTENSITY)
    out = np.full(len(f32), None, dtype=object)
    out[~no_tensor & named] = "tensor_matmul"
    out[named & no_tensor & (f64 > f32)] = "fp64_matmul"
    out[fp32_named | fp32_tiled] = "fp32_matmul"
    # Without the FP32 counters (a details page, a targeted collection) the arithmetic is unknown.
    out[np.isnan(np.asarray(fp32, dtype=float))] = None
    return out


DERIVED: dict[str, Derived] = {
    d.name: d
    for d in [
        _d("l2_data_pct", ["l2_sectors_pct", "l2_data_sectors_pct", "l2_tag_pct", "l2_xbar_in_pct", "l2_xbar_out_pct", "l2_pct"], _l2_data_pct, "%",
           "L2 throughput on its data paths (sectors, tags, crossbar ports); lts__throughput where they were not collected",
           optional=["l2_sectors_pct", "l2_data_sectors_pct", "l2_tag_pct", "l2_xbar_in_pct", "l2_xbar_out_pct"]),
        _d("tensor_operand_wavefronts", ["shared_wavefronts", "shared_ld_wavefronts", "shared_st_wavefronts", "shared_atom_wavefronts", "ldgsts_wavefronts"],
           lambda total, ld, st, atom, cp: np.maximum(0.0, total - ld - st - _nan0(atom) - _nan0(cp)), "",
           "shared-memory wavefronts not from the kernel's loads, stores, atomics or cp.async: wgmma operand reads",
           optional=["shared_atom_wavefronts", "ldgsts_wavefronts"]),
        # Only a kernel that issues wgmma has operand reads to leave out; the few other shared wavefronts
        # of an ordinary kernel (ldmatrix, ...) stay its own L1 work.
        _d("l1tex_operand_pct", ["tensor_operand_wavefronts", "shared_wavefronts", "shared_wavefronts_pct", "gmma_pct"],
           lambda op, sh, pct, gmma: np.where((_nan0(sh) > 0) & (_nan0(gmma) > 0), pct * _div(op, sh), 0.0), "%",
           "L1 data pipe serving tensor-core (wgmma) operands, % of peak"),
        _d("l1_wavefronts", ["shared_wavefronts", "shared_wavefronts_pct", "l1_wavefronts_pct"],
           lambda sh, shp, allp: np.where(_nan0(shp) > 0, sh * _div(allp, shp), np.nan), "",
           "L1 data-pipe wavefronts, all kinds (scaled from the shared ones)"),
        _d("l1tex_net_pct", ["l1tex_pct", "l1tex_operand_pct"], lambda l1, op: np.maximum(0.0, l1 - _nan0(op)), "%",
           "L1/TEX throughput of the kernel's own loads and stores (wgmma operand reads from shared memory left out: they are the tensor "
           "pipe's work); all of L1/TEX where the shared-memory wavefronts were not collected", optional=["l1tex_operand_pct"]),
        _d("memory_pct", ["dram_pct", "l2_data_pct", "l1tex_net_pct"], _memory_pct, "%", "memory throughput: the busiest of DRAM, L2, L1/TEX"),
        _d("memory_unit", ["dram_pct", "l2_data_pct", "l1tex_net_pct"], _memory_unit, "", "the busiest memory unit"),
        _d("compute_pipe", [f"pipe_{p}_pct" for p in _PIPE_NAMES], _argmax_named(_PIPE_NAMES), "", "the busiest SM pipe",
           optional=[f"pipe_{p}_pct" for p in _PIPE_NAMES if p != "tensor"]),
        _d("compute_pipe_pct", [f"pipe_{p}_pct" for p in _PIPE_NAMES], _max_of, "%", "utilization of the busiest SM pipe, % of its peak",
           optional=[f"pipe_{p}_pct" for p in _PIPE_NAMES if p != "tensor"]),
        _d("tensor_dtype", [f"tensor_ops_{t}" for t in _TENSOR_NAMES], _argmax_named(_TENSOR_NAMES), "", "input type of most tensor-core operations",
           optional=[f"tensor_ops_{t}" for t in _TENSOR_NAMES]),
        _d("tensor_flops_per_s", [f"tensor_ops_{t}" for t in _TENSOR_NAMES] + ["duration_ns"],
           lambda *a: _div(np.sum([_nan0(x) for x in a[:-1]], axis=0), a[-1] * 1e-9), "flop/s", "tensor-core FLOP/s achieved (all input types)",
           optional=[f"tensor_ops_{t}" for t in _TENSOR_NAMES]),
        _d("tensor_peak_flops_per_s", ["tensor_dtype", "sm_cycles_per_s"] + [f"tensor_peak_{t}_per_cycle" for t in _TENSOR_NAMES], _tensor_peak, "flop/s",
           "dense tensor-core peak for the kernel's input type at the measured clock", optional=[f"tensor_peak_{t}_per_cycle" for t in _TENSOR_NAMES]),
        _d("tensor_peak_pct", ["tensor_flops_per_s", "tensor_peak_flops_per_s"], lambda a, p: 100.0 * _div(a, p), "%",
           "tensor-core FLOP/s as % of that type's dense peak"),
        _d("stall_top", [f"stall_{r}" for r in STALL_REASONS], _stall_rank(0, "name"), "",
           "the warp stall reason with the most stall cycles per issued instruction",
           optional=[f"stall_{r}" for r in STALL_REASONS[1:]]),
        _d("stall_top_pct", [f"stall_{r}" for r in STALL_REASONS], _stall_rank(0, "share"), "%", "its share of all stall cycles",
           optional=[f"stall_{r}" for r in STALL_REASONS[1:]]),
        _d("stall_second", [f"stall_{r}" for r in STALL_REASONS], _stall_rank(1, "name"), "", "the second warp stall reason",
           optional=[f"stall_{r}" for r in STALL_REASONS[1:]]),
        _d("stall_second_pct", [f"stall_{r}" for r in STALL_REASONS], _stall_rank(1, "share"), "%", "its share of all stall cycles",
           optional=[f"stall_{r}" for r in STALL_REASONS[1:]]),
        _d("busiest_unit", ["sm_pct", "memory_pct", "memory_unit"], _busiest_unit, "", "the unit closest to its peak: sm, dram, l2 or l1tex"),
        _d("busiest_pct", ["sm_pct", "memory_pct"], lambda a, b: np.fmax(a, b), "%", "throughput of the busiest unit, % of its peak"),
        _d("gld_ldg_sectors", ["gld_sectors", "ldgsts_sectors_cached", "ldgsts_sectors_bypass"], lambda s, a, b: np.maximum(0.0, s - _nan0(a) - _nan0(b)),
           "sector", "global load sectors of ordinary loads (cp.async's counted apart when collected)", optional=["ldgsts_sectors_cached",
                                                                                                                  "ldgsts_sectors_bypass"]),
        _d("gld_ldg_requests", ["gld_requests", "ldgsts_requests"], lambda r, a: np.maximum(0.0, r - _nan0(a)), "request",
           "global load requests of ordinary loads", optional=["ldgsts_requests"]),
        _d("gld_sectors_per_request", ["gld_ldg_sectors", "gld_ldg_requests"], _div, "sector/request", "sectors per global load request"),
        _d("gst_sectors_per_request", ["gst_sectors", "gst_requests"], _div, "sector/request", "sectors per global store request"),
        _d("gld_ideal_sectors_per_request", ["gld_sectors_per_request", "gld_bytes_per_sector"], _ideal, "sector/request",
           "sectors per load request if every fetched byte were used"),
        _d("gst_ideal_sectors_per_request", ["gst_sectors_per_request", "gst_bytes_per_sector"], _ideal, "sector/request",
           "sectors per store request if every written byte were used"),
        _d("gld_excess_sectors_pct", ["gld_bytes_per_sector"], lambda b: np.where(b > 0, 100.0 * (1.0 - np.minimum(b, 32.0) / 32.0), np.nan), "%",
           "share of global load sector traffic that is wasted"),
        _d("gst_excess_sectors_pct", ["gst_bytes_per_sector"], lambda b: np.where(b > 0, 100.0 * (1.0 - np.minimum(b, 32.0) / 32.0), np.nan), "%",
           "share of global store sector traffic that is wasted"),
        # A residue of under 1% of the load sectors left after taking cp.async's out is counter skew, not loads.
        _d("gld_excess_sectors", ["gld_ldg_sectors", "gld_bytes_per_sector", "gld_sectors", "gld_ldg_requests"],
           lambda ldg, bps, all_, req: _excess(np.where(ldg < 0.01 * _nan0(all_), 0.0, ldg), bps, req), "sector", "global load sectors fetched but not used"),
        _d("gst_excess_sectors", ["gst_sectors", "gst_bytes_per_sector", "gst_requests"], _excess, "sector",
           "global store sectors written beyond the bytes stored"),
        # What L1 sends to L2: load misses, stores (written through), atomics, local misses. (lts__t_sectors
        # counts more: on Hopper the two L2 halves forward requests to each other.)
        _d("l2_from_l1_sectors", ["gld_miss_sectors", "gst_sectors", "gatom_sectors", "gred_sectors", "local_ld_sectors", "local_ld_hit_pct",
                                  "local_st_sectors",
                                  "tma_ld_sectors", "tma_st_sectors"],
           lambda miss, st, atom, red, lld, hit, lst, tld, tst: (_nan0(miss) + _nan0(st) + _nan0(atom) + _nan0(red) + _nan0(lld) * (1.0 - _nan0(hit) / 100.0)
                                                                 + _nan0(lst) + _nan0(tld) + _nan0(tst)),
           "sector", "sectors the SM sends to and takes from L2 (load misses, stores, atomics, local misses, TMA copies)",
           optional=["gatom_sectors", "gred_sectors", "local_ld_hit_pct", "tma_ld_sectors", "tma_st_sectors"]),
        _d("l1_sectors", ["gld_sectors", "gst_sectors", "local_sectors", "gatom_sectors", "gred_sectors"],
           _sum_known, "sector", "global and local sectors through L1 (loads incl. cp.async, stores, atomics)",
           optional=["gatom_sectors", "gred_sectors"]),
        # What each waste costs at each level: its sectors as a share of that level's traffic. Unused load
        # sectors that hit in L1 (another instruction of the warp reads the rest) never reach L2.
        # L1's work: global/local sectors looked up, plus shared-memory wavefronts through the same data pipe.
        _d("l1_work", ["l1_sectors", "shared_wavefronts"], lambda s, w: s + _nan0(w), "", "L1 work: global/local sectors plus shared-memory wavefronts",
           optional=["shared_wavefronts"]),
        _d("gld_waste_share", ["gld_excess_sectors", "l1_work"], _share, "", "unused load sectors as a share of L1's work"),
        _d("gld_l2_excess_sectors", ["gld_ldg_sectors", "gld_sectors", "gld_miss_sectors", "gld_bytes_per_sector"],
           lambda ldg, all_, miss, bps: np.where(
               _nan0(ldg) < 0.01 * _nan0(all_), 0.0,
               np.where(bps > 0, np.maximum(0.0, miss * _div(ldg, all_) - ldg * np.minimum(bps, 32.0) / 32.0), np.nan)),
           "sector", "load sectors sent to L2 beyond the bytes the loads use"),
        _d("gld_l2_waste_share", ["gld_l2_excess_sectors", "l2_from_l1_sectors"], _share, "", "unused load sectors as a share of the sectors L1 sends to L2"),
        _d("gst_waste_share", ["gst_excess_sectors", "l1_work"], _share, "", "excess store sectors as a share of L1's work"),
        _d("gst_l2_waste_share", ["gst_excess_sectors", "l2_from_l1_sectors"], _share, "",
           "excess store sectors as a share of the sectors L1 sends to L2 (stores go through)"),
        _d("local_share", ["local_sectors", "l1_work"], _share, "", "local-memory sectors as a share of L1's work"),
        _d("local_l2_share", ["local_ld_sectors", "local_ld_hit_pct", "local_st_sectors", "l2_from_l1_sectors"],
           lambda ld, hit, st, l2: _share(ld * (1.0 - _nan0(hit) / 100.0) + st, l2), "",
           "local-memory sectors reaching L2 as a share of the sectors L1 sends to L2"),
        _d("atomic_share", ["gatom_sectors", "gred_sectors", "l2_from_l1_sectors"], lambda a, r, t: _share(_nan0(a) + _nan0(r), t), "",
           "global atomic and reduction sectors as a share of the sectors L1 sends to L2", optional=["gatom_sectors", "gred_sectors"]),
        _d("atomic_l1_share", ["gatom_sectors", "gred_sectors", "l1_work"], lambda a, r, t: _share(_nan0(a) + _nan0(r), t), "",
           "global atomic and reduction sectors as a share of L1's work", optional=["gatom_sectors", "gred_sectors"]),
        _d("spill_inst_share", ["local_ld_requests", "local_st_requests", "inst_executed"], lambda a, b, i: _share(a + b, i), "",
           "local-memory load/store instructions as a share of all warp instructions"),
        _d("shared_conflicts", ["shared_ld_conflicts", "shared_st_conflicts"], _sum, "", "shared-memory bank conflicts (extra wavefronts)"),
        _d("shared_conflict_share", ["shared_conflicts", "l1_wavefronts"], _share, "", "bank-conflict wavefronts as a share of all L1 data-pipe wavefronts"),
        _d("divergence_share", ["threads_per_warp_inst"], lambda t: np.clip(1.0 - t / 32.0, 0.0, 1.0), "", "share of SIMT lanes idle per warp instruction"),
        _d("async_load_share", ["tma_ld_sectors", "ldgsts_sectors_cached", "ldgsts_sectors_bypass", "gld_sectors"],
           lambda tma, a, b, gld: _share(_nan0(tma) + _nan0(a) + _nan0(b), _nan0(tma) + _nan0(gld)), "",
           "share of global loads made by asynchronous copies (TMA, cp.async): pipelined by the kernel, not hidden by warps",
           optional=["tma_ld_sectors", "ldgsts_sectors_cached", "ldgsts_sectors_bypass"]),
        _d("grid_fill", ["waves_per_sm"], lambda w: np.clip(w, 0.0, 1.0), "", "share of the GPU's block slots the grid fills (1 = at least one full wave)"),
        _d("grid_fill_pct", ["grid_fill"], lambda f: 100.0 * f, "%", "share of the GPU's block slots the grid fills"),
        _d("blocks_per_sm_max", ["occ_limit_registers", "occ_limit_shared_mem", "occ_limit_warps", "occ_limit_blocks"],
           lambda *x: np.fmin.reduce(np.vstack(x), axis=0), "block", "blocks one SM can hold for this launch (the tightest occupancy limit)"),
        _d("occupancy_fill", ["achieved_occupancy_pct"], lambda a: np.clip(a / 100.0, 0.0, 1.0), "", "achieved occupancy as a share of the SM's warp slots"),
        _d("atomic_hot_share", ["l2_atomic_imbalance"], lambda i: np.where(i > 1, 1.0 - 1.0 / i, 0.0), "",
           "share of the hottest L2 slice's atomic work that spreading the addresses evenly would remove"),
        # Lanes of one request on one address serialize: a request costs L2 (and the SM's MIO queue) a
        # pass, a sector, per lane on its busiest address (32 for a reduction to one value, ~11 for a
        # 4-bin histogram). Reduced in the block first, a block sends one request: one pass.
        _d("atomic_sectors", ["gatom_sectors", "gred_sectors"], lambda a, r: _nan0(a) + _nan0(r), "sector",
           "global atomic and reduction sectors (passes: one per lane on the same address)", optional=["gatom_sectors", "gred_sectors"]),
        _d("atomic_block_share", ["atomic_sectors", "grid_size"], lambda s, g: np.where(s > 0, 1.0 - np.clip(_div(g, s), 0.0, 1.0), 0.0), "",
           "share of the atomics' passes that one atomic request per block would remove"),
        _d("atomic_fix_share", ["atomic_hot_share", "atomic_block_share"], lambda h, b: np.fmax(h, b), "",
           "share of the hottest L2 slice's atomic work the fix removes: a block reduction or spread addresses, the larger"),
        _d("atomic_sm_share", ["atomic_sectors", "sm_count", "duration_ns", "sm_cycles_per_s", "sm_pct", "mio_pq_pct"], _atomic_sm_share, "",
           "share of the SMs' busiest work that the atomics' passes take, where the MIO queue is that work", optional=["mio_pq_pct"]),
        _d("shared_ld_n_way", ["shared_ld_wavefronts", "shared_ld_instructions"], _div, "way",
           "wavefronts per shared load instruction (1 = conflict-free for 32-bit)"),
        _d("shared_st_n_way", ["shared_st_wavefronts", "shared_st_instructions"], _div, "way", "wavefronts per shared store instruction"),
        _d("shared_n_way", ["shared_ld_n_way", "shared_st_n_way"], lambda a, b: np.fmax(a, b), "way", "worst of load/store n-way bank conflict"),
        _d("shared_conflict_pct", ["shared_ld_conflicts", "shared_st_conflicts", "shared_ld_wavefronts", "shared_st_wavefronts"],
           lambda c1, c2, w1, w2: 100.0 * _div(c1 + c2, w1 + w2), "%", "share of shared-memory wavefronts caused by bank conflicts"),
        _d("blocks_per_sm", ["grid_size", "sm_count"], _div, "block/SM", "blocks in the grid per SM"),
        _d("divergence_pct", ["threads_per_warp_inst"], lambda t: 100.0 * (1.0 - t / 32.0), "%", "share of lanes idle per executed warp instruction"),
        _d("local_sectors", ["local_ld_sectors", "local_st_sectors"], _sum, "sector", "local-memory sectors (spills, stack arrays)"),
        _d("local_traffic_pct", ["local_sectors", "gld_sectors", "gst_sectors"], lambda loc, a, b: 100.0 * _div(loc, loc + a + b), "%",
           "local-memory share of L1 load/store sector traffic"),
        _d("occupancy_ratio_pct", ["achieved_occupancy_pct", "theoretical_occupancy_pct"], lambda a, t: 100.0 * _div(a, t), "%",
           "achieved occupancy as % of theoretical"),
        _d("occupancy_limiter", ["occ_limit_registers", "occ_limit_shared_mem", "occ_limit_warps", "occ_limit_blocks"], _occupancy_limiter, "",
           "what caps blocks per SM"),
        _d("global_atomics", ["atomic_requests", "reduction_requests"], _sum, "request", "global atomic and reduction requests"),
        _d("l2_atomic_imbalance", ["l2_atomic_max_pct", "l2_atomic_avg_pct"], _div, "x",
           "busiest L2 slice's atomic load over the average (high = few hot addresses)"),
        _d("fp32_flops_per_s", ["ffma_per_cycle", "fadd_per_cycle", "fmul_per_cycle", "smsp_cycles_per_s"],
           lambda f, a, m, c: (2.0 * f + a + m) * c, "flop/s", "FP32 FLOP/s achieved"),
        _d("fp32_peak_flops_per_s", ["ffma_peak_per_cycle", "sm_cycles_per_s"], lambda p, c: 2.0 * p * c, "flop/s", "FP32 peak FLOP/s at the measured clock"),
        _d("dram_peak_bytes_per_s", ["dram_peak_bytes_per_cycle", "dram_cycles_per_s"], lambda p, c: p * c, "byte/s", "DRAM peak bandwidth"),
        _d("fp64_flops_per_s", ["dfma_per_cycle", "dadd_per_cycle", "dmul_per_cycle", "smsp_cycles_per_s"],
           lambda f, a, m, c: (2.0 * f + a + m) * c, "flop/s", "FP64 FLOP/s achieved (not on tensor cores)"),
        _d("fp64_peak_flops_per_s", ["dfma_peak_per_cycle", "sm_cycles_per_s"], lambda p, c: 2.0 * p * c, "flop/s", "FP64 peak FLOP/s at the measured clock"),
        # The roof that applies: the kind of arithmetic the kernel does most of (FP32, FP64, or tensor
        # cores with the input type's dense peak). FP32 where the others were not collected.
        _d("roof_kind", ["fp32_flops_per_s", "fp64_flops_per_s", "tensor_flops_per_s", "tensor_dtype"], _roof_kind, "",
           "the compute roof the kernel is judged against: fp32, fp64, or '<type> tensor'", optional=["fp64_flops_per_s", "tensor_flops_per_s",
                                                                                                      "tensor_dtype"]),
        _d("roof_flops_per_s", ["roof_kind", "fp32_flops_per_s", "fp64_flops_per_s", "tensor_flops_per_s"], _roof_pick, "flop/s",
           "FLOP/s achieved in the arithmetic of the roof that applies", optional=["fp64_flops_per_s", "tensor_flops_per_s"]),
        _d("roof_peak_flops_per_s", ["roof_kind", "fp32_peak_flops_per_s", "fp64_peak_flops_per_s", "tensor_peak_flops_per_s"], _roof_pick, "flop/s",
           "the peak of the roof that applies, at the measured clock", optional=["fp64_peak_flops_per_s", "tensor_peak_flops_per_s"]),
        # The L2 point counts all of L2's traffic, both directions and every source (lts__t_sectors: the SMs'
        # loads and stores, TMA, DRAM fills): at least what DRAM serves. Nsight Compute's hierarchical
        # roofline counts L2-to-SM bytes only (derived__lts__lts2xbar_bytes), which puts a write-only
        # kernel's L2 point at a few GB/s beside 1.5 TB/s of DRAM writes (docs/roofline.md). The roof is
        # the same sectors' peak: the point sits at l2_sectors_pct of it.
        _d("l2_bytes_per_s", ["l2_sectors", "duration_ns"], lambda s, d: _div(32.0 * s, d * 1e-9), "byte/s",
           "L2 bandwidth achieved: every sector looked up in L2 (lts__t_sectors), 32 bytes each"),
        _d("l2_peak_bytes_per_s", ["l2_bytes_per_s", "l2_sectors_pct"], lambda b, p: _div(100.0 * b, p), "byte/s",
           "L2 peak bandwidth of the same sectors"),
        # The L1 point counts every global and local sector L1 looked up, loads, stores and atomics
        # (l1_sectors: within 0.3% of l1tex__t_sectors on every kernel of tests/data that uses L1, and
        # collected by targeted collection for the rules anyway). Nsight Compute's counts what L1's LSU path
        # returns to the SMs (derived__l1tex__lsu_writeback_bytes_mem_lgds), loads only (docs/roofline.md).
        # Its roof stays ncu's L1 roof (that path's peak: 128 bytes a cycle per SM on the H200), which only
        # the hierarchical roofline section records: targeted collection draws the point without it.
        _d("l1_bytes_per_s", ["l1_sectors", "duration_ns"], lambda s, d: _div(32.0 * s, d * 1e-9), "byte/s",
           "L1 bandwidth achieved: every global and local sector L1 looked up, 32 bytes each"),
        _d("l1_peak_bytes_per_s", ["l1_peak_bytes_per_cycle", "l1_cycles_per_s"], lambda p, c: p * c, "byte/s", "L1 peak bandwidth"),
        _d("arithmetic_intensity", ["fp32_flops_per_s", "dram_bytes_per_s"], _div, "flop/byte", "FP32 FLOPs per DRAM byte"),
        # What a fixed kernel keeps of DRAM's work and can reach (estimates, rules/default.yaml 'reach').
        _d("gld_ideal_bytes", ["gld_ldg_requests", "gld_ideal_sectors_per_request"], lambda r, i: 32.0 * r * i, "byte",
           "bytes the global loads would fetch if every sector fetched were used"),
        # L2's work is sectors (data paths) and requests (tags, the crossbar in): a request per line a
        # warp touches. A scattered 4-byte store is a request of its own; the same stores coalesced
        # are one request per 128-byte line (the strided vecadd: 67M write requests, coalesced 2M).
        _d("l2_sector_pct", ["l2_sectors_pct", "l2_data_sectors_pct", "l2_xbar_out_pct", "l2_pct"], _max_or_last, "%",
           "L2's sector work (lookups, data banks, the port back to L1), % of peak; lts__throughput without them"),
        _d("l2_request_pct", ["l2_tag_pct", "l2_xbar_in_pct"], _max_of, "%", "L2's per-request work (tag lookups, the crossbar port in), % of peak"),
        _d("gld_ideal_requests", ["gld_ldg_requests", "gld_ideal_sectors_per_request"], _ideal_requests, "request",
           "L2 requests the global loads would make if coalesced (one per 128-byte line, at least one per instruction)"),
        _d("gst_ideal_requests", ["gst_requests", "gst_ideal_sectors_per_request"], _ideal_requests, "request",
           "L2 requests the global stores would make if coalesced"),
        _d("gld_l2_request_waste_share", ["l2_read_requests", "gld_ideal_requests", "l2_tex_requests"], _beyond_share, "",
           "L2 read requests beyond coalesced loads', share of L1's requests to L2"),
        _d("gst_l2_request_waste_share", ["l2_write_requests", "gst_ideal_requests", "l2_tex_requests"], _beyond_share, "",
           "L2 write requests beyond coalesced stores', share of L1's requests to L2"),
        _d("gld_dram_waste_share", ["dram_read_bytes", "dram_write_bytes", "gld_ideal_bytes"],
           lambda rd, wr, ideal: _share(np.maximum(0.0, rd - np.fmin(rd, ideal)), rd + wr), "",
           "DRAM bytes read beyond what coalesced loads would read, as a share of DRAM's traffic (scattered 4-byte loads "
           "cost DRAM a 64-byte access each, twice their sector)"),
        _d("load_width_bytes", ["gld_ideal_sectors_per_request"], lambda i: np.where(i > 0, i, np.nan), "byte",
           "bytes a thread loads per global load instruction (32 lanes x width = the ideal sectors x 32 bytes)"),
        _d("loads_per_thread", ["gld_ldg_requests", "grid_size", "block_size"], lambda r, g, b: _div(32.0 * r, g * b), "",
           "global load instructions per thread"),
        _d("bytes_in_flight_per_thread", ["load_width_bytes", "loads_per_thread"],
           lambda w, k: w * np.clip(k, 1.0, _MAX_LOADS_IN_FLIGHT), "byte",
           "bytes a thread can keep in flight: its load width times its loads, up to 4 (a longer loop issues its loads in turn)"),
        _d("fp32_peak_pct", ["fp32_flops_per_s", "fp32_peak_flops_per_s"], lambda a, p: 100.0 * _div(a, p), "%", "FP32 FLOP/s as % of the FP32 peak"),
        _d("compute_capability", ["cc_major", "cc_minor"], lambda a, b: 10.0 * a + _nan0(b), "", "compute capability as one number (90 for 9.0)"),
        _d("kernel_kind", ["kernel_name", "fp32_flops_per_s", "fp64_flops_per_s", "fp32_peak_flops_per_s", "tensor_dtype", "shared_ld_instructions",
                           "inst_executed", "arithmetic_intensity"],
           _kernel_kind, "", "what the kernel is, where its name or counters show it: fp32_matmul (FP32 matrix multiply on the FMA pipe), "
           "fp64_matmul, tensor_matmul, or unknown (the name alone does not say which arithmetic)",
           optional=["fp32_flops_per_s", "fp32_peak_flops_per_s", "fp64_flops_per_s", "tensor_dtype", "shared_ld_instructions", "inst_executed",
                     "arithmetic_intensity"]),
    ]
}

STRING_METRICS = {"memory_unit", "occupancy_limiter", "busiest_unit", "compute_pipe", "tensor_dtype", "stall_top", "stall_second", "roof_kind",
                  "kernel_kind", "kernel_name"}
# Names read from a launch's own columns (not ncu metrics): always known, never collected.
LAUNCH_TEXT = {"kernel_name": "name"}


def description(name: str) -> str:
    if name in LAUNCH_TEXT:
        return "the kernel's function name"
    item = CANONICAL.get(name) or DERIVED.get(name)
    return item.description if item else name


def unit(name: str) -> str:
    item = CANONICAL.get(name) or DERIVED.get(name)
    return item.unit if item else ""


def raw_inputs(name: str) -> list[str]:
    """Raw ncu metrics (first alias of each) a canonical or derived name depends on."""
    if name in LAUNCH_TEXT:
        return []
    if name in CANONICAL:
        return [CANONICAL[name].aliases[0]]
    if name in DERIVED:
        out: list[str] = []
        for inp in DERIVED[name].inputs:
            out += [m for m in raw_inputs(inp) if m not in out]
        return out
    return [name]  # a raw metric name used directly


# The memory levels of the hierarchical roofline and the bandwidth chart: (label, achieved bytes/s, peak bytes/s).
MEMORY_LEVELS = (("DRAM", "dram_bytes_per_s", "dram_peak_bytes_per_s"),
                 ("L2", "l2_bytes_per_s", "l2_peak_bytes_per_s"),
                 ("L1", "l1_bytes_per_s", "l1_peak_bytes_per_s"))


def section_of(raw: str) -> str | None:
    """The section that collects the raw metric ``raw`` (the first canonical name listing it)."""
    return _SECTION_OF.get(raw)


_SECTION_OF: dict[str, str] = {}
for _canonical in CANONICAL.values():
    for _alias in _canonical.aliases:
        _SECTION_OF.setdefault(_alias, _canonical.section)


# Sections that read launch attributes and the occupancy calculator: no replay pass of their own
# (Occupancy adds sm__warps_active, one counter).
FREE_SECTIONS = ("LaunchStats", "Occupancy")
# Metrics computed by ncu's occupancy calculator: they exist only in the Occupancy section.
OCCUPANCY_CALCULATOR = frozenset({"sm__maximum_warps_per_active_cycle_pct", "sm__maximum_warps_avg_per_active_cycle"})
# device__attribute_* are recorded with every result; launch__* come with LaunchStats / Occupancy;
# derived__* are defined by a section file's MetricDefinitions and cannot be asked for by name.
ALWAYS_RECORDED_PREFIX = "device__"


def by_name(metric: str) -> bool:
    """True when ncu collects ``metric`` given to --metrics (a counter, ratio or SASS metric)."""
    if metric.startswith(("derived__", "launch__", ALWAYS_RECORDED_PREFIX)):
        return False
    return metric not in OCCUPANCY_CALCULATOR


def costs_a_section(raw: str) -> bool:
    """Only a section with replay passes of its own gives ``raw`` (not --metrics, not a free section, not every
    result): targeted collection takes such a section only where a rule decides on the metric."""
    if by_name(raw) or raw.startswith((ALWAYS_RECORDED_PREFIX, "launch__")) or raw in OCCUPANCY_CALCULATOR:
        return False  # asked by name, recorded with every result, or given by a free section
    return section_of(raw) not in FREE_SECTIONS


class MetricTable:
    """Canonical and derived metrics of every launch of a profile, computed on demand."""

    def __init__(self, table: LaunchTable):
        self.table = table
        self.n = len(table)
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
        return name in CANONICAL or name in DERIVED or name in LAUNCH_TEXT or name in self.table

    def _compute(self, name: str) -> tuple[np.ndarray, list[str]]:
        if name in LAUNCH_TEXT:
            column = LAUNCH_TEXT[name]
            values = self.table.values(column) if column in self.table else [None] * self.n
            return np.array(values, dtype=object), []
        if name in CANONICAL:
            for alias in CANONICAL[name].aliases:
                if alias in self.table:
                    return self.table.numbers(alias), []
            return np.full(self.n, np.nan), [CANONICAL[name].aliases[0]]
        if name in DERIVED:
            item = DERIVED[name]
            args = [self.get(i) for i in item.inputs]
            missing: list[str] = []
            for i in item.inputs:
                if i not in item.optional:
                    missing += [m for m in self.missing(i) if m not in missing]
            # Partial inputs are fine for max-style quantities; the rest propagate NaN.
            return np.asarray(item.compute(*args)), missing
        if name in self.table:
            return self.table.numbers(name), []
        return np.full(self.n, np.nan), [name]


# What kernel rules may read: the catalogue's metrics (canonical, derived, launch text) and any raw
# ncu metric through metric("...").
KERNEL = Catalogue(kind="kernel", rules_file="default.yaml", names=frozenset(CANONICAL) | frozenset(DERIVED) | frozenset(LAUNCH_TEXT),
                   listing="see 'ncuwrap rules metrics --all' for the names", raw_allowed=True,
                   roles={"stop": "the kernel is at its roofline with nothing left to fix: its advice is 'stop here'"},
                   text_names=frozenset(STRING_METRICS), wastes=tuple(WASTES), time_metric="duration_ns", inputs=raw_inputs)


def report_metrics(rules) -> list[str]:
    """Raw metrics worth reading from a report for kernel ``rules``: what the rules read, every canonical
    alias (for the report's charts) and the device facts. Reading only these keeps time and memory bounded."""
    names = list(rules.raw_metrics())
    for canonical in CANONICAL.values():
        names.extend(a for a in canonical.aliases if a not in names)
    names += ["device__attribute_display_name", "device__attribute_compute_capability_major", "device__attribute_compute_capability_minor"]
    return names
