"""``ncuwrap diagnose -f json`` of a .ncu-rep against Nsight Compute's own import of it, side by side (issue 41).

Both sides are whole processes as a user runs them, interleaved (ncuwrap, ncu, ncuwrap, ...), each started
from a fresh launcher (benchmarks/process_tree.py): wall time, CPU time, and the peak memory of the process
tree, children included (ncuwrap reads a large report in forked children; ncu starts helpers).

- ncuwrap: ``python -m ncuwrap diagnose REPORT -f json -o OUT --force``;
- the yardstick: ``ncu --import REPORT --page details`` (stdout to a file; ``--csv`` adds ncu's --csv).

Targets (issue 41, a real ``--set full`` report with SourceCounters of 30 or more kernels): ncuwrap's time at
most 0.75x ncu's, its peak memory at most ncu's. ``--tree DIR`` times another source tree's ncuwrap in the
same interleave (a ``git archive`` of an older commit: before and after). Without ncu (``--ncu`` not found)
only ncuwrap is timed, and the table says so.

    python benchmarks/ncu_import_vs_diagnose.py REPORT.ncu-rep [MORE.ncu-rep] --repeat 5 [--tree /tmp/old] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

import process_tree as P

ROOT = Path(__file__).resolve().parent.parent
TIME_TARGET, MEMORY_TARGET = 0.75, 1.0


def ncuwrap_argv(report: Path, out: Path) -> list[str]:
    return [sys.executable, "-m", "ncuwrap", "diagnose", str(report), "-f", "json", "-o", str(out), "--force"]


def ncu_argv(ncu: str, report: Path, csv: bool) -> list[str]:
    return [ncu, "--import", str(report), "--page", "details", *(["--csv"] if csv else [])]


def side_by_side(report: Path, repeat: int, ncu: str | None, csv: bool, trees: dict[str, Path], folder: Path) -> dict:
    samples: dict[str, list[dict]] = {name: [] for name in [*trees, *(["ncu"] if ncu else [])]}
    launches = None
    for _ in range(repeat):
        for name, tree in trees.items():
            out = folder / f"{name}.json"
            samples[name].append(P.run(ncuwrap_argv(report, out), folder / f"{name}.stdout", env=P.with_pythonpath(tree), cwd=tree))
            launches = launches or len(json.loads(out.read_bytes())["kernels"])
        if ncu:
            samples["ncu"].append(P.run(ncu_argv(ncu, report, csv), folder / "ncu.stdout", cwd=ROOT))
    row = {"report": str(report), "megabytes": round(report.stat().st_size / 1e6, 1), "launches": launches,
           **{name: P.median_row(rows) for name, rows in samples.items()}}
    if ncu:
        for name in trees:
            row[name]["time_ratio"] = row[name]["wall_s"] / row["ncu"]["wall_s"]
            row[name]["memory_ratio"] = row[name]["peak_mib"] / row["ncu"]["peak_mib"]
            pairs = zip(samples[name], samples["ncu"])
            row[name]["pair_ratios"] = [round(a["wall_s"] / b["wall_s"], 3) for a, b in pairs]
    return row


def table(rows: list[dict], trees: dict[str, Path], ncu: str | None) -> str:
    lines = ["| report | side | wall s (median) | samples | CPU s | peak MiB (tree) | time / ncu | memory / ncu |",
             "|---|---|---:|---|---:|---:|---:|---:|"]
    for row in rows:
        label = f"{Path(row['report']).name} ({row['megabytes']} MB, {row['launches']} launches)"
        for name in [*trees, *(["ncu"] if ncu else [])]:
            side = row[name]
            ratios = (f"{side['time_ratio']:.2f} | {side['memory_ratio']:.2f}" if "time_ratio" in side else "|")
            lines.append(f"| {label} | {name} | {side['wall_s']:.2f} | {' '.join(f'{s:.2f}' for s in side['wall_samples'])} | "
                         f"{side['cpu_s']:.2f} | {side['peak_mib']:.0f} | {ratios} |")
    if ncu:
        lines.append(f"\ntargets: time / ncu <= {TIME_TARGET}, memory / ncu <= {MEMORY_TARGET}")
    else:
        lines.append("\nncu not found (--ncu): ncuwrap alone was timed; no ratio")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("reports", type=Path, nargs="+")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--ncu", default=shutil.which("ncu"), help="the ncu binary (default: ncu on PATH)")
    parser.add_argument("--csv", action="store_true", help="ncu --import ... --page details --csv (default: its text page)")
    parser.add_argument("--tree", type=Path, help="also time this source tree's ncuwrap (an older commit's git archive)")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    ncu = args.ncu if args.ncu and shutil.which(args.ncu) else None
    trees = {"ncuwrap": ROOT, **({"tree": args.tree.resolve()} if args.tree else {})}
    with tempfile.TemporaryDirectory(prefix="ncuwrap-ncu-import-") as tmp:
        rows = [side_by_side(r.resolve(), args.repeat, ncu, args.csv, trees, Path(tmp)) for r in args.reports]
    print(table(rows, trees, ncu))
    result = {"cores": os.cpu_count(), "python": sys.version.split()[0], "ncu": ncu, "repeat": args.repeat, "rows": rows}
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
