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

from ncuwrap.kernel.compare import compare_files  # noqa: E402

DATA = ROOT / "tests" / "data" / "h200_ncuwrap"
# (before, after, what the change does[, the capture's folder under pairs_full/ and bench_pairs/ when
# not the first one: a family re-captured with a variant added])
PAIRS = [
    ("transpose-naive", "transpose-padded_tile", "stage the tile in shared memory (padded): coalesced stores"),
    ("transpose-shared_tile", "transpose-padded_tile", "pad the shared tile: no bank conflicts"),
    ("vecadd-strided", "vecadd-one_per_thread", "consecutive threads on consecutive elements, nothing else", "2026-12-01"),
    ("reduction-atomic_per_element", "reduction-shared_tree", "reduce in the block first, one atomic per block"),
    ("spill-spill", "spill-no_spill", "let the kernel have the registers it needs"),
    ("grid_size-few_blocks", "grid_size-full_grid", "one full wave of blocks instead of 8"),
    ("divergence-per_lane", "divergence-per_warp", "branch per warp instead of per lane"),
    ("smem_banks-strided", "smem_banks-padded", "pad the shared tile: no bank conflicts"),
    ("gather-random", "gather-sequential", "sequential indices instead of a random permutation"),
    ("gather-strided", "gather-sequential", "sequential indices instead of a 33-element stride"),
    ("atomics-global_hotspot", "atomics-shared_privatized", "privatize the histogram per block in shared memory"),
    ("occupancy-regs_heavy", "occupancy-block_256", "18 registers instead of ~118: four times the resident warps"),
    ("layout-aos_field", "layout-soa", "the field in its own array (structure of arrays)"),
]
# The bar: an estimate within this factor of the measured speedup (issue 24).
WITHIN = 1.5
# Where the estimate misses by more than WITHIN, what the counters cannot see.
WHY: dict[str, str] = {}


def family(name: str) -> str:
    return name.split("-", 1)[0]


def run() -> list[dict]:
    rows = []
    for before, after, change, *capture in PAIRS:
        folder = capture[0] if capture else "."
        bench = DATA / "bench_pairs" / folder / f"{family(before)}.json"
        full = DATA / "pairs_full" / folder
        result = compare_files(full / f"{before}.raw.csv.gz", full / f"{after}.raw.csv.gz",
                               before_timing=bench, after_timing=bench)
        (pair,) = result.pairs
        est, measured = pair.estimated_speedup, pair.speedup
        off = max(est, measured) / min(est, measured) if est and measured else None
        rows.append({"before": before, "after": after, "change": change, "resolved": list(pair.resolved),
                     "estimated_gain_pct": round(pair.estimated_gain_pct, 1) if pair.estimated_gain_pct is not None else None,
                     "estimated_speedup": round(est, 2) if est else None, "measured_speedup": round(measured, 2) if measured else None,
                     "factor_off": round(off, 2) if off else None, "within": bool(off and off <= WITHIN),
                     "before_ms": pair.before_timing.median_ms if pair.before_timing else None,
                     "after_ms": pair.after_timing.median_ms if pair.after_timing else None,
                     "why_not": WHY.get(before)})
    return rows


def write_doc(rows: list[dict], path: Path) -> None:
    within = sum(r["within"] for r in rows)
    out = [
        "# Payoff: estimated against measured",
        "",
        "Every ncuwrap finding carries an estimated speedup: the share of the kernel's time fixing it would save,",
        "from the kernel's own counters (the bottleneck-shift model of `ncuwrap/kernel/estimate.py`, each finding's",
        "`estimate` in `rules/default.yaml`). Here the estimates meet measurements: each bundled before/after pair",
        "profiled with `ncu --set full --clock-control none` and timed uninstrumented with `ncuwrap bench --runs 3`",
        "(verified results, CUDA events, median over 20 launches, across 3 process runs) from one build per family on",
        "the lent NVIDIA H200 (`benchmarks/device/capture_pairs.sh`; 2026-11-30, the vecadd, layout and bytes_in_flight",
        "families 2026-12-01). `ncuwrap compare BEFORE AFTER --before-timing",
        "--after-timing` prints the same two numbers. Generated by `benchmarks/payoff.py`.",
        "",
        f"**Within {WITHIN:g}x on {within} of {len(rows)} pairs.** Each pair changes what its finding names and nothing",
        "else (the earlier vecadd and reduction pairs changed more than that: see \"Pairs left out\").",
        "",
        "| before → after | the change | findings resolved | estimated | measured | off by |",
        "|---|---|---|---:|---:|---:|",
    ]
    for r in rows:
        est = f"{r['estimated_speedup']:.2f}x ({r['estimated_gain_pct']:.0f}% of the time)" if r["estimated_speedup"] else "none"
        meas = f"{r['measured_speedup']:.2f}x ({r['before_ms']:.4g} → {r['after_ms']:.4g} ms)"
        off = f"{r['factor_off']:.2f}x" + ("" if r["within"] else " **miss**")
        out.append(f"| {r['before']} → {r['after']} | {r['change']} | {', '.join(f'`{x}`' for x in r['resolved'])} | {est} | {meas} | {off} |")
    misses = [r for r in rows if not r["within"]]
    if misses:
        out += ["", "## Where the estimate misses", ""]
        out += [f"- **{r['before']}**: estimated {r['estimated_speedup']:.2f}x, measured {r['measured_speedup']:.2f}x: {r['why_not']}." for r in misses]
    out += ["", "## What the model reads", "",
            "- **What the fixed kernel can reach.** No unit runs past what the fixed kernel can reach on it: DRAM's",
            "  bandwidth follows the bytes a thread keeps in flight (its load width times its loads, up to 4), read off",
            "  the `bytes_in_flight` ladder measured on the H200 (4 bytes a thread: 54% of the 4,814 GB/s peak; 8: 76%;",
            "  16 and more: 80-83%; `reach` in rules/default.yaml). The layout pair is the case: its estimate was 4.4x",
            "  (DRAM at its 90% roof after the fix) against 2.6x measured; the fixed kernel, one float a thread, runs at 52%.",
            "- **L2's two kinds of work.** L2 is busy with sectors (its data paths) and with requests (tags, the crossbar",
            "  in); a scattered store is a request per sector, the same stores coalesced one per 128-byte line. Each",
            "  finding removes its share of each (`l2`, `l2_requests`): the naive transpose's estimate went from 4.50x to",
            "  6.99x against 6.42x measured.",
            "- **DRAM's granularity.** A scattered 4-byte load costs DRAM a 64-byte access, twice its sector: the loads'",
            "  waste at DRAM is the bytes read beyond what coalesced loads would read (the random gather read 4.25 GB",
            "  where 0.54 GB would do).",
            "- **Which unit keeps its pace.** The unit busiest now keeps the pace it runs at (its work left takes the",
            "  share of the time it leaves); a unit that takes over after the fix runs up to what the fixed kernel can",
            "  reach on it. The strided vecadd is latency-bound with L2 at 53%: fixed, its SMs (11%) and DRAM (10%, 8",
            "  bytes a thread in flight: 76% reachable) limit it at 8.0x against 7.4x measured; at L2's pace the SMs",
            "  made it 4.8x.",
            "- **Atomics' passes.** The lanes of one atomic request on one address serialize: each costs L2's atomic",
            "  unit and the SM's MIO queue a pass (a sector): 32 for a reduction to one value, 11 for a 4-bin histogram",
            "  (the counters' sectors per request). A block reduction leaves one request, one pass, per block; spreading",
            "  the addresses leaves the average slice's work: the fix removes the larger share, and the passes' cycles in",
            "  the MIO queue where they are the SMs' busiest work. The one-address reduction went from 94x (spread) to",
            "  256x (one pass per block) against 314x measured; the histogram keeps 94x against 125x.",
            "- **Findings fixed together** remove the sum of their shares of a unit's work (each is a share of the work",
            "  as measured), and a latency-bound kernel keeps the longer of the work left and its latency-bound part.",
            "",
            "## Pairs left out",
            "",
            "- `vecadd-strided → vecadd-coalesced` (9.43x measured, estimated 8.02x): the coalesced variant also gives",
            "  each thread 4 elements (8 loads in flight); the fair pair is the one in the table.",
            "- `reduction-atomic_per_element → reduction-warp_shuffle` (769.68x): grid-stride float4 loads and warp",
            "  shuffles besides one atomic per block; the fair pair (one atomic per block, nothing else) is in the table.",
            "- `occupancy-block_32 → block_256` (1.02x) has no finding to resolve (ncuwrap estimates nothing, which is",
            "  right); `reduction-shared_tree → warp_shuffle` (2.45x) gains from fewer barriers and shared-memory",
            "  passes, which no rule measures; `layout-soa → soa_float4` (1.54x, 16 bytes a thread in flight instead of",
            "  4) has no finding either: the latency-bound `soa` is told to put more bytes in flight (its next step)."]
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
