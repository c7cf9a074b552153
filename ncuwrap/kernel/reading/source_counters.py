"""Per-instruction counters of a launch (Nsight Compute's SourceCounters section), read into one table.

Two inputs give them: a ``.ncu-rep`` (``ncu_report``: metrics with one instance per instruction,
correlated by PC, the SASS of each PC and its source file and line where the kernel was built with
``-lineinfo``, and the source text where ncu ran with ``--import-source yes``), and the source page of
ncu's CSV export (``ncu --import R --csv --page source --print-source sass``, or ``cuda,sass``, which
adds the file, the line and its text above each line's SASS). Both become a :class:`SourceCounters`:
one row per SASS instruction, counters under ncuwrap's names (COUNTERS, STALLS), whatever the input.
"""

from __future__ import annotations

import csv
import gzip
import io
import re
import zlib
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from ncuwrap.core import packed
from ncuwrap.core.errors import InputError
from ncuwrap.kernel.reading.ncu_rep_format import PerPc

if TYPE_CHECKING:
    import pandas as pd
from ncuwrap.core.kernel_names import function_name

# ncuwrap name -> (the ncu_report metric with one instance per instruction, the source page's column).
COUNTERS = {
    "samples": ("smsp__pcsamp_sample_count", "Warp Stall Sampling (All Samples)"),
    "inst_executed": ("inst_executed", "Instructions Executed"),
    "thread_inst_executed": ("thread_inst_executed", "Thread Instructions Executed"),
    "global_sectors": ("memory_l2_theoretical_sectors_global", "L2 Theoretical Sectors Global"),
    "global_sectors_ideal": ("memory_l2_theoretical_sectors_global_ideal", "L2 Theoretical Sectors Global Ideal"),
    "global_sectors_excess": ("derived__memory_l2_theoretical_sectors_global_excessive", "L2 Theoretical Sectors Global Excessive"),
    "shared_wavefronts": ("memory_l1_wavefronts_shared", "L1 Wavefronts Shared"),
    "shared_wavefronts_ideal": ("memory_l1_wavefronts_shared_ideal", "L1 Wavefronts Shared Ideal"),
    "shared_wavefronts_excess": ("derived__memory_l1_wavefronts_shared_excessive", "L1 Wavefronts Shared Excessive"),
    "local_sectors": ("memory_l2_theoretical_sectors_local", "L2 Theoretical Sectors Local"),
    "divergent_branches": ("smsp__branch_targets_threads_divergent", "Divergent Branches"),
}
# Warp-stall samples per instruction, by ncuwrap's stall reason (metrics.STALL_REASONS): the
# PC-sampling metric and the source page's column.
STALLS = {
    "long_scoreboard": ("long_scoreboard", "stall_long_sb"), "short_scoreboard": ("short_scoreboard", "stall_short_sb"),
    "barrier": ("barrier", "stall_barrier"), "mio_throttle": ("mio_throttle", "stall_mio"), "lg_throttle": ("lg_throttle", "stall_lg"),
    "math_pipe_throttle": ("math_pipe_throttle", "stall_math"), "wait": ("wait", "stall_wait"),
    "not_selected": ("not_selected", "stall_not_selected"), "selected": ("selected", "stall_selected"),
    "no_instruction": ("no_instructions", "stall_no_inst"), "branch_resolving": ("branch_resolving", "stall_branch_resolving"),
    "dispatch_stall": ("dispatch_stall", "stall_dispatch"), "drain": ("drain", "stall_drain"), "membar": ("membar", "stall_membar"),
    "misc": ("misc", "stall_misc"), "sleeping": ("sleeping", "stall_sleep"), "tex_throttle": ("tex_throttle", "stall_tex"),
    "imc_miss": ("imc_miss", "stall_imc"),
}
PCSAMP_PREFIX = "smsp__pcsamp_warps_issue_stalled_"
# ncu_report's codes for memory_type and memory_access_type, as the source page spells them.
_SPACES = {4: "global", 8: "local", 16: "shared"}
_ACCESSES = {2: "load", 4: "store"}
# What makes a launch's instruction table: any of these present means SourceCounters was collected.
MARKERS = ("inst_executed", "smsp__pcsamp_sample_count")

# Bounds on untrusted text: a source file's text is kept up to this size (a larger one is dropped,
# its lines then shown without text); a source page up to MAX_PAGE_BYTES, a cell up to MAX_CELL.
MAX_FILE_BYTES = 4 << 20
MAX_FILES_BYTES = 16 << 20
MAX_PAGE_BYTES = 512 << 20
MAX_CELL = 1 << 16

FIXED = ("pc", "sass", "file", "line", "space", "access")


@dataclass(frozen=True)
class SourceCounters:
    """One launch's counters per SASS instruction.

    ``table``: one row per instruction: ``pc`` (address; the source page's for CSV input), ``sass``,
    ``file`` and ``line`` (None without line information), ``space`` (global, local, shared or None),
    ``access`` (load, store, another operation, or None), then the COUNTERS and ``stall_<reason>``
    columns the input had. ``files``: the text of each source file the input carries, line by line
    (None for a line a source page does not show)."""

    function: str
    origin: str  # ncu-rep | source-page
    table: pd.DataFrame
    files: dict[str, tuple[str | None, ...]] = field(default_factory=dict)

    @cached_property
    def has_lines(self) -> bool:
        return bool(self.table["line"].notna().any()) if len(self.table) else False

    @cached_property
    def columns(self) -> dict:
        """The table's columns as numpy arrays, the counters as floats (NaN where none), read once for all the
        findings of the launch (the table is read, never changed, after it is made)."""
        return {name: self.table[name].to_numpy(dtype=float) if name not in FIXED else self.table[name].to_numpy()
                for name in self.table.columns}

    @cached_property
    def places(self) -> tuple[object, list[tuple[str, int]]]:
        """Each row's place as a number (an int64 array) and the places so numbered: (file, line), with ""
        for no file and -1 for no line. The table is read, never changed, after it is made: the lines of
        every finding of the launch are found from these."""
        import numpy as np

        files = self.table["file"].tolist()
        lines = self.table["line"].to_numpy(dtype="int64", na_value=-1).tolist()
        numbered: dict[tuple[str, int], int] = {}
        codes = np.fromiter((numbered.setdefault((f if isinstance(f, str) else "", n), len(numbered)) for f, n in zip(files, lines)),
                            np.int64, len(files))
        return codes, list(numbered)

    def text(self, file: str | None, line: int | None) -> str | None:
        """The text of ``file``:``line`` where the input carries it."""
        lines = self.files.get(file) if file else None
        if not lines or line is None or not 1 <= line <= len(lines):
            return None
        return lines[line - 1]


def _frame(rows: list[dict], columns: list[str]) -> pd.DataFrame:
    import pandas as pd  # in the parent only: the .ncu-rep reader's child collects plain values

    frame = pd.DataFrame(rows, columns=[*FIXED, *columns])
    for name in columns:
        frame[name] = pd.to_numeric(frame[name], errors="coerce").astype(float)
    frame["line"] = frame["line"].astype("Int64")
    return frame


# ------------------------------------------------------------------------------------ from ncu_report


def _instances(metric) -> dict[int, float]:
    """PC -> value of a per-instruction metric (as_double: value() costs more per call, docs/scale.md, figures behind the code)."""
    ids = metric.correlation_ids()
    if ids is None:
        return {}
    return {int(ids.as_uint64(i)): metric.as_double(i) for i in range(metric.num_instances())}


def _codes(metric) -> dict[int, int | None]:
    ids = metric.correlation_ids()
    if ids is None:
        return {}
    return {int(ids.as_uint64(i)): (int(v) if (v := metric.value(i)) is not None else None) for i in range(metric.num_instances())}


def _per_pc(values: dict, dtype) -> PerPc:
    import numpy as np

    return PerPc(np.fromiter(values.keys(), np.uint64, len(values)),
                 np.fromiter((0 if v is None else v for v in values.values()), dtype, len(values)))


# ncu_report disassembles a function on the first SASS asked of it and answers each further PC at a
# cost (docs/scale.md, figures behind the code), so only the instructions that can be shown get it:
# the SASS_TOP largest of every counter (and of idle lanes).
SASS_TOP = 16


@dataclass(frozen=True)
class RawCounters:
    """One launch's instruction table as plain values and arrays (what a forked reader can send back): a
    row per PC, in PC order."""

    function: str
    origin: str
    pcs: object  # int64 array
    sass: list
    file: list
    line: list
    space: list
    access: list
    columns: dict  # ncuwrap's counter name -> float64 array, NaN where the metric has no value at that PC
    files: dict


def build(raw: RawCounters) -> SourceCounters:
    import pandas as pd

    frame = pd.DataFrame({"pc": raw.pcs, "sass": raw.sass, "file": raw.file, "line": pd.array(raw.line, dtype="Int64"),
                          "space": raw.space, "access": raw.access, **raw.columns})
    return SourceCounters(function=raw.function, origin=raw.origin, table=frame, files=raw.files)


# The per-instruction metrics a table reads: counters and stall samples (floats), the memory codes (integers).
INSTANCED = frozenset([metric for metric, _ in COUNTERS.values()] + [PCSAMP_PREFIX + suffix for suffix, _ in STALLS.values()])
CODED = frozenset({"memory_type", "memory_access_type"})


def from_action(action, function: str, cache: dict) -> RawCounters | None:
    """The instruction table of one ``ncu_report`` action (plain values: it runs in the forked reader);
    None when SourceCounters was not collected.

    ``cache`` maps a PC to its (file, line) and SASS across the report's launches: launches of one
    function share their code, and asking the module costs a native call per PC."""
    import numpy as np

    names = set(action.metric_names())
    if not any(m in names for m in MARKERS):
        return None
    instances = {name: _per_pc(_instances(action.metric_by_name(name)), np.float64) for name in INSTANCED & names}
    codes = {name: _per_pc(_codes(action.metric_by_name(name)), np.int64) for name in CODED & names}
    found = instructions(names, instances, codes)
    return table(function, found, lambda: _source_files(action), Attribution(action), cache)


class Attribution:
    """Where a launch's PCs come from in its source, and their SASS: ``ncu_report``'s action answers
    (it reads the cubin's line table and disassembles it; the report's file holds neither as text).
    ``lines``: False where the cubin has no line table (:func:`cubin.has_line_table`)."""

    def __init__(self, action, lines: bool | None = None):
        self.action, self.lines = action, lines

    def where(self, pc: int) -> tuple[str | None, int | None]:
        if self.lines is False:  # no line table in the cubin: ncu_report would answer none, slowly (docs/scale.md)
            return None, None
        info = self.action.source_info(pc)
        file = info.file_name() if info is not None else None
        line = info.line() if info is not None else None
        return file or None, int(line) if line else None

    def sass(self, pc: int) -> str:
        return " ".join(str(self.action.sass_by_pc(pc) or "").split())


@dataclass(frozen=True)
class Instructions:
    """One launch's per-instruction values, a row per PC that any counter has (in PC order): ncuwrap's
    counter columns (COUNTERS, ``stall_<reason>``; NaN where a metric has no value at a PC), the memory
    codes (0 where none), and the rows whose SASS can be shown (:func:`_worth_sass`)."""

    pcs: object  # int64 array
    columns: dict
    memory_type: object  # int64 array
    memory_access: object  # int64 array, -1 where none
    shown: tuple[int, ...]

    def asked(self, lines: bool | None) -> tuple[list[int], list[int]]:
        """The PCs whose line is asked (none where the cubin has no line table: ``lines`` False) and those
        whose SASS is (:attr:`shown`)."""
        pcs = self.pcs.tolist()
        return ([] if lines is False else pcs), [pcs[i] for i in self.shown]


def instructions(names, instances: dict, codes: dict) -> Instructions | None:
    """A launch's :class:`Instructions` from its per-instruction metrics (``instances``: the INSTANCED ones it
    has, ``codes`` the CODED ones, each a :class:`PerPc`); None when SourceCounters was not collected
    (``names``: the launch's metric names)."""
    import numpy as np

    if not any(m in names for m in MARKERS):
        return None
    found = _columns(instances)
    pcs = _union([per.pcs for per in found.values()])
    columns = {name: _aligned(pcs, per, np.nan) for name, per in found.items()}
    memory_type = _aligned(pcs, codes["memory_type"], 0) if "memory_type" in codes else np.zeros(len(pcs), np.int64)
    access = _aligned(pcs, codes["memory_access_type"], -1) if "memory_access_type" in codes else np.full(len(pcs), -1, np.int64)
    return Instructions(pcs=pcs.astype(np.int64), columns=columns, memory_type=memory_type, memory_access=access,
                        shown=tuple(sorted(_worth_sass(columns))))


def _union(arrays: list):
    """The sorted distinct PCs of every column (most columns of a launch hold the same PCs, in order)."""
    import numpy as np

    if not arrays:
        return np.zeros(0, np.uint64)
    first = arrays[0]
    if len(first) and (first[1:] > first[:-1]).all() and all(np.array_equal(first, other) for other in arrays[1:]):
        return first
    return np.unique(np.concatenate(arrays))


def _aligned(pcs, per: PerPc, missing):
    """``per``'s values at each of ``pcs`` (sorted, a superset of its PCs), ``missing`` elsewhere; a PC given
    twice counts its later value."""
    import numpy as np

    out = np.full(len(pcs), missing, dtype=per.values.dtype if missing != missing else np.int64)
    at = np.searchsorted(pcs, per.pcs)
    values = per.values
    if not (at[1:] > at[:-1]).all() and len(np.unique(at)) != len(at):  # keep each PC's last value, as a dict would
        reverse_first = np.unique(at[::-1], return_index=True)[1]
        keep = len(at) - 1 - reverse_first
        at, values = at[keep], values[keep]
    out[at] = values
    return out


def table(function: str, found: Instructions | None, files, attribution, cache: dict) -> RawCounters | None:
    """The instruction table of one launch (:func:`instructions`): ``files()``, its source files' texts;
    ``attribution``, each PC's line and the shown ones' SASS (:class:`Attribution`, :class:`Answered`).
    None when SourceCounters was not collected."""
    if found is None:
        return None
    pcs = found.pcs.tolist()
    file, line = [], []
    for pc in pcs:
        where = cache.get(("line", pc))
        if where is None:
            where = cache[("line", pc)] = attribution.where(pc)
        file.append(where[0])
        line.append(where[1])
    sass: list = [None] * len(pcs)
    for i in found.shown:
        sass[i] = _sass(attribution, pcs[i], cache)
    codes = found.memory_type.tolist()
    space = [_SPACES.get(code) if code else None for code in codes]
    access = [(_ACCESSES.get(a, "other") if code else None) for code, a in zip(codes, found.memory_access.tolist())]
    return RawCounters(function=function, origin="ncu-rep", pcs=found.pcs, sass=sass, file=file, line=line, space=space,
                       access=access, columns=found.columns, files=_files(files(), cache))


def _columns(instances: dict) -> dict:
    """ncuwrap's counter columns (COUNTERS, ``stall_<reason>``) from a launch's per-instruction metrics."""
    columns: dict = {}
    for name, (metric_name, _) in COUNTERS.items():
        if metric_name in instances:
            columns[name] = instances[metric_name]
    for reason, (suffix, _) in STALLS.items():
        if PCSAMP_PREFIX + suffix in instances:
            columns[f"stall_{reason}"] = instances[PCSAMP_PREFIX + suffix]
    return columns


class Answered:
    """An :class:`Attribution` whose answers were given beforehand (by NVIDIA's reader in another process)."""

    def __init__(self, lines: dict, sass: dict):
        self.lines, self.texts = lines, sass

    def where(self, pc: int) -> tuple[str | None, int | None]:
        return self.lines.get(pc, (None, None))

    def sass(self, pc: int) -> str:
        return self.texts[pc]


def _worth_sass(columns: dict) -> set[int]:
    """Row positions of the SASS_TOP largest values of every counter, and of the idle lanes (ties: the
    earlier row first)."""
    import numpy as np

    ranked = [np.where(np.isnan(values), 0.0, values) for values in columns.values()]
    if "inst_executed" in columns and "thread_inst_executed" in columns:
        inst, threads = (np.where(np.isnan(columns[c]), 0.0, columns[c]) for c in ("inst_executed", "thread_inst_executed"))
        ranked.append(32 * inst - threads)
    wanted: set[int] = set()
    for values in ranked:
        top = np.argsort(-values, kind="stable")[:SASS_TOP]
        wanted.update(int(i) for i in top if values[i] > 0)
    return wanted


def _sass(attribution, pc: int, cache: dict) -> str:
    text = cache.get(("sass", pc))
    if text is None:
        text = cache[("sass", pc)] = attribution.sass(pc)
    return text


def _source_files(action) -> dict:
    try:
        return dict(action.source_files())
    except Exception:  # an older module without source files: lines are shown without text
        return {}


def _files(files: dict, cache: dict) -> dict[str, tuple[str, ...]]:
    """The source text the report carries (ncu --import-source yes), within MAX_FILE(S)_BYTES. A file's
    lines are one tuple for every launch that carries the same text (``cache``, shared with
    :func:`table`'s): the launches of a module each carry its sources, and the forked reader sends
    an object it holds twice once, so the parent keeps one copy, not one per launch."""
    out, total = {}, 0
    for name, text in files.items():
        if not text or len(text) > MAX_FILE_BYTES or total + len(text) > MAX_FILES_BYTES:
            continue
        total += len(text)
        key = ("file", str(name), text)
        lines = cache.get(key)
        if lines is None:
            lines = cache[key] = tuple(text.splitlines())
        out[str(name)] = lines
    return out


# ---------------------------------------------------------------------------------- from the source page


def is_source_page(path: Path) -> bool:
    """True when ``path`` (.csv or .csv.gz) starts like ncu's source page."""
    try:
        with _open(path) as fh:
            head = fh.read(64)
    except (OSError, EOFError, zlib.error, UnicodeDecodeError):
        return False
    return head.startswith(('"Kernel Name",', '"File Path",', '"File Name",'))


def _open(path: Path):
    if path.name.lower().endswith(".gz"):
        raw = path.open("rb")
        text = io.TextIOWrapper(gzip.GzipFile(fileobj=raw, mode="rb"), encoding="utf-8", errors="replace", newline="")
        text.packed_from = raw  # the compressed bytes read so far, for the ratio bound (packed.MAX_RATIO)
        return text
    return open(path, encoding="utf-8", errors="replace", newline="")


class _Bounded(io.TextIOBase):
    """A text stream that stops with an InputError once MAX_PAGE_BYTES characters were read (a gzip
    that inflates without end, a sparse file)."""

    def __init__(self, inner, path: Path):
        self.inner, self.path, self.read_chars = inner, path, 0

    def __iter__(self):
        return self

    def __next__(self):
        line = self.inner.readline(MAX_CELL * 4)
        if not line:
            raise StopIteration
        self.read_chars += len(line)
        raw = getattr(self.inner, "packed_from", None)
        if raw is not None and packed.inflates_too_much(self.read_chars, raw.tell()):
            raise InputError(f"{self.path}: inflates more than {packed.MAX_RATIO} times its size (a real source page inflates "
                             "about 25 times), so it is damaged or made to exhaust memory; export the page again")
        if self.read_chars > MAX_PAGE_BYTES:
            raise InputError(f"{self.path}: more than {MAX_PAGE_BYTES >> 20} MiB of text, more than any source page holds; "
                             "give the file written by 'ncu --import REPORT --csv --page source --print-source cuda,sass'")
        return line


@dataclass(frozen=True)
class SourcePage:
    """What a source page export holds: a block per launch, in the order ncu wrote them, and the
    kernels it left out for want of line information (the cuda,sass form prints no SASS for them)."""

    path: str
    blocks: tuple[SourceCounters, ...]
    without_lines: tuple[str, ...] = ()


_NO_LINEINFO = re.compile(r"^==WARNING== No lineinfo available to show CUDA-C source related to '(.*)'\.?\s*$")


def read_page(path: Path) -> SourcePage:
    """Every kernel block of a source page export. The SASS form (``--print-source sass``) has no
    lines; ``cuda,sass`` puts each source line's row (file, line, text) above the SASS rows it
    compiled to. ncu's own messages in the export (``==WARNING==`` lines) are not data."""
    fix = "export it again with 'ncu --import REPORT --csv --page source --print-source cuda,sass'"
    blocks: list[SourceCounters] = []
    without: list[str] = []
    try:
        with _open(path) as raw:
            reader = csv.reader(_Messages(_Bounded(raw, path), without))
            _Page(path, fix).parse(reader, blocks)
    except csv.Error as exc:
        raise InputError(f"{path}: not a readable CSV ({exc}); {fix}") from None
    except (OSError, EOFError, zlib.error) as exc:
        raise InputError(f"{path}: cannot be read ({exc}); {fix}") from None
    if not blocks:
        raise InputError(f"{path}: holds no kernel's source counters; {fix}")
    return SourcePage(path=str(path), blocks=tuple(blocks), without_lines=tuple(dict.fromkeys(without)))


class _Messages:
    """Lines of ncu's console in an export (``==PROF==``, ``==WARNING==``) are left out; the kernels
    a warning says have no line information are noted."""

    def __init__(self, lines, without: list[str]):
        self.lines, self.without = lines, without

    def __iter__(self):
        for line in self.lines:
            if line.startswith("=="):
                match = _NO_LINEINFO.match(line)
                if match:
                    self.without.append(match.group(1))
                continue
            yield line


# The first cells of the rows that are not counters: those that open a block, a file or a function (followed
# by a name), and the column header.
_MARK_KEYS = frozenset({"Kernel Name", "File Name", "File Path", "Function Name"})
_HEADER_KEYS = frozenset({"Address", "Line No"})


class _Page:
    def __init__(self, path: Path, fix: str):
        self.path, self.fix = path, fix

    def fail(self, what: str) -> InputError:
        return InputError(f"{self.path}: {what}; {self.fix}")

    def parse(self, reader, blocks: list[SourceCounters]) -> None:
        """A block per launch. The SASS form starts each with "Kernel Name"; the cuda,sass form lists
        a launch's files one after the other ("File Path", "Function Name", rows), so its block ends
        where the function changes or one of its files comes again (the next launch of the same kernel)."""
        state = {"function": None, "header": None, "rows": [], "files": {}}
        file, source_lines, line_no = None, {}, None
        for record in reader:
            if any(len(cell) > MAX_CELL for cell in record):
                raise self.fail(f"a cell longer than {MAX_CELL} characters (row {reader.line_num}); ncu writes no such cell, so the file is damaged")
            if not record:
                continue
            key = record[0]
            if key in _HEADER_KEYS or (key in _MARK_KEYS and len(record) >= 2):
                file, source_lines, line_no = self._mark(record, reader, state, blocks, file, source_lines, line_no)
            elif state["header"] is None or state["function"] is None:
                raise self.fail(f"row {reader.line_num} comes before any kernel name and column header")
            else:  # a counter row, inline: this loop runs once per SASS instruction
                header = state["header"]
                if len(record) != len(header):
                    raise self.fail(f"row {reader.line_num} has {len(record)} fields where the header has {len(header)} (truncated?)")
                if header[0] == "Line No":
                    if record[0]:  # a source line: its number and text
                        try:
                            line_no = int(record[0])
                        except ValueError:
                            raise self.fail(f"row {reader.line_num}: line number {record[0][:20]!r} is not a number") from None
                        if len(source_lines) < 1_000_000:
                            source_lines[line_no] = record[1]
                        continue
                    state["rows"].append((file, line_no, record[2:]))
                else:
                    state["rows"].append((None, None, record))
        self._close(state, blocks)

    def _mark(self, record: list[str], reader, state: dict, blocks: list[SourceCounters], file, source_lines: dict, line_no):
        """A row that opens a kernel's block, a file or a function, or a column header (rare rows, kept out of
        :meth:`parse`'s per-instruction path): closes the block it ends; returns the file, its lines and the line after it."""
        key = record[0]
        if key == "Kernel Name":
            self._close(state, blocks)
            state["function"], file = record[1], None
        elif key == "File Name":
            raise self.fail("a source page without counters (--print-source cuda shows only the text)")
        elif key == "File Path":
            file, line_no = record[1], None
            if file in state["files"]:
                self._close(state, blocks)
            source_lines = {}
        elif key == "Function Name":
            if state["function"] is not None and state["function"] != record[1]:
                self._close(state, blocks)
            state["function"] = record[1]
            if file is not None:
                state["files"][file] = source_lines
        else:  # "Address" or "Line No": the column header
            if "Address" not in record or "Source" not in record:
                raise self.fail("a source page header without Address and Source columns")
            if state["header"] is not None and record != state["header"]:
                raise self.fail(f"row {reader.line_num}: a second, different column header in one kernel's block")
            state["header"] = record
        return file, source_lines, line_no

    def _close(self, state: dict, blocks: list[SourceCounters]) -> None:
        """End the block being read: it becomes a SourceCounters when it had a kernel and a header."""
        if state["function"] is not None and state["header"] is not None:
            blocks.append(self._block(state["function"], state["header"], state["rows"], state["files"]))
        state.update(function=None, header=None, rows=[], files={})

    def _block(self, function: str, header: list[str], rows: list, files: dict) -> SourceCounters:
        sass_header = header[2:] if header[0] == "Line No" else header
        index = {name: i for i, name in enumerate(sass_header)}
        counters = [(name, index[column]) for name, (_, column) in COUNTERS.items() if column in index]
        stalls = [(f"stall_{reason}", index[column]) for reason, (_, column) in STALLS.items() if column in index]
        if not counters and not stalls:
            raise self.fail(f"the block of {function[:80]!r} has no per-instruction counter columns")
        space_at, access_at = index.get("Address Space"), index.get("Access Operation")
        out, seen = [], set()
        for file, line, cells in rows:
            address = cells[index["Address"]]
            if address == "...":  # the cuda,sass form marks where a line's SASS is not contiguous
                continue
            try:
                pc = int(address, 16)
            except ValueError:
                raise self.fail(f"address {address[:20]!r} of {function[:80]!r} is not hexadecimal") from None
            # Inlined code is listed under the inlined function's line and again under its call site:
            # the first (innermost, as ncu_report's source_info gives it) counts, once.
            if pc in seen:
                continue
            seen.add(pc)
            row = {"pc": pc, "sass": " ".join(cells[index["Source"]].split()), "file": file or None, "line": line,
                   "space": _word(cells, space_at), "access": _word(cells, access_at)}
            for name, at in counters + stalls:
                row[name] = cells[at]
            out.append(row)
        # The page lists only the lines that compiled to code: the others are unknown (None), not blank.
        texts = {name: tuple(lines.get(i) for i in range(1, max(lines) + 1)) for name, lines in files.items() if lines}
        return SourceCounters(function=function_name(function), origin="source-page", table=_frame(out, [n for n, _ in counters + stalls]), files=texts)


def _word(cells: list[str], at: int | None) -> str | None:
    if at is None:
        return None
    value = cells[at].strip().lower()
    return None if value in ("", "-") else value
