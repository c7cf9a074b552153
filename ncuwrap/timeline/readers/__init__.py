"""The timeline readers, declared: each input format's suffixes and sniff, its reader, and the program
that writes it (the contract: :mod:`.interface`). :func:`find` picks the reader of a file and
:func:`read` reads it, the one call that opens a capture; everything after (steps, the verdict, every format)
sees only the timeline model (:class:`ncuwrap.timeline.model.TimelineData`). The readers' own modules are
here too (:mod:`.nsys_sqlite`, :mod:`.kineto_json` with :mod:`.kineto_stream`, :mod:`.pytorch_nvtx`), loaded
only when a file is read.

A new input format is one module here, with a :class:`~.interface.TimelineReader`, and its line in
:data:`READERS`. This package imports no numpy: the command line asks it whether an argument is a
capture (:data:`SUFFIXES`) before anything heavy is loaded.
"""

from __future__ import annotations

import gzip
import zlib
from pathlib import Path

from ncuwrap.core.errors import InputError
from ncuwrap.timeline.readers.interface import TimelineReader
from ncuwrap.timeline.readers.kineto import KinetoTrace
from ncuwrap.timeline.readers.nsys import NsysReport, NsysSqlite, NsysSqliteGz

READERS: tuple[TimelineReader, ...] = (NsysReport(), NsysSqlite(), NsysSqliteGz(), KinetoTrace())
SUFFIXES: tuple[str, ...] = tuple(s for r in READERS for s in r.suffixes)
# Enough of a file to tell its format (Kineto writes its device list before the events).
HEAD_BYTES = 64 << 10


def described() -> str:
    """The formats the readers take, as messages name them ("an nsys capture (...), or a PyTorch profiler trace (...)")."""
    names = list(dict.fromkeys(r.described for r in READERS))
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])}, or {names[-1]}"


def head(path: Path) -> bytes:
    """The first HEAD_BYTES of ``path``, of its unpacked content where it is gzipped; b"" when it cannot be read."""
    try:
        with path.open("rb") as fh:
            start = fh.read(HEAD_BYTES)
            if not start.startswith(b"\x1f\x8b"):
                return start
            fh.seek(0)
            with gzip.GzipFile(fileobj=fh, mode="rb") as unpacked:
                return unpacked.read(HEAD_BYTES)
    except (OSError, EOFError, zlib.error):
        return b""


def _by_suffix(name: str) -> tuple[TimelineReader, str] | tuple[None, None]:
    """The reader whose suffix ends ``name``, with that suffix (the longest: .sqlite.gz before .gz,
    .pt.trace.json before .json)."""
    matches = [(s, r) for r in READERS for s in r.suffixes if name.endswith(s)]
    if not matches:
        return None, None
    suffix, reader = max(matches, key=lambda m: len(m[0]))
    return reader, suffix


def find(path: str | Path) -> TimelineReader | None:
    """The reader of ``path``: by its suffix (one other files share, such as .json, only where the
    reader's sniff knows its first bytes), else by sniffing a file of no known suffix; None for neither."""
    path = Path(path)
    reader, suffix = _by_suffix(path.name.lower())
    if reader is not None:
        if suffix not in reader.shared:
            return reader
        return reader if path.is_file() and reader.sniff(head(path)) else None
    if not path.is_file():
        return None
    start = head(path)
    return next((r for r in READERS if start and r.sniff(start)), None)


def takes(path: str | Path) -> bool:
    """Whether some reader takes ``path`` (a capture, not a program or a kernel report)."""
    return find(path) is not None


def read(path: str | Path, nsys: str | Path | None = None, *, ranks: bool = False):
    """The timeline model of ``path`` and its source kind, read by its reader (:func:`find`); the
    producer's name is set where the reader left it unsaid."""
    path = Path(path)
    reader = _by_suffix(path.name.lower())[0] or find(path)
    if reader is None:
        raise InputError(f"{path}: not a timeline of a known kind; "
                         f"{'; or '.join(dict.fromkeys(r.fix for r in READERS))}")
    data = reader.read(path, nsys=nsys, ranks=ranks)
    if data.producer is None:
        data.producer = reader.producer
    return data, reader.kind


__all__ = ["READERS", "SUFFIXES", "TimelineReader", "described", "find", "head", "read", "takes"]
