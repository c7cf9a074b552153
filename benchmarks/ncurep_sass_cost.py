"""Where the read of a .ncu-rep with SourceCounters goes, launch by launch, in one process (issue 41): the
metric names, the per-instruction counters, each PC's source line, and the SASS: the first SASS asked of a
launch's function apart from the 15 after it, which tells whether NVIDIA's disassembler starts once per
process or once per function (what making the SASS lazy has to save).

    python benchmarks/ncurep_sass_cost.py REPORT.ncu-rep [--launches 12] [--ncu PATH]

Prints one row per launch and the totals; run it on the GPU host with a real report (benchmarks/device/
speed_issue41.sh does).
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from ncuwrap.kernel.reading.ncu_rep_reader import load_module  # noqa: E402
from ncuwrap.kernel.reading.source_counters import COUNTERS, _instances  # noqa: E402


def _rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("report", type=Path)
    parser.add_argument("--launches", type=int, default=12)
    parser.add_argument("--ncu", help="an Nsight Compute installation, for its ncu_report module")
    args = parser.parse_args()
    clock = time.perf_counter
    t = clock()
    module = load_module(args.ncu)
    imported = clock() - t
    t = clock()
    context = module.load_report(str(args.report))
    loaded = clock() - t
    print(f"import {imported:.3f} s; load_report {loaded:.3f} s; peak RSS {_rss_mib():.0f} MiB")
    print("| launch | function | names s | counters s | PCs | source_info s | first SASS s | next 15 SASS s | peak MiB |")
    print("|---:|---|---:|---:|---:|---:|---:|---:|---:|")
    totals = [0.0] * 5
    seen = 0
    for r in range(context.num_ranges()):
        rng = context.range_by_idx(r)
        for a in range(rng.num_actions()):
            if seen >= args.launches:
                break
            action = rng.action_by_idx(a)
            t = clock()
            names = set(action.metric_names())
            t_names = clock() - t
            metric = COUNTERS["inst_executed"][0]
            if metric not in names:
                continue
            t = clock()
            pcs = sorted(_instances(action.metric_by_name(metric)))
            t_counters = clock() - t
            t = clock()
            for pc in pcs:
                action.source_info(pc)
            t_lines = clock() - t
            t = clock()
            action.sass_by_pc(pcs[0]) if pcs else None
            t_first = clock() - t
            t = clock()
            for pc in pcs[1:16]:
                action.sass_by_pc(pc)
            t_next = clock() - t
            for i, v in enumerate((t_names, t_counters, t_lines, t_first, t_next)):
                totals[i] += v
            print(f"| {seen} | {str(action.name())[:40]} | {t_names:.3f} | {t_counters:.3f} | {len(pcs)} | {t_lines:.3f} | {t_first:.3f} | "
                  f"{t_next:.4f} | {_rss_mib():.0f} |")
            seen += 1
    print(f"totals over {seen} launches: names {totals[0]:.2f} s, counters {totals[1]:.2f} s, source_info {totals[2]:.2f} s, "
          f"first SASS {totals[3]:.2f} s, next SASS {totals[4]:.3f} s; peak RSS {_rss_mib():.0f} MiB")


if __name__ == "__main__":
    main()
