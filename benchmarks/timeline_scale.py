"""Scale benchmark of ``ncuwrap timeline``: big captures against the tools that read them (issue 23).

SYNTHETIC SCALE DATA: a real H200 capture (default: tests/data/h200_ncuwrap/steps/small_launch_200,
200 NVTX steps of a launch-bound PyTorch loop, 44,846 kernels and 92,402 CUDA calls) repeated until it
holds N kernel launches. Every event table (kernels, CUDA calls, copies, memsets, NVTX ranges) is copied
whole, each copy shifted in time past the previous one and its correlationIds renumbered, so the steps,
the launches they match and the timeline's shape repeat; nothing in it was measured as such.

Measured, each in a fresh process, interleaved (ncuwrap, yardstick, ncuwrap, ...), medians of --repeat:
- ncuwrap: ``ncuwrap.diagnose_timeline(path)`` (read, analyse, decide; imports not timed), peak RSS (ru_maxrss,
  the interpreter and its imports included; the larger of this process's and its children's, since
  the capture is read in a forked child);
- the yardstick: ``pandas.read_sql_query("SELECT * FROM <table>")`` of the kernel, memcpy and runtime
  tables (imports not timed), peak RSS;
- with ``--real`` (the real captures themselves, no scaling): ncuwrap's analysis in process, and its whole
  ``python -m ncuwrap timeline FILE -f json`` process against ``nsys stats`` of the same SQLite with three
  reports (GPU kernels, CUDA API, GPU memory time: what the timeline's breakdown, kernels and API tables
  hold) where nsys is found (``--nsys``, else on PATH): whole processes on both sides, each from a fresh
  launcher, wall and CPU time and the process tree's peak memory (benchmarks/process_tree.py). Target
  (issue 41): the whole process at most 0.8x ``nsys stats``' time. With ``--baseline-tree OLD`` the whole
  process of OLD's ncuwrap is timed in the same interleave (and its JSON compared byte for byte with this
  tree's); with ``--compile``, both trees' modules are compiled first, as a pip install does (without it, a
  ``PYTHONDONTWRITEBYTECODE`` environment compiles every ncuwrap module in every process). The floor of a
  Python process on the machine is timed beside them, by the same launcher: ``python -c pass`` and
  ``python -c "import numpy"``.

With ``--steps-found`` (issue 36: what finding steps by repetition costs), the source is a capture without
step ranges (default: tests/data/h200_ncuwrap/unmarked/small_launch_unmarked, 30 iterations of the same
launch-bound loop, 6,818 launches) repeated the same way, and ncuwrap is timed twice per sample, interleaved:
``--steps marked`` (no search: today's path for a capture without step ranges) and ``--steps auto`` (the
steps found by repetition), with the pandas yardstick beside them.

    python benchmarks/timeline_scale.py --launches 1000000 5000000 --repeat 3 --json out.json
    python benchmarks/timeline_scale.py --real --repeat 5          # on the GPU host, where nsys is
    python benchmarks/timeline_scale.py --real --repeat 7 --baseline-tree OLD --compile --nsys NSYS --json out.json
    python benchmarks/timeline_scale.py --steps-found --launches 1000000 5000000 --repeat 3
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import process_tree as P

ROOT = Path(__file__).resolve().parent.parent
SOURCE = ROOT / "tests/data/h200_ncuwrap/steps/small_launch_200.sqlite.gz"
UNMARKED = ROOT / "tests/data/h200_ncuwrap/unmarked/small_launch_unmarked.sqlite.gz"
REAL = [ROOT / "tests/data/h200_ncuwrap/steps" / f"{n}.sqlite.gz" for n in ("small_launch_200", "gpu_train", "decode_eager", "input_bound")]
EVENT_TABLES = ("CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_RUNTIME", "CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_MEMSET",
                "NVTX_EVENTS")
YARDSTICK_TABLES = ("CUPTI_ACTIVITY_KIND_KERNEL", "CUPTI_ACTIVITY_KIND_MEMCPY", "CUPTI_ACTIVITY_KIND_RUNTIME")
NSYS_REPORTS = "cuda_gpu_kern_sum,cuda_api_sum,cuda_gpu_mem_time_sum"

NCUWRAP = """
import resource, sys, time
import ncuwrap.api, ncuwrap.timeline.verdict, ncuwrap.timeline.readers.nsys_sqlite, pyarrow
# The reader's own libraries, not timed: pandas and ADBC's DB-API module for a tree whose reader uses
# pandas, the driver manager's objects for one that does not (importing pandas there would only add to
# its peak memory, the forked reader's included).
if hasattr(ncuwrap.timeline.readers.nsys_sqlite, "pd"):
    import pandas
    try:
        import adbc_driver_sqlite.dbapi
    except ImportError:  # a tree from before the columnar reader
        pass
else:
    import adbc_driver_manager, adbc_driver_sqlite
t = time.perf_counter()
how = getattr(ncuwrap.api, "TimelineOptions", None)  # a tree from before the options as values takes steps= itself
steps = ({"timeline": how(steps=sys.argv[2])} if how else {"steps": sys.argv[2]}) if len(sys.argv) > 2 else {}
d = ncuwrap.api.diagnose_timeline(sys.argv[1], **steps)
# The capture is read in a forked child (ncuwrap.core.forked): the peak is the larger of the two processes'.
peak = max(resource.getrusage(who).ru_maxrss for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN))
print(time.perf_counter() - t, peak * 1024, d.bound)
"""
YARDSTICK = """
import resource, sqlite3, sys, time
import pandas
t = time.perf_counter()
db = sqlite3.connect(sys.argv[1])
rows = 0
for table in sys.argv[2:]:
    rows += len(pandas.read_sql_query(f"SELECT * FROM {table}", db))
print(time.perf_counter() - t, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024, rows)
"""


def unpack(source: Path, folder: Path) -> Path:
    if source.name.endswith(".gz"):
        plain = folder / source.name[: -len(".gz")]
        plain.write_bytes(gzip.decompress(source.read_bytes()))
        return plain
    return source


def make(source: Path, launches: int, out: Path) -> dict:
    """``source`` repeated until it holds at least ``launches`` kernels (see the module's docstring)."""
    shutil.copyfile(source, out)
    db = sqlite3.connect(out)
    tables = [t for t in EVENT_TABLES if db.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (t,)).fetchone()]
    lo = min(db.execute(f'SELECT MIN(start) FROM "{t}"').fetchone()[0] for t in tables)
    hi = max(db.execute(f'SELECT MAX("end") FROM "{t}"').fetchone()[0] for t in tables)
    span = hi - lo + 1_000_000  # a millisecond apart
    kernels = db.execute('SELECT COUNT(*) FROM "CUPTI_ACTIVITY_KIND_KERNEL"').fetchone()[0]
    copies = -(-launches // kernels)
    corr = 1 + max(db.execute(f'SELECT COALESCE(MAX(correlationId), 0) FROM "{t}"').fetchone()[0]
                   for t in tables if "correlationId" in _columns(db, t))
    for table in tables:
        columns = _columns(db, table)
        db.execute(f'CREATE TEMP TABLE original AS SELECT * FROM "{table}"')
        for k in range(1, copies):
            shifted = [f'"{c}" + {k * span}' if c in ("start", "end") else f'"{c}" + {k * corr}' if c == "correlationId" else f'"{c}"'
                       for c in columns]
            db.execute(f'INSERT INTO "{table}" ({", ".join(chr(34) + c + chr(34) for c in columns)}) '
                       f'SELECT {", ".join(shifted)} FROM original')
        db.execute("DROP TABLE original")
    db.commit()
    counts = {t: db.execute(f'SELECT COUNT(*) FROM "{t}"').fetchone()[0] for t in tables}
    db.close()
    return {"copies": copies, "rows": counts, "bytes": out.stat().st_size}


def _columns(db, table: str) -> list[str]:
    return [r[1] for r in db.execute(f'PRAGMA table_info("{table}")')]


TREE = ROOT  # the ncuwrap timed (--tree: another source tree)


def _python(code: str, *args: str, tree: Path | None = None) -> tuple[float, int, str]:
    # Run from the tree timed: ``python -c`` puts the working folder before PYTHONPATH.
    tree = tree or TREE
    done = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, cwd=tree,
                          env={**os.environ, "PYTHONPATH": f"{tree}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"})
    if done.returncode:
        raise SystemExit(f"failed: {done.stderr.strip().splitlines()[-1] if done.stderr.strip() else done.returncode}")
    seconds, rss, what = done.stdout.split(None, 2)
    return float(seconds), int(rss), what.strip()


def _whole(argv: list[str]) -> float:
    t = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, text=True, cwd=TREE, env={**os.environ,
                                                                               "PYTHONPATH": f"{TREE}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"})
    if done.returncode:
        raise SystemExit(f"{argv[0]} failed: {(done.stderr or done.stdout).strip()[-300:]}")
    return time.perf_counter() - t


def scaled(path: Path, repeat: int) -> dict:
    db = sqlite3.connect(path)
    launches = db.execute('SELECT COUNT(*) FROM "CUPTI_ACTIVITY_KIND_KERNEL"').fetchone()[0]
    db.close()
    ours, theirs, stats = [], [], []
    nsys = shutil.which("nsys")
    for _ in range(repeat):
        ours.append(_python(NCUWRAP, str(path)))
        theirs.append(_python(YARDSTICK, str(path), *YARDSTICK_TABLES))
        if nsys:  # context where nsys is installed: its own reports of the same export
            stats.append(_whole(_nsys_stats(nsys, path)))
    s_ours, s_theirs = statistics.median(o[0] for o in ours), statistics.median(t[0] for t in theirs)
    rss_ours, rss_theirs = max(o[1] for o in ours), max(t[1] for t in theirs)
    return {"launches": launches, "ncuwrap_s": s_ours, "ncuwrap_samples": [o[0] for o in ours], "yardstick_s": s_theirs,
            "yardstick_samples": [t[0] for t in theirs], "ratio": s_ours / s_theirs, "ncuwrap_peak_bytes": rss_ours,
            "yardstick_peak_bytes": rss_theirs, "ncuwrap_bytes_per_launch": rss_ours / launches, "bound": ours[0][2],
            **({"nsys_stats_s": statistics.median(stats), "nsys_stats_samples": stats} if stats else {})}


def steps_found(path: Path, repeat: int, baseline: Path | None = None) -> dict:
    """ncuwrap with and without the search for steps (``--steps auto`` / ``marked``), interleaved with the
    yardstick; with ``baseline`` (a source tree from before the search), that tree's ncuwrap is timed
    too, as it reads the capture (the whole capture, no steps)."""
    db = sqlite3.connect(path)
    launches = db.execute('SELECT COUNT(*) FROM "CUPTI_ACTIVITY_KIND_KERNEL"').fetchone()[0]
    db.close()
    off, on, theirs, before = [], [], [], []
    for _ in range(repeat):
        off.append(_python(NCUWRAP, str(path), "marked"))
        on.append(_python(NCUWRAP, str(path), "auto"))
        if baseline is not None:
            before.append(_python(NCUWRAP, str(path), tree=baseline))
        theirs.append(_python(YARDSTICK, str(path), *YARDSTICK_TABLES))
    s_off, s_on = statistics.median(o[0] for o in off), statistics.median(o[0] for o in on)
    return {"launches": launches, "ncuwrap_no_search_s": s_off, "ncuwrap_search_s": s_on, "search_cost": s_on / s_off - 1,
            "no_search_samples": [o[0] for o in off], "search_samples": [o[0] for o in on],
            "yardstick_s": statistics.median(t[0] for t in theirs), "no_search_peak_bytes": max(o[1] for o in off),
            "search_peak_bytes": max(o[1] for o in on), "bound_no_search": off[0][2], "bound_search": on[0][2],
            **({"baseline_s": statistics.median(b[0] for b in before), "baseline_samples": [b[0] for b in before],
                "baseline_peak_bytes": max(b[1] for b in before), "search_against_baseline": s_on / statistics.median(b[0] for b in before) - 1}
               if before else {})}


def _nsys_stats(nsys: str, path: Path) -> list[str]:
    return [nsys, "stats", "--force-export=false", "--report", NSYS_REPORTS, "--format", "csv", "--output", "-", str(path)]


def real(path: Path, repeat: int, folder: Path, nsys: str | None = None, baseline: Path | None = None) -> dict:
    """A real capture: ncuwrap's analysis in process (imports not timed), its whole ``timeline -f json`` process
    and ``nsys stats`` with three reports, interleaved, each whole process from a fresh launcher
    (benchmarks/process_tree.py: wall and CPU time, the process tree's peak memory, children included); with
    ``baseline``, that tree's whole process too, and whether its JSON is byte-identical to this tree's."""
    nsys = None if nsys == "none" else nsys or shutil.which("nsys")
    ours, stats, whole, before = [], [], [], []
    env = P.with_pythonpath(TREE)
    command = [sys.executable, "-m", "ncuwrap", "timeline", str(path), "-f", "json"]
    identical = True
    for _ in range(repeat):
        ours.append(_python(NCUWRAP, str(path))[0])
        whole.append(P.run(command, folder / "ncuwrap.json", env=env, cwd=TREE))
        if baseline is not None:
            before.append(P.run(command, folder / "before.json", env=P.with_pythonpath(baseline), cwd=baseline))
            identical &= (folder / "ncuwrap.json").read_bytes() == (folder / "before.json").read_bytes()
        if nsys:
            stats.append(P.run(_nsys_stats(nsys, path), folder / "nsys_stats.csv", cwd=TREE))
    whole_row = P.median_row(whole)
    row = {"capture": path.name, "bytes": path.stat().st_size, "ncuwrap_s": statistics.median(ours), "ncuwrap_samples": ours,
           "ncuwrap_process_s": whole_row["wall_s"], "ncuwrap_process_samples": whole_row["wall_samples"],
           "ncuwrap_process_cpu_s": whole_row["cpu_s"], "ncuwrap_process_cpu_samples": whole_row["cpu_samples"],
           "ncuwrap_process_peak_mib": whole_row["peak_mib"]}
    if before:
        before_row = P.median_row(before)
        row.update(before_process_s=before_row["wall_s"], before_process_samples=before_row["wall_samples"],
                   before_process_cpu_s=before_row["cpu_s"], before_process_cpu_samples=before_row["cpu_samples"],
                   before_process_peak_mib=before_row["peak_mib"], outputs_identical=identical)
    if stats:
        stats_row = P.median_row(stats)
        row.update(nsys_stats_s=stats_row["wall_s"], nsys_stats_samples=stats_row["wall_samples"], nsys_stats_cpu_s=stats_row["cpu_s"],
                   nsys_stats_peak_mib=stats_row["peak_mib"], ratio=whole_row["wall_s"] / stats_row["wall_s"],
                   pair_ratios=[round(a["wall_s"] / b["wall_s"], 3) for a, b in zip(whole, stats)])
        if before:
            row["before_ratio"] = before_row["wall_s"] / stats_row["wall_s"]
    return row


def floor(repeat: int, folder: Path) -> dict:
    """The machine's floor for a Python tool, by the same launcher: an empty interpreter, and one importing numpy."""
    rows = {"python -c pass": [], "python -c 'import numpy'": []}
    for _ in range(repeat):
        rows["python -c pass"].append(P.run([sys.executable, "-c", "pass"], folder / "floor.out"))
        rows["python -c 'import numpy'"].append(P.run([sys.executable, "-c", "import numpy"], folder / "floor.out"))
    return {name: {k: v for k, v in P.median_row(runs).items() if k != "peak_mib"} for name, runs in rows.items()}


def compile_tree(tree: Path) -> None:
    """Write the bytecode of ``tree``'s ncuwrap, as a pip install does (compileall writes it whatever
    PYTHONDONTWRITEBYTECODE says)."""
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(tree / "ncuwrap")], check=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--launches", type=int, nargs="*", default=[1_000_000])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--source", type=Path, default=SOURCE, help="the real capture to repeat (.sqlite or .sqlite.gz)")
    parser.add_argument("--real", action="store_true", help="time the real captures against nsys stats instead")
    parser.add_argument("--keep", type=Path, help="build the scale data in this folder and keep it")
    parser.add_argument("--tree", type=Path, help="time the ncuwrap of this source tree (a git archive of an older commit)")
    parser.add_argument("--steps-found", action="store_true", help="time the search for steps by repetition (see the docstring)")
    parser.add_argument("--baseline-tree", type=Path, help="with --steps-found or --real: also time this source tree (e.g. a git "
                        "archive of the commit before the change)")
    parser.add_argument("--nsys", help="with --real: the nsys binary (default: nsys on PATH; none: ncuwrap alone is timed)")
    parser.add_argument("--compile", action="store_true", help="with --real: compile the timed trees' modules first, as pip install does")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    if args.steps_found and args.source == SOURCE:
        args.source = UNMARKED
    global TREE
    TREE = args.tree.resolve() if args.tree else ROOT
    results: dict = {"python": sys.version.split()[0], "cores": os.cpu_count(), "rows": []}
    with tempfile.TemporaryDirectory(prefix="ncuwrap-scale-") as tmp:
        folder = args.keep or Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        if args.real:
            baseline = args.baseline_tree.resolve() if args.baseline_tree else None
            if args.compile:
                for tree in (TREE, baseline):
                    if tree is not None:
                        compile_tree(tree)
            results["compiled"] = args.compile
            results["floor"] = floor(args.repeat, folder)
            print(json.dumps(results["floor"]))
            for source in REAL:
                row = real(unpack(source, folder), args.repeat, folder, args.nsys, baseline)
                results["rows"].append(row)
                print(json.dumps(row))
        else:
            plain = unpack(args.source, folder)
            for n in args.launches:
                path = folder / f"scale_{'unmarked_' if args.steps_found else ''}{n}.sqlite"
                made = make(plain, n, path) if not path.exists() else {"reused": True}
                timed = steps_found(path, args.repeat, args.baseline_tree) if args.steps_found else scaled(path, args.repeat)
                row = {**timed, "data": made, "synthetic": True}
                results["rows"].append(row)
                print(json.dumps(row))
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
