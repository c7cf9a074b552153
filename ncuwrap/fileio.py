"""Writing output files: checked before any work, then written whole or not at all.

An output path is refused when writing it would lose data or touch something that is not a file:
an input of the same command (by any name: a symlink or a hard link to it counts), an existing
file without --force, a device, FIFO or socket (even with --force, and behind a symlink), a folder.
"""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path

from ncuwrap.errors import NcuwrapError, OutputExistsError
from ncuwrap.packed import short_name


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


def write_atomic(path: Path, text: str) -> None:
    """Write ``text`` through a temporary file in the same folder, then rename it into place: an error
    never leaves a half-written file, and an existing file is replaced only by a complete one."""
    path = Path(path)
    # The temporary name must fit the file system's 255 bytes even when the name itself nearly does.
    fd, tmp = tempfile.mkstemp(prefix=f".{short_name(path.name)}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        # mkstemp makes the file owner-only; reports are meant to be shared, so follow the umask.
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
