"""Read any supported profile into a :class:`Profile` (one row per profiled launch).

>>> from ncuwrap.ingest import load
>>> profile = load("report.ncu-rep")          # or a CSV export of it
>>> profile.frame[["name", "gpu__time_duration.sum"]]
"""

from __future__ import annotations

import hashlib
from dataclasses import replace
from pathlib import Path

from ncuwrap.errors import InputError
from ncuwrap.ingest import ncu_csv, ncu_rep
from ncuwrap.ingest.model import META_COLUMNS, Profile, RuleResult, Source

__all__ = ["load", "kind_of", "rule_results", "Profile", "RuleResult", "Source", "META_COLUMNS"]

TIMELINE_SUFFIXES = (".nsys-rep", ".sqlite", ".qdstrm")


def kind_of(path: Path) -> str:
    """``ncu-rep``, ``ncu-csv`` or ``timeline``, from the suffix and, for .ncu-rep, the file header."""
    name = path.name.lower()
    if name.endswith(TIMELINE_SUFFIXES):
        return "timeline"
    if name.endswith((".csv", ".csv.gz")):
        return "ncu-csv"
    if name.endswith(".ncu-rep"):
        return "ncu-rep"
    with path.open("rb") as fh:
        if fh.read(4) == ncu_rep.MAGIC:
            return "ncu-rep"
    raise InputError(f"{path}: unknown file type; give a .ncu-rep, an ncu CSV export (.csv or .csv.gz), or an nsys .nsys-rep/.sqlite")


def check_file(path: Path, *, folder_fix: str = "give a report file (for a run folder, the .ncu-rep inside it)",
               empty_fix: str = "profile again or re-export the report") -> Path:
    """Refuse a missing path, a folder or an empty file, with what to do instead."""
    if not path.exists():
        raise InputError(f"{path}: no such file; check the path")
    if path.is_dir():
        raise InputError(f"{path}: is a folder; {folder_fix}")
    if path.stat().st_size == 0:
        raise InputError(f"{path}: the file is empty; {empty_fix}")
    return path


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def load(path: str | Path, *, ncu: str | None = None, metrics=None) -> Profile:
    """Load an Nsight Compute report or CSV export. ``metrics`` limits the columns read from a raw CSV."""
    path = check_file(Path(path))
    kind = kind_of(path)
    if kind == "ncu-rep":
        profile = ncu_rep.read(path, ncu=ncu)
    elif kind == "ncu-csv":
        profile = ncu_csv.read(path, usecols=metrics)
    else:
        raise InputError(f"{path}: an Nsight Systems timeline; diagnose it with 'ncuwrap diagnose' (timeline support) instead of as a kernel report")
    profile.source = replace(profile.source, sha256=sha256(path))
    return profile


def rule_results(path: str | Path, *, ncu: str | None = None) -> dict[int, tuple[RuleResult, ...]]:
    """Nsight Compute's own rule results per launch ID, from a .ncu-rep or a details-page CSV (what
    ``diagnose --ncu-rules`` puts beside the findings of a raw-page export of the same report)."""
    path = check_file(Path(path))
    kind = kind_of(path)
    if kind == "ncu-rep":
        return ncu_rep.read(path, ncu=ncu).rules
    if kind == "ncu-csv":
        profile = ncu_csv.read(path, usecols=())
        if profile.source.kind != "ncu-csv-details":
            raise InputError(f"{path}: a raw-page export holds no rule results; export them with 'ncu --import REPORT --csv --page details'")
        return profile.rules
    raise InputError(f"{path}: not an Nsight Compute report; give the .ncu-rep or its '--page details' CSV export")
