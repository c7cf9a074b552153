"""pinned_overlap: pageable host-to-device copies from pinned memory, on a side stream, one step ahead of their use."""

from __future__ import annotations

import numpy as np

from ncuwrap.timeline.whatif.graph import WAIT

NAME = "pinned_overlap"
DRAINS_QUEUE = False


def _copies(g) -> np.ndarray:
    own_step = np.where(g.g_call >= 0, g.h_step[np.clip(g.g_call, 0, None)], -1)
    return np.flatnonzero(g.g_pageable_h2d & (g.g_call >= 0) & (own_step < g.steps) & (own_step >= 0))


def applies(g, context) -> str | None:
    if not _copies(g).size:
        return "no pageable host-to-device copy in the steps"
    return None


def rate(g, context) -> tuple[float, str]:
    """Pinned host-to-device bytes/s: the capture's own pinned copies of at least 1 MiB where it has them, else the calibration."""
    pinned = context.pinned_h2d_bytes_per_s
    if pinned:
        return pinned, "the capture's own pinned copies"
    cal = context.calibration
    return cal.pinned_h2d_gbps * 1e9, cal.source


def _next_on_stream(g) -> np.ndarray:
    """Each GPU event's next one launched on its stream (-1: none), by one sort: a copy's consumer."""
    order = np.lexsort((np.arange(g.events), g.g_stream))
    following = np.full(g.events, -1, dtype=np.int64)
    same = g.g_stream[order[1:]] == g.g_stream[order[:-1]]
    following[order[:-1][same]] = order[1:][same]
    return following


def apply(g, context) -> None:
    bps, _ = rate(g, context)
    copies = _copies(g)
    consumer = _next_on_stream(g)[copies]
    is_copy = np.zeros(g.events + 1, dtype=bool)  # by GPU event, and -1 (no wait) at the end
    is_copy[copies] = True
    waits_for = {}
    for i in np.flatnonzero(is_copy[g.h_wait]).tolist():  # host calls that waited for one of the copies
        waits_for.setdefault(int(g.h_wait[i]), []).append(i)
    side = g.stream_count
    g.stream_count += 1
    step_first = g.step_first
    for j, later in zip(copies.tolist(), consumer.tolist()):
        call = int(g.g_call[j])
        step = int(g.h_step[call])
        if later >= 0:  # the consumer: the next event launched on the copy's stream
            g.extra_deps.setdefault(later, []).append((j, 0))
        g.g_dur[j] = int(g.g_bytes[j] / bps * 1e9)
        g.g_stream[j] = side
        g.g_call[j] = int(step_first[max(0, step - 1)]) if step > 0 else int(step_first[0])
        g.g_lat[j] = int(g.typical_latency_ns)
        g.g_dep[j] = -1
        # Its staging through pageable memory goes: the call costs what an asynchronous one does (its whole length
        # where that was less; a call that waited for its copy had none of its own).
        g.h_own[call] = min(int(g.h_end[call] - g.h_start[call]), int(context.calibration.async_call_ns))
        for i in waits_for.get(j, ()):  # the copy call's own wait, and a synchronize that waited for the copy
            g.h_wait[i] = -1
            g.h_flags[i] &= ~WAIT
    g.sort_by_launch()


def assumes(context, g=None) -> str:
    where = "the capture's own pinned copies" if context.pinned_h2d_bytes_per_s else context.calibration.source
    bps = context.pinned_h2d_bytes_per_s or context.calibration.pinned_h2d_gbps * 1e9
    return (f"each pageable host-to-device copy comes from pinned memory at {bps / 1e9:.3g} GB/s ({where}), issued asynchronously on a "
            "side stream one step ahead of the work that reads it, which waits for it; the batch is made in pinned memory (no extra host "
            "copy) and the host no longer waits for the copy")
