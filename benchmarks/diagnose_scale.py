"""Scale benchmark: diagnose 10,000 kernels from one raw CSV, against pandas reading the same file.

The CSV is SYNTHETIC SCALE DATA: the real raw rows of the four H200 transpose reports
(tests/data/h200/transpose/*.raw.csv, full set: ~2,240 metric columns) repeated until there are
N launches, with launch IDs renumbered. Nothing in it was measured as such; it only exercises size.

Each measurement runs in a fresh Python process; wall time and peak RSS (ru_maxrss) are reported.
Usage: python benchmarks/diagnose_scale.py [--kernels 10000] [--keep] [--json out.json]
"""

from __future__ import annotations

import argparse
import csv
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SOURCES = [ROOT / "tests/data/h200/transpose" / f"{k}.raw.csv" for k in ("copyKernel", "transposeNaive", "transposeShared", "transposePadded")]

PANDAS_ALONE = """
import sys, resource, time, pandas as pd
t = time.perf_counter(); df = pd.read_csv(sys.argv[1], low_memory=False); t = time.perf_counter() - t
print(t, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, len(df))
"""
NCUWRAP = """
import sys, resource, time
from ncuwrap.engine import diagnose
from ncuwrap.render import Format, render
t = time.perf_counter(); d = diagnose(sys.argv[1]); text = render(d, Format.json); t = time.perf_counter() - t
print(t, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, len(d.kernels))
"""


def build_csv(path: Path, kernels: int) -> None:
    header = units = None
    rows = []
    for source in SOURCES:
        with source.open(newline="") as fh:
            reader = csv.reader(fh)
            h, u, *data = list(reader)
        if header is None:
            header, units = h, u
        assert h == header, f"{source}: columns differ"
        rows.extend(data)
    with path.open("w", newline="") as fh:
        writer = csv.writer(fh, quoting=csv.QUOTE_ALL)
        writer.writerow(header)
        writer.writerow(units)
        for i in range(kernels):
            row = list(rows[i % len(rows)])
            row[0] = str(i)
            writer.writerow(row)


def measure(script: str, path: Path) -> dict:
    out = subprocess.run([sys.executable, "-c", script, str(path)], capture_output=True, text=True, check=True, cwd=ROOT)
    seconds, rss_kb, rows = out.stdout.split()
    return {"seconds": round(float(seconds), 2), "peak_rss_mib": round(int(rss_kb) / 1024, 1), "rows": int(rows)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kernels", type=int, default=10_000)
    parser.add_argument("--keep", action="store_true", help="keep the generated CSV")
    parser.add_argument("--json", type=Path, help="write the figures here")
    args = parser.parse_args()
    workdir = Path(tempfile.mkdtemp(prefix="ncuwrap-scale-"))
    path = workdir / f"synthetic_{args.kernels}.raw.csv"
    t = time.perf_counter()
    build_csv(path, args.kernels)
    print(f"built {path} ({path.stat().st_size / 1e6:.0f} MB, {args.kernels} launches, synthetic) in {time.perf_counter() - t:.1f} s")
    pandas = measure(PANDAS_ALONE, path)
    print(f"pandas.read_csv alone : {pandas['seconds']:8.2f} s  peak RSS {pandas['peak_rss_mib']:8.1f} MiB")
    ours = measure(NCUWRAP, path)
    print(f"ncuwrap diagnose+json : {ours['seconds']:8.2f} s  peak RSS {ours['peak_rss_mib']:8.1f} MiB  ({ours['rows']} kernels)")
    ratio = ours["seconds"] / pandas["seconds"]
    print(f"ratio to pandas alone : {ratio:.2f} (target <= 2.0)")
    result = {"kernels": args.kernels, "csv_mb": round(path.stat().st_size / 1e6), "pandas": pandas, "ncuwrap": ours, "ratio": round(ratio, 3),
              "python": sys.version.split()[0], "synthetic": True}
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n")
    if not args.keep:
        path.unlink()
        workdir.rmdir()


if __name__ == "__main__":
    main()
