"""A capture measured: its steps found and its steady steps analysed (or the whole capture, without
steps), with the facts of the file, ready for the timeline rules (:mod:`ncuwrap.timeline.diagnosis`).

:func:`start` measures a capture file in a forked child (:mod:`ncuwrap.forked`) while the caller loads
the rules and the evaluator: numpy and Arrow are imported and the file read beside that, not after it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ncuwrap.errors import InputError
from ncuwrap.forked import Forked

if TYPE_CHECKING:  # the model imports numpy: a child is forked before it is imported
    from ncuwrap.timeline.model import Timeline


@dataclass(frozen=True)
class Measured:
    timeline: Timeline  # over the steady steps where the capture has steps, else over the whole capture
    kind: str  # nsys-sqlite | nsys-rep | kineto (ncuwrap.timeline.readers)
    nsys_version: str | None
    export_schema: str | None
    device: str | None
    notes: tuple[str, ...]  # what was missing and how it was read, and how the window was chosen
    producer: str | None = None  # the program that wrote the file (TimelineData.producer)


def measure(data, *, kind: str, source_path: str, step_pattern: str | None = None, warmup: int | None = None) -> Measured:
    """The steps of ``data`` (a read capture: ncuwrap.timeline.sqlite.TimelineData; ``step_pattern``, ``warmup``:
    ncuwrap.timeline.steps) and the analysis of its steady steps, else of the whole capture."""
    from ncuwrap.timeline import steps as S
    from ncuwrap.timeline.analysis import analyze, analyze_steady

    found = S.measure(data, S.check_pattern(step_pattern), warmup)
    notes = list(data.notes)
    steady = analyze_steady(data, found) if found is not None else None
    if steady is not None:
        timeline = steady[1]
    else:
        if warmup is not None:
            raise InputError(f"{source_path}: --warmup {warmup}: the capture has no NVTX range named like a step "
                             f"({'no kernel was launched in its steps' if found is not None else 'none matches the step pattern'}); "
                             "mark each iteration with an NVTX range named 'step', or pass --step-range")
        timeline = analyze(data)  # without steps, the rules' step_* values are unknown, and say why (NO_STEPS)
        if found is not None:
            notes.append(f"{found.count} steps ('{found.name}') launched no kernel: the window is the whole capture, start-up included")
    return Measured(timeline=timeline, kind=kind, nsys_version=data.nsys_version, export_schema=data.export_schema, device=data.device,
                    notes=tuple(notes), producer=data.producer)


def measure_file(path: str | Path, *, nsys: str | Path | None = None, step_pattern: str | None = None,
                 warmup: int | None = None) -> Measured:
    """Read a capture file (.sqlite, .sqlite.gz, .nsys-rep) and measure it."""
    from ncuwrap.timeline.files import read_timeline

    data, kind = read_timeline(path, nsys=nsys)
    return measure(data, kind=kind, source_path=str(path), step_pattern=step_pattern, warmup=warmup)


def start(path: str | Path, *, nsys: str | Path | None = None, step_pattern: str | None = None,
          warmup: int | None = None) -> Forked[Measured]:
    """:func:`measure_file` under way in a child; ``.result()`` gives it, ``.cancel()`` stops it."""

    def crashed(how: str) -> InputError:
        return InputError(f"{path}: the capture's reader crashed on it ({how}): the export is corrupt or truncated; export the report "
                          "again with 'nsys export --type sqlite --force-overwrite true'")

    return Forked(lambda: measure_file(path, nsys=nsys, step_pattern=step_pattern, warmup=warmup), crashed)
