"""Writing output files: checked before any work, then written whole or not at all.

An output path is refused when writing it would lose data or touch something that is not a file:
an input of the same command (by any name: a symlink or a hard link to it counts), an existing
file without --force, a device, FIFO or socket (even with --force, and behind a symlink), a folder.
"""

from __future__ import annotations

import errno
import os
import stat
import tempfile
from pathlib import Path

from ncuwrap.core.errors import InputError, NcuwrapError, OutputExistsError
from ncuwrap.core.packed import short_name


def _same_file(a: Path, b: Path) -> bool:
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def check_target(path: Path, *, force: bool = False, inputs=(), option: str = "-o") -> None:
    """Refuse ``path`` as an output before any work is done (see the module's rules)."""
    path = Path(path)
    for given in inputs:
        if given is not None and _same_file(path, Path(given)):
            raise OutputExistsError(f"{path}: {option} names an input of this command ({given}); choose another output file")
    try:
        info = path.stat()  # follows a symlink: what would be written through it
    except FileNotFoundError:
        info = None
    except OSError as exc:
        raise NcuwrapError(f"{path}: cannot check the output path ({exc.strerror or exc}); choose another {option} path") from None
    if info is not None:
        if stat.S_ISDIR(info.st_mode):
            raise NcuwrapError(f"{path}: is a folder; give a file name for {option}")
        if not stat.S_ISREG(info.st_mode):
            raise NcuwrapError(f"{path}: not a regular file (a device, FIFO or socket); ncuwrap never writes one, give a file name for {option}")
        if not force:
            raise OutputExistsError(f"{path}: already exists; pass --force to replace it, or choose another {option} path")
    elif path.is_symlink():
        raise NcuwrapError(f"{path}: a symlink to a missing file; give a plain file name for {option}")
    directory = path.parent if str(path.parent) else Path(".")
    if not directory.is_dir():
        raise NcuwrapError(f"{path}: folder {directory} does not exist; create it or choose another {option} path")


def write_checked(path: Path, text: str, *, force: bool = False, inputs=(), option: str = "-o") -> None:
    """Check ``path`` again (it may have changed while the command ran), then write it whole."""
    check_target(path, force=force, inputs=inputs, option=option)
    try:
        write_atomic(path, text)
    except OSError as exc:
        raise NcuwrapError(f"{path}: cannot write ({exc.strerror or exc}); choose another {option} path") from None


def write_atomic(path: Path, text: str, *, errors: str = "strict") -> None:
    """Write ``text`` through a temporary file in the same folder, then rename it into place: an error
    never leaves a half-written file, and an existing file is replaced only by a complete one.
    ``errors="surrogateescape"`` writes a tool's output decoded with core.process.TOOL_TEXT as its own bytes."""
    path = Path(path)
    # The temporary name must fit the file system's 255 bytes even when the name itself nearly does.
    fd, tmp = tempfile.mkstemp(prefix=f".{short_name(path.name)}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", errors=errors) as fh:
            fh.write(text)
        # mkstemp makes the file owner-only; reports are meant to be shared, so follow the umask.
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


_NOT_REGULAR = ((stat.S_ISFIFO, "a named pipe (FIFO)"), (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                (stat.S_ISSOCK, "a socket"))


# A folder given where a report is read: 'diagnose' and 'compare' take a run folder of 'ncuwrap profile'
# (one with profile.json) before this check; any other folder is refused with this.
FOLDER_FIX = "give a report file (.ncu-rep or an ncu CSV export), or a run folder of 'ncuwrap profile' (one holding profile.json)"


def check_file(path: Path, *, folder_fix: str = FOLDER_FIX,
               empty_fix: str | None = "profile again or re-export the report", missing: str = "no such file; check the path",
               max_bytes: int | None = None, error: type[NcuwrapError] = InputError) -> Path:
    """Refuse what is not a readable regular file, with what to do instead: a missing path, a folder,
    a loop of symbolic links, a pipe, device or socket (reading one blocks or never ends: /dev/zero, a
    FIFO), an unreadable file, an empty one (unless ``empty_fix`` is None) or one over ``max_bytes``.
    Checked with stat() before anything opens the file. ``error``: the class raised (RulesError for rules)."""
    try:
        info = os.stat(path)
    except FileNotFoundError:
        raise error(f"{path}: {missing}") from None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise error(f"{path}: a loop of symbolic links; point the link at the file itself") from None
        raise error(f"{path}: cannot be read ({exc.strerror}); check the path and its permissions") from None
    if stat.S_ISDIR(info.st_mode):
        raise error(f"{path}: is a folder; {folder_fix}")
    if not stat.S_ISREG(info.st_mode):
        kind = next((name for test, name in _NOT_REGULAR if test(info.st_mode)), "not a regular file")
        raise error(f"{path}: is {kind}, not a file; save the data to a file and give its path")
    if info.st_size == 0 and empty_fix is not None:
        raise error(f"{path}: the file is empty; {empty_fix}")
    if max_bytes is not None and info.st_size > max_bytes:
        raise error(f"{path}: {info.st_size:,} bytes, more than the {max_bytes >> 20} MiB such a file can be; give the right file")
    try:
        # A regular file: opening cannot block. This tells an unreadable file before any work is done.
        with open(path, "rb"):
            pass
    except OSError as exc:
        raise error(f"{path}: cannot be read ({exc.strerror}); check the file's permissions") from None
    return path
