"""``ncuwrap diagnose`` of a real .ncu-rep against Nsight Compute's own export of it (issue 23).

Both sides are whole processes, interleaved (ncuwrap, ncu, ncuwrap, ...), medians of --repeat:
- ncuwrap: ``python -m ncuwrap diagnose REPORT --format json -o OUT --force``;
- the yardstick: ``ncu --import REPORT --page details --csv`` (its text to a file).
Then, in fresh processes, where ncuwrap's time goes: importing, reading the report (NVIDIA's
``ncu_report`` in a forked child, only the metrics the rules read, or ``--all-metrics``), deciding, and
writing the JSON. ``--tree DIR`` times another source tree (a ``git archive`` of an older commit) too.

    python benchmarks/ncurep_speed.py REPORT.ncu-rep --repeat 5 --json out.json [--tree /tmp/old]
    python benchmarks/ncurep_speed.py REPORT.ncu-rep --parts 1 2 4 8 --repeat 3   # the read by k children
    python benchmarks/ncurep_speed.py REPORT.ncu-rep --critical --repeat 3        # which side waits
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

PHASES = """
import sys, time
t0 = time.perf_counter()
from ncuwrap.kernel import reading as ingest
try:
    from ncuwrap.kernel import diagnosis as kernel_diagnosis
except ImportError:  # a tree from before the rename (--tree)
    from ncuwrap import engine as kernel_diagnosis
from ncuwrap import ruleset as R
from ncuwrap.render import jsonfmt
t1 = time.perf_counter()
rules = R.load(None)
metrics = None if sys.argv[2] == "all" else kernel_diagnosis.needed_metrics(rules)
profile = ingest.load(sys.argv[1], metrics=metrics)
t2 = time.perf_counter()
diagnosis = kernel_diagnosis.diagnose_profile(profile, rules)
t3 = time.perf_counter()
text = jsonfmt.render(diagnosis)
t4 = time.perf_counter()
print(t1 - t0, t2 - t1, t3 - t2, t4 - t3, len(profile.frame), len(profile.frame.columns))
"""

# Inside the reader (in process, no fork): NVIDIA's loading, then per launch the metric names, the
# metric values the rules read, Nsight Compute's rule results and the per-instruction counters.
READER = """
import sys, time
t = {}
s = time.perf_counter()
try:
    from ncuwrap.kernel import diagnosis as kernel_diagnosis
except ImportError:  # a tree from before the rename (--tree)
    from ncuwrap import engine as kernel_diagnosis
from ncuwrap import ruleset as R
from ncuwrap.kernel.reading import ncu_rep_reader, source_counters
from ncuwrap.core.kernel_names import function_name
wanted = frozenset(kernel_diagnosis.needed_metrics(R.load(None))) | ncu_rep_reader.LAUNCH_METRICS
module = ncu_rep_reader.load_module()
t["import ncu_report"] = time.perf_counter() - s
s = time.perf_counter(); context = module.load_report(sys.argv[1]); t["load_report"] = time.perf_counter() - s
for k in ("names", "values", "rule_results", "source_counters"):
    t[k] = 0.0
cache = {}
for r in range(context.num_ranges()):
    rng = context.range_by_idx(r)
    for a in range(rng.num_actions()):
        action = rng.action_by_idx(a)
        s = time.perf_counter(); names = [n for n in action.metric_names() if n in wanted]; t["names"] += time.perf_counter() - s
        s = time.perf_counter()
        for n in names:
            m = action.metric_by_name(n)
            m.has_value() and m.as_double()
        t["values"] += time.perf_counter() - s
        s = time.perf_counter(); ncu_rep_reader._rule_results(action); t["rule_results"] += time.perf_counter() - s
        s = time.perf_counter(); source_counters.from_action(action, function_name(action.name()), cache); t["source_counters"] += time.perf_counter() - s
print(" ".join(f"{k}={v:.3f}" for k, v in t.items()))
"""


# The read alone by k children (ncu_rep_reader.start(parts=k)), the parent's imports done first.
PARTS = """
import sys, time
from ncuwrap import ruleset as R
from ncuwrap.kernel import diagnosis as kernel_diagnosis
from ncuwrap.kernel.reading import ncu_rep_reader
import pandas  # noqa: F401
metrics = kernel_diagnosis.needed_metrics(R.load(None))
s = time.perf_counter(); ncu_rep_reader.start(ncu_rep_reader.Path(sys.argv[1]), metrics=metrics, parts=int(sys.argv[2])).result()
print(time.perf_counter() - s)
"""

# The CLI in process, with timestamps (from the process's start) at the fork, the children's reading,
# and the parent's wait for their answer: which side is the critical path.
CRITICAL = """
import os, sys, tempfile, time
T0 = time.perf_counter()
from ncuwrap.kernel.reading import ncu_rep_reader
marks, done = {}, tempfile.mkdtemp()
collect, child_init, result = ncu_rep_reader._collect, ncu_rep_reader._Child.__init__, ncu_rep_reader.Reading.result
def timed_collect(*a, **k):
    s = time.perf_counter(); out = collect(*a, **k)
    with open(f"{done}/{os.getpid()}", "w") as fh:
        fh.write(f"{s - T0} {time.perf_counter() - T0}")
    return out
def timed_init(self, *a, **k):
    marks.setdefault("fork", time.perf_counter() - T0); child_init(self, *a, **k)
def timed_result(self):
    marks["wait"] = time.perf_counter() - T0; out = result(self); marks["got"] = time.perf_counter() - T0; return out
ncu_rep_reader._collect, ncu_rep_reader._Child.__init__, ncu_rep_reader.Reading.result = timed_collect, timed_init, timed_result
sys.argv = ["ncuwrap", "diagnose", sys.argv[1], "--format", "json", "-o", f"{done}/out.json", "--force"]
from ncuwrap.cli import main
try:
    main()
except SystemExit:
    pass
reads = [tuple(map(float, open(f"{done}/{f}").read().split())) for f in os.listdir(done) if f != "out.json"]
print(marks["fork"], min(r[0] for r in reads), max(r[1] for r in reads), marks["wait"], marks["got"], time.perf_counter() - T0)
"""


def _snippet(code: str, *args: str) -> list[float]:
    env = {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    done = subprocess.run([sys.executable, "-c", code, *args], cwd=ROOT, env=env, capture_output=True, text=True)
    if done.returncode:
        raise SystemExit(f"snippet failed: {done.stderr.strip()[-400:]}")
    return [float(v) for v in done.stdout.split()]


def _timed(argv: list[str], cwd: Path, out: Path | None = None) -> float:
    env = {**os.environ, "PYTHONPATH": f"{cwd}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    t = time.perf_counter()
    with open(out or os.devnull, "w") as sink:
        done = subprocess.run(argv, cwd=cwd, env=env, stdout=sink, stderr=subprocess.PIPE, text=True)
    seconds = time.perf_counter() - t
    if done.returncode:
        raise SystemExit(f"{argv[:3]} failed: {done.stderr.strip()[-400:]}")
    return seconds


def _phases(tree: Path, report: Path, which: str) -> list[float]:
    env = {**os.environ, "PYTHONPATH": f"{tree}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    done = subprocess.run([sys.executable, "-c", PHASES, str(report), which], cwd=tree, env=env, capture_output=True, text=True)
    if done.returncode:
        raise SystemExit(f"phases failed: {done.stderr.strip()[-400:]}")
    return [float(v) for v in done.stdout.split()]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("report", type=Path)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--ncu", default=shutil.which("ncu") or "ncu")
    parser.add_argument("--tree", type=Path, help="also time this source tree (an older commit's archive)")
    parser.add_argument("--json", type=Path)
    parser.add_argument("--reader", action="store_true", help="only time the reader's steps, in process")
    parser.add_argument("--parts", type=int, nargs="+", help="only time the read by this many children, each")
    parser.add_argument("--critical", action="store_true", help="only say when the fork, the children's read and the parent's wait happen")
    args = parser.parse_args()
    report = args.report.resolve()
    if args.parts:
        times = {k: [] for k in args.parts}
        for _ in range(args.repeat):
            for k in args.parts:
                times[k].append(_snippet(PARTS, str(report), str(k))[0])
        print(json.dumps({f"{k} children": {"median_s": statistics.median(v), "samples": v} for k, v in times.items()}, indent=2))
        return
    if args.critical:
        for _ in range(args.repeat):
            fork, start, end, wait, got, total = _snippet(CRITICAL, str(report))
            print(f"forked at {fork:.3f} s; children read {start:.3f}-{end:.3f} s; the parent waits from {wait:.3f} s, "
                  f"has the launches at {got:.3f} s, done at {total:.3f} s")
        return
    if args.reader:
        for _ in range(args.repeat):
            done = subprocess.run([sys.executable, "-c", READER, str(report)], cwd=ROOT, capture_output=True, text=True,
                                  env={**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"})
            print(done.stdout.strip() or done.stderr.strip()[-400:])
        return
    trees = {"ncuwrap": ROOT, **({"tree": args.tree.resolve()} if args.tree else {})}
    samples: dict[str, list[float]] = {name: [] for name in [*trees, "ncu"]}
    with tempfile.TemporaryDirectory(prefix="ncuwrap-ncurep-") as tmp:
        for _ in range(args.repeat):
            for name, tree in trees.items():
                samples[name].append(_timed([sys.executable, "-m", "ncuwrap", "diagnose", str(report), "--format", "json",
                                             "-o", f"{tmp}/{name}.json", "--force"], tree))
            samples["ncu"].append(_timed([args.ncu, "--import", str(report), "--page", "details", "--csv"], ROOT, Path(tmp) / "ncu.csv"))
        phases = {f"{name} {which}": [_phases(tree, report, which) for _ in range(args.repeat)]
                  for name, tree in trees.items() for which in ("rules", "all")}
    result = {"report": str(args.report), "cores": os.cpu_count(),
              **{f"{k}_s": statistics.median(v) for k, v in samples.items()}, "samples": samples,
              "phases": {k: {"imports_s": statistics.median(p[0] for p in v), "read_s": statistics.median(p[1] for p in v),
                             "decide_s": statistics.median(p[2] for p in v), "json_s": statistics.median(p[3] for p in v),
                             "launches": v[0][4], "columns": v[0][5]}
                         for k, v in phases.items()}}
    result["ratio"] = result["ncuwrap_s"] / result["ncu_s"]
    print(json.dumps(result, indent=2))
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
