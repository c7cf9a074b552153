#!/usr/bin/env python3
"""Profile the same bundled variants several times and report every verdict that flips (needs a GPU).

A verdict that changes between two runs of the same kernel is no verdict: this finds them. Each run
profiles the variant's first timed launch (the manifest's filter and launch skip) through the library,
and compares bound, limiter, pipe, the findings with their severities, and the borderline flag. A
flip on a kernel the rules mark borderline is expected (the numbers sit within `margin` of a line);
any other flip is a defect to look at.

    PYTHONPATH=$PWD python3 scripts/verdict_stability.py --out /tmp/stab --runs 3 \\
        [--only transpose,gather/random] [--collect targeted|full] [--deadline 300]

Writes OUT/verdict_stability.json after every variant.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))  # targeted_vs_full

from ncuwrap.cli.profile import write_documents  # noqa: E402
from ncuwrap.profile import ProfileOptions, profile  # noqa: E402
from ncuwrap.profile import targets as T  # noqa: E402
from ncuwrap.bundled.manifest import load_manifest  # noqa: E402
from ncuwrap.profile.ncu_tool import ncu_tool  # noqa: E402
from targeted_vs_full import selected  # noqa: E402


def fingerprint(kernel) -> dict:
    return {"bound": kernel.bound, "limiter": kernel.limiter, "pipe": kernel.pipe if kernel.bound == "compute" else None,
            "findings": sorted(f"{f.id}:{f.severity}" for f in kernel.findings), "borderline": kernel.borderline,
            "sm_pct": kernel.values.get("sm_pct"), "memory_pct": kernel.values.get("memory_pct")}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("verdict_stability"))
    parser.add_argument("--only", help="comma list of families or family/variant (default: every profiled variant)")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--collect", default="targeted")
    parser.add_argument("--deadline", type=float, default=None, help="start no new variant after this many seconds")
    args = parser.parse_args()
    start = time.monotonic()
    tool = ncu_tool()
    manifest = load_manifest()
    args.out.mkdir(parents=True, exist_ok=True)
    doc = {"runs": args.runs, "collect": args.collect, "variants": []}
    for family, variant in selected(manifest, args.only):
        if args.deadline is not None and time.monotonic() - start > args.deadline:
            doc.setdefault("not_run", []).append(f"{family}/{variant}")
            continue
        target = T.bundled(family, variant, manifest=manifest)
        prints = []
        for run in range(args.runs):
            result = profile(target, args.out / "runs" / f"{family}-{variant}" / str(run),
                             ProfileOptions(collect=args.collect, ncu=tool.path, force=True),
                             find_tool=lambda _path: tool)
            write_documents(result, html=False)
            prints.append([fingerprint(k) for k in result.diagnosis.kernels])
        decisive = [[{k: v for k, v in p.items() if k not in ("sm_pct", "memory_pct", "borderline")} for p in run] for run in prints]
        flipped = any(d != decisive[0] for d in decisive[1:])
        borderline = any(p["borderline"] for run in prints for p in run)
        doc["variants"].append({"name": f"{family}/{variant}", "flipped": flipped, "borderline": borderline, "runs": prints})
        print(f"{family}/{variant}: {'FLIPS' if flipped else 'stable'}{' (borderline)' if borderline else ''}", flush=True)
        (args.out / "verdict_stability.json").write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
    flips = [v["name"] for v in doc["variants"] if v["flipped"]]
    unexplained = [v["name"] for v in doc["variants"] if v["flipped"] and not v["borderline"]]
    print(f"{len(doc['variants'])} variants x {args.runs} runs: {len(flips)} flip ({', '.join(flips) or 'none'}); "
          f"not marked borderline: {', '.join(unexplained) or 'none'}")
    return 1 if unexplained else 0


if __name__ == "__main__":
    sys.exit(main())
