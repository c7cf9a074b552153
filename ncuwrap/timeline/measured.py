"""A capture measured: its steps found and its steady steps analysed (or the whole capture, without
steps), with the facts of the file, ready for the timeline rules (:mod:`ncuwrap.timeline.diagnosis`).

:func:`start` measures a capture file in a forked child (:mod:`ncuwrap.core.forked`) while the caller loads
the rules and the evaluator: numpy and Arrow are imported and the file read beside that, not after it.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ncuwrap.core.errors import InputError
from ncuwrap.core.forked import Forked
from ncuwrap.timeline.options import TimelineOptions

if TYPE_CHECKING:  # the model imports numpy: a child is forked before it is imported
    from ncuwrap.timeline.model import Timeline


@dataclass(frozen=True)
class Measured:
    """A capture measured into the timeline model, with where it came from and what was missing; made by :func:`measure`, before any rule is evaluated."""
    timeline: Timeline  # over the steady steps where the capture has steps, else over the whole capture
    kind: str  # nsys-sqlite | nsys-rep | kineto (ncuwrap.timeline.readers)
    nsys_version: str | None
    export_schema: str | None
    device: str | None
    notes: tuple[str, ...]  # what was missing and how it was read, and how the window was chosen
    producer: str | None = None  # the program that wrote the file (TimelineData.producer)


def measure(data, *, kind: str, source_path: str, timeline: TimelineOptions = TimelineOptions(), kernels=None) -> Measured:
    """The steps of ``data`` (a read capture: ncuwrap.timeline.model.TimelineData; how they are found:
    ``timeline``) and the analysis of its steady steps, else of the whole capture. ``kernels``: a kernel
    report's verdicts (ncuwrap.timeline.kernel_join.DiagnosedKernels), joined here to the capture's kernels
    for the what-if's faster_kernel."""
    from ncuwrap.timeline import steps
    from ncuwrap.timeline import tracer as tracer_module
    from ncuwrap.timeline.analysis import analyze_steady, analyze_active
    from ncuwrap.timeline.oplimits import analysis as op_limits

    warmup, find_steps = timeline.warmup, timeline.steps
    found = steps.measure(data, timeline.pattern, warmup, find_steps)
    notes = list(data.notes)
    # The op limits first: the replay predicts lower precision and fusion from them; faster_kernel from the verdicts joined.
    limits = op_limits.measure(data, found) if found is not None else None
    joined = None
    if kernels is not None and found is not None:  # without steps there is no what-if to predict it in
        from ncuwrap.timeline.kernel_join import join

        joined = join(data.kernels, kernels)
    steady = analyze_steady(data, found, whatif_options={"op_limits": limits, "kernels": joined}) if found is not None else None
    if steady is not None:
        analysed = steady[1]
        if limits is not None:
            if analysed.whatif is not None:  # the replay predicts the op model's remedies: their one figure is there
                limits = dataclasses.replace(limits, predictions=(), replayed=True)
            analysed = dataclasses.replace(analysed, op_limits=limits)
        tracer = analysed.tracer
        if tracer is not None and found.gpu_busy_pct < tracer_module.HOST_BOUND_BELOW_PCT and tracer.untraced_bound == "gpu":
            notes.append(f"the host-bound step is partly the tracer's: {tracer.tracer} added ~{tracer.added_ns / 1e6:.3g} ms of host time "
                         f"a step, and without it the GPU would be busy ~{tracer.untraced_busy_pct:.0f}% of a ~{tracer.untraced_ns / 1e6:.3g} ms "
                         "step (GPU-bound)")
    else:
        if warmup is not None:
            why = ("no kernel was launched in its steps" if found is not None else "steps are not looked for (--steps none)"
                   if find_steps == "none" else "none is marked" + (" or found by repetition" if find_steps == "auto" else ""))
            raise InputError(f"{source_path}: --warmup {warmup}: the capture has no steps ({why}); "
                             "mark each iteration with an NVTX range named 'step', or pass --step-range")
        # Without steps, the rules' step_* values are unknown and say why (NO_STEPS); the window runs from the
        # first GPU work to the last, so that start-up (imports, CUDA's initialisation) is not averaged in.
        analysed = analyze_active(data)
        limits = op_limits.measure(data, None)
        if limits is not None:
            analysed = dataclasses.replace(analysed, op_limits=limits)
        if found is not None:
            notes.append(f"{found.count} steps ('{found.name}') launched no kernel: judged without steps")
        if analysed.scope == "active":
            launch = "the first GPU work's launch" + (" (from the start of the op that made it)" if data.ops is not None and len(data.ops) else "")
            notes.append(f"no steps {'looked for (--steps none)' if find_steps == 'none' else 'marked or found'}: the window runs from "
                         f"{launch} to the end of the last GPU work, and the {analysed.startup.duration_ns / 1e9:.2f} s "
                         "of start-up before it are left out")
    return Measured(timeline=analysed, kind=kind, nsys_version=data.nsys_version, export_schema=data.export_schema, device=data.device,
                    notes=tuple(notes), producer=data.producer)


def measure_file(path: str | Path, timeline: TimelineOptions = TimelineOptions(), kernels=None) -> Measured:
    """Read a capture file (.sqlite, .sqlite.gz, .nsys-rep; ``timeline.nsys`` exports a .nsys-rep) and measure it
    (``kernels``: as :func:`measure`)."""
    from ncuwrap.timeline import readers

    data, kind = readers.read(path, nsys=timeline.nsys)
    return measure(data, kind=kind, source_path=str(path), timeline=timeline, kernels=kernels)


def start(path: str | Path, timeline: TimelineOptions = TimelineOptions(), kernels=None) -> Forked[Measured]:
    """:func:`measure_file` under way in a child; ``.result()`` gives it, ``.cancel()`` stops it."""

    def crashed(how: str) -> InputError:
        return InputError(f"{path}: the capture's reader crashed on it ({how}): the export is corrupt or truncated; export the report "
                          "again with 'nsys export --type sqlite --force-overwrite true'")

    return Forked(lambda: measure_file(path, timeline, kernels), crashed)
