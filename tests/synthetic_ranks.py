"""SYNTHETIC multi-rank nsys SQLite exports, built by hand until real 2-GPU captures exist (issue 13).

Each file holds only what ncuwrap reads, with nsys's table and column names (as in the real H200
exports under tests/data/h200/nsys): kernels, CUDA launch calls, NVTX ranges and the run's identity.
The run is a DDP-like loop, every time in ns chosen so the expected results can be worked out by hand:

per step (STEP apart), on every rank r
  - compute kernels (stream 7) from the step's start for ``compute + extra[r]``;
  - an NCCL all-reduce (stream 13) that starts ``overlap`` before the rank's compute ends (the last
    gradient bucket overlaps the backward pass) and ends, on every rank, ``transfer`` after the LAST
    rank started it: a collective completes only when every rank has joined;
  - a small optimizer kernel (stream 7) after the all-reduce;
  - with ``gather_ns``, an NCCL all-gather (stream 14) of that length from the step's start, under the
    compute (FSDP gathering the next layer's parameters while this one computes): hidden whole;
  - an NVTX range ``train_step`` around the whole step.

With ``startup_ns``, the steps start that late, after a start-up holding one NCCL broadcast kernel (DDP
broadcasting the parameters) at 0: as in a real capture, where most of the time goes before the first step.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from pathlib import Path

MS = 1_000_000
NCCL_KERNEL = "ncclDevKernel_AllReduce_Sum_f32_RING_LL"
GATHER_KERNEL = "ncclDevKernel_AllGather_RING_LL"


@dataclass(frozen=True)
class Run:
    ranks: int = 2
    steps: int = 3
    step_ns: int = 20 * MS
    compute_ns: int = 10 * MS
    overlap_ns: int = 1 * MS
    transfer_ns: int = 2 * MS
    optimizer_ns: int = MS // 2
    slow_rank: int | None = None
    extra_ns: int = 0
    compute_name: str = "sm90_xmma_gemm_bf16bf16_bf16f32"
    command: str = "python3"
    start_utc_ns: int = 1_796_065_788_580_446_395
    host: str = "node0"
    startup_ns: int = 0
    gather_ns: int = 0

    def compute(self, rank: int) -> int:
        return self.compute_ns + (self.extra_ns if rank == self.slow_rank else 0)


def write_rank(path: Path, run: Run, rank: int, *, command: str | None = None, start_utc_ns: int | None = None) -> Path:
    """One rank's SYNTHETIC export of ``run``."""
    strings = {1: run.compute_name, 2: NCCL_KERNEL, 3: "optimizer_step_kernel", 4: "cudaLaunchKernel_v7000", 5: "train_step",
               6: "ncclDevKernel_Broadcast_RING_LL", 7: GATHER_KERNEL}
    kernels, launches, nvtx = [], [], []
    slowest = max(run.compute(r) for r in range(run.ranks))
    corr = 0
    if run.startup_ns:
        corr += 1
        kernels.append((0, MS, rank, 13, corr, 6, 6, 6, 2, 1, 1, 512, 1, 1))
    for s in range(run.steps):
        t0 = run.startup_ns + s * run.step_ns
        nccl_start = t0 + run.compute(rank) - run.overlap_ns
        nccl_end = t0 + slowest - run.overlap_ns + run.transfer_ns
        opt_end = nccl_end + run.optimizer_ns
        gather = ((t0, t0 + run.gather_ns, 7, 14),) if run.gather_ns else ()
        for start, end, name, stream in ((t0, t0 + run.compute(rank), 1, 7), *gather, (nccl_start, nccl_end, 2, 13), (nccl_end, opt_end, 3, 7)):
            corr += 1
            kernels.append((start, end, rank, stream, corr, name, name, name, 132, 1, 1, 256, 1, 1))
            # A launch 5 us before its kernel; a step's first kernel is launched as its NVTX range opens (work
            # belongs to the step it was launched in), at the same instant, so the window still starts at 0.
            launch = start - 5_000 if start - 5_000 >= t0 else start
            launches.append((launch, launch + 3_000, 4, 1000 + rank, corr))
        nvtx.append((t0, opt_end, 59, None, 5, 1000 + rank))
    db = sqlite3.connect(path)
    db.executescript("""
        CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT NOT NULL);
        CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER NOT NULL, "end" INTEGER NOT NULL, deviceId INTEGER, streamId INTEGER,
            correlationId INTEGER, shortName INTEGER, demangledName INTEGER, mangledName INTEGER, gridX INTEGER, gridY INTEGER,
            gridZ INTEGER, blockX INTEGER, blockY INTEGER, blockZ INTEGER);
        CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER NOT NULL, "end" INTEGER NOT NULL, nameId INTEGER, globalTid INTEGER,
            correlationId INTEGER);
        CREATE TABLE NVTX_EVENTS (start INTEGER NOT NULL, "end" INTEGER, eventType INTEGER NOT NULL, text TEXT, textId INTEGER,
            globalTid INTEGER);
        CREATE TABLE ENUM_NSYS_EVENT_TYPE (id INTEGER PRIMARY KEY, name TEXT, label TEXT);
        CREATE TABLE META_DATA_EXPORT (name TEXT, value TEXT);
        CREATE TABLE META_DATA_CAPTURE (name TEXT, value TEXT);
        CREATE TABLE TARGET_INFO_SYSTEM_ENV (globalVid INTEGER, devStateName TEXT, name TEXT, nameEnum INTEGER, value TEXT);
        CREATE TABLE TARGET_INFO_SESSION_START_TIME (utcEpochNs INTEGER, utcTime TEXT, localTime TEXT);
        CREATE TABLE TARGET_INFO_GPU (id INTEGER, name TEXT);
    """)
    db.executemany("INSERT INTO StringIds VALUES (?, ?)", strings.items())
    db.executemany("INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)", kernels)
    db.executemany("INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (?,?,?,?,?)", launches)
    db.executemany("INSERT INTO NVTX_EVENTS VALUES (?,?,?,?,?,?)", nvtx)
    db.executemany("INSERT INTO ENUM_NSYS_EVENT_TYPE VALUES (?,?,?)", [(59, "NvtxPushPopRange", "NvtxPushPopRange"),
                                                                     (60, "NvtxStartEndRange", "NvtxStartEndRange")])
    db.executemany("INSERT INTO META_DATA_EXPORT VALUES (?,?)", [("EXPORT_PRODUCT_VERSION", "SYNTHETIC"), ("EXPORT_SCHEMA_VERSION", "3.20.3")])
    db.execute("INSERT INTO META_DATA_CAPTURE VALUES ('PROCESS_0:COMMAND', ?)", (command or run.command,))
    db.execute("INSERT INTO TARGET_INFO_SYSTEM_ENV VALUES (1, 'Local (CLI)', 'Hostname', 619, ?)", (run.host,))
    db.execute("INSERT INTO TARGET_INFO_SESSION_START_TIME VALUES (?, '', '')", (start_utc_ns or run.start_utc_ns + rank * 50 * MS,))
    db.execute("INSERT INTO TARGET_INFO_GPU VALUES (?, 'SYNTHETIC GPU')", (rank,))
    db.commit()
    db.close()
    return path


def write_run(folder: Path, run: Run, stem: str = "rank{rank}") -> Path:
    """Every rank of ``run`` into ``folder`` as ``rank0.sqlite``, ``rank1.sqlite``..."""
    folder.mkdir(parents=True, exist_ok=True)
    for rank in range(run.ranks):
        write_rank(folder / f"{stem.format(rank=rank)}.sqlite", run, rank)
    return folder
