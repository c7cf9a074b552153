"""The op model's remedies as graph edits: new durations for the kernels they change (ncuwrap.timeline.oplimits.remedies).

A kernel the remedy removes (a fused chain's later kernels) takes no time, and its launch call, with the host's
code before it, goes too: a fused kernel is one launch where the chain made several.
"""

from __future__ import annotations


from ncuwrap.timeline.whatif.graph import KERNEL

QUEUE = "GPU work the capture had queued before the steps is taken as done when they begin"
SHAPES = "no op shapes in the capture (Kineto record_shapes=True, or nsys --pytorch=autograd-shapes-nvtx)"


def edits(context, remedy: str):
    """The op model's edits of ``remedy``, computed once with the op limits (OpLimits.edits)."""
    if context.op_limits is None:
        return None
    return context.op_limits.edits_of(remedy)


def applies(g, context, remedy: str) -> str | None:
    if context.op_limits is None:
        return SHAPES
    e = edits(context, remedy)
    if e is None or not len(e):
        return "the op model changes no kernel of the steps"
    rows = set(e.rows.tolist())
    if not any(k == KERNEL and r in rows for k, r in zip(g.g_kind.tolist(), g.g_row.tolist())):
        return "none of the kernels it changes is in the steps replayed"
    return None


def apply(g, context, remedy: str) -> None:
    e = edits(context, remedy)
    new = e.as_dict()
    added = e.launches_by_row()
    per_launch = context.launch_host_ns or 0.0
    removed_calls: dict[int, bool] = {}
    for j, (kind, row) in enumerate(zip(g.g_kind.tolist(), g.g_row.tolist())):
        call = int(g.g_call[j])
        if kind == KERNEL and row in new:
            g.g_dur[j] = max(0, int(new[row]))
            if call >= 0:
                removed_calls[call] = removed_calls.get(call, True) and new[row] == 0
                # The launches the remedy adds (autocast's casts) are host work before this kernel's launch.
                g.h_code[call] += int(round(added.get(row, 0.0) * per_launch))
        elif call >= 0:
            removed_calls[call] = False
    for call, gone in removed_calls.items():
        if gone:
            g.h_own[call] = 0
            g.h_code[call] = 0


def assumes(context, remedy: str) -> str:
    e = edits(context, remedy)
    if e is None:
        return SHAPES + "; the rest of the step replayed as captured"
    steps = context.op_limits.steps
    launches = (f"; its {e.added_launches / steps:.0f} casts a step are launches the host makes, each taking the host's time a kernel "
                f"launch takes in this step without the tracer ({context.launch_host_ns / 1e3:.1f} us, the mean)"
                if e.added_launches and context.launch_host_ns else "")
    return e.assumes + launches + "; " + QUEUE + "; the rest of the step replayed as captured"
