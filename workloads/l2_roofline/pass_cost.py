#!/usr/bin/env python3
"""What each group of ``--collect targeted``'s metrics costs in replay passes (needs a GPU and ncu).

ncu schedules counters into passes; a metric's cost depends on what is already collected, so each group is
measured twice on one bundled variant's first timed launch: alone, and added to the groups before it (the
marginal passes). Groups whose marginal cost is above zero are then split metric by metric (each metric
added alone to the groups before). Console pass counts only; nothing is diagnosed.

    PYTHONPATH=$PWD python3 workloads/l2_roofline/pass_cost.py --out /tmp/pc [--variant transpose/naive] [--deadline 400]

Writes OUT/pass_cost.json (rows: label, metrics, passes, wall_s) after every run.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent.parent))

from ncuwrap.profile import targets as T  # noqa: E402
from ncuwrap.profile.collection import Collection, plan_collection  # noqa: E402
from ncuwrap.profile.ncu_argv import ncu_argv  # noqa: E402
from ncuwrap.profile.ncu_tool import ncu_tool, run_ncu  # noqa: E402

# Groups in the order a verdict needs them: throughputs first, instrumented (SASS-patched) metrics last.
GROUPS = (
    ("throughputs + clocks + duration", lambda m: "throughput" in m or m.startswith("gpu__time") or "cycles_elapsed.avg.per_second" in m
     or m.startswith("dram__bytes")),
    ("pipe utilisation (sm__inst_executed_pipe_*, sm__pipe_*)", lambda m: m.startswith(("sm__inst_executed_pipe_", "sm__pipe_"))),
    ("tensor op counts and peaks (sm__ops_path_tensor_*)", lambda m: m.startswith("sm__ops_path_tensor")),
    ("warp stall reasons", lambda m: m.startswith("smsp__average_warps_issue_stalled")),
    ("instructions executed, lanes per instruction", lambda m: m in ("smsp__inst_executed.sum", "smsp__thread_inst_executed_per_inst_executed.ratio")),
    ("L1 requests and sectors (l1tex__t_*)", lambda m: m.startswith("l1tex__t_")),
    ("L1 data pipe, shared wavefronts and conflicts (l1tex__data_*)", lambda m: m.startswith("l1tex__data_")),
    ("TMA sectors (l1tex__m_*)", lambda m: m.startswith("l1tex__m_")),
    ("L2 units (lts__* besides throughput)", lambda m: m.startswith("lts__") and "lts__throughput" not in m),
    ("SASS: bytes per sector, LDGSTS", lambda m: m.startswith(("smsp__sass_average_data_bytes", "sm__sass_l1tex", "smsp__sass_l1tex"))),
    ("SASS: shared load/store instructions", lambda m: m.startswith("smsp__sass_inst_executed_op_shared")),
    ("SASS: FP32/FP64 thread instructions (FLOP counts)", lambda m: "_thread_inst_executed_op_" in m),
)


def run(target, tool, folder: Path, sections, metrics) -> dict:
    folder.mkdir(parents=True, exist_ok=True)
    collection = Collection(mode="sections", sections=tuple(sections), metrics=tuple(metrics))
    argv = ncu_argv(target.argv, collect=collection, output=folder / "report", ncu=tool.path, kernel=target.kernel,
                    launch_skip=target.launch_skip, launch_count=1, force=True)
    done = run_ncu(argv, folder / "ncu.log")
    return {"passes": done.passes[0] if done.passes else None, "wall_s": round(done.wall_s, 2), "errors": done.errors[:2]}


THROUGHPUTS = ("sm__throughput.avg.pct_of_peak_sustained_elapsed", "lts__throughput.avg.pct_of_peak_sustained_elapsed",
               "l1tex__throughput.avg.pct_of_peak_sustained_elapsed", "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed")


def breakdown(target, tool, folder: Path) -> dict:
    """The metrics each SOL throughput is the max of (ncu's breakdown: prefix), their values and passes."""
    import csv
    import subprocess

    out = {}
    for metric in THROUGHPUTS:
        sub = folder / metric.split("__")[0]
        argv = [tool.path, "--clock-control", "none", "--metrics", f"breakdown:{metric}", "--launch-count", "1", "--csv", "--page", "raw"]
        if target.kernel:
            argv += ["--kernel-name", f"regex:{target.kernel}"]
        if target.launch_skip:
            argv += ["--launch-skip", str(target.launch_skip)]
        done = subprocess.run(argv + list(target.argv), capture_output=True, text=True, timeout=120)
        passes = [int(w.split()[-2]) for w in done.stdout.splitlines() + done.stderr.splitlines() if w.strip().endswith("passes") and "==PROF==" in w]
        lines = [ln for ln in done.stdout.splitlines() if ln.startswith('"')]
        values = {}
        if len(lines) >= 3:
            rows = list(csv.reader(lines))
            values = {h: v for h, v in zip(rows[0], rows[2]) if "__" in h}
        out[metric] = {"passes": passes[:1], "components": values}
        sub.mkdir(parents=True, exist_ok=True)
        print(f"breakdown {metric}: {passes[:1]} passes, {len(values)} components", flush=True)
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=Path("pass_cost"))
    parser.add_argument("--variant", default="transpose/naive")
    parser.add_argument("--deadline", type=float, default=400)
    parser.add_argument("--ncu", default=None)
    parser.add_argument("--last", default="", help="comma list of words: groups whose label holds one go last (another order)")
    parser.add_argument("--no-split", action="store_true", help="do not split costly groups metric by metric")
    parser.add_argument("--breakdown", action="store_true", help="also list what the SOL throughputs are a max over, and their passes")
    args = parser.parse_args(argv)
    t0 = time.monotonic()
    from ncuwrap.bundled.manifest import load_manifest

    tool = ncu_tool(args.ncu)
    family, variant = args.variant.split("/")
    target = T.bundled(family, variant, manifest=load_manifest())
    targeted = plan_collection("targeted")
    metrics = list(targeted.metrics)
    grouped = {label: [m for m in metrics if pick(m)] for label, pick in GROUPS}
    claimed = {m for ms in grouped.values() for m in ms}
    grouped["other"] = [m for m in metrics if m not in claimed]
    last = [w for w in args.last.split(",") if w]
    grouped = dict(sorted(grouped.items(), key=lambda kv: any(w in kv[0] for w in last)))
    doc = {"schema": "ncuwrap.pass_cost/v1", "variant": args.variant, "ncu": tool.version_string, "sections": list(targeted.sections),
           "rows": []}
    out = args.out
    out.mkdir(parents=True, exist_ok=True)

    def record(label, kind, sections, ms, group=None):
        if time.monotonic() - t0 > args.deadline:
            return None
        row = {"label": label, "kind": kind, "group": group, "metrics": list(ms), **run(target, tool, out / "runs" / str(len(doc["rows"])), sections, ms)}
        doc["rows"].append(row)
        (out / "pass_cost.json").write_text(json.dumps(doc, indent=1) + "\n")
        print(f"{kind:10} {row['passes']!s:>4} passes {row['wall_s']:6.1f} s  {label}", flush=True)
        return row["passes"]

    record("warm-up (free sections)", "warmup", targeted.sections, [])
    base = record("free sections LaunchStats+Occupancy", "base", targeted.sections, []) or 0
    record("targeted, all", "all", targeted.sections, metrics)
    so_far: list[str] = []
    before = base
    marginal = {}
    for label, ms in grouped.items():
        if not ms:
            continue
        record(label, "alone", targeted.sections, ms, label)
        after = record(label, "cumulative", targeted.sections, so_far + ms, label)
        if after is None:
            break
        marginal[label] = (before, after, list(so_far))
        so_far += ms
        before = after
    if args.breakdown:
        doc["breakdown"] = breakdown(target, tool, out / "runs" / "breakdown")
        (out / "pass_cost.json").write_text(json.dumps(doc, indent=1) + "\n")
    for label, (before, after, prior) in marginal.items():
        if args.no_split or after <= before:
            continue
        for m in grouped[label]:
            record(m, "metric", targeted.sections, prior + [m], label)
    doc["wall_s"] = round(time.monotonic() - t0, 1)
    (out / "pass_cost.json").write_text(json.dumps(doc, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
