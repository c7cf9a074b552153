"""Render the results table of docs/benchmarks.md from real captures.

Inputs: an `ncuwrap bench --all` JSON (ncuwrap.bench/v1) and the targeted-vs-full JSON of
benchmarks/targeted_vs_full.py (for the verdict ncu gave each variant).
Usage: python benchmarks/results_table.py BENCH.json TVF.json > table.md
"""

from __future__ import annotations

import json
import sys


def fmt(value, digits=0, suffix=""):
    return "-" if value is None else f"{value:,.{digits}f}{suffix}"


def main() -> None:
    bench = json.load(open(sys.argv[1]))
    tvf = {v["name"]: v for v in json.load(open(sys.argv[2]))["variants"]}
    print(f"Copy ceiling: {bench['ceiling']['gbps']:,.0f} GB/s ({bench['ceiling']['source']}).\n")
    print("| family / variant | median ms (3 runs) | spread | GB/s | TFLOP/s | % peak | % ceiling | library | ncu verdict (targeted = full) |")
    print("|---|---:|---:|---:|---:|---:|---:|---|---|")
    for b in bench["benchmarks"]:
        name = f"{b['name']}/{b['variant']}"
        lib = (b.get("library") or {}).get("advice") or "-"
        verdicts = tvf.get(name, {}).get("targeted", {}).get("verdicts", [])
        verdict = "; ".join(f"{v['bound']}/{v['limiter'] or '-'} [{', '.join(v['findings']) or 'no finding'}]" for v in verdicts) or "(not profiled)"
        print(f"| {b['name']} / {b['variant']} | {b['median_ms']:.4f} | {fmt(b.get('spread_pct'), 1, '%')} | {fmt(b.get('gbps'))} | "
              f"{fmt(b.get('tflops'), 1)} | {fmt(b.get('pct_of_peak'))} | {fmt(b.get('pct_of_ceiling'))} | {lib} | {verdict} |")


if __name__ == "__main__":
    main()
