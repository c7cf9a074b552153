"""Whole processes measured as a user runs them: wall time and the peak memory of the process tree.

Shared by the side-by-side benchmarks whose two sides are whole commands (ncuwrap against ``ncu --import``,
against ``nsys stats``). Each command is started by a small launcher, itself a fresh process: a child's
``ru_maxrss`` starts at the high-water mark of the process that forked it (kept across exec), so a command
started from the benchmark itself would be charged the benchmark's memory. The peak is the larger of

- the tree's summed proportional set size (PSS), the command and every descendant (ncuwrap reads in forked
  children while the parent goes on; ncu and nsys start helpers), read from /proc every 10 ms. PSS, not RSS:
  a forked child shares its parent's pages until either writes them, and a sum of RSS would count those
  twice; and
- the largest single process's ``ru_maxrss``: wait4's usage of the command, which includes its waited-for
  descendants (RUSAGE_BOTH); a peak between two samples is caught there.

The tree's summed RSS is reported too (``tree_rss_sampled``), for the benchmarks whose published figures
were taken with it (kineto_scale.py). Besides wall time it reports the tree's CPU time (user + system of the command and its waited-for
descendants, from wait4): on a shared machine wall time follows the load, CPU time much less.
Linux only (/proc, wait4).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

LAUNCHER = r"""
import json, os, subprocess, sys, threading, time
PAGE = os.sysconf("SC_PAGE_SIZE")

def pss(pid, rss):
    # the process's proportional set size: a page a forked child still shares with its parent counts half to each
    try:
        with open(f"/proc/{pid}/smaps_rollup") as fh:
            for line in fh:
                if line.startswith("Pss:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return rss

def tree_memory(root):
    # the summed PSS and the summed RSS of root and its descendants, read from /proc
    parents, rss = {}, {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as fh:
                    fields = fh.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            parents[int(entry)], rss[int(entry)] = int(fields[1]), int(fields[21]) * PAGE
    tree, changed = {root}, True
    while changed:
        changed = False
        for pid, parent in parents.items():
            if parent in tree and pid not in tree:
                tree.add(pid)
                changed = True
    members = [pid for pid in tree if pid in rss]
    return sum(pss(pid, rss[pid]) for pid in members), sum(rss[pid] for pid in members)

with open(sys.argv[1], "wb") as out, open(sys.argv[2], "wb") as err:
    t = time.perf_counter()
    proc = subprocess.Popen(sys.argv[3:], stdout=out, stderr=err)
    peak, done = [0, 0], threading.Event()

    def sample():
        while not done.is_set():
            peak[:] = map(max, peak, tree_memory(proc.pid))
            done.wait(0.01)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - t
    done.set()
    sampler.join()
print(json.dumps({"rc": os.waitstatus_to_exitcode(status), "wall_s": seconds, "cpu_s": usage.ru_utime + usage.ru_stime,
                  "tree_pss_sampled": peak[0], "tree_rss_sampled": peak[1], "max_process_rss": usage.ru_maxrss * 1024}))
"""


def run(argv: list[str], stdout_path: Path, *, env: dict | None = None, cwd: Path | None = None) -> dict:
    """Run ``argv`` from a fresh launcher, its stdout to ``stdout_path``: ``wall_s``, ``cpu_s`` and ``peak_bytes``
    (see the module's docstring). A command that fails stops the benchmark with its last lines."""
    err = stdout_path.with_name(stdout_path.name + ".stderr")
    done = subprocess.run([sys.executable, "-c", LAUNCHER, str(stdout_path), str(err), *argv], capture_output=True, text=True,
                          cwd=cwd, env=env if env is not None else dict(os.environ))
    if done.returncode:
        raise SystemExit(f"launcher failed: {done.stderr.strip()[-400:]}")
    row = json.loads(done.stdout)
    if row.pop("rc"):
        raise SystemExit(f"{' '.join(argv[:4])} ... failed: {err.read_text(errors='replace').strip()[-400:]}")
    row["peak_bytes"] = max(row["tree_pss_sampled"], row["max_process_rss"])
    return row


def with_pythonpath(tree: Path) -> dict:
    """The environment with ``tree`` first on PYTHONPATH (the ncuwrap timed)."""
    return {**os.environ, "PYTHONPATH": f"{tree}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}


def median_row(rows: list[dict]) -> dict:
    """The medians of wall and CPU time and the largest peak of several runs, with the samples."""
    import statistics

    return {"wall_s": statistics.median(r["wall_s"] for r in rows), "cpu_s": statistics.median(r["cpu_s"] for r in rows),
            "peak_mib": max(r["peak_bytes"] for r in rows) / 2**20, "wall_samples": [round(r["wall_s"], 3) for r in rows],
            "cpu_samples": [round(r["cpu_s"], 3) for r in rows]}
