"""The rank captures in a folder (``ncuwrap timeline --ranks DIR``): which files, and which rank each is.

Naming rule:

1. The captures are the folder's ``.sqlite``, ``.sqlite.gz`` and ``.nsys-rep`` files and its PyTorch
   profiler traces (``.json``, ``.json.gz`` that are traces; not its subfolders). Where several forms
   of ``X`` exist, the ``.sqlite`` is read, then the ``.sqlite.gz``.
2. Where every capture is a PyTorch profiler trace whose ``distributedInfo`` gives its rank (torch.profiler
   writes it under torch.distributed; tensorboard_trace_handler names the files by host and pid), that
   is its rank.
3. A file named with ``rank`` and a number (``rank0.sqlite``, ``rank_3.nsys-rep``, ``run.rank12.sqlite``,
   as ``nsys profile -o rank%q{RANK}`` or ``%q{SLURM_PROCID}`` write them) is that rank. Then every
   file must be named so, each rank once, and the ranks must run 0..N-1 without a gap.
4. Otherwise (``report.<pid>.sqlite``, ``node1.sqlite``) the files are ranks 0..N-1 in the natural
   order of their names (numbers compared as numbers). A pid is not a rank: the result says which
   file got which rank.

Every refusal is one line naming the folder or file and the fix.
"""

from __future__ import annotations

import dataclasses
import re
import stat
from dataclasses import dataclass
from pathlib import Path

from ncuwrap.core.errors import InputError
from ncuwrap.timeline import readers
from ncuwrap.timeline.readers import kineto
from ncuwrap.timeline.readers.nsys_sqlite import check_file

# In the order preferred where a capture has several forms (nsys's own export before the report it would
# export), then every other reader's (a new reader's files are ranks too); not nsys's raw stream, which nsys
# turns into a report when the capture ends. A .json is a capture where it is a trace (the readers' shared).
_PREFERRED = (".sqlite", ".sqlite.gz", ".nsys-rep")
SUFFIXES = _PREFERRED + tuple(s for s in readers.SUFFIXES if s not in _PREFERRED and s != ".qdstrm")
_SNIFFED = tuple(s for r in readers.READERS for s in r.shared)
_RANK = re.compile(r"rank[_.-]?(\d+)", re.IGNORECASE)
_NUMBERS = re.compile(r"(\d+)")


@dataclass(frozen=True)
class RankFile:
    """One rank's capture file."""
    rank: int
    path: Path


@dataclass(frozen=True)
class RankFiles:
    """The capture files of a folder of ranks, numbered, with how the numbering was found; read before any capture is analysed."""
    files: tuple[RankFile, ...]  # by rank
    naming: str  # how the ranks were numbered, one sentence
    by_name: bool  # True: from rankN in the file names; False: the order of the names
    skipped: tuple[str, ...] = ()  # names of captures that are not regular files (a FIFO, a socket, a folder): not read


# The most captures one analysis reads: each is read whole (a rank's analysis is the floor: what 10,000 small
# ranks took is in docs/scale.md, figures behind the code); a larger job is analysed a node or a slice at a time.
MAX_RANKS = 4096


def _stem(path: Path) -> str:
    name = path.name
    for suffix in SUFFIXES:
        if name.lower().endswith(suffix):
            return name[: -len(suffix)]
    return name


def _preference(path: Path) -> int:
    return next(i for i, suffix in enumerate(SUFFIXES) if path.name.lower().endswith(suffix))


def _natural(name: str):
    return [int(part) if part.isdigit() else part.lower() for part in _NUMBERS.split(name)]


def find(folder: str | Path) -> RankFiles:
    """The rank captures of ``folder``, numbered by the naming rule above."""
    folder = Path(folder)
    if not folder.exists():
        raise InputError(f"{folder}: no such folder; give the folder holding one nsys capture per rank (rank0.sqlite, rank1.sqlite...)")
    if not folder.is_dir():
        raise InputError(f"{folder}: not a folder; --ranks takes the folder holding one nsys capture per rank "
                         f"(to diagnose one capture, run 'ncuwrap timeline {folder}')")
    found: dict[str, Path] = {}
    skipped: list[str] = []
    for path in sorted(folder.iterdir()):
        lower = path.name.lower()
        if not lower.endswith(SUFFIXES):
            continue
        if not path.is_file():  # never opened: a FIFO would block, a device never end
            skipped.append(f"{path.name} ({_kind(path)})")
            continue
        if lower.endswith(_SNIFFED) and not readers.takes(path):
            continue  # a .json that is no trace (a verdict written beside the captures)
        stem = _stem(path)
        if stem in found and _preference(found[stem]) <= _preference(path):
            continue  # the .sqlite export of the same report is read instead
        found[stem] = path
    if not found:
        others = sorted(p.name for p in folder.iterdir() if p.is_file())
        seen = f" (it holds {', '.join(others[:3])}{'...' if len(others) > 3 else ''})" if others else " (it is empty)"
        raise InputError(f"{folder}: nothing to read as a rank{seen}; give one file per rank, {readers.described()} "
                         "(with 'nsys profile -o DIR/rank%q{RANK} ...': see docs/ranks.md)")
    if len(found) > MAX_RANKS:
        raise InputError(f"{folder}: {len(found):,} captures, more than the {MAX_RANKS:,} ranks one analysis reads (each is read "
                         "whole); analyse a node's ranks, or ranks 0..N-1 of the job, in a folder of their own")
    for path in found.values():
        if path.name.lower().endswith(".sqlite"):
            check_file(path)
    return dataclasses.replace(_numbered(folder, found), skipped=tuple(skipped))


def _kind(path: Path) -> str:
    """What a path that is not a regular file is, in words."""
    try:
        mode = path.stat().st_mode
    except OSError:
        return "unreadable"
    kinds = ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a named pipe"), (stat.S_ISSOCK, "a socket"), (stat.S_ISCHR, "a device"),
             (stat.S_ISBLK, "a device"))
    return next((name for test, name in kinds if test(mode)), "not a regular file")


def _numbered(folder: Path, found: dict[str, Path]) -> RankFiles:
    """``found``'s captures (stem -> path), numbered by the naming rule."""
    traced = _traced_ranks(folder, found)
    if traced is not None:
        return traced
    numbered = {stem: _RANK.findall(stem) for stem in found}
    with_rank = [s for s, n in numbered.items() if n]
    if not with_rank:
        order = sorted(found, key=_natural)
        files = tuple(RankFile(i, found[s]) for i, s in enumerate(order))
        return RankFiles(files, "no file is named rankN: ranks numbered 0..N-1 in the order of the file names", False)
    if len(with_rank) < len(found):
        odd = sorted(set(found) - set(with_rank), key=_natural)[0]
        raise InputError(f"{found[odd]}: not named rankN while {found[with_rank[0]].name} is; name every capture "
                         "rank<N> (nsys profile -o rank%q{RANK}) or move the others out of the folder")
    by_rank: dict[int, Path] = {}
    for stem in sorted(found, key=_natural):
        rank = int(numbered[stem][-1])
        if rank in by_rank:
            raise InputError(f"{found[stem]}: rank {rank} again (also {by_rank[rank].name}); keep one capture per rank "
                             "in the folder")
        by_rank[rank] = found[stem]
    _check_complete(folder, by_rank, "capture", "")
    return RankFiles(tuple(RankFile(r, by_rank[r]) for r in sorted(by_rank)), "ranks from the file names (rankN)", True)


def _check_complete(folder: Path, by_rank: dict[int, Path], noun: str, how: str) -> None:
    """Refuse a set of ranks with a gap (``noun``: what a rank's file is; ``how``: how the ranks were told)."""
    missing = sorted(set(range(max(by_rank) + 1)) - set(by_rank))
    if missing:
        listed = ", ".join(str(r) for r in missing[:5]) + ("..." if len(missing) > 5 else "")
        raise InputError(f"{folder}: rank{'s' if len(missing) > 1 else ''} {listed} missing (found {len(by_rank)} {noun}s, "
                         f"ranks up to {max(by_rank)}{how}); add the missing rank's {noun}, or analyse a complete set")


def _traced_ranks(folder: Path, found: dict[str, Path]) -> RankFiles | None:
    """The ranks the traces' distributedInfo gives, where every capture is a trace that gives one; None otherwise."""
    if not all(p.name.lower().endswith(_SNIFFED) for p in found.values()):
        return None
    given = {p: kineto.rank_of(readers.head(p)) for p in sorted(found.values(), key=lambda p: _natural(p.name))}
    if any(r is None for r in given.values()):
        return None
    by_rank: dict[int, Path] = {}
    for path, rank in given.items():
        if rank in by_rank:
            raise InputError(f"{path}: rank {rank} again (also {by_rank[rank].name}, by their distributedInfo); keep one trace "
                             "per rank in the folder")
        by_rank[rank] = path
    _check_complete(folder, by_rank, "trace", " by their distributedInfo")
    return RankFiles(tuple(RankFile(r, by_rank[r]) for r in sorted(by_rank)), "ranks from the traces' distributedInfo", True)
