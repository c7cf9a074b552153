"""Read Nsight Compute CSV exports: ``--page raw`` (with or without ``--print-units base``) and
``--page details``.

Both pages start with the launch columns ("ID", "Kernel Name", "Block Size", ...). The raw page has
one column per metric and a second row of units; the details page has one row per (launch, metric)
with human labels, which are mapped back to metric names where ncuwrap knows them.
"""

from __future__ import annotations

import csv
import io
import re
from collections import Counter
from dataclasses import replace
from pathlib import Path

from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa
import pyarrow.csv as pacsv

# Arrow's compute functions called by name. pyarrow.compute.call_function and its options classes are
# pyarrow._compute's: the public module makes a wrapper and a docstring for each of Arrow's ~300 functions
# when it is imported, a cost of its own in a raw page's whole diagnosis for the five functions read here.
try:
    from pyarrow._compute import CastOptions, MatchSubstringOptions, ReplaceSubstringOptions, ScalarAggregateOptions, call_function
except ImportError:  # a pyarrow that moved them: the public module has them all
    from pyarrow.compute import CastOptions, MatchSubstringOptions, ReplaceSubstringOptions, ScalarAggregateOptions, call_function

from ncuwrap.core import packed, process
from ncuwrap.core.errors import InputError
from ncuwrap.kernel.reading.model import ColumnTable, FrameTable, LaunchTable, Profile, RuleResult, Source
from ncuwrap.core.kernel_names import function_name
from ncuwrap.kernel.reading.units import scale_to_base

if TYPE_CHECKING:  # a raw page is read without pandas (its import was a large share of the read: docs/scale.md); the details page and Profile.frame use it
    import pandas as pd

_LAUNCH_COLUMNS = {
    "ID": "launch_id",
    "Process ID": "process_id",
    "Process Name": "process_name",
    "Kernel Name": "display_name",
    "Stream": "stream",
    "Block Size": "block",
    "Grid Size": "grid",
    "Device": "device_id",
    "CC": "cc",
}
_DETAILS_COLUMNS = ("Section Name", "Metric Name", "Metric Unit", "Metric Value")

# (section, label) of the details page -> the metric it shows. Labels ncuwrap does not know are kept
# as "details::<section>::<label>" columns so nothing is lost.
DETAILS_LABELS = {
    ("GPU Speed Of Light Throughput", "Duration"): "gpu__time_duration.sum",
    ("GPU Speed Of Light Throughput", "Compute (SM) Throughput"): "sm__throughput.avg.pct_of_peak_sustained_elapsed",
    ("GPU Speed Of Light Throughput", "Memory Throughput"): "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed",
    ("GPU Speed Of Light Throughput", "DRAM Throughput"): "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed",
    ("GPU Speed Of Light Throughput", "L1/TEX Cache Throughput"): "l1tex__throughput.avg.pct_of_peak_sustained_active",
    ("GPU Speed Of Light Throughput", "L2 Cache Throughput"): "lts__throughput.avg.pct_of_peak_sustained_elapsed",
    ("GPU Speed Of Light Throughput", "SM Frequency"): "sm__cycles_elapsed.avg.per_second",
    ("GPU Speed Of Light Throughput", "DRAM Frequency"): "dram__cycles_elapsed.avg.per_second",
    ("Launch Statistics", "Grid Size"): "launch__grid_size",
    ("Launch Statistics", "Block Size"): "launch__block_size",
    ("Launch Statistics", "Registers Per Thread"): "launch__registers_per_thread",
    ("Launch Statistics", "Waves Per SM"): "launch__waves_per_multiprocessor",
    ("Launch Statistics", "# SMs"): "launch__sm_count",
    ("Launch Statistics", "Static Shared Memory Per Block"): "launch__shared_mem_per_block_static",
    ("Launch Statistics", "Dynamic Shared Memory Per Block"): "launch__shared_mem_per_block_dynamic",
    ("Occupancy", "Theoretical Occupancy"): "sm__maximum_warps_per_active_cycle_pct",
    ("Occupancy", "Achieved Occupancy"): "sm__warps_active.avg.pct_of_peak_sustained_active",
    ("Occupancy", "Block Limit Registers"): "launch__occupancy_limit_registers",
    ("Occupancy", "Block Limit Shared Mem"): "launch__occupancy_limit_shared_mem",
    ("Occupancy", "Block Limit Warps"): "launch__occupancy_limit_warps",
    ("Occupancy", "Block Limit SM"): "launch__occupancy_limit_blocks",
    ("Warp State Statistics", "Avg. Active Threads Per Warp"): "smsp__thread_inst_executed_per_inst_executed.ratio",
    ("Warp State Statistics", "Avg. Not Predicated Off Threads Per Warp"): "smsp__thread_inst_executed_pred_on_per_inst_executed.ratio",
    ("Memory Workload Analysis", "Local Memory Spilling Requests"): "derived__local_spilling_requests",
    ("Memory Workload Analysis", "Local Memory Spilling Request Overhead"): "derived__local_spilling_requests_pct",
    ("Memory Workload Analysis", "Memory Throughput"): "dram__bytes.sum.per_second",
}


# What may come before the header (ncu's ==PROF== lines, the program's output): searched this far and
# no further, so that a huge file without a line break (a sparse file) is refused after a moment.
MAX_PREAMBLE = 16 << 20


def _header_offset(path: Path) -> int:
    """Byte offset of the header line: ncu's own "==PROF==" lines or program output may precede it,
    and an editor may have put a UTF-8 byte order mark before it (skipped with it)."""
    offset = 0
    with path.open("rb") as fh:
        for _ in range(10_000):
            line = fh.readline(max(1, min(MAX_ROW_BYTES, MAX_PREAMBLE - offset)))
            if not line or offset >= MAX_PREAMBLE:
                break
            if line.startswith(b'"ID",'):
                return offset
            if offset == 0 and line.startswith(_BOM + b'"ID",'):
                return len(_BOM)
            offset += len(line)
    where = f" in its first {MAX_PREAMBLE >> 20} MiB" if offset >= MAX_PREAMBLE else ""
    raise InputError(
        f"{path}: not an Nsight Compute CSV export (no '\"ID\",' header line{where}); "
        "export one with 'ncu --import REPORT --csv --page raw > FILE.csv'"
    )


_BOM = b"\xef\xbb\xbf"
# ncu writes no field near this (the longest templated kernel names are tens of kilobytes); a file
# with one is damaged or made up, and its text would be carried through every output.
MAX_FIELD = 1 << 20
# The last row is looked for in this much of the end of the file (a full-set raw row is ~30 KB).
MAX_ROW_BYTES = 64 << 20


def _check_field_sizes(path: Path, lengths: np.ndarray, columns: list[str]) -> None:
    """Refuse a cell over MAX_FIELD characters; ``lengths`` is rows x columns (NaN: no value)."""
    if not lengths.size or not np.nanmax(lengths, initial=0) > MAX_FIELD:
        return
    row, col = np.argwhere(lengths > MAX_FIELD)[0]
    raise InputError(f"{path}: a field of {int(lengths[row, col]):,} characters in column {columns[col][:60]!r}; ncu writes none "
                     f"over {MAX_FIELD >> 20} MiB, so the file is damaged: export it again from the .ncu-rep")


def _lengths(frame: pd.DataFrame, columns: list[str]) -> np.ndarray:
    """The characters of each cell of ``columns`` of a pandas frame, rows x columns (NaN where a row
    has no value). Read through one object array: a fixed-width copy would size every cell like the
    largest (one 5 MB cell made every cell 20 MB)."""
    block = frame[columns].to_numpy(dtype=object)
    # The cells are texts or NaN (no value): a plain loop is several times faster than pandas' .str here.
    return np.array([len(x) if isinstance(x, str) else np.nan for x in block.ravel().tolist()], dtype=float).reshape(block.shape)


def _text_lengths(table: pa.Table, columns: list[str]) -> np.ndarray:
    """The characters of each cell of ``columns`` of an Arrow table, rows x columns (NaN: an empty cell)."""
    if not columns:
        return np.empty((table.num_rows, 0))
    return np.column_stack([_numpy(call_function("utf8_length", [table.column(c)]), pa.float64()) for c in columns])


def _numpy(cells: pa.ChunkedArray, kind: pa.DataType) -> np.ndarray:
    """A column of numbers as a numpy array of ``kind`` (float64: a null is NaN; int64: no nulls), read from
    the Arrow buffers: Arrow's own conversion (to_numpy) imports pandas, which a raw page's read does without."""
    array = call_function("cast", [cells], CastOptions.safe(kind)).combine_chunks()
    dtype = np.float64 if kind == pa.float64() else np.int64
    if not len(array):
        return np.empty(0, dtype=dtype)
    validity, data = array.buffers()
    if data is None:  # no values were allocated: every cell is null
        return np.full(len(array), np.nan)
    values = np.frombuffer(data, dtype=dtype, count=len(array), offset=array.offset * 8).copy()
    if array.null_count:
        valid = np.unpackbits(np.frombuffer(validity, dtype=np.uint8), bitorder="little")[array.offset:array.offset + len(array)]
        values[valid == 0] = np.nan
    return values


def _numeric(column: pd.Series) -> pd.Series:
    """Parse ncu's number formatting ("424,019", "no data", "n/a") into floats; NaN where not a number."""
    import pandas as pd

    text = column.str.replace(",", "", regex=False)
    return pd.to_numeric(text, errors="coerce")


def _convert(path: Path, table: pa.Table, columns: list[str], units: dict[str, str]) -> tuple[np.ndarray, dict[str, list]]:
    """Metric columns to floats in base units (``columns`` x launches); a column with no numbers at all
    stays text (the second result: its cells, None where empty).

    Arrow casts a whole column of numbers at once, ncu's thousands separators ("1,234.5") taken out
    first where the plain cast fails; a column that is still not all numbers (text, "n/a", numbers
    mixed with words) is converted cell by cell (_convert_text). Both parsers round correctly, so a
    number reads the same whichever way its column took.
    """
    rows = table.num_rows
    numbers = np.empty((len(columns), rows))
    text: list[int] = []
    for i, column in enumerate(columns):
        cells = table.column(column)
        parsed = _cast(cells)
        if parsed is None and call_function("any", [call_function("match_substring", [cells], MatchSubstringOptions(","))],
                                             ScalarAggregateOptions()).as_py():
            parsed = _cast(call_function("replace_substring", [cells], ReplaceSubstringOptions(",", "")))
        if parsed is None:
            text.append(i)
        else:
            numbers[i] = parsed
    names = [columns[i] for i in text]
    block = np.empty((rows, len(names)), dtype=object)
    for j, name in enumerate(names):
        block[:, j] = table.column(name).to_pylist()
    parsed, textual = _convert_text(path, block, _text_lengths(table, names), names)
    if text:
        numbers[text] = parsed.T
    numbers *= np.array([scale_to_base(units.get(c, "")) for c in columns])[:, None]
    numbers[np.isinf(numbers)] = np.nan  # "1e999" is no measurement
    return numbers, {column: values.tolist() for column, values in textual.items()}


def _metric_frame(columns: list[str], numbers: np.ndarray, textual: dict[str, list]) -> pd.DataFrame:
    """The metric columns of :func:`_convert` as a pandas frame (Profile.frame)."""
    import pandas as pd

    if not columns:
        return pd.DataFrame(index=pd.RangeIndex(numbers.shape[1]))
    out = pd.DataFrame(numbers.T, columns=columns)
    # Text metrics (device names, cache configs): keep the strings where no cell parsed as a number.
    for column, values in textual.items():
        # As Python objects: metrics.MetricTable reads object columns as text (pandas' own "str" dtype it would not).
        out[column] = pd.Series(values, dtype=object)
    return out


def _cast(cells: pa.ChunkedArray) -> np.ndarray | None:
    """A text column as floats (an empty cell: NaN), or None when some cell is not a number."""
    try:
        return _numpy(cells, pa.float64())
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return None


def _convert_text(path: Path, block: np.ndarray, lengths: np.ndarray, columns: list[str]) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """The numbers in text cells (``block``: rows x columns, None for an empty cell, ``lengths`` their
    characters; ncu's "424,019"; NaN where a cell is no number), and the columns with no number at all
    but some text, as object arrays (None for an empty cell)."""
    if not columns:
        return np.empty((block.shape[0], 0)), {}
    _check_field_sizes(path, lengths, columns)
    cells = [x.replace(",", "") if isinstance(x, str) else x for x in block.ravel().tolist()]
    if all(_no_number(x) for x in {x for x in cells if x is not None}):
        # Each distinct text (a device name: one for 10,000 launches) is looked at once, and none is a number.
        numbers = np.full(block.shape, np.nan)
    else:  # pandas' reading of each cell, as a details page's
        import pandas as pd

        numbers = pd.to_numeric(pd.Series(cells, dtype=object), errors="coerce").to_numpy(dtype=float, copy=True).reshape(block.shape)
    textual = np.isnan(numbers).all(axis=0) & (lengths > 0).any(axis=0)
    out = {}
    for i in np.flatnonzero(textual):
        values = block[:, i].copy()
        values[~(lengths[:, i] > 0)] = None
        out[columns[i]] = values
    return numbers, out


# The characters a number can be written with (pandas' to_numeric reads digits, a sign, a point, an
# exponent and blanks around them), and the words it reads as one without digits.
_NUMBER_CHARACTERS = re.compile(r"[\s0-9+\-.eE]*")
_NUMBER_WORDS = ("inf", "infinity", "nan")


def _no_number(text: str) -> bool:
    """Whether ``text`` (thousands separators taken out) is certainly no number to pandas' to_numeric: it
    holds a character no number is written with, and is not a word for infinity. A text that may be one
    is left to pandas itself."""
    return _NUMBER_CHARACTERS.fullmatch(text) is None and text.strip().lstrip("+-").lower() not in _NUMBER_WORDS


def _check_aligned(path: Path, frame: pd.DataFrame) -> None:
    import pandas as pd

    # pandas reads the extra leading fields of rows longer than the header as an index: every column shifts.
    if not isinstance(frame.index, pd.RangeIndex):
        raise InputError(f"{path}: the rows have more fields than the header; export it again from the .ncu-rep")


def _check_complete(path: Path, frame: pd.DataFrame, min_fields: int) -> None:
    if frame.empty:
        raise InputError(f"{path}: the CSV holds no profiled kernel; export a report that has launches in it")
    _check_last_row(path, min_fields)


def _check_last_row(path: Path, min_fields: int) -> None:
    # A file cut short at a field boundary parses (pandas fills the missing fields), so the fields
    # of the last row are counted on the file itself.
    fields = _last_row_fields(path)
    if fields is None:
        raise InputError(f"{path}: the last row is longer than {MAX_ROW_BYTES >> 20} MiB; ncu writes no such row, so the file is damaged: "
                         "export it again from the .ncu-rep")
    if fields < min_fields:
        raise InputError(f"{path}: the CSV is truncated (last row incomplete); export it again from the .ncu-rep")


def _last_row_fields(path: Path) -> int | None:
    """Fields of the file's last row, counted on the raw bytes (None: the row does not fit in
    MAX_ROW_BYTES). ncu quotes every field and doubles a quote inside one, so a byte is inside a
    field when an odd number of quotes precede it; only commas and newlines outside separate. A
    newline inside a quoted name then does not start a row, and no field-size limit applies.
    The end of the file is searched in a growing window (1 MiB, then 8 times more up to
    MAX_ROW_BYTES): the quotes before it are only counted, the window is looked at byte by byte."""
    size = path.stat().st_size
    window = min(1 << 20, MAX_ROW_BYTES)
    while True:
        start = max(0, size - window)
        quotes = 0
        with path.open("rb") as fh:
            while fh.tell() < start:
                quotes += fh.read(min(start - fh.tell(), 1 << 24)).count(b'"')
            tail = np.frombuffer(fh.read().rstrip(b"\r\n"), dtype=np.uint8)
        outside = (quotes + np.cumsum(tail == ord('"'))) % 2 == 0
        breaks = np.flatnonzero((tail == ord("\n")) & outside)
        if len(breaks) or start == 0:
            break
        if window >= MAX_ROW_BYTES:
            return None
        window = min(window * 8, MAX_ROW_BYTES)
    row = slice(breaks[-1] + 1 if len(breaks) else 0, None)
    return int(np.count_nonzero((tail[row] == ord(",")) & outside[row])) + 1


def _quotes_open(path: Path) -> bool:
    """The file ends inside a quoted field (an odd number of quotes: ncu doubles those inside one)."""
    quotes = 0
    with path.open("rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 24), b""):
            quotes += chunk.count(b'"')
    return quotes % 2 == 1


# Launch IDs count launches from 0; past 2**53 they are not exact as floats (nor a real report).
MAX_LAUNCH_ID = 2**53


def _launch_meta(path: Path, frame: pd.DataFrame) -> pd.DataFrame:
    """The launch columns under ncuwrap's names (their cells' sizes already checked)."""
    import pandas as pd

    meta = pd.DataFrame(index=frame.index)
    for column, name in _LAUNCH_COLUMNS.items():
        meta[name] = frame[column] if column in frame else None
    ids = _checked_ids(path, pd.to_numeric(meta["launch_id"], errors="coerce").to_numpy(dtype=float), frame["ID"].tolist() if "ID" in frame else None)
    meta["launch_id"] = pd.array(ids.astype(np.int64), dtype="Int64")
    meta["name"] = [function_name(s) for s in meta["display_name"]]
    meta["mangled_name"] = None
    return meta


def _checked_ids(path: Path, ids: np.ndarray, raw: list | None) -> np.ndarray:
    """``ids`` (floats; NaN where a cell is no number) when every one is a launch number, else the error
    naming the first that is not (``raw``: the cells as written)."""
    with np.errstate(invalid="ignore"):
        bad = ~((ids >= 0) & (ids < MAX_LAUNCH_ID) & (ids == np.floor(ids)))
    if bad.any():
        cell = str(raw[int(np.argmax(bad))]) if raw is not None else ""
        raise InputError(f"{path}: launch ID {cell[:30]!r} is not a launch number (a whole number from 0 to 2**53); "
                         "export the report again from the .ncu-rep")
    return ids


# Launch IDs as ncu writes them: digits, fewer than 2**53 (16 digits) as long as they have at most 15.
_PLAIN_ID = r"^[0-9]{1,15}$"


def _raw_launches(path: Path, table: pa.Table, present: list[str], metric_columns: list[str], units: dict[str, str]) -> ColumnTable:
    """The raw page's launches as columns, without pandas (Profile.frame builds the frame when asked):
    the launch columns under ncuwrap's names, then the metrics (see :func:`_launch_meta`, :func:`_convert`)."""
    launch = {c: ["" if x is None else x for x in table.column(c).to_pylist()] for c in present}
    if call_function("all", [call_function("match_substring_regex", [table.column("ID")], MatchSubstringOptions(_PLAIN_ID))],
                 ScalarAggregateOptions(skip_nulls=False)).as_py():  # no null, all digits
        ids = _numpy(table.column("ID"), pa.int64()).astype(float)
    else:  # pandas reads the IDs and names the first that is no launch number
        import pandas as pd

        ids = _checked_ids(path, pd.to_numeric(pd.Series(launch["ID"], dtype=str), errors="coerce").to_numpy(dtype=float), launch["ID"])
    numbers, textual = _convert(path, table, metric_columns, units)
    rows = table.num_rows
    others: dict[str, list] = {name: launch[column] if column in launch else [None] * rows for column, name in _LAUNCH_COLUMNS.items()}
    others["launch_id"] = ids.astype(np.int64).tolist()
    others["name"] = [function_name(s) for s in others["display_name"]]
    others["mangled_name"] = [None] * rows
    columns = [*others, *metric_columns]  # the frame's order
    others.update(textual)

    def frame() -> pd.DataFrame:
        import pandas as pd

        launches = pd.DataFrame({c: pd.Series(values, dtype=str) for c, values in launch.items()})
        return pd.concat([_launch_meta(path, launches), _metric_frame(metric_columns, numbers, textual)], axis=1)

    return ColumnTable(columns, numbers, metric_columns, others, frame)


# A gzipped export is unpacked to a temporary file first; more than this is refused (a bomb, or a
# report far beyond what one diagnosis should read: over twenty times the 10,000-launch full-set export of
# docs/scale.md).
GZIP_LIMIT = 4 << 30


def read(path: Path, usecols=None) -> Profile:
    """Read an ncu CSV export (raw or details page), plain or gzipped (``.csv.gz``).
    ``usecols``: metric names to keep (None: all)."""
    if path.name.lower().endswith(".gz"):
        with packed.unpacked(path, limit=GZIP_LIMIT, fix="pass the CSV export itself or gzip it again") as plain:
            profile = _read(plain, usecols)
        profile.source = replace(profile.source, path=str(path))
        return profile
    return _read(path, usecols)


def _read(path: Path, usecols=None) -> Profile:
    offset = _header_offset(path)
    with path.open("rb") as fh:
        fh.seek(offset)
        header_line = fh.readline(MAX_ROW_BYTES).decode("utf-8", "replace")
    try:
        header = next(csv.reader(io.StringIO(header_line)))
    except csv.Error as exc:  # e.g. a header field over the csv module's 128 KiB limit
        raise InputError(f"{path}: unreadable CSV header ({exc}); export it again with 'ncu --import REPORT --csv --page raw'") from None
    counts = Counter(header)
    twice = next((c for c in header if counts[c] > 1), None)
    if twice is not None:
        # Which of the two holds the value is anyone's guess (pandas renames the second; Arrow keeps both names).
        raise InputError(f"{path}: column {twice[:60]!r} appears {counts[twice]} times in the header; export the report again from the .ncu-rep")
    if "Kernel Name" not in header:
        raise InputError(f"{path}: not an Nsight Compute CSV export (no 'Kernel Name' column); export with 'ncu --import REPORT --csv --page raw'")
    if all(c in header for c in _DETAILS_COLUMNS):
        return _read_details(path, offset)
    metric_columns = [c for c in header if "__" in c]
    if not metric_columns:
        raise InputError(f"{path}: an ncu CSV without metric columns; export with '--page raw' or '--page details'")
    wanted = None
    if usecols is not None:
        keep = set(usecols)
        wanted = [c for c in header if c in _LAUNCH_COLUMNS or c in keep]
        metric_columns = [c for c in metric_columns if c in keep]
    units_row, line = _units_row(path, offset, header)
    # Arrow reads the wanted columns as text (the units row skipped), in blocks (_read_table); the numbers are
    # then cast by whole columns (_convert).
    table = _read_table(path, offset, line if units_row is not None else 0, wanted if wanted is not None else header, len(header))
    units = {c: units_row[c] for c in metric_columns} if units_row is not None else {}
    if table.num_rows == 0:
        raise InputError(f"{path}: the CSV holds no profiled kernel; export a report that has launches in it")
    # Arrow refuses a row with fewer fields than the header, the last one too: no row is cut short.
    present = [c for c in _LAUNCH_COLUMNS if c in table.column_names]
    _check_field_sizes(path, _text_lengths(table, present), present)
    launches = _raw_launches(path, table, present, metric_columns, units)
    return Profile(source=_source(path, "ncu-csv-raw", launches), table=launches, units=units)


# Arrow parses a file in blocks of this size; a row longer than a block is read again
# with one block as large as the longest row allowed.
_BLOCK = 4 << 20
_FIELDS = re.compile(r"Expected (\d+) columns, got (\d+)")


def _read_table(path: Path, offset: int, after_header: int, columns: list[str], fields: int) -> pa.Table:
    """The raw page's ``columns`` as text (an empty cell: null), from the header at byte ``offset``
    on, the ``after_header`` lines after it (the units row) skipped."""
    convert = pacsv.ConvertOptions(include_columns=columns, column_types={c: pa.string() for c in columns},
                                   strings_can_be_null=True, null_values=[""], quoted_strings_can_be_null=True)
    parse = pacsv.ParseOptions(newlines_in_values=True)
    # Arrow parses the blocks on a pool of threads. With two cores the file's digest is taken on the second
    # (Loading), and a second parsing thread only contends with it: more CPU and memory, no sooner done.
    threads = process.cores() > 2
    for block in (_BLOCK, MAX_ROW_BYTES):
        try:
            with path.open("rb") as fh:
                fh.seek(offset)
                return pacsv.read_csv(fh, read_options=pacsv.ReadOptions(block_size=block, skip_rows_after_names=after_header, use_threads=threads),
                                      parse_options=parse, convert_options=convert)
        except pa.ArrowException as exc:
            message = (str(exc).splitlines() or [type(exc).__name__])[0]
            if "straddl" in message and block != MAX_ROW_BYTES:
                continue
            counts = _FIELDS.search(message)
            if counts and int(counts.group(2)) > int(counts.group(1)):
                raise InputError(f"{path}: the rows have more fields than the header; export it again from the .ncu-rep") from None
            if counts:
                # A short last row is a file cut short; a short row inside it, damage.
                _check_last_row(path, fields)
                raise InputError(f"{path}: a row has {counts.group(2)} fields where the header has {counts.group(1)}; "
                                 "export it again from the .ncu-rep") from None
            if _quotes_open(path):
                raise InputError(f"{path}: the CSV is truncated (it ends inside a quoted field); export it again from the .ncu-rep") from None
            if "straddl" in message:
                message = f"a row longer than {MAX_ROW_BYTES >> 20} MiB"
            raise InputError(f"{path}: unreadable CSV ({message}); export it again with 'ncu --import REPORT --csv --page raw'") from None
    raise AssertionError("unreachable")


def _units_row(path: Path, offset: int, header: list[str]) -> tuple[dict[str, str] | None, int]:
    """The units row (the first line after the header that is not blank, with an empty ID) by
    column, or None when the export has none; and its line number counted from the header. A units
    row is one line: unit names hold no quotes or newlines."""
    with path.open("rb") as fh:
        fh.seek(offset)
        fh.readline(MAX_ROW_BYTES)
        line, number = "", 1
        for number in range(1, 1000):
            line = fh.readline(MAX_ROW_BYTES).decode("utf-8", "replace")
            if line.strip("\r\n") or not line:
                break
    if line.count('"') % 2 or not line.startswith(('"",', ',')):
        return None, number
    try:
        fields = next(csv.reader([line]))
    except (csv.Error, StopIteration):
        return None, number
    if len(fields) > len(header):
        raise InputError(f"{path}: the rows have more fields than the header; export it again from the .ncu-rep")
    return dict(zip(header, fields + [""] * (len(header) - len(fields)))), number


def _skip(offset: int, path: Path) -> int:
    """Lines before the header, for read_csv's skiprows."""
    if offset == 0:
        return 0
    with path.open("rb") as fh:
        return fh.read(offset).count(b"\n")


def _source(path: Path, kind: str, table: LaunchTable) -> Source:
    device = table.first("device__attribute_display_name") if "device__attribute_display_name" in table else None
    cc = table.first("cc")
    return Source(path=str(path), kind=kind, device=str(device) if device is not None else None,
                  compute_capability=str(cc) if cc is not None else None)


def _details_key(section: str, label: str) -> str:
    # Metrics given with --metrics appear under their own names in this section.
    if section == "Command line profiler metrics":
        return label
    return DETAILS_LABELS.get((section, label), f"details::{section}::{label}")


# Launches x distinct metrics of a details page (a real one: ~200 metrics per launch); past this
# the dense table would not fit in memory (10,000 launches each with a label of its own: 100 million).
MAX_DETAILS_CELLS = 50_000_000


def _read_details(path: Path, offset: int) -> Profile:
    import pandas as pd

    try:
        long = pd.read_csv(path, dtype=str, keep_default_na=False, skiprows=_skip(offset, path), engine="c")
    except (pd.errors.ParserError, UnicodeDecodeError, ValueError) as exc:
        raise InputError(f"{path}: unreadable CSV ({str(exc).splitlines()[0]}); export it again with 'ncu --import REPORT --csv --page details'") from None
    _check_aligned(path, long)
    # Metric rows stop after "Metric Value" (rule columns are left out), so that is the minimum.
    _check_complete(path, long, list(long.columns).index("Metric Value") + 1)
    metrics = long[long["Metric Name"] != ""]
    _check_field_sizes(path, _lengths(metrics, list(_DETAILS_COLUMNS)), list(_DETAILS_COLUMNS))
    keys = [_details_key(section, label) for section, label in zip(metrics["Section Name"], metrics["Metric Name"])]
    numbers = (_numeric(metrics["Metric Value"]) * [scale_to_base(u) for u in metrics["Metric Unit"]]).to_numpy(dtype=float)
    text = metrics["Metric Value"].to_numpy(dtype=object)
    first = long.drop_duplicates("ID").set_index("ID")
    tidy = pd.DataFrame({"ID": metrics["ID"].to_numpy(dtype=object), "key": keys, "number": numbers, "text": text})
    tidy = tidy.drop_duplicates(["ID", "key"])
    distinct = tidy["key"].nunique()
    if len(first) * distinct > MAX_DETAILS_CELLS:
        raise InputError(f"{path}: {len(first):,} launches x {distinct:,} distinct metrics is more than a details page holds; "
                         "export the report with 'ncu --import REPORT --csv --page raw'")
    # One pivot for every metric; a metric with a value that is not a number (a device name, a cache
    # configuration) keeps its values as they are, numbers among them as numbers.
    wide = tidy.pivot(index="ID", columns="key", values="number").reindex(first.index)
    textual = tidy.loc[tidy["number"].isna() & (tidy["text"] != ""), "key"].unique()
    if len(textual):
        mixed = tidy[tidy["key"].isin(textual)]
        mixed = mixed.assign(value=mixed["number"].astype(object).where(mixed["number"].notna(), mixed["text"].where(mixed["text"] != "")))
        # Numbers and texts as two blocks (text columns last): pandas works column by column on
        # interleaved types (docs/scale.md, figures behind the code), and a page can have 100,000 of them.
        texts = mixed.pivot(index="ID", columns="key", values="value").reindex(index=first.index, columns=textual)
        wide = pd.concat([wide.drop(columns=textual), texts], axis=1)
    launches = first.reset_index()
    present = [c for c in _LAUNCH_COLUMNS if c in launches]
    _check_field_sizes(path, _lengths(launches, present), present)
    out = pd.concat([_launch_meta(path, launches), wide.reset_index(drop=True)], axis=1)
    out = out.sort_values("launch_id", kind="stable").reset_index(drop=True)
    units = {_details_key(s, m): u for s, m, u in zip(metrics["Section Name"], metrics["Metric Name"], metrics["Metric Unit"])}
    return Profile(source=_source(path, "ncu-csv-details", FrameTable(out)), frame=out, units=units, rules=details_rules(long))


_RULE_COLUMNS = ("Rule Name", "Rule Type", "Rule Description", "Estimated Speedup Type", "Estimated Speedup")


def details_rules(long: pd.DataFrame) -> dict[int, tuple[RuleResult, ...]]:
    """Nsight Compute's rule results from a details page: one row per (launch, rule message)."""
    import pandas as pd

    if not all(c in long for c in _RULE_COLUMNS):
        return {}
    rows = long[(long["Rule Name"] != "") & (long["Rule Description"] != "")]
    out: dict[int, list[RuleResult]] = {}
    speedups = pd.to_numeric(rows["Estimated Speedup"], errors="coerce")
    for launch, section, rule, kind, text, stype, speedup in zip(rows["ID"], rows["Section Name"], rows["Rule Name"], rows["Rule Type"],
                                                                 rows["Rule Description"], rows["Estimated Speedup Type"], speedups):
        key = pd.to_numeric(launch, errors="coerce")
        if pd.isna(key):
            continue
        out.setdefault(int(key), []).append(RuleResult(
            rule=rule, section=section, kind=kind or "NONE", speedup_type=stype or None,
            estimated_speedup=None if pd.isna(speedup) else float(speedup), message=" ".join(text.split())))
    return {k: tuple(v) for k, v in out.items()}
