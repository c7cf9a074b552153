"""Read any supported profile into a :class:`Profile` (one row per profiled launch).

>>> from ncuwrap.kernel.reading import load
>>> profile = load("report.ncu-rep")          # or a CSV export of it
>>> profile.frame[["name", "gpu__time_duration.sum"]]
"""

from __future__ import annotations

import hashlib
import threading
from dataclasses import replace
from pathlib import Path

from typing import TYPE_CHECKING

from ncuwrap.core import progress
from ncuwrap.core.errors import InputError

if TYPE_CHECKING:
    from ncuwrap.kernel.reading.model import Profile, RuleResult

# The readers (pandas, pyarrow) load when a report is read, not when a file's kind is asked
# (reading an nsys SQLite needs neither of them); the model's names load on first use (PEP 562).
_MODEL = ("META_COLUMNS", "Profile", "RuleResult", "Source")


def __getattr__(name: str):
    if name in _MODEL:
        from ncuwrap.kernel.reading import model

        return getattr(model, name)
    raise AttributeError(f"module 'ncuwrap.kernel.reading' has no attribute {name!r}")


__all__ = ["load", "report_kind", "is_document", "rule_results", "source_page", "Profile", "RuleResult", "Source", "META_COLUMNS"]

# Told apart here, by suffix, so that asking a file's kind loads no diagnosis-document reader (numpy
# among its imports) before a report's reader starts.
DOCUMENT_SUFFIX = ".json"


def is_document(path: Path) -> bool:
    """A diagnosis document (``diagnose --format json``), by its suffix alone: the file need not exist."""
    return path.name.lower().endswith(DOCUMENT_SUFFIX)


def report_kind(path: Path) -> str | None:
    """``ncu-rep``, ``ncu-csv`` or ``document`` (a diagnosis document, ``diagnose --format json``), from the
    suffix and, for a file of no known suffix, the .ncu-rep header; None for none of them. Which kind of
    input a file is among every kind ncuwrap reads (a timeline too) is :func:`ncuwrap.inputs.kind_of`'s,
    above this wing and the timeline's."""
    name = path.name.lower()
    if is_document(path):
        return "document"
    if name.endswith((".csv", ".csv.gz")):
        return "ncu-csv"
    if name.endswith((".ncu-rep", ".ncu-rep.gz")):
        return "ncu-rep"
    with path.open("rb") as fh:
        if fh.read(4) == NCU_REP_MAGIC:
            return "ncu-rep"
    return None


NOT_A_REPORT = "give a .ncu-rep or an ncu CSV export (.csv or .csv.gz)"


# Where a report file is checked before it is read: ncuwrap.core.fileio, beside the writing side (the rules
# loader checks its file there too, without loading the readers).
from ncuwrap.core.fileio import check_file  # noqa: E402
from ncuwrap.kernel.reading.model import NCU_REP_MAGIC  # noqa: E402


def sha256(path: Path, stop: threading.Event | None = None) -> str | None:
    """The file's digest; None when ``stop`` was set before the end (the read it ran beside failed)."""
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            if stop is not None and stop.is_set():
                return None
            digest.update(chunk)
    return digest.hexdigest()


def load(path: str | Path, *, ncu: str | None = None, metrics=None) -> Profile:
    """Load an Nsight Compute report or CSV export. ``metrics`` limits the metrics read (a raw CSV's
    columns, a report's metrics)."""
    return start(path, ncu=ncu, metrics=metrics).result()


def start(path: str | Path, *, ncu: str | None = None, metrics=None) -> "Loading":
    """Start loading ``path`` (see :func:`load`); :meth:`Loading.result` gives the Profile. A plain
    .ncu-rep's reader starts here, in a child process: a caller that starts it before importing the
    rest of the diagnosis (pandas among it) overlaps the two. Other inputs are read by ``result()``."""
    path = check_file(Path(path))
    kind = report_kind(path)
    if kind is None:
        raise InputError(f"{path}: not a kernel report; {NOT_A_REPORT} (a timeline: ncuwrap.diagnose_timeline)")
    if kind == "document":
        raise InputError(f"{path}: a diagnosis document, not a kernel report; 'ncuwrap compare' takes it as it is "
                         "(ncuwrap.kernel.document.read in Python), or diagnose the report it was written from")
    return Loading(path, kind, ncu, metrics)


class Loading:
    """A report being read, its sha256 taken beside it (hashlib lets go of the GIL: after the read it was a
    share of the read's own time, docs/scale.md, figures behind the code). A read that fails stops the digest."""

    def __init__(self, path: Path, kind: str, ncu: str | None, metrics):
        self.path, self.kind, self.ncu, self.metrics = path, kind, ncu, metrics
        self.reading = None
        if kind == "ncu-rep" and not path.name.lower().endswith(".gz"):
            from ncuwrap.kernel.reading import ncu_rep_reader  # its modules only for a report (a CSV's read needs none of them)

            # The reader's child is forked before the digest's thread starts: a fork never copies a thread.
            self.reading = ncu_rep_reader.start(path, ncu=ncu, metrics=metrics)
        self.stop = threading.Event()
        self.digest: str | None = None
        self.thread = threading.Thread(target=self._hash, name="ncuwrap-sha256", daemon=True)
        self.thread.start()

    def _hash(self) -> None:
        self.digest = sha256(self.path, self.stop)

    def result(self) -> Profile:
        from ncuwrap.kernel.reading import ncu_csv

        progress.report(f"reading {self.path.name}")
        try:
            if self.reading is not None:
                profile = self.reading.result()
            elif self.kind == "ncu-rep":
                profile = _read_rep(self.path, self.ncu, self.metrics)
            else:
                profile = ncu_csv.read(self.path, usecols=self.metrics)
        except BaseException:
            self.stop.set()
            self.thread.join()
            raise
        self.thread.join()
        profile.source = replace(profile.source, sha256=self.digest)
        return profile


# A gzipped report is unpacked to a temporary file for NVIDIA's reader, up to this size (the largest
# real reports seen are a few hundred MB; a file that inflates without end stops here).
MAX_UNPACKED_REPORT = 4 << 30


def _read_rep(path: Path, ncu: str | None, metrics=None) -> Profile:
    """A .ncu-rep, or a .ncu-rep.gz unpacked into a private temporary folder (removed after), read and
    named by the user's file in every message and output."""
    from ncuwrap.core import packed
    from ncuwrap.kernel.reading import ncu_rep_reader

    if not path.name.lower().endswith(".gz"):
        return ncu_rep_reader.read(path, ncu=ncu, metrics=metrics)
    with packed.unpacked(path, limit=MAX_UNPACKED_REPORT, fix="give the .ncu-rep itself", prefix="ncuwrap-rep-") as plain:
        return ncu_rep_reader.read(plain, ncu=ncu, shown=path, metrics=metrics)


def rule_results(path: str | Path, *, ncu: str | None = None, of: Profile | None = None) -> dict[int, tuple[RuleResult, ...]]:
    """Nsight Compute's own rule results per launch ID, from a .ncu-rep or a details-page CSV (what
    ``diagnose --ncu-rules`` puts beside the findings of a raw-page export of the same report).
    ``of``: the report they are for; a file that describes other launches (another kernel, launch
    configuration or number of launches under the same IDs) is refused instead of attached."""
    from ncuwrap.kernel.reading import ncu_csv

    path = check_file(Path(path))
    kind = report_kind(path)
    if kind == "ncu-rep":
        other = _read_rep(path, ncu)
    elif kind == "ncu-csv":
        other = ncu_csv.read(path, usecols=())
        if other.source.kind != "ncu-csv-details":
            raise InputError(f"{path}: a raw-page export holds no rule results; export them with 'ncu --import REPORT --csv --page details'")
    else:
        raise InputError(f"{path}: not an Nsight Compute report; give the .ncu-rep or its '--page details' CSV export")
    if of is not None:
        _same_launches(path, other, of)
    return other.rules


def _same_launches(path: Path, other: Profile, of: Profile) -> None:
    """Refuse ``other`` unless it holds the launches of ``of``: the same number, and under each launch
    ID the same kernel, grid and block (where both say)."""
    from ncuwrap.core.kernel_names import function_name

    def launches(profile: Profile) -> dict:
        frame = profile.frame
        cols = {c: frame[c].tolist() if c in frame else [None] * len(frame) for c in ("launch_id", "display_name", "grid", "block")}
        return {int(i) if i == i else n: (function_name(str(name)), grid, block)
                for n, (i, name, grid, block) in enumerate(zip(cols["launch_id"], cols["display_name"], cols["grid"], cols["block"]))}

    mine, theirs = launches(of), launches(other)
    fix = f"give the .ncu-rep or '--page details' export of {of.source.path} itself"
    if len(mine) != len(theirs):
        raise InputError(f"{path}: holds {len(theirs)} launch{'es' if len(theirs) != 1 else ''} where {of.source.path} holds "
                         f"{len(mine)}: not the same report; {fix}")
    for launch, (name, grid, block) in mine.items():
        there = theirs.get(launch)
        if there is None or there[0] != name or any(a and b and a != b for a, b in ((grid, there[1]), (block, there[2]))):
            what = "no such launch" if there is None else f"{there[0][:60]} grid {there[1]} block {there[2]}"
            raise InputError(f"{path}: launch {launch} is {what} there, {name[:60]} grid {grid} block {block} in {of.source.path}: "
                             f"not the same report; {fix}")


# A source page belongs to a launch when it executed the same instructions (ncu's kernel-wide count,
# smsp__inst_executed.sum, against the sum over the page's instructions), within this share.
_SAME_LAUNCH = 0.01


def _counts_agree(total, expected) -> bool | None:
    """Whether a page's block (``total`` warp instructions) and a launch (``expected``) executed the same
    instructions, within _SAME_LAUNCH; None where either count is unknown."""
    if total is None or total != total or expected is None or expected != expected or expected <= 0:
        return None
    return abs(total - expected) <= _SAME_LAUNCH * expected


def _same_count(after: int, total, executed: list):
    """The next launch from row ``after`` on if it executed ``total`` warp instructions (within
    _SAME_LAUNCH), else None. ncu's pages spell some names apart (PyTorch's reduction kernel is
    'at::native::reduce_kernel<...>' on the source page and 'at::reduce_kernel<...>' on the raw page,
    H200, ncu 2025.3.1), so a block whose name no launch has is the next launch's when the counts agree."""
    return after if after < len(executed) and _counts_agree(total, executed[after]) else None


def source_page(path: str | Path, profile: Profile) -> tuple[dict, dict]:
    """The per-instruction counters of a source page export (``ncu --import R --csv --page source
    --print-source sass`` or ``cuda,sass``) for the launches of ``profile`` (a CSV export of the same
    report): the page's blocks in order, each given to the next launch of its kernel, and for the
    launches the page leaves out for want of line information, why. A block no launch matches, or
    one that executed another number of instructions than its launch, is refused: the page is of
    another report."""
    from ncuwrap.kernel.reading import source_counters
    from ncuwrap.core.kernel_names import function_name

    path = check_file(Path(path), empty_fix="export it again with 'ncu --import REPORT --csv --page source --print-source cuda,sass'")
    if not path.name.lower().endswith((".csv", ".csv.gz")) or not source_counters.is_source_page(path):
        raise InputError(f"{path}: not a source page export; write one with 'ncu --import REPORT --csv --page source --print-source cuda,sass > FILE.csv'")
    page = source_counters.read_page(path)
    frame = profile.frame
    names = [function_name(str(n)) for n in frame["display_name"].tolist()]
    ids = frame["launch_id"].tolist()
    executed = frame["smsp__inst_executed.sum"].tolist() if "smsp__inst_executed.sum" in frame else [None] * len(frame)
    taken: dict = {}
    start: dict[str, int] = {}
    last: dict[str, object] = {}  # each kernel's block before this one
    after = 0  # the launches come in order: the row after the last one given a block
    for block in page.blocks:
        name = function_name(block.function)
        total = block.table["inst_executed"].sum() if "inst_executed" in block.table else None
        row = next((i for i in range(start.get(name, 0), len(names)) if names[i] == name), None)
        if row is None and name in last and last[name].table.equals(block.table):
            continue  # ncu 2025.3 writes a --set full report's blocks twice, identical: one launch, not two
        last[name] = block
        if row is None:
            row = _same_count(after, total, executed)
        if row is None:
            raise InputError(f"{path}: its kernel {block.function[:80]!r} is not among the launches of {profile.source.path} "
                             "(or it has more launches of it); export the source page of the same report")
        start[name] = row + 1
        after = max(after, row + 1)
        expected = executed[row]
        if _counts_agree(total, expected) is False:
            raise InputError(f"{path}: its {block.function[:60]!r} executed {total:,.0f} warp instructions where launch {ids[row]} of "
                             f"{profile.source.path} executed {expected:,.0f}: not the same launch; export the source page of the same report")
        taken[int(ids[row]) if ids[row] == ids[row] else row] = block
    lineless = {function_name(n) for n in page.without_lines}
    gaps = {int(ids[i]) if ids[i] == ids[i] else i: (f"{path} leaves {names[i]} out: it has no line information (built without "
                                                       "-lineinfo); its SASS is in the page of --print-source sass")
            for i in range(len(names)) if names[i] in lineless}
    return taken, {k: v for k, v in gaps.items() if k not in taken}
