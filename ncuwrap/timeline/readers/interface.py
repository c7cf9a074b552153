"""The contract of a timeline reader: which files it takes, how it reads one into the timeline model
(:class:`~ncuwrap.timeline.model.TimelineData`), and which program wrote them.

A reader is declared, not found by name: :data:`ncuwrap.timeline.readers.READERS` lists every one, and
tests/test_kineto.py checks each against this contract. A reader module imports only this at its top:
the command line asks the registry whether an argument is a capture before numpy is imported.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

if TYPE_CHECKING:
    from ncuwrap.timeline.model import TimelineData


class TimelineReader(ABC):
    """One input format of ``ncuwrap timeline`` (and ``diagnose``, ``compare``, ``--ranks``, the API)."""

    kind: ClassVar[str]  # the source kind the documents print ("nsys-sqlite", "kineto")
    producer: ClassVar[str]  # the program that writes the files ("Nsight Systems", "PyTorch profiler (Kineto)")
    suffixes: ClassVar[tuple[str, ...]]  # the file names it takes, lower case (".sqlite.gz")
    # Of those, the suffixes other files have too (.json: also a diagnosis document): such a file is this
    # reader's only when :meth:`sniff` says so.
    shared: ClassVar[tuple[str, ...]] = ()
    fix: ClassVar[str]  # what to give instead, said when a file is none of the readers'
    # How messages name the files it takes, among the others' ("an nsys capture (.nsys-rep, .sqlite or .sqlite.gz)").
    described: ClassVar[str]

    def sniff(self, head: bytes) -> bool:
        """Whether ``head`` (a file's first bytes, a gzip file's unpacked) is of this format; also
        what finds the reader of a file whose name has none of the suffixes."""
        return False

    @abstractmethod
    def read(self, path: Path, *, nsys: str | Path | None = None, ranks: bool = False) -> "TimelineData":
        """The events of ``path``; ``ranks``: also what identifies the run (``TimelineData.run``).
        Every problem with the file is an :class:`~ncuwrap.core.errors.InputError` naming it."""
