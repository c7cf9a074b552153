#!/usr/bin/env python3
"""The ncu command lines `ncuwrap profile --top 3 --metrics EXTRA_METRICS -- python3 PROGRAM ARGS` would run for
capture.sh's programs, computed with ncuwrap's own functions from capture.sh's nsys captures, and written into
capture.sh's NCU_TOP3 block (the ncu job runs them on the GPU machine, where ncuwrap cannot be installed).

For each NAME.sqlite.gz given (an export capture.sh made; the command after ``--`` in NAME.log is the program
and its arguments), exactly what ``ncuwrap profile --top 3`` does after its own nsys run
(ncuwrap.profile.pipeline, its --top run): the capture analysed (``ncuwrap.timeline.measured.analyse``: its steps
found), ``pipeline.steady_times(data, steps, 3)`` (the kernels of the steady steps, grouped by mangled name and launch
configuration, and the launches of each group made before them), ``top.plan(times, 3, before)`` (the regular
expression over the first 3 groups' mangled names and the launch of each to profile), and
``ncu_argv(..., kernel_name_base="mangled")`` with the targeted collection plus EXTRA_METRICS
(``collection.plan_collection("targeted", None, EXTRA_METRICS)``). Only the ranking capture differs from
ncuwrap's: capture.sh's runs nsys with ``--pytorch=autograd-shapes-nvtx`` where ncuwrap passes
``--pytorch=autograd-nvtx`` (the same kernels are launched).

capture.sh builds each argv as ``NCU --export OUT --clock-control none --kernel-name-base mangled --kernel-id ID
NCU_COLLECT... python3 PROGRAM ARGS``; this script checks that this is, word for word, the argv ncu_argv gives
(with OUT and NCU as placeholders), then writes NCU_COLLECT and one NCU_RUNS entry per program
(``NAME 'ID' PROGRAM ARGS``). It prints each plan (the 3 groups, their share of the ranked GPU time, the launch)
as JSON lines, and writes them to --plans.

    . .venv/bin/activate
    python3 workloads/op_limits/ncu_top3.py --capture-sh workloads/op_limits/capture.sh --plans PLANS.jsonl CAPTURES/*.sqlite.gz
"""

from __future__ import annotations

import argparse
import gzip
import json
import re
import shlex
import shutil
import sys
import tempfile
from pathlib import Path

from ncuwrap.profile import pipeline, top
from ncuwrap.profile.collection import plan_collection
from ncuwrap.profile.ncu_argv import NcuOptions, ncu_argv
from ncuwrap.timeline.measured import analyse
from ncuwrap.timeline.options import TimelineOptions
from ncuwrap.timeline.readers import nsys_sqlite

TOP = 3
BEGIN, END = "# >>> NCU_TOP3", "# <<< NCU_TOP3"


def program_of(log: Path) -> list[str]:
    """``python3 PROGRAM ARGS`` from the capture's log: what follows ``--`` in its first line."""
    first = log.read_text(encoding="utf-8", errors="replace").splitlines()[0]
    words = shlex.split(first)
    return words[words.index("--") + 1:]


def plan_for(sqlite_gz: Path, extra: list[str]) -> dict:
    log = sqlite_gz.with_name(sqlite_gz.name.replace(".sqlite.gz", ".log"))
    target = program_of(log)
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "capture.sqlite"
        with gzip.open(sqlite_gz, "rb") as src, open(db, "wb") as dst:
            shutil.copyfileobj(src, dst)
        analysed = analyse(nsys_sqlite.read(db), kind="nsys-rep", source_path=str(sqlite_gz), timeline=TimelineOptions())
        times, before = pipeline.steady_times(analysed.data, analysed.steps, TOP)
    chosen = top.plan(times, TOP, before)
    collection = plan_collection("targeted", None, extra)
    argv = ncu_argv(target, collect=collection, output="OUT", ncu="NCU", kernel=chosen.regex, nth_launch=chosen.nth_launch,
                    force=False, extra=(), kernel_name_base="mangled", options=NcuOptions())
    kid = argv[argv.index("--kernel-id") + 1]
    built = ["NCU", "--export", "OUT", "--clock-control", "none", "--kernel-name-base", "mangled", "--kernel-id", kid,
             *collection.argv(), *target]
    if built != argv:
        raise SystemExit(f"{sqlite_gz}: capture.sh's argv would differ from ncuwrap's:\n{argv}\n{built}")
    return {"name": sqlite_gz.name[: -len(".sqlite.gz")], "target": target[1:], "kernel_id": kid, "nth_launch": chosen.nth_launch,
            "why": chosen.why(), "scope": times.scope, "ranked_gpu_ns": times.total_ns, "ranked_launches": times.launches,
            "groups": [{"name": g.name, "mangled": g.mangled, "grid": g.grid, "block": g.block, "launches": g.launches,
                        "total_ns": g.total_ns, "share_pct": round(g.share_pct, 2)} for g in chosen.groups],
            "collect_argv": collection.argv(), "argv": argv}


def block(plans: list[dict]) -> str:
    lines = [BEGIN + " (written by workloads/op_limits/ncu_top3.py from the captures' ncuwrap plans; do not edit by hand)"]
    lines.append("NCU_COLLECT=(" + " ".join(shlex.quote(a) for a in plans[0]["collect_argv"]) + ")")
    lines.append("NCU_RUNS=(")
    for p in plans:
        words = [p["name"], p["kernel_id"], *p["target"]]
        lines.append("  " + shlex.quote(" ".join(shlex.quote(w) for w in words)))
    lines.append(")")
    lines.append(END)
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("captures", nargs="+", type=Path, help="NAME.sqlite.gz exports made by capture.sh (NAME.log beside each)")
    ap.add_argument("--capture-sh", type=Path, required=True, help="capture.sh, whose EXTRA_METRICS are read and NCU_TOP3 block rewritten")
    ap.add_argument("--plans", type=Path, help="write the plans here (JSON lines)")
    args = ap.parse_args()
    script = args.capture_sh.read_text(encoding="utf-8")
    found = re.search(r"^EXTRA_METRICS=(\S+)$", script, re.M)
    if not found:
        raise SystemExit(f"{args.capture_sh}: no EXTRA_METRICS= line")
    extra = found.group(1).split(",")
    plans = [plan_for(p, extra) for p in args.captures]
    if len({json.dumps(p["collect_argv"]) for p in plans}) != 1:
        raise SystemExit("the collections differ between programs")
    start, end = script.index(BEGIN), script.index(END) + len(END)
    args.capture_sh.write_text(script[:start] + block(plans) + script[end:], encoding="utf-8")
    for p in plans:
        print(json.dumps({k: v for k, v in p.items() if k not in ("collect_argv", "argv")}))
    if args.plans:
        args.plans.write_text("".join(json.dumps(p) + "\n" for p in plans), encoding="utf-8")
    print(f"wrote {len(plans)} runs into {args.capture_sh}", file=sys.stderr)


if __name__ == "__main__":
    main()
