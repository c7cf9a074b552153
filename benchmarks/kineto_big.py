"""A multi-GB PyTorch profiler trace: ncuwrap's whole ``timeline`` against HolisticTraceAnalysis' load (issue 52 item 4).

SYNTHETIC SCALE DATA: a real H200 torch.profiler trace (default: tests/data/h200_ncuwrap/kineto/gpu_train,
4 ProfilerSteps of a GPU-bound training loop with ``with_stack`` and ``record_shapes``: 19,496 events, 6.1 MB)
repeated, as its own text (the layout torch.profiler writes: an event over several lines), until the file
holds about ``--gb`` GB. Each copy's events are shifted in time past the copy before (a millisecond apart);
every id (correlation, External id, Record function id but 0, Ev Idx, Sequence number, Python id and parent
id, the flows' ids) moves by one offset per copy, so that the links between events (a kernel to its launch
and its op, a flow to its ends, a frame to its parent) stay within their copy; ``ProfilerStep#N`` is numbered
on. The metadata events (``"ph": "M"``) and the document's keys are kept once. Nothing in it was measured as
such; every copy is the real trace's events.

Measured side by side in one run (benchmarks/process_tree.py: each command from a fresh launcher, wall time, CPU
time (on a shared box wall time follows the load, CPU time much less), the peak memory of the process tree):
- ncuwrap: the whole ``python -m ncuwrap timeline FILE -f json`` as a user runs it (stdout to a file);
- HTA 0.5.0: ``TraceAnalysis(trace_dir=DIR)`` on a folder holding only the trace, timed in its process with its
  imports left out (which favours HTA; wall and CPU time of the load), in its own interpreter (``--hta-python``; never a dependency of
  ncuwrap). HTA parses the whole document with ``json.loads`` (its default backend), so on a big trace it may
  run out of memory or time: it runs under ``--hta-memory`` GB of address space (so that it stops with a
  MemoryError rather than taking the machine) and ``--hta-timeout`` seconds; what it did is recorded.
  ``--also-gb`` sizes (default 0.5) are measured the same way, first, so that a ratio exists where HTA fails the
  big one. ncuwrap runs ``--repeat`` times a size (the median is its figure), HTA once.

Targets (issue 52 item 4): ncuwrap's whole ``timeline`` <= 0.1x HTA's load time and <= 1.5 GB peak on the
2-core box.

    /work/hta-venv/bin/pip install HolisticTraceAnalysis==0.5.0
    python benchmarks/kineto_big.py --hta-python /work/hta-venv/bin/python --gb 2 --also-gb 0.5 --json kineto_big.json

The traces are written under ``--dir`` (default: a temporary folder) and deleted at the end unless ``--keep``.
"""

from __future__ import annotations

import argparse
import datetime
import gzip
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import orjson

import process_tree as P

ROOT = Path(__file__).resolve().parent.parent
SOURCE = ROOT / "tests/data/h200_ncuwrap/kineto/gpu_train.pt.trace.json.gz"
IDS = ("correlation", "External id", "Record function id", "Ev Idx", "Sequence number", "Python id", "Python parent id", "id")
_ID = re.compile(rb'"(' + b"|".join(re.escape(k.encode()) for k in IDS) + rb')": (-?\d+)')
_TS = re.compile(rb'"ts": (-?[0-9.eE+-]+)')
_STEP = re.compile(rb"ProfilerStep#(\d+)")
_EVENTS = re.compile(rb'"traceEvents"\s*:\s*\[')
_BETWEEN = re.compile(rb"\}\s*,\s*\{")

HTA = """
import importlib.metadata, resource, sys, time
from hta.trace_analysis import TraceAnalysis
t, c = time.perf_counter(), time.process_time()
analysis = TraceAnalysis(trace_dir=sys.argv[1])
seconds, cpu = time.perf_counter() - t, time.process_time() - c
events = sum(len(df) for df in analysis.t.get_all_traces().values())
print(seconds, cpu, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024, events, importlib.metadata.version("HolisticTraceAnalysis"))
"""


class Template:
    """The source trace's text cut into its parts: the document before and after the events, the metadata
    events (kept once) and the timed events' text (repeated), with what shifting a copy needs."""

    def __init__(self, source: Path):
        raw = source.read_bytes()
        text = gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw
        start = _EVENTS.search(text).end()
        close = text.rfind(b"]")
        self.head, self.tail = text[:start], text[close:]
        body = text[start:close]
        cuts = [0, *(m.start() + 1 for m in _BETWEEN.finditer(body)), len(body)]
        events = [body[a:b].strip().lstrip(b",").strip() for a, b in zip(cuts, cuts[1:])]
        parsed = [orjson.loads(e) for e in events]  # every piece one whole event (the source's names hold no '}, {')
        self.meta = [e for e, p in zip(events, parsed) if p.get("ph") == "M"]
        timed = [(e, p) for e, p in zip(events, parsed) if p.get("ph") != "M"]
        self.timed = b",\n  ".join(e for e, _ in timed)
        stamps = [p["ts"] for _, p in timed if "ts" in p]
        self.span = round(max(p["ts"] + p.get("dur", 0) for _, p in timed if "ts" in p) - min(stamps) + 1000.0)  # us
        self.id_step = 1 + max(int(m.group(2)) for m in _ID.finditer(self.timed))
        steps = [int(m.group(1)) for m in _STEP.finditer(self.timed)]
        self.step_step = max(steps) - min(steps) + 1 if steps else 0
        self.events, self.kernels = len(timed), sum(p.get("cat") == "kernel" for _, p in timed)
        self.step_count = len(set(steps))

    def copy(self, k: int) -> bytes:
        """The timed events of copy ``k`` (0: the source's own)."""
        if k == 0:
            return self.timed
        shift, ids, steps = k * self.span, k * self.id_step, k * self.step_step

        def ts(m):
            return b'"ts": ' + repr(round(float(m.group(1)) + shift, 3)).encode()

        def ident(m):
            value = int(m.group(2))
            if value < 0 or (value == 0 and m.group(1) == b"Record function id"):
                return m.group(0)
            return b'"' + m.group(1) + b'": ' + str(value + ids).encode()

        text = _TS.sub(ts, self.timed)
        text = _ID.sub(ident, text)
        return _STEP.sub(lambda m: b"ProfilerStep#" + str(int(m.group(1)) + steps).encode(), text)


def make(source: Path, gigabytes: float, out: Path) -> dict:
    """``source`` repeated into ``out`` until it holds about ``gigabytes`` GB (see the module's docstring);
    written a copy at a time (memory: one copy's text)."""
    t = Template(source)
    copies = max(1, round(gigabytes * 1e9 / (len(t.timed) + 4)))
    with out.open("wb") as fh:
        fh.write(t.head + b"\n  ")
        for m in t.meta:
            fh.write(m + b",\n  ")
        for k in range(copies):
            fh.write(t.copy(k))
            fh.write(b",\n  " if k < copies - 1 else b"\n  ")
        fh.write(t.tail)
    return {"synthetic": True, "source": str(source.relative_to(ROOT) if source.is_relative_to(ROOT) else source), "copies": copies,
            "events": len(t.meta) + copies * t.events, "kernels": copies * t.kernels, "steps": copies * t.step_count,
            "bytes": out.stat().st_size}


def _launch(argv: list[str], out: Path, env: dict) -> dict:
    """process_tree's launcher (a fresh process, the tree's memory sampled), but a command that fails is
    recorded, not fatal: its exit status and the end of its stderr."""
    err = out.with_name(out.name + ".stderr")
    done = subprocess.run([sys.executable, "-c", P.LAUNCHER, str(out), str(err), *argv], capture_output=True, text=True, cwd=ROOT, env=env)
    if done.returncode:
        raise SystemExit(f"launcher failed: {done.stderr.strip()[-400:]}")
    row = json.loads(done.stdout)
    row["returncode"] = row.pop("rc")
    row["stderr_tail"] = err.read_text(errors="replace")[-2000:]
    row["peak_bytes"] = max(row["tree_pss_sampled"], row["max_process_rss"])
    return row


def ncuwrap_run(python: str, trace: Path, out: Path) -> dict:
    env = {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    row = _launch([python, "-m", "ncuwrap", "timeline", str(trace), "-f", "json"], out, env)
    doc = json.loads(out.read_bytes()) if row["returncode"] == 0 else {}
    row["bound"], row["kernels"] = doc.get("bound"), (doc.get("steady") or {}).get("kernels")
    return row


def hta_run(python: str, folder: Path, memory_gb: float, timeout_s: float) -> dict:
    """HTA's load of ``folder`` under an address-space cap and a time limit; what it did if it did not load."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    argv = ["prlimit", f"--as={int(memory_gb * 2**30)}", "timeout", "-s", "KILL", str(int(timeout_s)), python, "-c", HTA, str(folder)]
    out = folder.parent / "hta_out.txt"
    row = _launch(argv, out, env)
    words = out.read_text(errors="replace").split()
    if row["returncode"] == 0 and len(words) >= 5:
        seconds, cpu, rss, events, version = words[-5:]
        row.update(loaded=True, load_s=float(seconds), load_cpu_s=float(cpu), self_rss=int(rss), events=int(events), version=version)
    else:
        row.update(loaded=False, what=("killed at the time limit" if row["returncode"] in (-9, 137) else
                                       f"exit {row['returncode']}: " + (row.get("stderr_tail") or "").strip()[-300:]))
    return row


def measure(args, trace: Path, folder: Path) -> dict:
    """ncuwrap ``--repeat`` times, then HTA once (its load of a big trace takes many minutes)."""
    import statistics

    ours = [ncuwrap_run(args.python, trace, folder.parent / "ncuwrap_out.json") for _ in range(args.repeat)]
    for o in ours:
        print(f"  ncuwrap {o['wall_s']:.1f} s (CPU {o['cpu_s']:.1f} s) {o['peak_bytes'] / 2**20:,.0f} MiB exit {o['returncode']}",
              file=sys.stderr, flush=True)
    theirs = hta_run(args.hta_python, folder, args.hta_memory, args.hta_timeout)
    print(f"  HTA {'load %.1f s' % theirs['load_s'] if theirs['loaded'] else theirs['what']} (process {theirs['wall_s']:.1f} s) "
          f"{theirs['peak_bytes'] / 2**20:,.0f} MiB", file=sys.stderr, flush=True)
    wall = statistics.median(o["wall_s"] for o in ours)
    row = {"trace": trace.name, "bytes": trace.stat().st_size, "bound": ours[0]["bound"], "ncuwrap_exits": [o["returncode"] for o in ours],
           "ncuwrap_timeline_s": wall, "ncuwrap_wall_samples": [round(o["wall_s"], 2) for o in ours],
           "ncuwrap_cpu_samples": [round(o["cpu_s"], 2) for o in ours],
           "ncuwrap_peak_bytes": max(o["peak_bytes"] for o in ours), "ncuwrap_peak_samples": [o["peak_bytes"] for o in ours],
           "hta_loaded": theirs["loaded"], "hta_process_s": theirs["wall_s"], "hta_cpu_s": theirs["cpu_s"], "hta_peak_bytes": theirs["peak_bytes"],
           "time_target": 0.1, "memory_target_bytes": int(1.5e9)}
    if theirs["loaded"]:
        row.update(hta_load_s=theirs["load_s"], hta_load_cpu_s=theirs["load_cpu_s"], hta_version=theirs["version"], hta_events=theirs["events"],
                   time_ratio=wall / theirs["load_s"], cpu_ratio=statistics.median(o["cpu_s"] for o in ours) / theirs["load_cpu_s"])
    else:
        # What HTA did: how it stopped, its own log of the parse (stderr), and how long it ran before it stopped.
        row.update(hta_what=theirs["what"], hta_log=theirs["stderr_tail"][-1500:], hta_cap_gb=args.hta_memory,
                   hta_timeout_s=args.hta_timeout, time_ratio_at_most=wall / theirs["wall_s"])
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--source", type=Path, default=SOURCE, help="the real trace to repeat (.json or .json.gz)")
    parser.add_argument("--gb", type=float, default=2.0, help="size of the synthetic trace, in GB (default 2)")
    parser.add_argument("--also-gb", type=float, nargs="*", default=[0.5], help="smaller sizes measured too (default 0.5)")
    parser.add_argument("--python", default=sys.executable, help="the Python that runs ncuwrap (default: this one)")
    parser.add_argument("--hta-python", required=True, help="a Python that can import hta (its own venv)")
    parser.add_argument("--repeat", type=int, default=3, help="ncuwrap runs per size (HTA runs once; default 3)")
    parser.add_argument("--hta-memory", type=float, default=18.0, help="HTA's address-space cap, GB (default 18 of the box's 24)")
    parser.add_argument("--hta-timeout", type=float, default=2400.0, help="HTA's time limit, seconds (default 2400)")
    parser.add_argument("--dir", type=Path, help="where to write the traces (default: a temporary folder)")
    parser.add_argument("--keep", action="store_true", help="keep the traces")
    parser.add_argument("--json", type=Path, help="write the results here")
    args = parser.parse_args()
    results: dict = {"benchmark": "kineto_big", "synthetic": True, "started_utc": datetime.datetime.now(datetime.timezone.utc).isoformat(),
                     "python": sys.version.split()[0], "cores": os.cpu_count(), "load_average_before": os.getloadavg(),
                     "ncuwrap_command": "python -m ncuwrap timeline FILE -f json > OUT", "hta_call": "TraceAnalysis(trace_dir=DIR)",
                     "rows": []}
    base = Path(tempfile.mkdtemp(prefix="ncuwrap-kineto-big-", dir=args.dir))
    try:
        for gb in [*args.also_gb, args.gb]:  # the smaller first: a ratio even where HTA cannot load the big one
            folder = base / f"hta_{gb:g}gb"
            folder.mkdir()
            trace = folder / f"synthetic_{args.source.name.split('.')[0]}_{gb:g}gb.pt.trace.json"
            made = make(args.source, gb, trace)
            print(json.dumps(made), file=sys.stderr, flush=True)
            row = measure(args, trace, folder)
            row["data"] = made
            row["load_average_after"] = os.getloadavg()
            results["rows"].append(row)
            if not args.keep:
                shutil.rmtree(folder)
    finally:
        if not args.keep:
            shutil.rmtree(base, ignore_errors=True)
    results["load_average_after"] = os.getloadavg()
    for row in results["rows"]:
        print(json.dumps(row))
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    if not shutil.which("prlimit"):
        sys.exit("prlimit (util-linux) is needed to cap HTA's memory")
    main()
