"""Inputs read through a stand-in file: a gzipped export unpacked, a capture exported by a tool.

Two rules hold for all of them (issue 22): every error names the file the user gave, never the
temporary one (:func:`as_given`), and unpacking is checked while it streams: a size bound, and a ratio
bound that stops a file inflating far more than any export does (a "zip bomb") after RATIO_AFTER bytes
instead of after the whole size bound.
"""

from __future__ import annotations

import contextlib
import os
import gzip
import tempfile
import zlib
from pathlib import Path

from ncuwrap.core.errors import InputError, NcuwrapError

# ncu's CSV exports and source pages compress 6-25x (real H200 exports, tests/data); nothing real
# inflates 250x. The ratio is judged once this much has come out (small files may well compress more).
MAX_RATIO = 250
RATIO_AFTER = 256 << 20
# Past a file's name: the other paths, so that a name within the file system's 255 bytes still fits.
_NAME_ROOM = 255 - len("ncuwrap-") - 16


@contextlib.contextmanager
def as_given(stand_in: Path, given: Path):
    """Errors raised inside name ``given`` wherever they named ``stand_in``."""
    try:
        yield
    except NcuwrapError as exc:
        text = str(exc)
        if str(stand_in) not in text:
            raise
        raise type(exc)(text.replace(str(stand_in), str(given))) from None


def short_name(name: str) -> str:
    """``name`` for a temporary copy: a legal 250-byte name plus a suffix would pass the limit. Measured
    in the file system's own bytes: a name need not be UTF-8 (``caf\\xe9.csv``, as Python reads it)."""
    encoded = os.fsencode(name)
    if len(encoded) <= _NAME_ROOM:
        return name
    suffix = "".join(Path(name).suffixes[-2:])[-40:]
    # Cut at a byte (a temporary name may end inside a character: the file system takes any bytes).
    return os.fsdecode(encoded[: _NAME_ROOM - len(os.fsencode(suffix))]) + suffix


def inflates_too_much(out_bytes: int, in_bytes: int) -> bool:
    """True once RATIO_AFTER bytes are out and they are more than MAX_RATIO times the bytes read."""
    return out_bytes > RATIO_AFTER and out_bytes > MAX_RATIO * max(in_bytes, 1)


def unpack(path: Path, dest: Path, *, limit: int, fix: str) -> None:
    """Unpack the gzip file ``path`` into ``dest``: at most ``limit`` bytes, and no more than
    MAX_RATIO times the compressed bytes read once RATIO_AFTER bytes are out. ``fix``: what to do."""
    written = 0
    try:
        with path.open("rb") as raw, gzip.GzipFile(fileobj=raw, mode="rb") as src, dest.open("wb") as dst:
            while chunk := src.read(1 << 20):
                written += len(chunk)
                if written > limit:
                    raise InputError(f"{path}: unpacks to more than {limit >> 20:,} MiB, more than such a file holds; {fix}")
                if inflates_too_much(written, raw.tell()):
                    raise InputError(f"{path}: inflates more than {MAX_RATIO} times its size (a real export inflates 6-25 times), "
                                     f"so it is damaged or made to exhaust the disk; {fix}")
                dst.write(chunk)
    except (OSError, EOFError, zlib.error) as exc:
        raise InputError(f"{path}: not a readable gzip file ({exc}); {fix}") from None


@contextlib.contextmanager
def unpacked(path: Path, *, limit: int, fix: str, prefix: str = "ncuwrap-"):
    """A private temporary copy of the gzip file ``path`` unpacked (removed after); errors inside
    the block name ``path``."""
    with tempfile.TemporaryDirectory(prefix=prefix) as folder:
        plain = Path(folder) / short_name(path.name[:-3] if path.name.lower().endswith(".gz") else path.name)
        unpack(path, plain, limit=limit, fix=fix)
        with as_given(plain, path):
            yield plain
