"""Parse only: a .ncu-rep's metrics read from its file format (ncuwrap.kernel.reading.ncu_rep_format, upb) against
NVIDIA's ncu_report reading the same metrics (issue 41, item 1).

Each side runs in a fresh process (imports included, as a diagnosis pays them), interleaved, ``--repeat``
times: CPU time (user + system, getrusage of the child) and its peak RSS (ru_maxrss). Both read every launch's
metric values (``--wanted all``) or only the ones a diagnosis reads (``--wanted rules``: the rules' metrics
and the launch's configuration), and the per-instruction metrics of SourceCounters by PC.

    python benchmarks/ncurep_parse_speed.py REPORT.ncu-rep [MORE ...] --repeat 5 [--wanted all|rules]
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _wanted(which: str):
    if which == "all":
        return None
    from ncuwrap import ruleset
    from ncuwrap.kernel.reading import ncu_rep_reader

    return frozenset(ruleset.load().raw_metrics()) | ncu_rep_reader.LAUNCH_METRICS


def side_file(path: Path, which: str) -> int:
    from ncuwrap.kernel.reading import ncu_rep_format, source_counters

    launches = ncu_rep_format.read(path, _wanted(which), source_counters.INSTANCED, source_counters.CODED)
    return sum(len(launch.metrics) for launch in launches)


def side_ncu_report(path: Path, which: str) -> int:
    import ncu_report

    from ncuwrap.kernel.reading import source_counters

    wanted = _wanted(which)
    context = ncu_report.load_report(str(path))
    values = 0
    for r in range(context.num_ranges()):
        rng = context.range_by_idx(r)
        for a in range(rng.num_actions()):
            action = rng.action_by_idx(a)
            names = action.metric_names()
            for name in (names if wanted is None else [n for n in names if n in wanted]):
                metric = action.metric_by_name(name)
                if metric is not None and metric.has_value():
                    values += 1
                    metric.as_string() if metric.kind() == metric.ValueKind_STRING else metric.as_double()
            for name in (source_counters.INSTANCED | source_counters.CODED) & set(names):
                _per_instruction(action.metric_by_name(name), coded=name in source_counters.CODED)
    return values


def _per_instruction(metric, coded: bool) -> dict:
    """PC -> value of a per-instruction metric, as NVIDIA's reader gives it (as_double, or value() of a coded one)."""
    ids = metric.correlation_ids()
    if ids is None:
        return {}
    return {int(ids.as_uint64(i)): metric.value(i) if coded else metric.as_double(i) for i in range(metric.num_instances())}


def child(side: str, path: Path, which: str) -> None:
    start = time.perf_counter()
    values = (side_file if side == "file" else side_ncu_report)(path, which)
    usage = resource.getrusage(resource.RUSAGE_SELF)
    print(json.dumps({"values": values, "wall_s": time.perf_counter() - start, "cpu_s": usage.ru_utime + usage.ru_stime,
                      "peak_mib": usage.ru_maxrss / 1024}))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("reports", nargs="*", type=Path)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--wanted", choices=("all", "rules"), default="all")
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child[0], Path(args.child[1]), args.wanted)
        return
    print("| report | MB | side | values | CPU s (median, range) | peak RSS MiB (median) |\n|---|---:|---|---:|---:|---:|")
    for report in args.reports:
        samples: dict[str, list[dict]] = {"file": [], "ncu_report": []}
        for _ in range(args.repeat):
            for side in samples:
                done = subprocess.run([sys.executable, __file__, "--wanted", args.wanted, "--child", side, str(report)],
                                      capture_output=True, text=True, check=True, cwd=ROOT)
                samples[side].append(json.loads(done.stdout))
        for side, rows in samples.items():
            cpu = [r["cpu_s"] for r in rows]
            print(f"| {report.name} | {report.stat().st_size / 1e6:.1f} | {side} | {rows[0]['values']} | "
                  f"{statistics.median(cpu):.2f} ({min(cpu):.2f}-{max(cpu):.2f}) | {statistics.median(r['peak_mib'] for r in rows):.0f} |")


if __name__ == "__main__":
    main()
