"""The remedies, each an edit of the step graph, in the order they are tried: a declared registry, as the readers are.

Each module has NAME, DRAINS_QUEUE (it makes the GPU's work faster: the replay takes the GPU work queued before the
steps as done when they begin, StepGraph.drain_queue, before ``apply``), ``applies(graph, context) -> str | None``
(None: it applies; else why not), ``apply(graph, context)`` (edits the graph in place) and ``assumes(context)``.
"""

from __future__ import annotations

from ncuwrap.timeline.whatif.remedies import (cuda_graphs, faster_kernel, fusion, host_parallel, lower_precision, no_sync, no_tracer,
                                              pinned_overlap)

TRACER = no_tracer
REMEDIES = (cuda_graphs, no_sync, pinned_overlap, host_parallel, lower_precision, fusion, faster_kernel)
