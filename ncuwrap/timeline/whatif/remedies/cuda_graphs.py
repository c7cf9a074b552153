"""cuda_graphs: each step's launches, and the Python and framework time between them, captured into CUDA graphs.

A stretch of a step between host waits (a synchronize, a blocking copy) becomes one graph launch: its launch
calls and the host's code between them go, its GPU work runs as the graph's nodes, one after the other at
the calibrated node gap. What a graph cannot hold stays: host work outside op ranges (data preparation,
I/O), waits for other processes, synchronisations and blocking copies.
"""

from __future__ import annotations


from ncuwrap.timeline.whatif.graph import COPY_CALL, LAUNCH, WAIT, is_sync_name

NAME = "cuda_graphs"
DRAINS_QUEUE = False


def _boundary(g, i: int) -> bool:
    """A call a graph cannot hold: one that waited for the GPU (not a launch into a full queue), a synchronize, a blocking copy."""
    flags = int(g.h_flags[i])
    if is_sync_name(g.h_name[i]):
        return True
    return bool(flags & WAIT) and not (flags & LAUNCH and not flags & COPY_CALL)


def applies(g, context) -> str | None:
    launches = int(((g.h_flags & LAUNCH) != 0)[g.h_step < g.steps].sum())
    if launches < 2 * g.steps:
        return "the steps launch at most one call's GPU work each: nothing to capture"
    return None


def apply(g, context) -> None:
    cal = context.calibration
    by_call: dict[int, list[int]] = {}
    for j, c in enumerate(g.g_call.tolist()):
        if c >= 0:
            by_call.setdefault(c, []).append(j)
    head = -1  # the graph launch of the current stretch
    nodes = 0
    step = -1
    for i in range(g.calls):
        if g.h_step[i] >= g.steps:  # the next step's first call: as it was
            break
        if g.h_step[i] != step:
            step, head = int(g.h_step[i]), -1
        g.h_code[i] = 0  # the Python and framework time between calls is replayed by the graph
        if _boundary(g, i):
            head = -1
            continue
        if not g.h_flags[i] & LAUNCH:
            continue
        if head < 0:
            head, nodes = i, 0
            g.h_own[i] = 0
        else:
            g.h_own[i] = 0
        g.h_wait[i] = -1
        g.h_flags[i] &= ~WAIT
        for j in by_call.get(i, ()):
            g.g_call[j] = head
            g.g_lat[j] = int(g.typical_latency_ns)  # the capture's own launch latency
            g.g_qgap[j] = int(cal.graph_node_gap_ns)
            nodes += 1
        g.h_own[head] = int(cal.graph_launch_cost_ns(nodes))
    g.sort_by_launch()  # events re-hung on their stretch's head


def assumes(context) -> str:
    cal = context.calibration
    return (f"each stretch of a step between host waits is one CUDA graph: its launch calls and the host's code between them go, one launch "
            f"costs {cal.graph_launch_ns / 1e3:.3g} us + {cal.graph_launch_per_node_ns / 1e3:.2g} us a node and its nodes run "
            f"{cal.graph_node_gap_ns / 1e3:.2g} us apart ({cal.source}), the first as long after the launch as the capture's launches; "
            f"the kernels' own times are unchanged; host work outside op ranges "
            f"(over {context.host_work_ms:g} ms in one stretch), waits for other processes, synchronisations and blocking copies stay; "
            "the shapes and addresses must be static for a graph to replay the step")
