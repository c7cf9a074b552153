"""Matching a capture's distinct NVTX names against the step pattern: in bulk (kernel_filter.search_all,
issue 42) beside one RE2 call per name (what ncuwrap did before, and still does for a pattern with no
literal every match holds).

SYNTHETIC DATA: N distinct names made here ("op_<i>_aten::mm_forward", one in 1,000 a "step <i>"), the
shape of a capture whose NVTX ranges each carry an id; nothing in it was measured on a GPU. Timed in this
process, medians of --repeat, the two ways interleaved; the answers are checked equal.

    python benchmarks/nvtx_match.py --names 2000000 --repeat 3
    python benchmarks/nvtx_match.py --capture --names 2000000 --repeat 3

With ``--capture``: the real H200 capture tests/data/h200_ncuwrap/steps/small_launch (30 NVTX steps) with
N more NVTX ranges of distinct names added inside its window (SYNTHETIC: "op_<i>", 1 ns each), and the
whole ``ncuwrap.api.diagnose_timeline`` of it timed in a fresh process each (imports not timed; peak RSS with the
forked reader's), matching in bulk beside one RE2 call per name (search_all replaced by the old loop).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from ncuwrap.core.kernel_filter import compile_filter, search_all  # noqa: E402
from ncuwrap.timeline.options import STEP_PATTERN  # noqa: E402

# (what, pattern, literal, folded): the default, a plain word given with --step-range, a pattern with no literal.
CASES = (("default pattern", STEP_PATTERN, "step", True), ("--step-range train_step", "train_step", None, False),
         ("--step-range '^it[0-9]+$'", "^it[0-9]+$", None, False))


def names(n: int) -> list[str]:
    return [f"step {i}" if i % 1000 == 0 else (f"train_step {i}" if i % 1000 == 1 else f"op_{i}_aten::mm_forward") for i in range(n)]


def one_by_one(pattern: str, texts: list[str]) -> np.ndarray:
    matches = compile_filter(pattern)
    return np.array([matches(t) for t in texts], dtype=bool)


# One timeline in a fresh process: argv[1] the capture, argv[2] "bulk" or "one by one"; prints seconds and peak RSS.
_TIMED = """
import resource, sys, time
sys.path.insert(0, sys.argv[3])
import numpy as np
import ncuwrap.api as api
from ncuwrap.core import kernel_filter
if sys.argv[2] == "one by one":
    def one_by_one(pattern, texts, **options):
        matches = kernel_filter.compile_filter(pattern, options.get("option", "--kernel"), options.get("what", "kernel name"))
        return np.array([matches(t) for t in texts], dtype=bool)
    kernel_filter.search_all = one_by_one
    import ncuwrap.timeline.steps as steps
    steps.search_all = one_by_one
t = time.perf_counter()
d = getattr(api, 'diagnose_timeline', None) or api.timeline  # (a tree from before the API's verbs names it timeline)
d = d(sys.argv[1])
s = time.perf_counter() - t
rss = max(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
print(s, rss >> 10, len(d.timeline.steps.records) if d.timeline.steps else 0)
"""


def capture(n: int, folder: Path) -> Path:
    """small_launch with ``n`` more NVTX ranges of distinct names (synthetic), in ``folder``."""
    import gzip
    import sqlite3

    path = folder / f"small_launch_{n}_nvtx_names.sqlite"
    path.write_bytes(gzip.decompress((ROOT / "tests/data/h200_ncuwrap/steps/small_launch.sqlite.gz").read_bytes()))
    with sqlite3.connect(path) as db:
        start, tid = db.execute("SELECT MIN(start), MIN(globalTid) FROM NVTX_EVENTS").fetchone()
        db.executemany("INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid) VALUES (?, ?, 59, ?, ?)",
                       ((start + i, start + i + 1, f"op_{i}", tid) for i in range(n)))
    db.close()
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--names", type=int, nargs="+", default=[2_000_000])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--capture", action="store_true", help="time the whole timeline of a synthetic capture")
    args = parser.parse_args()
    if args.capture:
        import subprocess
        import tempfile

        with tempfile.TemporaryDirectory() as folder:
            for n in args.names:
                path = capture(n, Path(folder))
                runs: dict[str, list] = {"one by one": [], "bulk": []}
                for _ in range(args.repeat):
                    for way in runs:
                        done = subprocess.run([sys.executable, "-c", _TIMED, str(path), way, str(ROOT)], capture_output=True, text=True)
                        if done.returncode:
                            sys.exit(f"{way}: {done.stderr.strip().splitlines()[-1]}")
                        out = done.stdout.split()
                        runs[way].append((float(out[0]), int(out[1]), int(out[2])))
                for way, samples in runs.items():
                    print(f"{n:>10,} NVTX names, whole timeline, {way:10}: {statistics.median(s[0] for s in samples):6.2f} s, "
                          f"peak RSS {statistics.median(s[1] for s in samples):,.0f} MiB, {samples[0][2]} steps")
        return
    for n in args.names:
        texts = names(n)
        for what, pattern, literal, folded in CASES:
            times: dict[str, list[float]] = {"one by one": [], "bulk": []}
            for _ in range(args.repeat):
                t = time.perf_counter()
                slow = one_by_one(pattern, texts)
                times["one by one"].append(time.perf_counter() - t)
                t = time.perf_counter()
                fast = search_all(pattern, texts, literal=literal, folded=folded)
                times["bulk"].append(time.perf_counter() - t)
                assert np.array_equal(slow, fast), what
            a, b = (statistics.median(times[k]) for k in ("one by one", "bulk"))
            print(f"{n:>10,} names, {what:28}: one by one {a:6.2f} s ({a / n * 1e6:5.2f} us a name), bulk {b:6.2f} s "
                  f"({b / n * 1e6:5.2f} us), {int(slow.sum()):,} match")


if __name__ == "__main__":
    main()
