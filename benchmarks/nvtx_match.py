"""Matching a capture's distinct NVTX names against the step pattern: in bulk (kernel_filter.search_all,
issue 42) beside one RE2 call per name (what ncuwrap did before, and still does for a pattern with no
literal every match holds).

SYNTHETIC DATA: N distinct names made here ("op_<i>_aten::mm_forward", one in 1,000 a "step <i>"), the
shape of a capture whose NVTX ranges each carry an id; nothing in it was measured on a GPU. Timed in this
process, medians of --repeat, the two ways interleaved; the answers are checked equal.

    python benchmarks/nvtx_match.py --names 2000000 --repeat 3
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from ncuwrap.kernel_filter import compile_filter, search_all  # noqa: E402
from ncuwrap.timeline.steps import STEP_PATTERN  # noqa: E402

# (what, pattern, literal, folded): the default, a plain word given with --step-range, a pattern with no literal.
CASES = (("default pattern", STEP_PATTERN, "step", True), ("--step-range train_step", "train_step", None, False),
         ("--step-range '^it[0-9]+$'", "^it[0-9]+$", None, False))


def names(n: int) -> list[str]:
    return [f"step {i}" if i % 1000 == 0 else (f"train_step {i}" if i % 1000 == 1 else f"op_{i}_aten::mm_forward") for i in range(n)]


def one_by_one(pattern: str, texts: list[str]) -> np.ndarray:
    matches = compile_filter(pattern)
    return np.array([matches(t) for t in texts], dtype=bool)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--names", type=int, nargs="+", default=[2_000_000])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
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
