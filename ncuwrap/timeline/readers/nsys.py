"""Nsight Systems captures: its SQLite export (``nsys export --type sqlite``), gzipped or not, and the
``.nsys-rep`` report itself, exported to a temporary SQLite file with nsys. A ``.qdstrm`` (a capture
nsys did not finish) is taken to be refused with the fix."""

from __future__ import annotations

import tempfile
from pathlib import Path

from ncuwrap.core import sqlite_file
from ncuwrap.timeline.readers.interface import TimelineReader

_FIX = "give a .nsys-rep or its 'nsys export --type sqlite' .sqlite (or .sqlite.gz)"
# A gzipped export is unpacked to a temporary file first: no more than this (a minute of a training
# loop's capture is a few GB).
MAX_UNPACKED_SQLITE = 8 << 30


_DESCRIBED = "an nsys capture (.nsys-rep, .sqlite or .sqlite.gz)"

class NsysReport(TimelineReader):
    """A ``.nsys-rep``: exported with nsys to a private temporary .sqlite, read, and the copy removed."""

    kind = "nsys-rep"
    producer = "Nsight Systems"
    suffixes = (".nsys-rep", ".qdstrm")
    fix = _FIX
    described = _DESCRIBED

    def read(self, path, *, nsys=None, ranks=False):
        from ncuwrap.core import fileio, packed
        from ncuwrap.core.errors import ToolNotFoundError
        from ncuwrap.timeline import nsysrep
        from ncuwrap.timeline.readers import nsys_sqlite

        nsysrep.check_not_qdstrm(path)
        fileio.check_file(path, folder_fix="give an nsys .sqlite export or .nsys-rep report",
                          empty_fix="capture the program again with nsys profile")
        try:
            exe = nsysrep.find_nsys(nsys)
        except ToolNotFoundError:
            where = f"{nsys} is not an nsys executable" if nsys else "nsys is not on PATH"
            raise ToolNotFoundError(f"{path}: reading a .nsys-rep needs nsys to export it to SQLite, and {where}; install Nsight "
                                    f"Systems and put nsys on PATH, or run 'nsys export --type sqlite {path}' where nsys is "
                                    "installed and diagnose the .sqlite") from None
        with tempfile.TemporaryDirectory(prefix="ncuwrap-nsys-") as tmp:
            exported = Path(tmp) / packed.short_name(path.name[: -len(".nsys-rep")] + ".sqlite")
            # What is wrong with the export is said of the user's report, not of the temporary file.
            with packed.as_given(exported, path):
                exported = nsysrep.export_sqlite(path, exported, nsys=exe)
                return nsys_sqlite.read(exported, ranks=ranks)


class NsysSqlite(TimelineReader):
    """An nsys SQLite export, read by whole columns (:mod:`ncuwrap.timeline.readers.nsys_sqlite`)."""

    kind = "nsys-sqlite"
    producer = "Nsight Systems"
    suffixes = (".sqlite",)
    fix = _FIX
    described = _DESCRIBED

    def sniff(self, head: bytes) -> bool:
        return head.startswith(sqlite_file.MAGIC)

    def read(self, path, *, nsys=None, ranks=False):
        from ncuwrap.timeline.readers import nsys_sqlite

        return nsys_sqlite.read(path, ranks=ranks)


class NsysSqliteGz(TimelineReader):
    """A gzipped nsys SQLite export: SQLite reads a file, so a private unpacked copy, bounded in size and
    ratio (:mod:`ncuwrap.core.packed`), errors naming the .gz."""

    kind = "nsys-sqlite"
    producer = "Nsight Systems"
    suffixes = (".sqlite.gz",)
    fix = _FIX
    described = _DESCRIBED

    def read(self, path, *, nsys=None, ranks=False):
        from ncuwrap.core import fileio, packed
        from ncuwrap.timeline.readers import nsys_sqlite

        fileio.check_file(path, folder_fix="give an nsys .sqlite export, gzipped or not", empty_fix="export the report again and gzip it")
        with packed.unpacked(path, limit=MAX_UNPACKED_SQLITE, fix="give the .sqlite export itself or gzip it again",
                             prefix="ncuwrap-sqlite-") as plain:
            return nsys_sqlite.read(plain, ranks=ranks)
