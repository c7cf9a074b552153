"""lower_precision: the op model's prediction for each kernel it changes (ncuwrap.timeline.oplimits.remedies), replayed."""

from __future__ import annotations

from ncuwrap.timeline.whatif.remedies import kernel_times

NAME = "lower_precision"
# It makes the GPU's work faster: the queue the capture carried into the steps is drained first (StepGraph.drain_queue).
DRAINS_QUEUE = True


def applies(g, context) -> str | None:
    return kernel_times.applies(g, context, NAME)


def apply(g, context) -> None:
    kernel_times.apply(g, context, NAME)


def assumes(context) -> str:
    return kernel_times.assumes(context, NAME)
