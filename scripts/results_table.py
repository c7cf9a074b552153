"""Render the results table of docs/benchmarks.md from real captures.

Inputs: an `ncuwrap bench --all` JSON (ncuwrap.bench/v1), the targeted-vs-full JSON of
benchmarks/targeted_vs_full.py (for the verdict ncu gave each variant), and optionally a folder of
raw CSV exports named FAMILY-VARIANT.raw.csv from `ncuwrap profile` of variants that sweep did not
cover (diagnosed here).
Usage: python scripts/results_table.py BENCH.json TVF.json [PROFILED_DIR] > table.md
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def fmt(value, digits=0, suffix=""):
    return "-" if value is None else f"{value:,.{digits}f}{suffix}"


def _verdict_text(verdicts: list[dict]) -> str:
    return "; ".join(f"{v['bound']}/{v['limiter'] or '-'} [{', '.join(v['findings']) or 'no finding'}]" for v in verdicts)


def _profiled(folder: Path) -> dict[str, list[dict]]:
    from ncuwrap.kernel.diagnosis import diagnose

    out = {}
    for path in sorted(folder.glob("*.raw.csv")):
        family, variant = path.name[: -len(".raw.csv")].split("-", 1)
        out[f"{family}/{variant}"] = [{"bound": k.bound, "limiter": k.limiter, "findings": k.finding_ids()} for k in diagnose(path).kernels]
    return out


def _ceiling(b: dict) -> str:
    same, large = b.get("pct_of_ceiling_same_bytes"), b.get("pct_of_ceiling_large", b.get("pct_of_ceiling"))
    if same is None:
        return fmt(large)
    judged = b.get("ceiling_basis") == "same_bytes"
    return f"{fmt(same)}{'*' if judged else ''} / {fmt(large)}{'' if judged else '*'}"


def main() -> None:
    bench = json.load(open(sys.argv[1]))
    tvf = {v["name"]: v.get("targeted", {}).get("verdicts", []) for v in json.load(open(sys.argv[2]))["variants"]}
    profiled = _profiled(Path(sys.argv[3])) if len(sys.argv) > 3 else {}
    print(f"Copy ceiling: {bench['ceiling']['gbps']:,.0f} GB/s at 1 GiB ({bench['ceiling']['source']}); "
          "% ceiling: at the variant's own bytes / at 1 GiB, * on the one the manifest judges by.\n")
    print("| family / variant | median ms (3 runs) | spread | GB/s | TFLOP/s | % peak | % ceiling | library | ncu verdict (targeted) |")
    print("|---|---:|---:|---:|---:|---:|---:|---|---|")
    for b in bench["benchmarks"]:
        name = f"{b['name']}/{b['variant']}"
        lib = (b.get("library") or {}).get("advice") or "-"
        verdict = _verdict_text(tvf.get(name) or profiled.get(name) or []) or "(not profiled)"
        print(f"| {b['name']} / {b['variant']} | {b['median_ms']:.4f} | {fmt(b.get('spread_pct'), 1, '%')} | {fmt(b.get('gbps'))} | "
              f"{fmt(b.get('tflops'), 1)} | {fmt(b.get('pct_of_peak'))} | {_ceiling(b)} | {lib} | {verdict} |")


if __name__ == "__main__":
    main()
