"""Scale benchmark of ncuwrap on a PyTorch profiler (Kineto) trace, against HolisticTraceAnalysis (issue 37).

SYNTHETIC SCALE DATA: a real H200 torch.profiler trace (default: tests/data/h200_ncuwrap/kineto/gpu_train,
4 ProfilerSteps of a GPU-bound training loop recorded with ``with_stack`` and ``record_shapes``: 19,496
events, 6.1 MB of JSON) repeated until the JSON holds about ``--mb`` megabytes (default 100). Each copy's
events are shifted in time past the previous copy (a millisecond apart); its correlation ids, External ids,
Record function ids, Ev Idx, Sequence numbers, Python ids (and parent ids) and flow ids are renumbered so
that they stay unique, and ``ProfilerStep#N`` (CPU and GPU annotations) numbered on, so the steps, the
launches they match and the timeline's shape repeat. The metadata events (``"ph": "M"``) and the document's
top-level keys are kept once. Nothing in it was measured as such. Written as ``.json`` (``--gz``: also as
``.json.gz``, measured as well).

Measured side by side, each run a fresh process, interleaved (ncuwrap, HTA, ncuwrap, ...), medians of --repeat:
- ncuwrap: the whole ``python -m ncuwrap timeline FILE -f json`` as a user runs it (stdout to a file): wall
  time of the process, imports included; peak memory of the process tree (the trace is read in a forked
  child while the parent goes on, see ncuwrap/core/forked.py): the larger of the tree's summed RSS, sampled from
  /proc every 20 ms, and the largest single process's ``ru_maxrss`` (wait4);
- HTA: ``TraceAnalysis(trace_dir=DIR)`` on a folder holding only that trace (HTA takes ``*.json`` and
  ``*.gz`` files in the folder; with no ``distributedInfo`` it reads the trace as rank 0), timed in the
  process with HTA's imports left out (which favours HTA); the whole process's wall time beside it; peak
  memory measured as for ncuwrap. HTA runs in its own interpreter (``--hta-python``), so that it never
  enters the project's environment: HolisticTraceAnalysis is a benchmark-only yardstick.

Targets (issue 37): ncuwrap's whole ``timeline`` <= 0.25x HTA's load time and <= 0.5x its peak memory.

    python benchmarks/kineto_scale.py --hta-python /work/hta-venv/bin/python --repeat 3 --json out.json
    python benchmarks/kineto_scale.py --source tests/data/h200_ncuwrap/kineto/small_launch.pt.trace.json.gz --mb 50
"""

from __future__ import annotations

import argparse
import datetime
import gzip
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import orjson

import process_tree as P

ROOT = Path(__file__).resolve().parent.parent
SOURCE = ROOT / "tests/data/h200_ncuwrap/kineto/gpu_train.pt.trace.json.gz"
# args renumbered per copy (each copy's ids offset past the source's largest)
RENUMBERED_ARGS = ("correlation", "External id", "Record function id", "Ev Idx", "Sequence number", "Python id", "Python parent id")
STEP = re.compile(r"^ProfilerStep#(\d+)$")

HTA = """
import importlib.metadata, resource, sys, time
from hta.trace_analysis import TraceAnalysis
t = time.perf_counter()
analysis = TraceAnalysis(trace_dir=sys.argv[1])
seconds = time.perf_counter() - t
events = sum(len(df) for df in analysis.t.get_all_traces().values())
print(seconds, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024, events, importlib.metadata.version("HolisticTraceAnalysis"))
"""


def _load(source: Path) -> dict:
    raw = source.read_bytes()
    return orjson.loads(gzip.decompress(raw) if source.name.endswith(".gz") else raw)


def make(source: Path, megabytes: float, out: Path) -> dict:
    """``source`` repeated until its JSON holds about ``megabytes`` MB (see the module's docstring)."""
    doc = _load(source)
    events = doc["traceEvents"]
    meta = [e for e in events if e.get("ph") == "M"]
    timed = [e for e in events if e.get("ph") != "M"]
    lo = min(e["ts"] for e in timed if "ts" in e)
    hi = max(e["ts"] + e.get("dur", 0) for e in timed if "ts" in e)
    span = round(hi - lo + 1000.0)  # us; copies a millisecond apart
    top: dict[str, int] = {}
    for e in timed:
        args = e.get("args") or {}
        for key in RENUMBERED_ARGS:
            if isinstance(args.get(key), int):
                top[key] = max(top.get(key, 0), args[key])
        if isinstance(e.get("id"), int):
            top["id"] = max(top.get("id", 0), e["id"])
    steps = [int(m.group(1)) for e in timed if (m := STEP.match(str(e.get("name", ""))))]
    step_span = max(steps) - min(steps) + 1 if steps else 0
    one = len(orjson.dumps(timed))
    copies = max(1, round(megabytes * 1e6 / one))
    out_events = list(meta)
    for k in range(copies):
        for e in timed:
            if k == 0:
                out_events.append(e)
                continue
            e = dict(e)
            if "ts" in e:
                e["ts"] = round(e["ts"] + k * span, 3)
            if isinstance(e.get("id"), int):
                e["id"] += k * (top["id"] + 1)
            if (m := STEP.match(str(e.get("name", "")))) is not None:
                e["name"] = f"ProfilerStep#{int(m.group(1)) + k * step_span}"
            if isinstance(e.get("args"), dict):
                args = e["args"] = dict(e["args"])
                for key in RENUMBERED_ARGS:
                    if isinstance(args.get(key), int) and args[key] >= 0 and not (key == "Record function id" and args[key] == 0):
                        args[key] += k * (top[key] + 1)
            out_events.append(e)
    doc["traceEvents"] = out_events
    data = orjson.dumps(doc)
    out.write_bytes(data)
    return {"source": str(source.relative_to(ROOT) if source.is_relative_to(ROOT) else source), "copies": copies,
            "events": len(out_events), "bytes": len(data), "kernels": copies * sum(e.get("cat") == "kernel" for e in timed),
            "steps": copies * len(set(steps))}


def _run(argv: list[str], stdout_path: Path, env: dict) -> dict:
    """Run ``argv`` from a fresh launcher (benchmarks/process_tree.py): wall time, the tree's peak memory (the
    larger of its summed RSS sampled every 10 ms and the largest process's ru_maxrss: the measure the figures in
    docs/scale.md were taken with), its stdout (written to ``stdout_path``)."""
    row = P.run(argv, stdout_path, env=env, cwd=ROOT)
    row["peak_bytes"] = max(row["tree_rss_sampled"], row["max_process_rss"])
    row["stdout"] = stdout_path.read_text(errors="replace")
    return row


def ncuwrap_run(python: str, trace: Path, out: Path) -> dict:
    env = {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    row = _run([python, "-m", "ncuwrap", "timeline", str(trace), "-f", "json"], out, env)
    row["bound"] = json.loads(out.read_bytes())["bound"]
    del row["stdout"]
    return row


def hta_run(python: str, folder: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    row = _run([python, "-c", HTA, str(folder)], folder.parent / "hta_out.txt", env)
    seconds, rss, events, version = row.pop("stdout").split()[-4:]
    row.update(load_s=float(seconds), self_rss=int(rss), events=int(events), version=version)
    return row


def side_by_side(ncuwrap_python: str, hta_python: str, trace: Path, folder: Path, repeat: int) -> dict:
    ours, theirs = [], []
    for _ in range(repeat):
        ours.append(ncuwrap_run(ncuwrap_python, trace, folder.parent / "ncuwrap_out.json"))
        theirs.append(hta_run(hta_python, folder))
        print(f"  ncuwrap {ours[-1]['wall_s']:.2f} s {ours[-1]['peak_bytes'] / 2**20:.0f} MiB | HTA load {theirs[-1]['load_s']:.2f} s "
              f"(process {theirs[-1]['wall_s']:.2f} s) {theirs[-1]['peak_bytes'] / 2**20:.0f} MiB", file=sys.stderr)
    med = statistics.median
    s_ours, s_theirs = med(o["wall_s"] for o in ours), med(t["load_s"] for t in theirs)
    m_ours, m_theirs = med(o["peak_bytes"] for o in ours), med(t["peak_bytes"] for t in theirs)
    return {"trace": trace.name, "bytes": trace.stat().st_size, "bound": ours[0]["bound"], "hta_version": theirs[0]["version"],
            "hta_events": theirs[0]["events"],
            "ncuwrap_timeline_s": s_ours, "hta_load_s": s_theirs, "hta_process_s": med(t["wall_s"] for t in theirs),
            "time_ratio": s_ours / s_theirs, "time_target": 0.25,
            "ncuwrap_peak_bytes": m_ours, "hta_peak_bytes": m_theirs, "memory_ratio": m_ours / m_theirs, "memory_target": 0.5,
            "ncuwrap_samples": ours, "hta_samples": theirs}


def _default_hta_python() -> str | None:
    python = shutil.which("python3")
    if python and subprocess.run([python, "-c", "import hta"], capture_output=True).returncode == 0:
        return python
    return None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--source", type=Path, default=SOURCE, help="the real trace to repeat (.json or .json.gz)")
    parser.add_argument("--mb", type=float, default=100.0, help="size of the synthetic JSON, in MB (default 100)")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--gz", action="store_true", help="also write and measure the trace as .json.gz")
    parser.add_argument("--python", default=sys.executable, help="the Python that runs ncuwrap (default: this one)")
    parser.add_argument("--hta-python", help="a Python that can import hta (default: python3 on PATH, if it can)")
    parser.add_argument("--keep", type=Path, help="build the scale data in this folder and keep it")
    parser.add_argument("--json", type=Path, help="write the results here")
    args = parser.parse_args()
    hta_python = args.hta_python or _default_hta_python()
    if not hta_python:
        raise SystemExit("no python3 on PATH can import hta: pip install HolisticTraceAnalysis into a venv and pass --hta-python")
    results: dict = {"benchmark": "kineto_scale", "synthetic": True, "date": datetime.date.today().isoformat(),
                     "python": sys.version.split()[0], "cores": os.cpu_count(), "load_average": os.getloadavg(),
                     "ncuwrap_command": "python -m ncuwrap timeline FILE -f json > OUT",
                     "hta_call": "TraceAnalysis(trace_dir=DIR)", "rows": []}
    with tempfile.TemporaryDirectory(prefix="ncuwrap-kineto-scale-") as tmp:
        base = args.keep or Path(tmp)
        folder = base / "hta_trace"
        folder.mkdir(parents=True, exist_ok=True)
        trace = folder / f"scale_{args.source.name.split('.')[0]}_{args.mb:g}mb.pt.trace.json"
        made = make(args.source, args.mb, trace) if not trace.exists() else {"reused": True}
        results["data"] = made
        print(json.dumps(made), file=sys.stderr)
        results["rows"].append(side_by_side(args.python, hta_python, trace, folder, args.repeat))
        if args.gz:
            gz_folder = base / "hta_trace_gz"
            gz_folder.mkdir(exist_ok=True)
            gz = gz_folder / (trace.name + ".gz")
            gz.write_bytes(gzip.compress(trace.read_bytes(), 6))
            results["rows"].append(side_by_side(args.python, hta_python, gz, gz_folder, args.repeat))
    for row in results["rows"]:
        print(json.dumps({k: v for k, v in row.items() if not k.endswith("_samples")}))
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
