"""faster_kernel: the kernels ncu diagnosed, each launch of them in the steps as fast as its verdict estimates.

The verdicts come joined to the capture's kernels (ncuwrap.timeline.kernel_join: by mangled name, grid and
block, as ``profile --top`` matches them): each launch of a joined kernel in the steps takes the share of its
time its verdict leaves, every finding of it fixed together. That is the estimate ``compare`` checks against
measured before/after pairs (docs/payoff.md): fixing the top cause alone leaves the others, and where two
findings waste the same unit the sum of their shares is what goes, not the product the two speedups would
give. The step is replayed, not put through Amdahl's arithmetic: a kernel the host does not wait for buys
nothing.
"""

from __future__ import annotations

import numpy as np

from ncuwrap.core.display import plural
from ncuwrap.timeline.whatif.graph import KERNEL
from ncuwrap.timeline.whatif.remedies import kernel_times

NAME = "faster_kernel"
# It makes the GPU's work faster: the queue the capture carried into the steps is drained first (StepGraph.drain_queue).
DRAINS_QUEUE = True
NO_VERDICTS = "no kernel verdicts joined to the capture (ncuwrap profile --top N, or ncuwrap timeline CAPTURE --kernels REPORT)"


def _joined(g, context) -> np.ndarray:
    """The GPU events of the steps that are launches of a joined kernel whose verdict has an estimate."""
    left = context.kernels.row_remaining
    if not left.size:
        return np.zeros(0, dtype=np.int64)
    kernel = (g.g_kind == KERNEL) & (g.g_call >= 0) & (g.g_row >= 0) & (g.g_row < left.size)
    return np.flatnonzero(kernel & ~np.isnan(left[np.clip(g.g_row, 0, left.size - 1)]))


def applies(g, context) -> str | None:
    join = context.kernels
    if join is None:
        return NO_VERDICTS
    if not join.joined:
        return (f"none of the {plural(len(join.unmatched), 'kernel')} ncu diagnosed ({join.report}) is a kernel of the capture "
                "(by mangled name or name, grid and block)")
    if not join.estimated:
        return f"no verdict of the {plural(len(join.joined), 'kernel')} joined to the capture has an estimate"
    if not _joined(g, context).size:
        return f"none of the {plural(len(join.estimated), 'kernel')} joined to the capture runs in the steps replayed"
    return None


def apply(g, context) -> None:
    events = _joined(g, context)
    left = context.kernels.row_remaining[g.g_row[events]]
    g.g_dur[events] = np.maximum(0, np.rint(g.g_dur[events] * left)).astype(g.g_dur.dtype)


def assumes(context) -> str:
    join = context.kernels
    estimated = join.estimated
    faster = [f"{j.name} {j.speedup:.2f}x" for j in estimated if j.remaining < 1.0]
    same = [j.name for j in estimated if j.remaining >= 1.0]
    text = (f"the {plural(len(estimated), 'kernel')} ncu diagnosed ({join.report}) run as fast as their verdicts estimate, all of a "
            f"kernel's findings fixed together: {', '.join(faster) if faster else 'none faster'}")
    if same:
        text += f"; {', '.join(same)} unchanged (no finding of {'it' if len(same) == 1 else 'theirs'} costs time)"
    unknown = [j.name for j in join.joined if j.remaining is None]
    if unknown:
        text += f"; {', '.join(unknown)} as captured (no estimate)"
    if join.unmatched:
        text += f"; {plural(len(join.unmatched), 'verdict')} of the report match no kernel of the capture"
    return (text + "; every launch of them in the steps takes that share of its captured time; " + kernel_times.QUEUE
            + "; the rest of the step replayed as captured")
