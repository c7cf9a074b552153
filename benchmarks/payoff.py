"""Prove the estimates: what ncuwrap estimated a fix would buy, against the speedup measured.

For each bundled before/after pair, `ncuwrap compare` of the two `--set full` captures (H200,
tests/data/h200_ncuwrap/pairs_full) with the uninstrumented `ncuwrap bench --runs 3` timings of the
same build (tests/data/h200_ncuwrap/bench_pairs): the findings the change resolved, the gain BEFORE's
counters estimated for fixing them together, and the speedup measured.

    python3 benchmarks/payoff.py            # prints the table
    python3 benchmarks/payoff.py --write    # also rewrites docs/payoff.md and tests/data/h200_ncuwrap/payoff.json
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from ncuwrap.compare import compare_files  # noqa: E402

DATA = ROOT / "tests" / "data" / "h200_ncuwrap"
# (before, after, what the change does)
PAIRS = [
    ("transpose-naive", "transpose-padded_tile", "stage the tile in shared memory (padded): coalesced stores"),
    ("transpose-shared_tile", "transpose-padded_tile", "pad the shared tile: no bank conflicts"),
    ("vecadd-strided", "vecadd-coalesced", "consecutive threads on consecutive elements (and 4 elements per thread)"),
    ("reduction-atomic_per_element", "reduction-warp_shuffle", "reduce in registers and warps, one atomic per block"),
    ("spill-spill", "spill-no_spill", "let the kernel have the registers it needs"),
    ("grid_size-few_blocks", "grid_size-full_grid", "one full wave of blocks instead of 8"),
    ("divergence-per_lane", "divergence-per_warp", "branch per warp instead of per lane"),
    ("smem_banks-strided", "smem_banks-padded", "pad the shared tile: no bank conflicts"),
    ("gather-random", "gather-sequential", "sequential indices instead of a random permutation"),
    ("gather-strided", "gather-sequential", "sequential indices instead of a 33-element stride"),
    ("atomics-global_hotspot", "atomics-shared_privatized", "privatize the histogram per block in shared memory"),
    ("occupancy-regs_heavy", "occupancy-block_256", "18 registers instead of ~118: four times the resident warps"),
]
# Where the estimate misses by more than 2x, what the counters cannot see.
WHY = {
    "vecadd-strided": ("the coalesced variant also keeps 4 elements per thread in flight (8 loads issued before the first add), which "
                       "cures the latency-boundness the strided version shows (L2 at 53%, warps waiting on long_scoreboard); the "
                       "estimate credits only the removed sectors"),
    "reduction-atomic_per_element": ("64M atomics on one address: the estimate spreads the hot L2 slice's atomic work evenly and removes "
                                     "the atomics' share of the sectors (94x); warp reduction removes 99.99% of the atomics, whose cost per "
                                     "sector in the L2 is far above a load's, which the counters do not separate"),
}


def family(name: str) -> str:
    return name.split("-", 1)[0]


def run() -> list[dict]:
    rows = []
    for before, after, change in PAIRS:
        bench = DATA / "bench_pairs" / f"{family(before)}.json"
        result = compare_files(DATA / "pairs_full" / f"{before}.raw.csv.gz", DATA / "pairs_full" / f"{after}.raw.csv.gz",
                               before_timing=bench, after_timing=bench)
        (pair,) = result.pairs
        est, measured = pair.estimated_speedup, pair.speedup
        off = max(est, measured) / min(est, measured) if est and measured else None
        rows.append({"before": before, "after": after, "change": change, "resolved": list(pair.resolved),
                     "estimated_gain_pct": round(pair.estimated_gain_pct, 1) if pair.estimated_gain_pct is not None else None,
                     "estimated_speedup": round(est, 2) if est else None, "measured_speedup": round(measured, 2) if measured else None,
                     "factor_off": round(off, 2) if off else None, "within_2x": bool(off and off <= 2.0),
                     "before_ms": pair.before_timing.median_ms if pair.before_timing else None,
                     "after_ms": pair.after_timing.median_ms if pair.after_timing else None,
                     "why_not": WHY.get(before)})
    return rows


def write_doc(rows: list[dict], path: Path) -> None:
    within = sum(r["within_2x"] for r in rows)
    out = [
        "# Payoff: estimated against measured",
        "",
        "Every ncuwrap finding carries an estimated speedup: the share of the kernel's time fixing it would save,",
        "from the kernel's own counters (the bottleneck-shift model of `ncuwrap/estimate.py`, each finding's",
        "`estimate` in `rules/default.yaml`). Here the estimates meet measurements: each bundled before/after pair",
        "profiled with `ncu --set full --clock-control none` and timed uninstrumented with `ncuwrap bench --runs 3`",
        "(verified results, CUDA events, median over 20 launches, across 3 process runs) from one build on the",
        "lent NVIDIA H200 (`benchmarks/device/capture_pairs.sh`). `ncuwrap compare BEFORE AFTER --before-timing",
        "--after-timing` prints the same two numbers. Generated by `benchmarks/payoff.py`.",
        "",
        f"**Within 2x on {within} of {len(rows)} pairs.**",
        "",
        "| before → after | the change | findings resolved | estimated | measured | off by |",
        "|---|---|---|---:|---:|---:|",
    ]
    for r in rows:
        est = f"{r['estimated_speedup']:.2f}x ({r['estimated_gain_pct']:.0f}% of the time)" if r["estimated_speedup"] else "none"
        meas = f"{r['measured_speedup']:.2f}x ({r['before_ms']:.4g} → {r['after_ms']:.4g} ms)"
        off = f"{r['factor_off']:.2f}x" + ("" if r["within_2x"] else " **miss**")
        out.append(f"| {r['before']} → {r['after']} | {r['change']} | {', '.join(f'`{x}`' for x in r['resolved'])} | {est} | {meas} | {off} |")
    misses = [r for r in rows if not r["within_2x"]]
    if misses:
        out += ["", "## Where the estimate misses", ""]
        out += [f"- **{r['before']}**: estimated {r['estimated_speedup']:.2f}x, measured {r['measured_speedup']:.2f}x: {r['why_not']}." for r in misses]
    out += ["", "The pairs `occupancy-block_32 → block_256` (measured 1.02x) and `reduction-shared_tree → warp_shuffle`",
            "(2.45x) are left out of the table: the first has no finding to resolve (ncuwrap estimates nothing, which",
            "is right), the second's gain comes from fewer barriers and shared-memory passes, which no rule measures."]
    path.write_text("\n".join(out) + "\n", encoding="utf-8")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args()
    rows = run()
    for r in rows:
        print(f"{r['before']:30} -> {r['after']:26} est {r['estimated_speedup']}x measured {r['measured_speedup']}x off {r['factor_off']}")
    if args.write:
        write_doc(rows, ROOT / "docs" / "payoff.md")
        (DATA / "payoff.json").write_text(json.dumps(rows, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
