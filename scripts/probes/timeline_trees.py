"""One capture's ``ncuwrap.timeline`` through several source trees, interleaved: wall time, CPU time, page faults (issue 41).

Each sample is a fresh process importing ncuwrap from one tree (a ``git archive`` of a commit), its imports not
timed: ``ncuwrap.api.diagnose_timeline(CAPTURE[, steps=S])``. CPU time is user + system of the process and its waited-for
children (the capture is read in a forked child), from ``getrusage``: on a shared machine wall time follows the
load, CPU time much less. Peak memory is the larger of the process's and its children's ``ru_maxrss``.

    python scripts/probes/timeline_trees.py CAPTURE.sqlite "before=/tmp/8bf6c61" "start,marked=/tmp/e1e2b82" \\
        "this,marked=." "start,auto=/tmp/e1e2b82" "this,auto=." --repeat 5

A side is ``LABEL[,STEPS]=TREE``: STEPS (auto, marked, none) is passed as ``steps=``; a tree from before the
option is timed without it. The data is whatever CAPTURE is (``timeline_scale.py --steps-found --keep DIR``
builds the 1M-launch synthetic one).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

SAMPLE = """
import resource, sys, time
import ncuwrap.api, ncuwrap.timeline.verdict, ncuwrap.timeline.readers.nsys_sqlite, pyarrow
try:
    import adbc_driver_manager, adbc_driver_sqlite
except ImportError:
    pass

def usage():
    a, b = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return a.ru_utime + a.ru_stime + b.ru_utime + b.ru_stime, a.ru_stime + b.ru_stime, a.ru_minflt + b.ru_minflt

t, before = time.perf_counter(), usage()
run = getattr(ncuwrap.api, 'diagnose_timeline', None) or ncuwrap.api.timeline  # (a tree from before the API's verbs)
d = run(sys.argv[1], **({"steps": sys.argv[2]} if len(sys.argv) > 2 else {}))
wall, after = time.perf_counter() - t, usage()
peak = max(resource.getrusage(who).ru_maxrss for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)) * 1024
print(wall, after[0] - before[0], after[1] - before[1], after[2] - before[2], peak, d.bound)
"""


def side(spec: str) -> tuple[str, str | None, Path]:
    head, _, tree = spec.partition("=")
    label, _, steps = head.partition(",")
    return label + (f" ({steps})" if steps else ""), steps or None, Path(tree).resolve()


def sample(capture: Path, steps: str | None, tree: Path) -> dict:
    done = subprocess.run([sys.executable, "-c", SAMPLE, str(capture), *([steps] if steps else [])], capture_output=True, text=True,
                          cwd=tree, env={**os.environ, "PYTHONPATH": str(tree)})
    if done.returncode:
        raise SystemExit(f"{tree}: {done.stderr.strip()[-400:]}")
    wall, cpu, system, faults, peak, bound = done.stdout.split()
    return {"wall_s": float(wall), "cpu_s": float(cpu), "system_s": float(system), "minor_faults": int(faults), "peak_bytes": int(peak),
            "bound": bound}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("capture", type=Path)
    parser.add_argument("sides", nargs="+", help="LABEL[,STEPS]=TREE")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    sides = [side(s) for s in args.sides]
    samples: dict[str, list[dict]] = {label: [] for label, _, _ in sides}
    loads = []
    for _ in range(args.repeat):
        for label, steps, tree in sides:
            samples[label].append(sample(args.capture.resolve(), steps, tree))
        loads.append(os.getloadavg()[0])
    print(f"load average over the runs: {min(loads):.1f}-{max(loads):.1f} on {os.cpu_count()} CPUs")
    print("| side | wall s | samples | CPU s | of it system | minor faults | peak MiB | bound |")
    print("|---|---:|---|---:|---:|---:|---:|---|")
    for label, rows in samples.items():
        med = {k: statistics.median(r[k] for r in rows) for k in ("wall_s", "cpu_s", "system_s", "minor_faults")}
        walls = " ".join(f"{r['wall_s']:.2f}" for r in rows)
        print(f"| {label} | {med['wall_s']:.2f} | {walls} | {med['cpu_s']:.2f} | {med['system_s']:.2f} | "
              f"{med['minor_faults'] / 1e3:.0f}k | {max(r['peak_bytes'] for r in rows) / 2**20:.0f} | {rows[0]['bound']} |")
    if args.json:
        args.json.write_text(json.dumps({"capture": str(args.capture), "loads": loads, "samples": samples}, indent=2) + "\n")


if __name__ == "__main__":
    main()
