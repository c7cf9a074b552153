"""host_parallel: the host's work that launches nothing (data preparation) moved to N worker processes."""

from __future__ import annotations

import numpy as np

NAME = "host_parallel"
DRAINS_QUEUE = False


def applies(g, context) -> str | None:
    work = int(g.h_work[g.h_step < g.steps].sum())
    if work <= 0:
        return f"no stretch of host work outside op ranges of over {context.host_work_ms:g} ms in the steps"
    return None


def work_per_step(g) -> float:
    return float(g.h_work[g.h_step < g.steps].sum()) / g.steps


def apply(g, context) -> None:
    per_step = work_per_step(g)
    n = context.workers
    g.h_work = np.zeros_like(g.h_work)
    # The workers hand over one batch every per_step / n: step k starts no earlier than its batch.
    for k in range(1, g.steps + (g.step_first.size > g.steps)):
        i = int(g.step_first[k])
        ready = int(g.lo + k * per_step / n)
        if ready + int(g.h_code[i]) > int(g.h_release[i]) + int(g.h_after[i]):
            g.h_release[i] = ready
            g.h_after[i] = int(g.h_code[i])


def assumes(context, g=None) -> str:
    return (f"the host work outside op ranges (stretches over {context.host_work_ms:g} ms: data preparation) runs in {context.workers} worker "
            f"processes ({context.workers_how}), each as fast as the main process was, handing over one batch per step ahead of its use; "
            "handing a batch over costs nothing")
