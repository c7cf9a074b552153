"""The names rank rules (``rules/ranks.yaml``, ``kind: ranks``) may read: one value per set of rank
captures, computed by :mod:`ncuwrap.timeline.ranks.analysis`.

Shares are the mean over ranks of each rank's share of its own window; ``*_median`` / ``*_max`` are
across ranks. As for timeline rules, every ``*_ns`` name can be read as ``*_us`` / ``*_ms``. A
quantity a capture cannot give (NVTX step ranges, the CUDA API trace, NCCL kernels) is unknown, and
a rule that reads it is reported as not evaluated with the reason.
"""

from __future__ import annotations

from ncuwrap.core.catalogue import Catalogue, Entry


def _m(name, unit, description, needs=None):
    return Entry(name, unit, needs, description)


def _word(name, description, needs=None):
    """A quantity whose value is a word or a name: rules compare it (==, !=), never compute with it."""
    return Entry(name, "", needs, description, text=True)


CATALOGUE: dict[str, Entry] = {
    m.name: m
    for m in [
        _m("ranks", "", "rank captures analysed"),
        _m("window_max_ns", "ns", "the longest rank window"),
        # Where each rank's time went (exposed: each instant counted once, compute first, then NCCL).
        _m("compute_pct", "%", "time a non-NCCL kernel ran, % of the rank's window (mean over ranks)"),
        _m("comm_pct", "%", "time only NCCL kernels ran (communication not hidden under compute), % of the window (mean)"),
        _m("copy_pct", "%", "time only copies ran, % of the window (mean)"),
        _m("idle_pct", "%", "time the GPU did nothing traced, % of the window (mean)"),
        _m("comm_busy_pct", "%", "exposed NCCL time, % of the GPU's busy time (mean over ranks)"),
        _m("comm_hidden_pct", "%", "NCCL kernel time that ran while a compute kernel ran (hidden), % of all NCCL time", "nccl"),
        _m("nccl_kernel_count", "", "NCCL kernels executed, all ranks"),
        # Imbalance and stragglers.
        _m("compute_max_ns", "ns", "the longest compute time of a rank (time a non-NCCL kernel ran)"),
        _m("compute_median_ns", "ns", "the median compute time across ranks"),
        _m("compute_others_median_ns", "ns", "the median compute time of the ranks other than the straggler"),
        _m("imbalance", "x", "compute_max_ns / compute_others_median_ns: the straggler against the other ranks"),
        _m("straggler_rank", "", "the rank with the most compute time"),
        _m("straggler_wait_ns", "ns", "the straggler's own wait in NCCL kernels (near 0 when it makes the others wait)", "nccl"),
        _m("wait_max_ns", "ns", "the longest wait in NCCL kernels of a rank: its NCCL time minus the least NCCL time of any rank", "nccl"),
        _m("wait_rank", "", "the rank that waits longest in NCCL kernels", "nccl"),
        _m("wait_max_pct", "%", "wait_max_ns, % of that rank's window", "nccl"),
        _word("comm_limiter", "what holds communication up: the straggler rank, or the transfers themselves"),
        _word("top_compute_kernel", "the non-NCCL kernel with the most total time over all ranks"),
        # Steps (NVTX ranges named like a step).
        _m("step_count", "", "steps per rank (median over ranks)", "steps"),
        _m("step_median_ns", "ns", "median step time (median over ranks of each rank's median)", "steps"),
        _m("step_max_ns", "ns", "the longest step of any rank", "steps"),
        _m("step_spread", "x", "slowest rank's median step / fastest rank's", "steps"),
        _m("warmup_steps", "", "leading steps left out as warm-up (the most of any rank)", "steps"),
        _m("step_imbalance_median", "x", "per step steady on every rank: the slowest rank's compute over the others' median; median over steps", "steps"),
        _m("step_imbalance_max", "x", "the same, in the most imbalanced step", "steps"),
        _m("step_imbalance_max_step", "", "the index of the most imbalanced step (0: the first step)", "steps"),
        # Launch overhead (median over ranks of the timeline quantities of the same name).
        _m("kernel_count", "", "kernels per rank (median)"),
        _m("kernel_median_ns", "ns", "median kernel duration (median over ranks)"),
        _m("kernel_span_idle_pct", "%", "GPU idle share of the kernel span (median over ranks)"),
        _m("launch_sync_span_pct", "%", "host time in launch or sync calls, % of the kernel span (median over ranks)", "api"),
        _m("launch_api_median_ns", "ns", "median launch call duration (median over ranks)", "api"),
    ]
}

RANKS = Catalogue.of_entries("ranks", "ranks.yaml", CATALOGUE, "rank rules read the names listed at the end of rules/ranks.yaml",
                             roles={"straggler": "names the slowest rank (the rank named in the output)"})
