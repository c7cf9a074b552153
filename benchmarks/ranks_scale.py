"""Scale benchmark of ``ncuwrap timeline --ranks``: 64 rank captures analysed with 1 and 2 Dask workers.

SYNTHETIC SCALE DATA: the 64 "ranks" are copies of three real single-GPU H200 captures
(tests/data/h200/nsys/bench.sqlite, transpose.sqlite and tests/data/h200_ncuwrap/top/timeline.sqlite.gz,
a PyTorch training step), cycled and renamed rank0.sqlite ... rank63.sqlite. They are not one run
(different programs, no NCCL kernel), so they are analysed with --allow-mixed; the figures measure
only how reading and analysing N captures scales with the workers.

Each setting runs in a fresh Python process (the Dask LocalCluster is started inside the timing:
that is what a user waits for). Usage:
    python benchmarks/ranks_scale.py [--ranks 64] [--workers 0 1 2] [--repeat 3] [--json out.json]
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SOURCES = [ROOT / "tests/data/h200/nsys/bench.sqlite", ROOT / "tests/data/h200/nsys/transpose.sqlite",
           ROOT / "tests/data/h200_ncuwrap/top/timeline.sqlite.gz"]

RUN = """
import sys, time
t = time.perf_counter()
from ncuwrap.timeline.ranks.diagnosis import diagnose_ranks
d = diagnose_ranks(sys.argv[1], workers=int(sys.argv[2]), allow_mixed=True)
print(time.perf_counter() - t, len(d.ranks), d.bound, d.workers)
"""


def make_ranks(folder: Path, n: int) -> Path:
    """``n`` rank captures: the sources cycled, each copy renamed rank<i>.sqlite."""
    plain = []
    for source in SOURCES:
        if source.name.endswith(".gz"):
            target = folder / "_sources" / source.name[: -len(".gz")]
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(gzip.decompress(source.read_bytes()))
            plain.append(target)
        else:
            plain.append(source)
    ranks = folder / "ranks"
    ranks.mkdir(parents=True)
    for i in range(n):
        shutil.copyfile(plain[i % len(plain)], ranks / f"rank{i}.sqlite")
    return ranks


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ranks", type=int, default=64)
    parser.add_argument("--workers", type=int, nargs="+", default=[0, 1, 2], help="0: no Dask, one capture after the other")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    env = {**os.environ, "PYTHONPATH": str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", "")}
    results = []
    with tempfile.TemporaryDirectory(prefix="ncuwrap-ranks-") as tmp:
        folder = make_ranks(Path(tmp), args.ranks)
        size = sum(p.stat().st_size for p in folder.iterdir())
        print(f"SYNTHETIC SCALE DATA: {args.ranks} rank captures ({size / 2**20:.0f} MiB) copied from {', '.join(s.name for s in SOURCES)}; "
              f"{os.cpu_count()} CPU cores")
        for workers in args.workers:
            times = []
            for _ in range(args.repeat):
                out = subprocess.run([sys.executable, "-c", RUN, str(folder), str(workers)], capture_output=True, text=True, env=env, check=True)
                seconds, n, bound, how = out.stdout.split(maxsplit=3)
                times.append(float(seconds))
            row = {"workers": workers, "analysed_on": how.strip(), "ranks": int(n), "median_s": round(statistics.median(times), 2),
                   "runs_s": [round(t, 2) for t in times]}
            results.append(row)
            print(f"workers={workers}: median {row['median_s']:.2f} s of {args.repeat} runs {row['runs_s']} ({row['analysed_on']})")
    if args.json:
        args.json.write_text(json.dumps({"synthetic_scale_data": True, "cores": os.cpu_count(), "results": results}, indent=2) + "\n")


if __name__ == "__main__":
    main()
