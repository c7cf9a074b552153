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
    """Byte offset of the header line: ncu's own "==PROF==" lines or program output may precede it."""
    offset = 0
    with path.open("rb") as fh:
        for _ in range(10_000):
            line = fh.readline()
            if not line:
                break
            if line.startswith(b'"ID",'):
                return offset
            offset += len(line)
    raise InputError(
        f"{path}: not an Nsight Compute CSV export (no '\"ID\",' header line); "
        "export one with 'ncu --import REPORT --csv --page raw > FILE.csv'"
    )


def _numeric(column: pd.Series) -> pd.Series:
    """Parse ncu's number formatting ("424,019", "no data", "n/a") into floats; NaN where not a number."""
    text = column.str.replace(",", "", regex=False)
    return pd.to_numeric(text, errors="coerce")


def _convert(frame: pd.DataFrame, columns: list[str], units: dict[str, str]) -> pd.DataFrame:
    """Metric columns to floats in base units; a column with no numbers at all stays text.

    Done on the whole block at once: per-column pandas calls cost ~1 ms each and a full-set export
    has over 2,000 columns.
    """
    if not columns:
        return pd.DataFrame(index=frame.index)
    text = frame[columns].to_numpy(dtype=str)
    flat = pd.Series(np.char.replace(text, ",", "").ravel())
    numbers = pd.to_numeric(flat, errors="coerce").to_numpy(dtype=float, copy=True).reshape(text.shape)
    factors = np.array([scale_to_base(units.get(c, "")) for c in columns])
    numbers *= factors
    out = pd.DataFrame(numbers, columns=columns, index=frame.index)
    # Text metrics (device names, cache configs): keep the strings where no cell parsed as a number.
    textual = np.isnan(numbers).all(axis=0) & (np.char.str_len(text) > 0).any(axis=0)
    for i in np.flatnonzero(textual):
        column = columns[i]
        out[column] = frame[column].where(frame[column] != "", None)
    return out


def _check_complete(path: Path, frame: pd.DataFrame, min_fields: int) -> None:
    if frame.empty:
        raise InputError(f"{path}: the CSV holds no profiled kernel; export a report that has launches in it")
    # A file cut short at a field boundary parses, with the last row short of fields: check it.
    with path.open("rb") as fh:
        fh.seek(max(0, path.stat().st_size - (8 << 20)))
        tail = fh.read().decode("utf-8", "replace").rstrip("\r\n")
    last = tail.rsplit("\n", 1)[-1]
    if len(next(csv.reader(io.StringIO(last)), [])) < min_fields:
        raise InputError(f"{path}: the CSV is truncated (last row incomplete); export it again from the .ncu-rep")


def _launch_meta(frame: pd.DataFrame) -> pd.DataFrame:
    meta = pd.DataFrame(index=frame.index)
    for column, name in _LAUNCH_COLUMNS.items():
        meta[name] = frame[column] if column in frame else None
    meta["launch_id"] = pd.to_numeric(meta["launch_id"], errors="coerce").astype("Int64")
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
        header_line = fh.readline().decode("utf-8", "replace")
    header = next(csv.reader(io.StringIO(header_line)))
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
    try:
        frame = pd.read_csv(path, dtype=str, keep_default_na=False, na_values=[], skiprows=_skip(offset, path),
                            usecols=wanted, engine="c", low_memory=False)
    except (pd.errors.ParserError, UnicodeDecodeError, ValueError) as exc:
        raise InputError(f"{path}: unreadable CSV ({str(exc).splitlines()[0]}); export it again with 'ncu --import REPORT --csv --page raw'") from None
    units: dict[str, str] = {}
    if len(frame) and frame.iloc[0].get("ID", "x") == "":
        unit_row = frame.iloc[0]
        units = {c: unit_row[c] for c in metric_columns}
        frame = frame.iloc[1:].reset_index(drop=True)
    _check_complete(path, frame, len(header))
    metrics = _convert(frame, metric_columns, units)
    out = pd.concat([_launch_meta(frame), metrics], axis=1)
    return Profile(source=_source(path, "ncu-csv-raw", out), frame=out, units=units)


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


def _read_details(path: Path, offset: int) -> Profile:
    try:
        long = pd.read_csv(path, dtype=str, keep_default_na=False, skiprows=_skip(offset, path), engine="c")
    except (pd.errors.ParserError, UnicodeDecodeError, ValueError) as exc:
        raise InputError(f"{path}: unreadable CSV ({str(exc).splitlines()[0]}); export it again with 'ncu --import REPORT --csv --page details'") from None
    # Metric rows stop after "Metric Value" (rule columns are left out), so that is the minimum.
    _check_complete(path, long, list(long.columns).index("Metric Value") + 1)
    metrics = long[long["Metric Name"] != ""]
    keys = [_details_key(section, label) for section, label in zip(metrics["Section Name"], metrics["Metric Name"])]
    values = _numeric(metrics["Metric Value"]) * [scale_to_base(u) for u in metrics["Metric Unit"]]
    values = values.where(values.notna(), metrics["Metric Value"].where(metrics["Metric Value"] != "", np.nan))
    tidy = pd.DataFrame({"ID": metrics["ID"].values, "key": keys, "value": values.values})
    wide = tidy.drop_duplicates(["ID", "key"]).pivot(index="ID", columns="key", values="value")
    first = long.drop_duplicates("ID").set_index("ID")
    wide = wide.reindex(first.index)
    for col in wide.columns:
        wide[col] = _maybe_float(wide[col])
    launches = first.reset_index()
    out = pd.concat([_launch_meta(launches), wide.reset_index(drop=True)], axis=1)
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


def _maybe_float(column: pd.Series) -> pd.Series:
    numbers = pd.to_numeric(column, errors="coerce")
    return numbers if numbers.notna().sum() == column.notna().sum() else column
