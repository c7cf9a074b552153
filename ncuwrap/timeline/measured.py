"""A capture measured: its steps found and its steady steps analysed (or the whole capture, without
steps), with the facts of the file, ready for the timeline rules (:mod:`ncuwrap.timeline.diagnosis`).

:func:`measure` runs the stages in two parts: :func:`analyse` (the steps, their analysis and op limits: an
:class:`Analysed`) and :func:`measure_analysed` (the steps replayed, a kernel report's verdicts joined where they
are given). ``profile --top`` runs the first before ncu and the second once ncu's verdicts are known, so that a
capture's steps are found and analysed once.

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
    from ncuwrap.timeline.model import Timeline, TimelineData
    from ncuwrap.timeline.steps import Steps


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


@dataclass(frozen=True)
class Analysed:
    """A read capture through the analysis, before the what-if: its steady steps found and analysed with their op
    limits (or the whole capture, without steps); made by :func:`analyse`. :func:`measure_analysed` replays the
    steps into the :class:`Measured` the rules judge, with a kernel report's verdicts where they are given: the
    steps are found and analysed once, whichever verdicts are joined after them (``profile --top`` ranks the
    steady steps' kernels from it before ncu has run, and joins ncu's verdicts once it has)."""
    data: TimelineData  # the capture as read (ncuwrap.timeline.readers)
    kind: str  # nsys-sqlite | nsys-rep | kineto (ncuwrap.timeline.readers)
    source_path: str
    timeline: Timeline  # over the steady steps where the capture has steps, else over the whole capture; not replayed yet
    notes: tuple[str, ...]  # what was missing and how it was read, and how the window was chosen

    @property
    def steps(self) -> Steps | None:
        """The steady steps analysed (None: judged without steps)."""
        return self.timeline.steps


def analyse(data, *, kind: str, source_path: str, timeline: TimelineOptions = TimelineOptions()) -> Analysed:
    """The steps of ``data`` (a read capture: ncuwrap.timeline.model.TimelineData; how they are found:
    ``timeline``) and the analysis of its steady steps with their op limits, else of the whole capture; the
    what-if is :func:`measure_analysed`'s."""
    from ncuwrap.timeline import steps
    from ncuwrap.timeline.analysis import analyze_active, steady_analysis
    from ncuwrap.timeline.oplimits import analysis as op_limits

    warmup, find_steps = timeline.warmup, timeline.steps
    found = steps.measure(data, timeline.pattern, warmup, find_steps)
    notes = list(data.notes)
    steady = steady_analysis(data, found) if found is not None else None
    if steady is not None:
        analysed = steady[1]
    else:
        if warmup is not None:
            why = ("no kernel was launched in its steps" if found is not None else "steps are not looked for (--steps none)"
                   if find_steps == "none" else "none is marked" + (" or found by repetition" if find_steps == "auto" else ""))
            raise InputError(f"{source_path}: --warmup {warmup}: the capture has no steps ({why}); "
                             "mark each iteration with an NVTX range named 'step', or pass --step-range")
        # Without steps, the rules' step_* values are unknown and say why (NO_STEPS); the window runs from the
        # first GPU work to the last, so that start-up (imports, CUDA's initialisation) is not averaged in.
        analysed = analyze_active(data)
        if found is not None:
            notes.append(f"{found.count} steps ('{found.name}') launched no kernel: judged without steps")
        if analysed.scope == "active":
            launch = "the first GPU work's launch" + (" (from the start of the op that made it)" if data.ops is not None and len(data.ops) else "")
            notes.append(f"no steps {'looked for (--steps none)' if find_steps == 'none' else 'marked or found'}: the window runs from "
                         f"{launch} to the end of the last GPU work, and the {analysed.startup.duration_ns / 1e9:.2f} s "
                         "of start-up before it are left out")
    # The op limits of the steps analysed (of the whole capture without them): the replay predicts lower precision and fusion from them.
    limits = op_limits.measure(data, found if steady is not None else None)
    if limits is not None:
        analysed = dataclasses.replace(analysed, op_limits=limits)
    return Analysed(data=data, kind=kind, source_path=source_path, timeline=analysed, notes=tuple(notes))


def measure_analysed(analysed: Analysed, kernels=None) -> Measured:
    """``analysed``'s steady steps replayed on their dependency graph (ncuwrap.timeline.analysis.with_whatif), as
    captured and under each remedy; as analysed without steps (no what-if to predict). ``kernels``: a kernel
    report's verdicts (ncuwrap.timeline.kernel_join.DiagnosedKernels), joined here to the capture's kernels for the
    what-if's faster_kernel."""
    from ncuwrap.timeline import tracer as tracer_module
    from ncuwrap.timeline.analysis import with_whatif

    data, timeline, notes = analysed.data, analysed.timeline, list(analysed.notes)
    found = analysed.steps
    if found is not None:
        joined = None
        if kernels is not None:
            from ncuwrap.timeline.kernel_join import join

            joined = join(data.kernels, kernels)
        timeline = with_whatif(data, timeline, op_limits=timeline.op_limits, kernels=joined)
        if timeline.op_limits is not None and timeline.whatif is not None:  # the replay predicts the op model's remedies: their one figure is there
            timeline = dataclasses.replace(timeline, op_limits=dataclasses.replace(timeline.op_limits, predictions=(), replayed=True))
        tracer = timeline.tracer
        if tracer is not None and found.gpu_busy_pct < tracer_module.HOST_BOUND_BELOW_PCT and tracer.untraced_bound == "gpu":
            notes.append(f"the host-bound step is partly the tracer's: {tracer.tracer} added ~{tracer.added_ns / 1e6:.3g} ms of host time "
                         f"a step, and without it the GPU would be busy ~{tracer.untraced_busy_pct:.0f}% of a ~{tracer.untraced_ns / 1e6:.3g} ms "
                         "step (GPU-bound)")
    return Measured(timeline=timeline, kind=analysed.kind, nsys_version=data.nsys_version, export_schema=data.export_schema,
                    device=data.device, notes=tuple(notes), producer=data.producer)


def measure(data, *, kind: str, source_path: str, timeline: TimelineOptions = TimelineOptions(), kernels=None) -> Measured:
    """The steps of ``data`` (a read capture: ncuwrap.timeline.model.TimelineData; how they are found:
    ``timeline``) and the analysis of its steady steps, else of the whole capture (:func:`analyse`), replayed with
    ``kernels`` joined (:func:`measure_analysed`)."""
    return measure_analysed(analyse(data, kind=kind, source_path=source_path, timeline=timeline), kernels)


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
