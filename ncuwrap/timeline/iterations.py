"""A capture's iteration where it marks none: the loop its launches repeat exactly
(:mod:`ncuwrap.timeline.repetition`), else, where that explains too little of its kernel time, the loop its
kernel classes repeat while the kernels change with the shapes (:mod:`ncuwrap.timeline.shape_loops`)."""

from __future__ import annotations

from ncuwrap.timeline import repetition, shape_loops
from ncuwrap.timeline.repetition import MIN_STEPS, Found, Launches


def find(launches: Launches | None) -> Found | None:
    """The loop of ``launches`` with the most kernel time (not one inside the call of another loop's first
    iteration: repetition.inside_first_call), with its steps, and the other loops before and after it; None where
    nothing repeats at least MIN_STEPS times."""
    if launches is None or len(launches) < 2 * MIN_STEPS:
        return None
    loops = repetition.exact_loops(launches)
    if repetition.explains_too_little(launches, loops):
        alike = shape_loops.find(launches)
        # Not a loop inside the call of the exact loop's first iteration: that is the iteration's work (autotuning).
        if alike is not None and (not loops or (alike.count > loops[0].count and alike.kernel_ns > loops[0].kernel_ns
                                                and not repetition.inside_first_call(launches, alike, loops[0]))):
            loops = repetition.marked(launches, [alike, *(lp for lp in loops if lp.end <= alike.first or lp.first >= alike.end)])
    return repetition.found(launches, loops)
