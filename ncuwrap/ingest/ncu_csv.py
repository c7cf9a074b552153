"""Read Nsight Compute CSV exports: ``--page raw`` (with or without ``--print-units base``) and
``--page details``.

Both pages start with the launch columns ("ID", "Kernel Name", "Block Size", ...). The raw page has
one column per metric and a second row of units; the details page has one row per (launch, metric)
with human labels, which are mapped back to metric names where ncuwrap knows them.
"""

from __future__ import annotations

import contextlib
import csv
import gzip
import io
import tempfile
import zlib
from collections import Counter
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd

from ncuwrap.errors import InputError
from ncuwrap.ingest.model import Profile, RuleResult, Source
from ncuwrap.ingest.names import function_name
from ncuwrap.units import scale_to_base

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


def _header_offset(path: Path) -> int:
    """Byte offset of the header line: ncu's own "==PROF==" lines or program output may precede it,
    and an editor may have put a UTF-8 byte order mark before it (pandas skips one)."""
    offset = 0
    with path.open("rb") as fh:
        for _ in range(10_000):
            line = fh.readline(MAX_ROW_BYTES)
            if not line:
                break
            if line.startswith(b'"ID",'):
                return offset
            if offset == 0 and line.startswith(_BOM + b'"ID",'):
                return len(_BOM)
            offset += len(line)
    raise InputError(
        f"{path}: not an Nsight Compute CSV export (no '\"ID\",' header line); "
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


def _lengths(frame: pd.DataFrame, columns: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """The cells of ``columns`` as one object array (no fixed-width copy: one 5 MB cell in a
    fixed-width array made every cell 20 MB) and their lengths (NaN where a row has no value)."""
    block = frame[columns].to_numpy(dtype=object)
    # The cells are texts or NaN (no value): a plain loop is several times faster than pandas' .str here.
    lengths = np.array([len(x) if isinstance(x, str) else np.nan for x in block.ravel().tolist()], dtype=float).reshape(block.shape)
    return block, lengths


def _numeric(column: pd.Series) -> pd.Series:
    """Parse ncu's number formatting ("424,019", "no data", "n/a") into floats; NaN where not a number."""
    text = column.str.replace(",", "", regex=False)
    return pd.to_numeric(text, errors="coerce")


def _convert(path: Path, frame: pd.DataFrame, columns: list[str], units: dict[str, str], as_text) -> pd.DataFrame:
    """Metric columns to floats in base units; a column with no numbers at all stays text.

    pandas' parser has turned the columns whose every cell is a number into numbers; the others
    (text, "n/a", numbers mixed with words) are converted here, all in one block: per-column pandas
    calls cost ~1 ms each and a full-set export has over 2,000 columns. ``as_text(columns)`` reads
    columns again as text: the parser makes booleans of "True"/"false" columns and their spelling
    would be lost.
    """
    if not columns:
        return pd.DataFrame(index=frame.index)
    numbers = np.empty((len(frame), len(columns)))
    text: list[int] = []
    for i, column in enumerate(columns):
        values = frame[column]
        if values.dtype.kind in "fiu":
            numbers[:, i] = values.to_numpy(dtype=float)
        else:
            text.append(i)
    names = [columns[i] for i in text]
    booleans = [c for c in names if frame[c].dtype.kind == "b"]
    cells = frame[names]
    if booleans:
        cells = cells.assign(**as_text(booleans).set_axis(frame.index)[booleans])
    parsed, textual = _convert_text(path, cells, names)
    if text:
        numbers[:, text] = parsed
    numbers *= np.array([scale_to_base(units.get(c, "")) for c in columns])
    numbers[np.isinf(numbers)] = np.nan  # "1e999" is no measurement
    out = pd.DataFrame(numbers, columns=columns, index=frame.index)
    # Text metrics (device names, cache configs): keep the strings where no cell parsed as a number.
    for column, values in textual.items():
        # As Python objects: metrics.MetricTable reads object columns as text (pandas' own "str" dtype it would not).
        out[column] = pd.Series(values, index=frame.index, dtype=object)
    return out


def _convert_text(path: Path, frame: pd.DataFrame, columns: list[str]) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """The numbers in text cells (ncu's "424,019"; NaN where a cell is no number), and the columns
    with no number at all but some text, as object arrays (None for an empty cell)."""
    if not columns:
        return np.empty((len(frame), 0)), {}
    block, lengths = _lengths(frame, columns)
    _check_field_sizes(path, lengths, columns)
    flat = pd.Series([x.replace(",", "") if isinstance(x, str) else x for x in block.ravel().tolist()], dtype=object)
    numbers = pd.to_numeric(flat, errors="coerce").to_numpy(dtype=float, copy=True).reshape(block.shape)
    textual = np.isnan(numbers).all(axis=0) & (lengths > 0).any(axis=0)
    out = {}
    for i in np.flatnonzero(textual):
        values = block[:, i].copy()
        values[~(lengths[:, i] > 0)] = None
        out[columns[i]] = values
    return numbers, out


def _check_aligned(path: Path, frame: pd.DataFrame) -> None:
    # pandas reads the extra leading fields of rows longer than the header as an index: every column shifts.
    if not isinstance(frame.index, pd.RangeIndex):
        raise InputError(f"{path}: the rows have more fields than the header; export it again from the .ncu-rep")


def _check_complete(path: Path, frame: pd.DataFrame, min_fields: int) -> None:
    if frame.empty:
        raise InputError(f"{path}: the CSV holds no profiled kernel; export a report that has launches in it")

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


# Launch IDs count launches from 0; past 2**53 they are not exact as floats (nor a real report).
MAX_LAUNCH_ID = 2**53


def _launch_meta(path: Path, frame: pd.DataFrame) -> pd.DataFrame:
    meta = pd.DataFrame(index=frame.index)
    for column, name in _LAUNCH_COLUMNS.items():
        meta[name] = frame[column] if column in frame else None
    present = [c for c in _LAUNCH_COLUMNS if c in frame]
    _check_field_sizes(path, _lengths(frame, present)[1], present)
    ids = pd.to_numeric(meta["launch_id"], errors="coerce").to_numpy(dtype=float)
    with np.errstate(invalid="ignore"):
        bad = ~((ids >= 0) & (ids < MAX_LAUNCH_ID) & (ids == np.floor(ids)))
    if bad.any():
        raw = str(frame["ID"].iat[int(np.argmax(bad))]) if "ID" in frame else ""
        raise InputError(f"{path}: launch ID {raw[:30]!r} is not a launch number (a whole number from 0 to 2**53); "
                         "export the report again from the .ncu-rep")
    meta["launch_id"] = pd.array(ids.astype(np.int64), dtype="Int64")
    meta["name"] = [function_name(s) for s in meta["display_name"]]
    meta["mangled_name"] = None
    return meta


# A gzipped export is unpacked to a temporary file first; more than this is refused (a bomb, or a
# report far beyond what one diagnosis should read: 10,000 full-set launches are ~1.7 GB).
GZIP_LIMIT = 4 << 30


def read(path: Path, usecols=None) -> Profile:
    """Read an ncu CSV export (raw or details page), plain or gzipped (``.csv.gz``).
    ``usecols``: metric names to keep (None: all)."""
    if path.name.lower().endswith(".gz"):
        with _gunzipped(path) as plain:
            profile = _read(plain, usecols)
        profile.source = replace(profile.source, path=str(path))
        return profile
    return _read(path, usecols)


@contextlib.contextmanager
def _gunzipped(path: Path):
    with tempfile.TemporaryDirectory(prefix="ncuwrap-") as tmp:
        plain = Path(tmp) / path.name[:-3]
        written = 0
        try:
            with gzip.open(path, "rb") as src, plain.open("wb") as dst:
                for chunk in iter(lambda: src.read(1 << 20), b""):
                    written += len(chunk)
                    if written > GZIP_LIMIT:
                        raise InputError(f"{path}: unpacks to more than {GZIP_LIMIT >> 30} GiB; unpack it yourself and pass the CSV")
                    dst.write(chunk)
        except (OSError, EOFError, zlib.error) as exc:
            raise InputError(f"{path}: not a readable gzip file ({exc}); pass the CSV export or gzip it again") from None
        yield plain


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
        # pandas would rename the second one, and which of the two holds the value is anyone's guess.
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
    skip = _skip(offset, path)
    # The units row is left out of the parse, so pandas' C parser turns the metric columns into
    # numbers itself; a column it cannot read as numbers comes back as text and is converted cell by
    # cell (_convert). ncu's thousands separators ("1,234.5") are among those: the parser's own
    # thousands option rounds some of them differently from reading the number without its commas.
    rows = list(range(skip)) + ([skip + line] if units_row is not None else [])
    frame = _read_csv(path, rows, header, wanted, metric_columns)
    _check_aligned(path, frame)
    units = {c: units_row[c] for c in metric_columns} if units_row is not None else {}
    _check_complete(path, frame, len(header))
    metrics = _convert(path, frame, metric_columns, units, lambda columns: _read_csv(path, rows, header, columns, (), text=True))
    out = pd.concat([_launch_meta(path, frame), metrics], axis=1)
    return Profile(source=_source(path, "ncu-csv-raw", out), frame=out, units=units)


def _read_csv(path: Path, skiprows: list[int], header: list[str], usecols, metric_columns, *, text: bool = False) -> pd.DataFrame:
    """The raw page's cells: launch columns as text; metric columns as numbers where every cell is
    one (an empty cell: NaN), else as text (``text``: every column as text, empty cells "")."""
    if text:
        options = dict(dtype=str, na_values=[])
    else:
        metrics = set(metric_columns)
        names = usecols if usecols is not None else header
        options = dict(dtype={c: str for c in names if c not in metrics}, na_values={c: [""] for c in metric_columns})
    try:
        return pd.read_csv(path, keep_default_na=False, skiprows=skiprows, usecols=usecols, engine="c", low_memory=False, **options)
    except (pd.errors.ParserError, UnicodeDecodeError, ValueError) as exc:
        raise InputError(f"{path}: unreadable CSV ({str(exc).splitlines()[0]}); export it again with 'ncu --import REPORT --csv --page raw'") from None


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


def _source(path: Path, kind: str, frame: pd.DataFrame) -> Source:
    device = None
    if "device__attribute_display_name" in frame:
        names = frame["device__attribute_display_name"].dropna()
        device = str(names.iloc[0]) if len(names) else None
    cc = frame["cc"].dropna()
    return Source(path=str(path), kind=kind, device=device, compute_capability=str(cc.iloc[0]) if len(cc) else None)


def _details_key(section: str, label: str) -> str:
    # Metrics given with --metrics appear under their own names in this section.
    if section == "Command line profiler metrics":
        return label
    return DETAILS_LABELS.get((section, label), f"details::{section}::{label}")


# Launches x distinct metrics of a details page (a real one: ~200 metrics per launch); past this
# the dense table would not fit in memory (10,000 launches each with a label of its own: 100 million).
MAX_DETAILS_CELLS = 50_000_000


def _read_details(path: Path, offset: int) -> Profile:
    try:
        long = pd.read_csv(path, dtype=str, keep_default_na=False, skiprows=_skip(offset, path), engine="c")
    except (pd.errors.ParserError, UnicodeDecodeError, ValueError) as exc:
        raise InputError(f"{path}: unreadable CSV ({str(exc).splitlines()[0]}); export it again with 'ncu --import REPORT --csv --page details'") from None
    _check_aligned(path, long)
    # Metric rows stop after "Metric Value" (rule columns are left out), so that is the minimum.
    _check_complete(path, long, list(long.columns).index("Metric Value") + 1)
    metrics = long[long["Metric Name"] != ""]
    _check_field_sizes(path, _lengths(metrics, list(_DETAILS_COLUMNS))[1], list(_DETAILS_COLUMNS))
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
        # interleaved types, ~0.1 ms per column, and a page can have 100,000 of them.
        texts = mixed.pivot(index="ID", columns="key", values="value").reindex(index=first.index, columns=textual)
        wide = pd.concat([wide.drop(columns=textual), texts], axis=1)
    launches = first.reset_index()
    out = pd.concat([_launch_meta(path, launches), wide.reset_index(drop=True)], axis=1)
    out = out.sort_values("launch_id", kind="stable").reset_index(drop=True)
    units = {_details_key(s, l): u for s, l, u in zip(metrics["Section Name"], metrics["Metric Name"], metrics["Metric Unit"])}
    return Profile(source=_source(path, "ncu-csv-details", out), frame=out, units=units, rules=details_rules(long))


_RULE_COLUMNS = ("Rule Name", "Rule Type", "Rule Description", "Estimated Speedup Type", "Estimated Speedup")


def details_rules(long: pd.DataFrame) -> dict[int, tuple[RuleResult, ...]]:
    """Nsight Compute's rule results from a details page: one row per (launch, rule message)."""
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
