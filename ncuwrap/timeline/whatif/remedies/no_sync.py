"""no_sync: the host no longer waits for the GPU in each step (a synchronize, a ``.item()``, a blocking read back)."""

from __future__ import annotations

from ncuwrap.timeline.whatif.graph import COPY, WAIT, is_copy_name, is_sync_name

NAME = "no_sync"
DRAINS_QUEUE = False


def _host_wait(g, i: int) -> bool:
    """A call in a step that waited for GPU work to read its result: a synchronize, or a copy back to the host."""
    if not g.h_flags[i] & WAIT or g.h_step[i] >= g.steps:
        return False
    if is_sync_name(g.h_name[i]):
        return True
    w = int(g.h_wait[i])
    return is_copy_name(g.h_name[i]) and g.g_kind[w] == COPY and not g.g_pageable_h2d[w]


def applies(g, context) -> str | None:
    if not any(_host_wait(g, i) for i in range(g.calls)):
        return "no step waits for the GPU"
    return None


def apply(g, context) -> None:
    for i in range(g.calls):
        if _host_wait(g, i):
            g.h_wait[i] = -1
            g.h_flags[i] &= ~WAIT


def assumes(context) -> str:
    return ("the host no longer waits for the GPU within a step (the synchronize calls and reads back of GPU results return at once, the "
            "value read later or not at all); every GPU event still runs after the work it depends on")
