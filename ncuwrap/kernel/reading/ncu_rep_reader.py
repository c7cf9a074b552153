"""Read ``.ncu-rep`` files (no GPU needed): from their file format, with NVIDIA's ``ncu_report`` module
only where nothing else can answer as it does.

The metrics, names, rule results, per-instruction counters and source texts come from the file itself
(:mod:`ncuwrap.kernel.reading.ncu_rep_format`); each instruction's source line from its cubin's line table
(:mod:`line_table`) and the shown ones' SASS from nvdisasm (:mod:`disassembly`), both checked against what
``ncu_report`` gives. ``ncu_report`` answers lines or SASS only where those cannot (a line table or an
architecture they do not read, no nvdisasm), reads a launch the file reader did not expect
(:class:`ncu_rep_format.Unread`) from a copy of the report holding such launches alone, and reads the whole
report where the file itself is not laid out as expected. Either is said: the Profile's ``fallback`` (a note
in every output) and, under ``--debug``, what the file reader met (the ``ncuwrap`` logger). The module comes
from the ``ncu-report`` wheel; without it, the ``extras/python`` folder of an installed Nsight Compute is used
(found via ``ncu`` on PATH or an explicit path).
"""

from __future__ import annotations

import contextlib
import gc
import importlib
import re
import shutil
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING

from ncuwrap.core import forked, process, progress
from ncuwrap.core.errors import InputError, ToolNotFoundError
from ncuwrap.core.forked import Forked
from ncuwrap.kernel.reading.model import NCU_REP_MAGIC as MAGIC, Profile, ReadFallback, RuleResult, Source
from ncuwrap.kernel.reading import disassembly, line_table, ncu_rep_format, source_counters
from ncuwrap.core.kernel_names import function_name

if TYPE_CHECKING:  # pandas builds the frames in the parent, after the reader's child is started
    import pandas as pd

_VERSION = re.compile(rb"(20\d\d\.\d+\.\d+(?:\.\d+)?) \(build \d+\)")
_COMMAND = re.compile(rb"(/[\x20-\x7e]*?/ncu(?:\.exe)? [\x20-\x7e]{1,2000})")


def _extras_dirs(ncu: str | None) -> list[Path]:
    found = ncu or shutil.which("ncu")
    if not found:
        return []
    root = Path(found).resolve().parent
    # ncu lives either at the top of the install or under a bin/ or target/<platform>/ folder.
    return [p / "extras" / "python" for p in (root, root.parent, root.parent.parent)]


def load_module(ncu: str | None = None) -> ModuleType:
    """Import ``ncu_report``, falling back to an installed Nsight Compute's copy."""
    try:
        return importlib.import_module("ncu_report")
    except ImportError:
        pass
    for extras in _extras_dirs(ncu):
        if (extras / "ncu_report.py").is_file():
            sys.path.insert(0, str(extras))
            try:
                return importlib.import_module("ncu_report")
            finally:
                sys.path.remove(str(extras))
    raise ToolNotFoundError(
        "cannot read .ncu-rep files: the ncu_report module is missing; "
        "run 'pip install ncu-report' or pass --ncu /path/to/ncu of an installed Nsight Compute"
    )


def _header_facts(path: Path) -> tuple[str | None, str | None]:
    """ncu version and command line, as recorded in the report's session header."""
    with path.open("rb") as fh:
        head = fh.read(4 << 20)
    version = _VERSION.search(head)
    command = _COMMAND.search(head)
    decode = lambda m: m.group(1).decode("ascii", "replace").strip() if m else None  # noqa: E731
    return decode(version), decode(command)


def _value(metric, string_kind: int):
    if metric.kind() == string_kind:
        return metric.as_string()
    value = metric.as_double()
    return value


# What every launch's row needs besides the rules' metrics: its configuration and where it ran.
LAUNCH_METRICS = frozenset({f"launch__{d}_dim_{a}" for d in ("grid", "block") for a in "xyz"} |
                           {"launch__device_id", "launch__stream_id", "launch__process_id",
                            "device__attribute_compute_capability_major", "device__attribute_compute_capability_minor",
                            "device__attribute_display_name"})


def read(path: Path, ncu: str | None = None, shown: Path | None = None, metrics=None) -> Profile:
    """Read every profiled launch of an ``.ncu-rep`` into a Profile; ``metrics``: the metric names to
    read (None: all). A full-set report holds ~2,000 metrics a launch, each one native call away, of
    which the rules read ~150. See :func:`start`."""
    return start(path, ncu, shown, metrics).result()


def start(path: Path, ncu: str | None = None, shown: Path | None = None, metrics=None, parts: int | None = None,
          parsers: int | None = None) -> "Reading":
    """Start reading ``path`` (see :func:`read`); :meth:`Reading.result` gives the Profile. The reader
    runs in child processes from here on, so a caller that starts it before importing pandas and the
    rest of the diagnosis (ncuwrap.api) overlaps the two.

    NVIDIA's reader is native code: on a corrupt report it can abort() or crash the process instead of
    raising (seen under fuzzing, and on the lent H200 with ncu 2025.3.1's own extras/python). So it runs
    in forked children where the platform has fork; a child killed by a signal becomes one InputError.
    One child reads the file (:func:`_collect_file`) and asks NVIDIA's reader only for the instructions of
    launches with SourceCounters. ``parts``: where the file is not laid out as expected, how many children
    read the launches with NVIDIA's reader, each every ``parts``-th one (None: :func:`parts_for`); ``parsers``:
    how many processes parse the file (None: :func:`parse_parts`).
    ``shown``: the file the user gave, named in messages and outputs (``path`` is then its unpacked copy)."""
    shown = shown or path
    with path.open("rb") as fh:
        magic = fh.read(len(MAGIC))
    if magic != MAGIC:
        raise InputError(f"{shown}: not an Nsight Compute report (bad file header); pass a .ncu-rep written by 'ncu -o'")
    module = load_module(ncu)  # a missing module is the parent's error to report, before any fork
    wanted = None if metrics is None else frozenset(metrics) | LAUNCH_METRICS
    return Reading(path, shown, module, wanted, parts_for(path) if parts is None else parts, parse_parts(path) if parsers is None else parsers)


# The fall-back's children (a report NVIDIA's reader reads whole): one per this much report, up to
# MAX_PARTS. NVIDIA's reader loads a report lazily, then reads it launch by launch: a large report's read is
# the critical path of a diagnosis, the parent's imports done first (docs/scale.md, figures behind the code).
PART_BYTES = 8 << 20
MAX_PARTS = 4


def parts_for(path: Path) -> int:
    """How many children read ``path``: one per PART_BYTES of report, no more than MAX_PARTS and the cores
    beside the parent's (which imports the diagnosis meanwhile)."""
    return max(1, min(MAX_PARTS, process.cores() - 1, path.stat().st_size // PART_BYTES))


# The processes that parse a report's file: one per PARSE_BYTES of it, up to MAX_PARSERS, each a run of its
# launches. Each more one holds its own while it parses, so two, not more: the peak stays under ncu's own
# (docs/scale.md, figures behind the code).
PARSE_BYTES = 48 << 20
MAX_PARSERS = 2


def parse_parts(path: Path) -> int:
    """How many processes parse ``path``: one per PARSE_BYTES of report, no more than MAX_PARSERS and the
    cores beside the parent's."""
    return max(1, min(MAX_PARSERS, process.cores() - 1, path.stat().st_size // PARSE_BYTES + 1))


class Reading:
    """A report being read: in forked children where the platform has fork, else in process on :meth:`result`."""

    def __init__(self, path: Path, shown: Path, module: ModuleType, wanted: frozenset | None, parts: int = 1, parsers: int = 1):
        self.path, self.shown, self.module, self.wanted, self.parts = path, shown, module, wanted, parts
        self.forks = forked.platform_forks()  # even beside other threads (a gzipped report's digest): see ncuwrap.core.forked
        # One child reads the file (with ``parsers`` - 1 more parsing beside it) and asks ncu_report only for
        # the instructions' lines and SASS.
        self.child, self.thaw = None, False
        if self.forks:
            # This process's objects are kept out of the garbage collector's passes until the child is done: a
            # collection writes to every object it visits, and each write copies a page the child still shares.
            self.thaw = gc.get_freeze_count() == 0
            gc.freeze()
            self.child = _nvidias(lambda: _collect_file(path, module, shown, wanted, beside=True, parts=parsers), shown)

    def result(self) -> Profile:
        collected, whole = self._from_file()
        if collected is None:  # not laid out as expected: NVIDIA's reader reads it all, as before
            collected = self._from_ncu_report()
        profile = _assemble(self.path, self.shown, *_merged(collected, self.shown), whole=whole)
        if profile.fallback is not None:
            _tell(profile.fallback, self.shown)
        return profile

    def _from_file(self) -> tuple[list | None, str | None]:
        """What the file reader read (None where the file is not laid out as it expects) and why it did not."""
        if self.child is None:
            try:
                return [_collect_file(self.path, self.module, self.shown, self.wanted)], None
            except ncu_rep_format.FormatError as exc:
                return None, str(exc)
        try:
            collected, why = [_nvidias_answer(self.child, self.shown)], None
        except ncu_rep_format.FormatError as exc:
            collected, why = None, str(exc)
        finally:
            if self.thaw:  # frozen here (a caller that froze objects of its own keeps them frozen)
                gc.unfreeze()
                self.thaw = False
        progress.report(f"reading {self.shown.name}", 1, 1)
        return collected, why

    def _from_ncu_report(self) -> list:
        path, module, shown, wanted, parts = self.path, self.module, self.shown, self.wanted, self.parts
        if not self.forks:
            return [_collect(path, module, shown, wanted)]
        children = [_nvidias(lambda part=part: _collect(path, module, shown, wanted, (part, parts)), shown) for part in range(parts)]
        collected, failed = [], None
        for done, child in enumerate(children, 1):  # every child is waited for, the first failure said
            try:
                collected.append(_nvidias_answer(child, shown))
            except InputError as exc:
                failed = failed or exc
            progress.report(f"reading {shown.name}", done, len(children))
        if failed is not None:
            raise failed
        return collected


def _nvidias(work, shown: Path, asks: bool = False) -> Forked:
    """``work`` (NVIDIA's reader's, or the reading child's, which asks it) under way in a forked process: a crash of
    NVIDIA's native code takes only that process, and its answer comes back (:func:`_nvidias_answer`)."""
    return Forked(work, lambda how: InputError(f"{shown}: Nsight Compute's report reader crashed on it ({how}): the report is corrupt, "
                                               "truncated, or from a newer ncu; copy it again, re-export it with 'ncu -o', or diagnose its "
                                               "CSV export ('ncu --import REPORT --csv --page raw')"), with_threads=True, asks=asks)


def _nvidias_answer(work: Forked, shown: Path):
    """What a forked process reading the report gave, or its failure as the error its side raises: killed by NVIDIA's
    native code (as the reading child can be; a reset: before it read), an input error, the file or the copy not laid
    out as expected (FormatError: the whole report is then NVIDIA's reader's), or any other error as a report that
    could not be read."""
    try:
        return work.result()
    except (ncu_rep_format.FormatError, InputError):
        raise
    except Exception as exc:  # NVIDIA's reader raises its own types; all mean an unreadable report
        raise InputError(f"{shown}: Nsight Compute report could not be read ({type(exc).__name__}: {exc}); re-export it with 'ncu -o'") from None


def _collect(path: Path, module: ModuleType, shown: Path, wanted: frozenset | None = None,
             part: tuple[int, int] = (0, 1)) -> tuple[list, dict, dict, dict]:
    """The metrics, rule results and per-instruction counters of every ``part[1]``-th launch from
    ``part[0]`` on, as plain Python values (and no launch the file reader left: all are read here).

    It runs in the forked child: no pandas, numpy or pyarrow here. A child forked from a process whose
    pyarrow thread pool has run (the CSV reader) deadlocks on that pool's locks (seen in the test suite);
    the frames are built in the parent (:func:`_assemble`)."""
    try:
        context = module.load_report(str(path))
    except Exception as exc:  # the module raises its own types; all mean an unreadable report
        raise InputError(f"{shown}: Nsight Compute report could not be read ({exc}); re-export it with 'ncu -o'") from None
    first, step = part
    launches = [(r, a) for r in range(context.num_ranges()) for a in range(context.range_by_idx(r).num_actions())]
    return (*_read_actions(context, module, shown, wanted, {launch: where for launch, where in enumerate(launches) if launch % step == first}), {})


def _read_actions(context, module: ModuleType, shown: Path, wanted: frozenset | None, actions: dict) -> tuple[list, dict, dict]:
    """The rows, rule results and per-instruction counters of ``actions`` (launch ID -> (range, action) in
    NVIDIA's reader's ``context``), in their order."""
    rows: list[dict] = []
    rules: dict[int, tuple[RuleResult, ...]] = {}
    sources: dict = {}
    where_cache: dict = {}
    string_kind = None
    demangled = getattr(module.IAction, "NameBase_DEMANGLED", None)
    for launch, (r, a) in actions.items():
        action = context.range_by_idx(r).action_by_idx(a)
        signature = action.name(demangled) if demangled is not None else action.name()
        # A report cut short still "loads": its last launch comes back without a name or metrics.
        if not signature or not len(action.metric_names()):
            raise InputError(f"{shown}: the report is truncated or corrupt (launch {launch} has no name or metrics); copy it again or re-profile with "
                             f"'ncu -o'")
        row: dict = {
            "launch_id": launch,
            "name": function_name(signature),
            "display_name": signature,
            "mangled_name": action.name(module.IAction.NameBase_MANGLED) if demangled is not None else None,
        }
        names = action.metric_names()
        for metric_name in (names if wanted is None else [n for n in names if n in wanted]):
            metric = action.metric_by_name(metric_name)
            if metric is None or not metric.has_value():
                continue
            if string_kind is None:
                string_kind = metric.ValueKind_STRING
            row[metric_name] = _value(metric, string_kind)
        rules[launch] = _rule_results(action)
        counters = source_counters.from_action(action, row["name"], where_cache)
        if counters is not None:
            sources[launch] = counters
        rows.append(row)
    return rows, rules, sources


def _collect_unread(path: Path, module: ModuleType, shown: Path, wanted: frozenset | None, indices: list[int]) -> tuple[list, dict, dict]:
    """What :func:`_collect` reads, of the launches ``indices`` alone (those the file reader did not expect):
    NVIDIA's reader loads a copy of the report holding them whole, with every block's sources and strings
    (:func:`ncu_rep_format.write_attribution_copy` without stripping). Raises FormatError where it does not
    load the copy or sees other launches in it: the whole report is then its to read, and it says what is wrong."""
    with tempfile.TemporaryDirectory(prefix="ncuwrap-unread-") as folder:
        context, where = _load_copy(path, module, indices, Path(folder) / "unread.ncu-rep", "the copy of the launches left to it",
                                    strip=False)
        return _read_actions(context, module, shown, wanted, where)


def _collect_file(path: Path, module: ModuleType, shown: Path, wanted: frozenset | None = None, *,
                  beside: bool = False, parts: int = 1) -> tuple[list, dict, dict, dict]:
    """What :func:`_collect` reads, from the file (:mod:`ncu_rep_format`). The instructions of launches with
    SourceCounters need their source lines and the shown ones their SASS: the lines come from the cubin's
    line table (:mod:`line_table`), nvdisasm disassembles the shown ones (:mod:`disassembly`: one run per
    architecture, after the parse), and ``ncu_report`` loads the report only where those cannot answer
    as it would (a line table or an architecture they do not read, no nvdisasm). A launch the file reader
    did not expect is read by ``ncu_report`` (:func:`_collect_unread`; the fourth value: launch ID -> what the
    file reader met). Raises ncu_rep_format.FormatError where the file is not laid out as expected.

    ``beside`` (in the forked reading child): NVIDIA's reader answers in a process beside this one
    (:class:`_Attributor`), started at the first launch that needs it: it loads its copy of the report
    while this one parses on, and answers each launch as it is parsed; a large report has two, each for
    every other launch (:func:`attribution_workers`). Else (no fork) it answers here, each launch as it
    is parsed (:class:`_Answering`). ``parts`` (with ``beside``): the launches are parsed by that many
    processes, this one and parsing helpers (:func:`_parsing`), each a run of launches of about equal bytes (:func:`parse_parts`);
    what they parsed is joined here, and the shown instructions of all of them disassembled in one run; the
    launches the file reader left are read by ``ncu_report`` in a process forked meanwhile (:func:`_collect_unread`)."""
    workers = attribution_workers(path)
    tool = disassembly.nvdisasm()
    answering: dict = {}  # part -> its _Attributor or _Answering, started at its first launch that needs one
    parsed: dict[int, _Parsed] = {}
    unread: dict[int, str] = {}  # launch index -> what the file reader met
    leftover: Forked | None = None  # the process reading those (NVIDIA's reader)
    answers: dict = {}
    disassembled = _Disassembling(path)

    def ask(index: int, line_pcs: list[int], sass_pcs: list[int]) -> None:
        part = index % workers
        if part not in answering:
            answering[part] = _Attributor(path, module, shown, (part, workers)) if beside else _Answering(path, module, (part, workers))
        answering[part].ask(index, line_pcs, sass_pcs)

    try:
        with contextlib.closing(_launches(path, wanted, tool, parts if beside else 1)) as launches:
            for launch in launches:
                if launch.unread is not None:
                    unread[launch.index] = launch.unread
                    continue
                parsed[launch.index] = launch
                sass_pcs = launch.sass_pcs
                if launch.located is not None and disassembled.take(launch.index, sass_pcs, *launch.located):
                    sass_pcs = []
                if launch.line_pcs or sass_pcs:
                    ask(launch.index, launch.line_pcs, sass_pcs)
        if unread and beside:
            # NVIDIA's reader reads them while this process disassembles; they come back together when it is done.
            leftover = _nvidias(lambda: _collect_unread(path, module, shown, wanted, sorted(unread)), shown)
        process.release_freed_memory()  # the parse's freed temporaries, before nvdisasm starts beside this process
        texts = disassembled.result(tool)
        if texts is None:  # nvdisasm could not: NVIDIA's reader disassembles what it was to
            for index, (_, pcs) in disassembled.asked.items():
                ask(index, [], pcs)
        for each in answering.values():
            answers.update(each.answers())
        read = None
        if unread:
            read = _nvidias_answer(leftover, shown) if leftover is not None else _collect_unread(path, module, shown, wanted, sorted(unread))
    finally:
        for each in answering.values():
            each.close()
        if leftover is not None:
            leftover.cancel()
    joined = _joined(parsed, answers, disassembled.asked, texts)
    return (*(_interleaved(joined, read) if read is not None else joined), unread)


def _interleaved(joined: tuple[list, dict, dict], read: tuple[list, dict, dict]) -> tuple[list, dict, dict]:
    """The rows, rule results and instruction tables of the launches the file reader read (``joined``) and of those
    NVIDIA's reader read (``read``), in launch order."""
    rows = {row["launch_id"]: row for part in (joined[0], read[0]) for row in part}
    rules, sources = joined[1] | read[1], joined[2] | read[2]
    order = sorted(rows)
    return [rows[i] for i in order], {i: rules[i] for i in order}, {i: sources[i] for i in order if i in sources}


def _launches(path: Path, wanted: frozenset | None, tool: str | None, parts: int) -> Iterator["_Parsed"]:
    """Every launch, parsed here or by ``parts`` - 1 processes beside this one (:func:`_parsing`), in the
    report's order. Without nvdisasm every shown instruction is NVIDIA's reader's to answer, best asked as
    each launch is parsed: one process parses, and each launch comes as it is parsed."""
    ranges = _cut(ncu_rep_format.launch_sizes(path), parts) if parts > 1 and tool is not None else []
    if len(ranges) < 2:
        yield from _parse(path, wanted, tool, None)
        return
    ncu_rep_format.prepare()  # built once, shared with the processes forked next
    gc.freeze()  # and out of this process's collections, which would copy the pages they share (see Reading)
    helpers = [_parsing(path, wanted, tool, only) for only in ranges[1:]]
    try:
        mine = list(_parse(path, wanted, tool, ranges[0]))
        yield from sorted((*mine, *(launch for helper in helpers for launch in helper.result())), key=lambda launch: launch.index)
    finally:
        for helper in helpers:
            helper.cancel()


def _cut(sizes: list[int], parts: int) -> list[range]:
    """The launches (of ``sizes`` bytes each) in at most ``parts`` runs of about equal bytes, none empty. Runs, not
    every n-th launch: a report's launches of one kernel, of one size, come together, and parsers side by side
    would each hold their largest at the same time."""
    total, ranges, start, done = sum(sizes), [], 0, 0
    for index, size in enumerate(sizes):
        done += size
        if done * parts >= total * (len(ranges) + 1) and len(ranges) < parts - 1:
            ranges.append(range(start, index + 1))
            start = index + 1
    ranges.append(range(start, len(sizes)))
    return [r for r in ranges if len(r)]


def _joined(parsed: dict, answers: dict, disassembled: dict, texts: dict | None) -> tuple[list, dict, dict]:
    """The rows, rule results and instruction tables of the launches ``parsed`` (index -> :class:`_Parsed`), their
    lines and SASS from the line tables, nvdisasm (``texts``: architecture -> PC -> text; ``disassembled``: launch
    index -> the architecture and PCs it was asked) and NVIDIA's reader (``answers``)."""
    rows, rules, sources = [], {}, {}
    where_cache: dict = {}
    for index in sorted(parsed):
        launch = parsed[index]
        rows.append(launch.row)
        rules[index] = launch.rules
        if launch.found is None:
            continue
        lines, sass = answers.get(index, ({}, {}))
        lines = launch.placed if launch.placed is not None else lines
        if texts is not None and index in disassembled:
            arch, pcs = disassembled[index]
            sass = {pc: texts[arch][pc] for pc in pcs}
        sources[index] = source_counters.table(launch.row["name"], launch.found, lambda: launch.files,
                                               source_counters.Answered(lines, sass), where_cache)
    return rows, rules, sources


@dataclass
class _Parsed:
    """One launch as a parsing process gives it (plain values and arrays: a helper of :func:`_parsing` sends
    them back): its row and rule results; with SourceCounters, its instructions (:func:`source_counters.instructions`),
    source texts, the lines its cubin's line table placed (None: NVIDIA's reader is asked ``line_pcs``), the
    shown PCs (``sass_pcs``) and where nvdisasm finds them (``located``: architecture, (offset, bytes) a PC;
    None: NVIDIA's reader is asked). ``unread``: what the file reader met in a launch it did not read (its row
    is then empty: NVIDIA's reader reads it)."""

    index: int
    row: dict
    rules: tuple
    found: object = None
    files: dict = field(default_factory=dict)
    placed: dict | None = None
    line_pcs: list = field(default_factory=list)
    sass_pcs: list = field(default_factory=list)
    located: tuple | None = None
    unread: str | None = None


def _parse(path: Path, wanted: frozenset | None, tool: str | None, only: range | None) -> Iterator[_Parsed]:
    """The launches ``only`` (None: all; :func:`ncu_rep_format.launches`), each as a :class:`_Parsed`."""
    has_counters = lambda launch: any(m in launch.names for m in source_counters.MARKERS)  # noqa: E731
    tables = _LineTables(path)
    for launch in ncu_rep_format.launches(path, wanted, source_counters.INSTANCED, source_counters.CODED, files_of=has_counters, only=only):
        if isinstance(launch, ncu_rep_format.Unread):
            yield _Parsed(launch.index, {}, (), unread=launch.why)
            continue
        try:
            out = _parsed_launch(launch, tables, tool)
        except ncu_rep_format.FormatError as exc:  # this launch alone is NVIDIA's reader's
            out = _Parsed(launch.index, {}, (), unread=str(exc))
        if only is not None:  # parsers side by side: each gives its launch's freed temporaries back, not holding them all
            process.release_freed_memory()
        yield out


def _parsed_launch(launch, tables: "_LineTables", tool: str | None) -> _Parsed:
    """One launch the file reader read, with its instructions, their lines and where nvdisasm finds the shown ones."""
    out = _Parsed(launch.index, _row(launch), _rules_of(launch))
    found = source_counters.instructions(launch.names, launch.instances, launch.codes)
    if found is not None:
        line_pcs, sass_pcs = found.asked(launch.lines)
        placed = tables.places(launch, line_pcs) if line_pcs else None
        out.found, out.files, out.placed, out.sass_pcs = found, launch.files, placed, sass_pcs
        out.line_pcs = [] if placed is not None else line_pcs
        out.located = _located(launch, sass_pcs, tool)
    return out


def _located(launch, pcs: list[int], tool: str | None) -> tuple[str, list] | None:
    """(architecture, each PC's (offset, bytes) in the report) where nvdisasm can give the SASS of ``pcs`` of
    ``launch`` (its module's code is known and holds every one of them); None where NVIDIA's reader is asked."""
    code = launch.code
    if tool is None or code is None or code.arch is None:
        return None
    where = [code.where(pc) for pc in pcs]
    return None if any(w is None for w in where) else (code.arch, where)


def _parsing(path: Path, wanted: frozenset | None, tool: str | None, only: range) -> Forked[list[_Parsed]]:
    """A forked process parsing a run of the report's launches (:func:`_parse` of ``only``) beside the reading
    child, which parses its own run meanwhile: the parse is most of a large report's read (docs/scale.md, figures behind the code).
    Its launches come back together when it is done."""
    return Forked(lambda: list(_parse(path, wanted, tool, only)), lambda how: RuntimeError(f"a parsing process ended without its launches ({how})"),
                  with_threads=True)


class _LineTables:
    """Each PC's source line from its cubin's line table (:mod:`line_table`), read once a module; None where
    the module's code is not known or its table not read as ncu_report reads it (NVIDIA's reader is asked)."""

    def __init__(self, path: Path):
        self.path = path
        self.read: dict[int, line_table.LineTable | None] = {}  # a module's cubin offset -> its table

    def places(self, launch, pcs: list[int]) -> dict | None:
        code = launch.code
        if code is None:
            return None
        if code.at not in self.read:
            self.read[code.at] = line_table.read(line_table.elf_of(self.path, code))
        table = self.read[code.at]
        return None if table is None else table.places(code, pcs)


class _Disassembling:
    """The shown instructions' SASS by nvdisasm (:mod:`disassembly`), gathered launch by launch as the file is
    parsed and disassembled after it, one run per architecture."""

    def __init__(self, path: Path):
        self.path = path
        self.asked: dict[int, tuple[str, list[int]]] = {}  # launch index -> its architecture, the PCs whose SASS it shows
        self.where: dict[str, dict[int, tuple[int, int]]] = {}  # architecture -> PC -> its bytes in the file

    def take(self, index: int, pcs: list[int], arch: str, where: list[tuple[int, int]]) -> bool:
        """Whether nvdisasm will give the SASS of ``pcs`` of launch ``index`` (``where``: each one's bytes in the
        file, :func:`_located`); not where a PC would name two instructions (NVIDIA's reader is then asked)."""
        placed = self.where.setdefault(arch, {})
        if any(placed.get(pc, w) != w for pc, w in zip(pcs, where)):  # one PC, two instructions: not guessed between
            return False
        placed.update(zip(pcs, where))
        self.asked[index] = (arch, pcs)
        return True

    def result(self, tool: str | None) -> dict[str, dict[int, str]] | None:
        """Architecture -> PC -> SASS of every PC taken; None where nvdisasm failed (then every one is asked of
        NVIDIA's reader)."""
        texts: dict[str, dict[int, str]] = {}
        try:
            for arch, placed in self.where.items():
                pcs = sorted(placed)
                encoded = ncu_rep_format.instruction_bytes(self.path, [placed[pc] for pc in pcs])
                texts[arch] = disassembly.sass(arch, zip(pcs, encoded), tool)
        except disassembly.Unavailable:
            return None
        return texts


# NVIDIA's reader answering lines and SASS: one process per this much report, up to MAX_WORKERS (each
# holds its copy of its launches and its own disassembler; what one costs and how long its answers take:
# docs/scale.md, figures behind the code).
WORKER_BYTES = 48 << 20
MAX_WORKERS = 2


def attribution_workers(path: Path) -> int:
    return max(1, min(MAX_WORKERS, path.stat().st_size // WORKER_BYTES + 1))


class _Attributor:
    """NVIDIA's reader in a forked process, answering PCs' source lines and SASS for the launch index asked
    (:func:`source_counters.asked`), from a copy of the report without metrics, sections or rule results
    (:func:`ncu_rep_format.write_attribution_copy`, which holds a fraction of the whole report's memory: docs/scale.md, figures behind the code).
    The answers come back together when every launch has been asked: the worker never waits on this side."""

    def __init__(self, path: Path, module: ModuleType, shown: Path, part: tuple[int, int] = (0, 1)):
        self.shown = shown
        self.work = _nvidias(lambda requests: _answer(path, module, requests, part), shown, asks=True)

    def ask(self, index: int, line_pcs: list[int], sass_pcs: list[int]) -> None:
        self.work.ask((index, line_pcs, sass_pcs))  # one that has stopped: answers() says why

    def answers(self) -> dict:
        """Launch index -> ({pc: (file, line)}, {pc: sass}) for every launch asked."""
        return _nvidias_answer(self.work, self.shown)

    def close(self) -> None:
        self.work.cancel()


def _answer(path: Path, module: ModuleType, requests: Iterator, part: tuple[int, int] = (0, 1)) -> dict:
    """The attribution worker's work: :class:`_Answering` for its ``part``, each request answered as it
    comes, until they end (see :class:`_Attributor`). It is started at its first launch
    with SourceCounters, whose first SASS starts NVIDIA's disassembler (its slowest step) while the other side
    parses on."""
    answering = _Answering(path, module, part)
    try:
        for request in requests:
            answering.ask(*request)
        return answering.answers()
    finally:
        answering.close()


class _Answering:
    """NVIDIA's reader in this process, answering PCs' lines and SASS for the launches of ``part`` (index,
    count: every count-th launch from index on) from a copy of the report with those launches alone
    (:func:`_actions`). A PC answered for one launch is not asked again for another (the same module)."""

    def __init__(self, path: Path, module: ModuleType, part: tuple[int, int] = (0, 1)):
        self.folder = tempfile.TemporaryDirectory(prefix="ncuwrap-lines-")
        try:
            self.actions = _actions(path, module, lambda index: index % part[1] == part[0], Path(self.folder.name))
        except BaseException:
            self.folder.cleanup()
            raise
        self.done: dict = {}
        self.lines: dict = {}
        self.texts: dict = {}

    def ask(self, index: int, line_pcs: list[int], sass_pcs: list[int]) -> None:
        if index not in self.actions:
            raise ncu_rep_format.FormatError(f"launch {index} is not in the copy")
        attribution = source_counters.Attribution(self.actions[index]())
        for pc in line_pcs:
            if pc not in self.lines:
                self.lines[pc] = attribution.where(pc)
        for pc in sass_pcs:
            if pc not in self.texts:
                self.texts[pc] = attribution.sass(pc)
        lines, texts = self.done.setdefault(index, ({}, {}))  # a launch is asked again for SASS nvdisasm could not give
        lines.update((pc, self.lines[pc]) for pc in line_pcs)
        texts.update((pc, self.texts[pc]) for pc in sass_pcs)

    def answers(self) -> dict:
        """Launch index -> ({pc: (file, line)}, {pc: sass}) for every launch asked."""
        return self.done

    def close(self) -> None:
        self.folder.cleanup()


def _row(launch) -> dict:
    row: dict = {"launch_id": launch.index, "name": function_name(launch.demangled), "display_name": launch.demangled,
                 "mangled_name": launch.mangled}
    row.update(launch.metrics)
    return row


def _rules_of(launch) -> tuple[RuleResult, ...]:
    out = []
    for rule, section, message, speedup in launch.rules:
        result = _rule_result(rule, section, None if message is None else {"type": message[0], "title": message[1], "message": message[2]},
                              None if speedup is None else {"type": speedup[0], "speedup": speedup[1]})
        if result is not None:
            out.append(result)
    return tuple(out)


def _actions(path: Path, module: ModuleType, keep, folder: Path) -> dict:
    """Launch index -> a function giving its ``ncu_report`` action, for the launches ``keep`` keeps (a
    function of the index): NVIDIA's reader loads a copy of the report with those launches alone, without
    their metrics (:func:`ncu_rep_format.write_attribution_copy`; the copy lives as long as ``folder``)."""
    context, where = _load_copy(path, module, keep, folder / "lines.ncu-rep", "the copy")
    return {index: (lambda r=r, a=a: context.range_by_idx(r).action_by_idx(a)) for index, (r, a) in where.items()}


def _load_copy(path: Path, module: ModuleType, keep, copy: Path, what: str, **options) -> tuple[object, dict]:
    """NVIDIA's reader on a copy of the report holding the launches ``keep`` keeps
    (:func:`ncu_rep_format.write_attribution_copy` with ``options``): its context, and launch index -> (range,
    action) in it. Raises FormatError where it does not load the copy (``what``, in the message) or sees
    other launches in it: NVIDIA's reader then reads the report itself, and says what is wrong with it."""
    kept = ncu_rep_format.write_attribution_copy(path, keep, copy, **options)
    try:
        context = module.load_report(str(copy))
    except Exception as exc:
        raise ncu_rep_format.FormatError(f"ncu_report does not load {what} ({exc})") from None
    where = [(r, a) for r in range(context.num_ranges()) for a in range(context.range_by_idx(r).num_actions())]
    if len(where) != len(kept):
        raise ncu_rep_format.FormatError(f"ncu_report sees {len(where)} launches in {what}, not {len(kept)}")
    return context, dict(zip(kept, where))


def _merged(parts: list[tuple[list, dict, dict, dict]], shown: Path) -> tuple[list, dict, dict, dict]:
    """The parts' launches in the report's order (each part read every n-th launch), and those NVIDIA's reader
    read for the file reader (launch ID -> what the file reader met)."""
    rows = sorted((row for part in parts for row in part[0]), key=lambda row: row["launch_id"])
    # A truncated file can still "load" with no launches in it.
    if not rows:
        raise InputError(f"{shown}: the report holds no profiled kernel (empty or truncated); profile again with 'ncu -o'")
    return (rows, {k: v for part in parts for k, v in part[1].items()}, {k: v for part in parts for k, v in part[2].items()},
            {k: v for part in parts for k, v in part[3].items()})


def _fallback(unread: dict | None, whole: str | None, total: int) -> ReadFallback | None:
    """What NVIDIA's reader read for the file reader: the whole report (``whole``: why), or the launches ``unread``."""
    if whole is not None:
        return ReadFallback((), (whole,), total)
    if unread:
        order = sorted(unread)
        return ReadFallback(tuple(order), tuple(unread[i] for i in order), total)
    return None


def _tell(fallback: ReadFallback, shown: Path) -> None:
    """What the file reader met, on the ``ncuwrap`` logger (``--debug`` shows it)."""
    import logging

    log = logging.getLogger("ncuwrap")
    for line in fallback.details():
        log.debug("%s: %s", shown, line)


def _assemble(path: Path, shown: Path, rows: list, rules: dict, sources: dict, unread: dict | None = None, *, whole: str | None = None) -> Profile:
    """The Profile of what :func:`_collect` read: the launches' frame, the instruction tables, and what NVIDIA's
    reader read for the file reader (``unread``: launch ID -> what the file reader met; ``whole``: why it read none)."""
    import pandas as pd

    frame = pd.DataFrame(rows)
    _fill_launch_meta(frame)
    version, command = _header_facts(path)
    first = frame.iloc[0]
    source = Source(
        path=str(shown),
        kind="ncu-rep",
        ncu_version=version,
        device=_str_or_none(first.get("device__attribute_display_name")),
        compute_capability=_cc(first),
        command_line=command,
    )
    # ncu_report returns base units already. Units are not read: IMetric.unit() crashed the Python of
    # ncu 2025.3.1's extras/python on some full-set reports (seen on the lent H200).
    return Profile(source=source, frame=frame, rules=rules, sources={k: source_counters.build(raw) for k, raw in sources.items()},
                   fallback=_fallback(unread, whole, len(rows)))


_MESSAGE_KINDS = {0: "NONE", 1: "INF", 2: "OPT", 3: "WRN", 4: "ERR"}
_SPEEDUP_KINDS = {1: "local", 2: "global"}


def _rule_results(action) -> tuple[RuleResult, ...]:
    """Nsight Compute's rule results of one launch (reports from ncu versions without them: none)."""
    if not hasattr(action, "rule_results"):
        return ()
    out = []
    try:
        results = action.rule_results()
    except Exception:  # an older module or a report without rule results: nothing to show, not an error
        return ()
    for result in results:
        message = result.rule_message() if result.has_rule_message() else None
        estimate = result.speedup_estimation() if result.has_speedup_estimation() else None
        rule = _rule_result(result.rule_identifier(), result.section_identifier(), message, estimate)
        if rule is not None:
            out.append(rule)
    return tuple(out)


def _rule_result(rule, section, message: dict | None, estimate: dict | None) -> RuleResult | None:
    """One rule result from its message and speedup estimate, as ``ncu_report`` gives them (None: no message)."""
    text = str(message.get("message", "")) if isinstance(message, dict) else ""
    if not text:
        return None
    speedup = estimate.get("speedup") if isinstance(estimate, dict) else None
    return RuleResult(
        rule=str(rule),
        section=str(section),
        kind=_MESSAGE_KINDS.get(message.get("type") if isinstance(message, dict) else None, "NONE"),
        speedup_type=_SPEEDUP_KINDS.get(estimate.get("type")) if isinstance(estimate, dict) else None,
        estimated_speedup=float(speedup) if isinstance(speedup, (int, float)) else None,
        message=_MARKUP.sub(r"\1", " ".join(text.split())),
    )


# Rule messages in a report link to sections and pages: "@section:Id:Display name@" -> "Display name".
_MARKUP = re.compile(r"@\w+:[^@:]*:([^@]*)@")


def _str_or_none(value) -> str | None:
    return None if value is None or (isinstance(value, float) and value != value) else str(value)


def _cc(row) -> str | None:
    import pandas as pd

    major, minor = row.get("device__attribute_compute_capability_major"), row.get("device__attribute_compute_capability_minor")
    if major is None or minor is None or pd.isna(major) or pd.isna(minor):
        return None
    return f"{int(major)}.{int(minor)}"


_CC_COLUMNS = ("device__attribute_compute_capability_major", "device__attribute_compute_capability_minor")


def _dim3(frame: pd.DataFrame, prefix: str) -> pd.Series:
    import pandas as pd

    cols = [f"{prefix}_{axis}" for axis in "xyz"]
    if not all(c in frame for c in cols):
        return pd.Series([None] * len(frame), index=frame.index, dtype=object)
    return frame[cols].apply(lambda r: f"({int(r.iloc[0])}, {int(r.iloc[1])}, {int(r.iloc[2])})" if r.notna().all() else None, axis=1)


def _fill_launch_meta(frame: pd.DataFrame) -> None:
    frame["grid"] = _dim3(frame, "launch__grid_dim")
    frame["block"] = _dim3(frame, "launch__block_dim")
    frame["cc"] = [_cc(row) for row in frame[[c for c in _CC_COLUMNS if c in frame]].to_dict("records")]
    for meta, metric in (("device_id", "launch__device_id"), ("stream", "launch__stream_id"), ("process_id", "launch__process_id")):
        frame[meta] = frame[metric] if metric in frame else None
    frame["process_name"] = None
