"""What kind of input a file is, among every kind ncuwrap reads: a kernel report (an Nsight Compute .ncu-rep or CSV
export), a diagnosis document (``diagnose --format json``) or a timeline (an nsys capture, a PyTorch profiler trace).

It stands above the two wings that read them, asking each about its own kinds (:func:`ncuwrap.kernel.reading.report_kind`,
:mod:`ncuwrap.timeline.readers`); neither wing asks the other. The API asks it which wing a path goes to.
"""

from __future__ import annotations

from pathlib import Path

from ncuwrap.core.errors import InputError
from ncuwrap.kernel.reading import report_kind
from ncuwrap.timeline import readers


def kind_of(path: Path) -> str:
    """``ncu-rep``, ``ncu-csv``, ``timeline`` or ``document``, from the suffix and, for .ncu-rep, a .json and a
    file of no known suffix, the file header; an InputError naming the file and what to give for none of them."""
    if path.name.lower().endswith(readers.SUFFIXES) and readers.takes(path):  # a .json only where it is a trace
        return "timeline"
    kind = report_kind(path)
    if kind is not None:
        return kind
    if readers.takes(path):  # a capture named without its suffix, known by its first bytes
        return "timeline"
    raise InputError(f"{path}: unknown file type; give a .ncu-rep, an ncu CSV export (.csv or .csv.gz), {readers.described()}")
