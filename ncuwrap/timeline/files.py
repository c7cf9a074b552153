"""A capture file of any kind (.sqlite, .nsys-rep exported with nsys) read into its raw events."""

from __future__ import annotations

import tempfile
from pathlib import Path

from ncuwrap import packed
from ncuwrap.errors import InputError, ToolNotFoundError


# A gzipped export is unpacked to a temporary file first: no more than this (a minute of a training
# loop's capture is a few GB).
MAX_UNPACKED_SQLITE = 8 << 30


def read_timeline(path: str | Path, nsys: str | Path | None = None, *, ranks: bool = False):
    """The raw events of ``path`` (.sqlite, or .nsys-rep exported to a temporary .sqlite with nsys);
    with ``ranks``, also its run identity (ncuwrap.timeline.sqlite.read)."""
    from ncuwrap import ingest
    from ncuwrap.timeline import nsysrep, sqlite

    path = Path(path)
    nsysrep.check_not_qdstrm(path)
    name = path.name.lower()
    if name.endswith(".nsys-rep"):
        ingest.check_file(path, folder_fix="give an nsys .sqlite export or .nsys-rep report",
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
                return sqlite.read(exported, ranks=ranks), "nsys-rep"
    if name.endswith(".sqlite"):
        return sqlite.read(path, ranks=ranks), "nsys-sqlite"
    if name.endswith(".sqlite.gz"):
        ingest.check_file(path, folder_fix="give an nsys .sqlite export, gzipped or not", empty_fix="export the report again and gzip it")
        # SQLite reads a file: a private unpacked copy, bounded in size and ratio, errors naming the .gz.
        with packed.unpacked(path, limit=MAX_UNPACKED_SQLITE, fix="give the .sqlite export itself or gzip it again",
                             prefix="ncuwrap-sqlite-") as plain:
            return sqlite.read(plain, ranks=ranks), "nsys-sqlite"
    raise InputError(f"{path}: not an Nsight Systems timeline; give a .nsys-rep or its 'nsys export --type sqlite' .sqlite (or .sqlite.gz)")
