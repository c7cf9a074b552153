"""The names timeline rules may read: one value per capture, computed by :mod:`ncuwrap.timeline.analysis`.

The kernel rules read Nsight Compute metrics (:mod:`ncuwrap.kernel.metrics`); timeline rules read these
instead. ``ncuwrap.ruleset`` validates a ``kind: timeline`` rules file against :data:`TIMELINE`.

Every ``*_ns`` quantity can also be read as ``*_us`` and ``*_ms`` and every ``*_bytes`` one as
``*_mib``, for titles ("{kernel_ms:.1f} ms"). A quantity whose source was not captured (the CUDA
API trace, the host memory kind of copies) is unknown, and a rule that needs it is reported as not
evaluated with the reason.
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
        # The traced window and how the GPU spent it (each instant counted once, see analysis.py).
        _m("window_ns", "ns", "traced window: first to last CUDA API call or GPU activity"),
        _m("kernel_ns", "ns", "time at least one kernel ran"),
        _m("memcpy_htod_ns", "ns", "time a host-to-device copy ran and no kernel did"),
        _m("memcpy_dtoh_ns", "ns", "time a device-to-host copy ran and no kernel or H2D copy did"),
        _m("memcpy_dtod_ns", "ns", "time a device-to-device / peer copy ran and no kernel or host copy did"),
        _m("memcpy_other_ns", "ns", "time another copy (host-to-host, unknown kind) ran and nothing above did"),
        _m("memset_ns", "ns", "time a memset ran and no kernel or copy did"),
        _m("memcpy_ns", "ns", "time copies ran and no kernel did (sum of the memcpy_* categories)"),
        _m("idle_ns", "ns", "time the GPU did nothing traced"),
        _m("gpu_busy_ns", "ns", "time the GPU ran a kernel, copy or memset"),
        _m("kernel_pct", "%", "kernel_ns, % of the window"),
        _m("memcpy_pct", "%", "memcpy_ns, % of the window"),
        _m("memset_pct", "%", "memset_ns, % of the window"),
        _m("idle_pct", "%", "idle_ns, % of the window"),
        _m("gpu_busy_pct", "%", "gpu_busy_ns, % of the window"),
        _m("kernel_busy_pct", "%", "kernel_ns, % of the GPU's busy time"),
        _m("memcpy_busy_pct", "%", "memcpy_ns, % of the GPU's busy time"),
        _m("memcpy_overlap_pct", "%", "share of the copies' time that ran alongside a kernel (hidden)"),
        _m("overlap_achieved_pct", "%", "copy time hidden under kernels, % of the most that could be (the shorter of kernel and copy time)"),
        _word("dominant_copy", "the copy direction that takes most time (H2D, D2H, D2D, other copies)"),
        _m("dominant_copy_ns", "ns", "time of the dominant copy direction"),
        # Start-up and idle gaps.
        _m("startup_ns", "ns", "from the first CUDA call to the first GPU activity (context creation, allocation, host set-up)"),
        _m("startup_pct", "%", "startup_ns, % of the window"),
        _word("startup_cause", "the CUDA call that takes most of the start-up, or 'host code'"),
        _m("idle_after_startup_pct", "%", "GPU idle time after the first GPU activity, % of that part of the window"),
        _m("longest_gap_ns", "ns", "longest GPU idle gap after start-up"),
        _m("longest_gap_at_ns", "ns", "where the longest gap starts, from the window's start"),
        _word("longest_gap_cause", "the CUDA call the host was in during the longest gap, or 'host code'"),
        _m("long_gap_count", "", "GPU idle gaps of 1 ms or more after start-up"),
        # Kernels.
        _m("kernel_count", "", "kernel launches executed"),
        _m("distinct_kernels", "", "distinct kernel names"),
        _m("kernel_sum_ns", "ns", "sum of kernel durations (concurrent kernels counted each)"),
        _m("kernel_median_ns", "ns", "median kernel duration"),
        _m("kernel_mean_ns", "ns", "mean kernel duration"),
        _m("kernel_span_ns", "ns", "from the first kernel's start to the last kernel's end"),
        _m("kernel_span_idle_pct", "%", "GPU idle time within the kernel span, % of the span"),
        _m("kernel_gap_median_ns", "ns", "median gap between the end of a kernel and the start of the next"),
        _m("kernel_gap_total_ns", "ns", "sum of the gaps between consecutive kernels"),
        _m("kernel_gap_max_ns", "ns", "longest gap between consecutive kernels"),
        _word("top_kernel", "the kernel with the most total time"),
        _m("top_kernel_pct", "%", "the top kernel's share of kernel_sum_ns"),
        # Copies and memsets.
        _m("memcpy_count", "", "memory copies"),
        _m("memcpy_bytes", "byte", "bytes copied"),
        _m("memcpy_sum_ns", "ns", "sum of copy durations"),
        _m("memcpy_gbps", "GB/s", "bytes copied / copy time"),
        _m("memset_count", "", "memsets"),
        _m("pageable_memcpy_count", "", "copies to or from pageable (not pinned) host memory", "host_memory"),
        _m("pageable_memcpy_bytes", "byte", "bytes of pageable copies", "host_memory"),
        _m("pageable_memcpy_ns", "ns", "sum of pageable copy durations", "host_memory"),
        _m("pageable_memcpy_pct", "%", "pageable_memcpy_ns, % of the window", "host_memory"),
        _m("pageable_memcpy_gbps", "GB/s", "pageable copies' bytes / time", "host_memory"),
        _m("pinned_memcpy_gbps", "GB/s", "host copies from/to pinned memory: bytes / time (NaN without any)", "host_memory"),
        # CUDA API (host side).
        _m("api_ns", "ns", "sum of CUDA API call durations", "api"),
        _m("launch_calls", "", "kernel / graph launch calls", "api"),
        _m("launch_api_ns", "ns", "time in launch calls", "api"),
        _m("launch_api_median_ns", "ns", "median launch call duration", "api"),
        _m("launch_api_pct", "%", "launch_api_ns, % of the window", "api"),
        _m("sync_calls", "", "cudaDeviceSynchronize / cudaStreamSynchronize / cudaEventSynchronize calls (and driver equivalents)", "api"),
        _m("sync_api_ns", "ns", "time in synchronize calls", "api"),
        _m("sync_api_pct", "%", "sync_api_ns, % of the window", "api"),
        _m("synced_launches", "", "launch calls followed by a synchronize call before the next launch", "api"),
        _m("synced_launch_pct", "%", "synced_launches, % of launch_calls", "api"),
        _m("sync_roundtrip_ns", "ns", "GPU idle time the syncs after launches cost: each sync's wake-up after its kernel plus the next launch's latency",
           "api"),
        _m("sync_roundtrip_span_pct", "%", "sync_roundtrip_ns, % of the kernel span", "api"),
        _m("launch_sync_span_pct", "%", "time the host spent in launch or synchronize calls, % of the kernel span", "api"),
        _m("malloc_calls", "", "allocation and free calls (cudaMalloc*, cudaFree*, cudaHostAlloc, cudaHostRegister...)", "api"),
        _m("malloc_api_ns", "ns", "time in allocation and free calls", "api"),
        _m("malloc_api_pct", "%", "malloc_api_ns, % of the window", "api"),
        _m("memcpy_calls", "", "cudaMemcpy* / cuMemcpy* calls", "api"),
        _m("memcpy_api_ns", "ns", "time in memcpy calls", "api"),
        _m("blocking_memcpy_calls", "", "memcpy calls that block the host (not *Async)", "api"),
        _m("host_code_pct", "%", "time the host was in no CUDA call (Python, data preparation), % of the window", "api"),
        _word("window_host_limiter", "what the host spends most of the window in: launch calls, synchronize calls, other CUDA calls, "
           "or host code", "api"),
        # What fixing a waste can buy at most, % of the window (the steady steps' where there are steps):
        # the host time it removes, and no more than the GPU's idle time it fills.
        _m("launch_fix_buys_pct", "%", "fewer launches (fusion, a CUDA graph): the host's launch and synchronize time, at most the "
           "GPU's idle share of the kernel span", "api"),
        _m("sync_fix_buys_pct", "%", "no synchronize after each launch: the GPU idle time those round trips cost, % of the kernel span", "api"),
        # Where the steady steps were replayed on their dependency graph (ncuwrap.timeline.whatif), the two
        # above are the replay's instead: the share of the untraced step the remedy takes away.
        _word("launch_fix_basis", "how launch_fix_buys_pct was found: an upper bound, or the steps replayed with CUDA graphs", "api"),
        _word("sync_fix_basis", "how sync_fix_buys_pct was found: an upper bound, or the steps replayed without their host waits", "api"),
        # Steps (NVTX ranges named like a step): the steady state, warm-up left out (ncuwrap.timeline.steps).
        _m("step_count", "", "steady steps (after the warm-up)", "steps"),
        _m("warmup_steps", "", "leading steps left out as warm-up", "steps"),
        _m("step_period_ns", "ns", "median period of a steady step (its start to the next step's start)", "steps"),
        _m("step_gpu_work_ns", "ns", "median GPU busy time of the work launched in a steady step", "steps"),
        _m("step_gpu_busy_pct", "%", "median share of a steady step's period the GPU is busy with its work (at most 100)", "steps"),
        _m("step_launches", "", "median launch calls (kernels, graphs) in a steady step", "steps"),
        _m("step_launch_api_pct", "%", "median share of a steady step's period in launch calls", "steps"),
        _m("step_sync_api_pct", "%", "median share of a steady step's period in synchronize calls", "steps"),
        _m("step_host_code_pct", "%", "median share of a steady step's period with the host in no CUDA call (Python, data preparation)", "steps"),
        _word("host_limiter", "what the host spends most of a steady step in: launch calls, synchronize calls, other CUDA calls, or host code", "steps"),
        # Amdahl: what faster kernels (or no copies) would give end to end.
        _m("e2e_speedup_2x", "x", "end-to-end speed-up if every kernel ran 2x faster"),
        _m("e2e_speedup_4x", "x", "end-to-end speed-up if every kernel ran 4x faster"),
        _m("e2e_speedup_10x", "x", "end-to-end speed-up if every kernel ran 10x faster"),
        _m("kernel_ceiling", "x", "end-to-end speed-up if kernels took no time (Amdahl's limit)"),
        _m("copy_ceiling", "x", "end-to-end speed-up if copies took no time"),
    ]
}


TIMELINE = Catalogue.of_entries("timeline", "timeline.yaml", CATALOGUE,
                                "timeline rules read the names listed at the end of rules/timeline.yaml")
