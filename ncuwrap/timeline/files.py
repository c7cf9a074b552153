"""A capture file of any kind read into its raw events, by the reader the registry gives it
(:mod:`ncuwrap.timeline.readers`: nsys .sqlite, .sqlite.gz and .nsys-rep, PyTorch profiler traces)."""

from __future__ import annotations

from pathlib import Path


def read_timeline(path: str | Path, nsys: str | Path | None = None, *, ranks: bool = False):
    """The raw events of ``path`` (ncuwrap.timeline.model.TimelineData) and its source kind
    ("nsys-sqlite", "nsys-rep", "kineto"); with ``ranks``, also its run identity. ``nsys``: the nsys
    that exports a .nsys-rep."""
    from ncuwrap.timeline import readers

    return readers.read(path, nsys, ranks=ranks)
