"""Reading an SQLite database another program made, without writing a byte beside it, and refusing one a
program is writing.

An nsys export is written whole and then left alone: it is read as immutable (``immutable=1``: SQLite takes no
lock and makes no ``-shm`` or ``-wal`` beside it, and a read-only folder is fine). What lies beside the file can
change that:

- **A write lock held on it**: a program is writing it (nsys export, or any SQLite writer), and an immutable
  read, which ignores locks, could see it half written. SQLite's locks are POSIX record locks: a writer holds a
  write lock on the database's PENDING, RESERVED or SHARED bytes (rollback journal; in WAL mode with
  ``locking_mode=EXCLUSIVE`` too) or on the WRITE or CHECKPOINT byte of its ``-shm`` index (WAL mode). They are
  asked about with ``F_OFD_GETLK`` (Linux 3.15+), which takes no lock and writes nothing, and which sees this
  process's own locks too. Such a file is refused in one line, before the read and again after it (a writer
  that came during an immutable read, or a file that changed under it).
- **A write-ahead log holding pages, or a rollback journal**, left by a writer that did not finish (killed, or
  still open but idle): the log's pages are part of the database, and a hot journal must be rolled back before
  the file reads true. SQLite does either only where it can write: a ``-shm`` index beside the file (a
  "read-only" ``mode=ro`` connection makes one, or rewrites one that is there), or the file itself. So the
  database and that file are copied into a private folder of ``$TMPDIR``, the copy is read, and the folder is
  removed: the user's folder is left as it was found (names and times). Refusing instead ("checkpoint it
  first") would ask the user to write the file they gave a read-only tool, to read it; the copy costs the
  file's size in ``$TMPDIR`` once, for what nsys does not leave (the exports of nsys 2025 in tests/data are
  in rollback-journal mode, and written whole).

Where ``F_OFD_GETLK`` is missing (not Linux), no lock can be asked about and a file is read as before: immutable,
or a copy with its log.
"""

from __future__ import annotations

import os
import shutil
import struct
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from ncuwrap.core.errors import InputError
# The first bytes of every SQLite database file.
MAGIC = b"SQLite format 3\x00"

# SQLite's lock bytes (its unix VFS, os_unix.c and wal.c): on the database file, PENDING at 1 GiB, then
# RESERVED, then the 510 SHARED bytes; a writer holds a write lock on one of them. In the -shm index of a
# WAL-mode database, WRITE (byte 120) and CHECKPOINT (121). Readers hold read locks only.
_PENDING_BYTE = 0x40000000
_DATABASE_LOCKS = (_PENDING_BYTE, 2 + 510)
_SHM_LOCKS = (120, 2)
# Linux's struct flock: l_type, l_whence, l_start, l_len, l_pid (and padding).
_FLOCK = "hhqqi4x"
# Files beside a database that SQLite reads as part of it: a write-ahead log, a rollback journal.
SIDE_FILES = ("-wal", "-journal")
# A probe's descriptors of a file this process also has open elsewhere, kept open (see _close).
_KEPT: list[int] = []


def refusal(path: Path, why: str) -> InputError:
    """The one line that says ``path`` is being written, ``why`` in the lock's or SQLite's words."""
    return InputError(f"{path}: the file is being written by another program ({why}); wait until it has finished (nsys export, "
                      "or the program writing it), then run again")


def writer(path: Path) -> str | None:
    """Who holds a write lock on the database ``path`` or its ``-shm`` ("process 1234 holds a write lock on it"),
    None when nobody does or the system cannot tell."""
    try:
        import fcntl

        query = fcntl.F_OFD_GETLK
    except (ImportError, AttributeError):  # not Linux: nothing to ask
        return None
    for file, (start, length) in ((path, _DATABASE_LOCKS), (Path(f"{path}-shm"), _SHM_LOCKS)):
        try:
            fd = os.open(file, os.O_RDONLY)
        except OSError:  # no -shm (not in WAL mode, or nobody has it open): no lock there
            continue
        try:
            # A read lock over the writer's bytes conflicts with a write lock only: the one it reports is a writer's.
            asked = struct.pack(_FLOCK, fcntl.F_RDLCK, os.SEEK_SET, start, length, 0)
            kind, _, _, _, pid = struct.unpack(_FLOCK, fcntl.fcntl(fd, query, asked))
        except OSError:
            kind = fcntl.F_UNLCK
        finally:
            _close(fd)
        if kind != fcntl.F_UNLCK:
            holder = f"process {pid}" if pid > 0 else "another process"  # 0: a process this one cannot see
            return f"{holder} holds a write lock on {'it' if file == path else file.name}"
    return None


def _close(fd: int) -> None:
    """Close a probe's descriptor, unless this process has the same file open under another descriptor: a
    close drops every POSIX lock the process holds on the file, and an API caller's own SQLite connection
    to it would lose its lock. Those are kept open instead (SQLite keeps its own for the same reason)."""
    try:
        info = os.fstat(fd)
        for name in os.listdir("/proc/self/fd"):
            if int(name) != fd:
                try:
                    other = os.stat(f"/proc/self/fd/{name}")
                except OSError:
                    continue
                if (other.st_dev, other.st_ino) == (info.st_dev, info.st_ino):
                    _KEPT.append(fd)
                    return
    except OSError:  # no /proc: the F_OFD_GETLK asked above is Linux's, which has it
        pass
    os.close(fd)


def _state(path: Path) -> tuple:
    """What changes when a program writes ``path`` or the files beside it: each one's size, time and inode."""
    out = []
    for file in (path, *(Path(f"{path}{side}") for side in SIDE_FILES)):
        try:
            info = os.stat(file)
            out.append((info.st_size, info.st_mtime_ns, info.st_ino))
        except FileNotFoundError:
            out.append(None)
        except OSError as exc:
            out.append(exc.errno)
    return tuple(out)


def _check(path: Path, before: tuple | None = None) -> None:
    """Refuse ``path`` when a program holds a write lock on it, or it changed since ``before``."""
    holder = writer(path)
    if holder:
        raise refusal(path, holder)
    if before is not None and _state(path) != before:
        raise refusal(path, "it changed while it was read")


def pages_beside(path: Path) -> list[Path]:
    """The write-ahead log holding pages, or the rollback journal, beside ``path`` (see the module)."""
    found = []
    for side in SIDE_FILES:
        file = Path(f"{path}{side}")
        try:
            if file.stat().st_size > 0:
                found.append(file)
        except FileNotFoundError:
            continue
        except OSError:  # there, but not to be looked at: copied, or refused by the copy in one line
            found.append(file)
    return found


@contextmanager
def reading(path: Path) -> Iterator[str]:
    """The URI to read the database ``path`` through (the module says which): immutable where nothing lies
    beside it, else a private copy of it and its log or journal. InputError, naming ``path``, when a program
    is writing it, before the read or after (then in place of whatever the read raised)."""
    _check(path)
    before = _state(path)
    beside = pages_beside(path)
    if not beside:
        try:
            yield f"{path.resolve().as_uri()}?immutable=1"
        except BaseException:
            _check(path, before)  # a writer's half-written file is said as such, not as "corrupt"
            raise
        _check(path, before)
        return
    with tempfile.TemporaryDirectory(prefix="ncuwrap-sqlite-") as folder:
        copy = Path(folder) / "capture.sqlite"
        try:
            shutil.copyfile(path, copy)
            for file in beside:
                shutil.copyfile(file, f"{copy}{file.name[len(path.name):]}")
        except OSError as exc:
            side = beside[0]
            fold = ("PRAGMA wal_checkpoint(TRUNCATE)" if side.name.endswith("-wal") else "SELECT count(*) FROM sqlite_master")
            raise InputError(f"{path}: {side.name} beside it holds pages not yet in the file, and no private copy could be made "
                             f"to read them without writing beside it ({exc.strerror or exc}); make room in {tempfile.gettempdir()}, "
                             f"or fold them into the file with: sqlite3 {path} '{fold}'") from None
        _check(path, before)  # a writer that came while it was copied
        yield copy.as_uri()
