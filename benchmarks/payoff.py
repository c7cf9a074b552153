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


# What --write rewrites of docs/payoff.md: the lines between these two (the page's own words around them are the page's).
BEGIN, END = "<!-- written by benchmarks/payoff.py --write -->", "<!-- end of what benchmarks/payoff.py writes -->"


def table(rows: list[dict]) -> list[str]:
    """The page's figures: how many pairs are within WITHIN, one row a pair, and the misses."""
    within = sum(r["within"] for r in rows)
    out = [
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
    return out


def written(text: str) -> list[str]:
    """The lines of the page between BEGIN and END."""
    return text.partition(BEGIN + "\n")[2].partition(END)[0].splitlines()


def write_doc(rows: list[dict], path: Path) -> None:
    """Rewrite the figures of the page at ``path`` (between BEGIN and END) from ``rows``."""
    text = path.read_text(encoding="utf-8")
    head, _, rest = text.partition(BEGIN + "\n")
    tail = rest.partition(END)[2]
    path.write_text(head + BEGIN + "\n" + "\n".join(table(rows)) + "\n" + END + tail, encoding="utf-8")


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
