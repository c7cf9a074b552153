"""Rebuild the broken timeline inputs in this folder from the real H200 capture (bench.sqlite).

Run from the repository root: python tests/data/timeline_bad/make_fixtures.py
"""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

HERE = Path(__file__).resolve().parent
BENCH = HERE.parent / "h200" / "nsys" / "bench.sqlite"
# What a diagnosis reads, plus the export's metadata; everything else is dropped to keep the files small.
KEEP = {"StringIds", "CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_RUNTIME",
        "ENUM_CUDA_MEMCPY_OPER", "ENUM_CUDA_MEM_KIND", "META_DATA_EXPORT", "TARGET_INFO_GPU"}


def reduced(target: Path, drop: set[str]) -> None:
    shutil.copyfile(BENCH, target)
    db = sqlite3.connect(target)
    tables = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
    for table in tables:
        if table not in KEEP or table in drop:
            db.execute(f'DROP TABLE "{table}"')
    db.commit()
    db.execute("VACUUM")
    db.close()


def main() -> None:
    # A capture without kernels (nsys writes no table for an activity that never happened).
    reduced(HERE / "no_kernels.sqlite", {"CUPTI_ACTIVITY_KIND_KERNEL"})
    # The CUDA API not traced and the enum tables of an older export missing: still diagnosed, with
    # the rules that need the API or the copies' memory kinds reported as not evaluated.
    reduced(HERE / "no_api.sqlite", {"CUPTI_ACTIVITY_KIND_RUNTIME", "ENUM_CUDA_MEM_KIND", "ENUM_CUDA_MEMCPY_OPER"})
    # Cut short: the first 16 KiB of bench.sqlite.
    (HERE / "truncated.sqlite").write_bytes(BENCH.read_bytes()[:16384])
    # Not SQLite at all, whatever the name says.
    (HERE / "not_sqlite.sqlite").write_text("time,kernel\n1,add\n", encoding="utf-8")
    # What nsys leaves when its importer (QdstrmImporter) cannot run: a raw stream, never a report.
    (HERE / "capture.qdstrm").write_bytes(b"QDSTRM placeholder: ncuwrap only reads the suffix of a .qdstrm\n")


if __name__ == "__main__":
    main()
