#!/usr/bin/env python3
"""Compare ``--collect targeted`` with ``--collect full`` on every bundled benchmark variant (needs a GPU).

For each profiled variant of kernels/manifest.yaml: build its binary (cached, in parallel), time the
plain program, profile the variant's first timed launch with targeted and with full through the
library (:func:`ncuwrap.profile.profile`), and record the replay passes, ncu's wall time and whether
bound, limiter and findings are identical. The target: targeted <= 10 passes and <= 40% of full's wall
time, with identical verdicts.

Writes OUT/targeted_vs_full.json and OUT/targeted_vs_full.md after every variant, so a run cut short
(--deadline, or a killed job) keeps what it measured; OUT/runs/<family>-<variant>/<collect>/ are the
run folders (the .ncu-rep, verdict.json, profile.json, ncu.log...).

    PYTHONPATH=$PWD python3 benchmarks/targeted_vs_full.py --out /tmp/tvf [--only transpose,vecadd/strided]
        [--deadline 420] [--calibrate] [--artifacts] [--summary-to DIR] [--ncu PATH] [--arch sm_90]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from ncuwrap.cli.profile import write_documents  # noqa: E402
from ncuwrap.core.errors import NcuwrapError  # noqa: E402
from ncuwrap.profile import ProfileOptions, profile, same_verdicts, verdicts  # noqa: E402
from ncuwrap.profile import targets as T  # noqa: E402
from ncuwrap.profile.ncu_tool import ncu_tool  # noqa: E402

TARGET_PASSES = 10
TARGET_RATIO = 0.40
FIRST = ("transpose",)  # the families the issue names go first
KEY_METRICS = ("sm_pct", "memory_pct", "dram_pct", "l2_pct", "l1tex_pct", "achieved_occupancy_pct")
SPILL_METRICS = ("derived__local_spilling_requests", "sass__inst_executed_register_spilling",
                 "sass__inst_executed_register_spilling_mem_local", "l1tex__t_sectors_pipe_lsu_mem_local_op_st.sum")
# --calibrate: what each part of targeted costs, measured once on transpose/naive (label, sections,
# metric filter over targeted's --metrics, set).
CALIBRATION = (
    ("sections LaunchStats+Occupancy", ("LaunchStats", "Occupancy"), None, None),
    ("section SpeedOfLight", ("SpeedOfLight",), None, None),
    ("throughputs by name (sm, dram, lts, l1tex %) + duration", (), lambda m: "throughput" in m or m.startswith("gpu__time"), None),
    ("L1 sectors/requests/wavefronts/conflicts", (), lambda m: m.startswith(("l1tex__t_", "l1tex__data_")), None),
    ("SASS-instrumented (smsp__sass_*)", (), lambda m: m.startswith(("smsp__sass_", "sm__sass_")), None),
    ("the rest (lanes, atomics, clocks, DRAM bytes/s, peaks)", (), lambda m: not ("throughput" in m or m.startswith(
        ("gpu__time", "l1tex__t_", "l1tex__data_", "smsp__sass_", "sm__sass_"))), None),
    ("targeted", None, None, None),
    ("targeted + section SpeedOfLight", ("SpeedOfLight",), lambda m: True, None),
    ("--set basic", (), None, "basic"),
)


def calibrate(target, folder: Path, tool) -> list[dict]:
    """Replay passes and ncu wall time of each part of targeted (console passes; nothing diagnosed)."""
    from ncuwrap.profile.collection import Collection, plan_collection
    from ncuwrap.profile.ncu_argv import ncu_argv
    from ncuwrap.profile.ncu_tool import run_ncu

    targeted = plan_collection("targeted")
    rows = []
    for i, (label, sections, pick, set_name) in enumerate(CALIBRATION):
        if sections is None:
            collection = targeted
        else:
            extra = tuple(targeted.sections) if label.startswith("targeted") else ()
            metrics = tuple(m for m in targeted.metrics if pick(m)) if pick else ()
            collection = Collection(mode="sections", set_name=set_name, sections=tuple(dict.fromkeys(extra + tuple(sections))), metrics=metrics)
        out = folder / str(i)
        out.mkdir(parents=True, exist_ok=True)
        argv = ncu_argv(target.argv, collect=collection, output=out / "report", ncu=tool.path, kernel=target.kernel,
                        launch_skip=target.launch_skip, launch_count=1, force=True)
        run = run_ncu(argv, out / "ncu.log")
        rows.append({"label": label, "argv": argv, "passes": run.passes[0] if run.passes else None,
                     "wall_s": round(run.wall_s, 3), "errors": run.errors[:2]})
        print(f"calibration: {label}: {rows[-1]['passes']} passes {rows[-1]['wall_s']} s {' '.join(run.errors[:1])}", flush=True)
    return rows


def selected(manifest, only: str | None) -> list[tuple[str, str]]:
    wanted = [w.strip() for w in (only or "").split(",") if w.strip()]
    out = []
    benches = sorted(manifest.benchmarks, key=lambda b: (b.name not in FIRST, FIRST.index(b.name) if b.name in FIRST else 0))
    for bench in benches:
        for variant in bench.variants:
            if variant.profile is None:
                continue
            name = f"{bench.name}/{variant.name}"
            if not wanted or bench.name in wanted or name in wanted:
                out.append((bench.name, variant.name))
    return out


def build_all(families: list[str], manifest, arch: str | None) -> dict[str, object]:
    """family -> binary path, or the error text."""
    from ncuwrap.bundled.build import build_one, detect_arch, find_nvcc

    nvcc = find_nvcc()
    arch = arch or detect_arch().arch

    def one(name):
        try:
            return name, build_one(name, arch, manifest=manifest, nvcc=nvcc).binary
        except NcuwrapError as exc:
            return name, f"build failed: {exc}"

    with ThreadPoolExecutor(max_workers=max(1, min(len(families), os.cpu_count() or 1))) as pool:
        return dict(pool.map(one, families))


def plain_run(argv) -> dict:
    start = time.perf_counter()
    done = subprocess.run(list(argv), capture_output=True, text=True)
    return {"wall_s": round(time.perf_counter() - start, 3), "returncode": done.returncode}


def measure(target, run_dir: Path, collect: str, tool, artifacts: bool, extra=()) -> dict:
    options = ProfileOptions(collect=collect, force=True, export_csv=True, ncu=tool.path, extra_ncu_args=tuple(extra))
    start = time.perf_counter()
    try:
        result = profile(target, run_dir, options, find_tool=lambda _path: tool)
        write_documents(result, html=artifacts)
    except NcuwrapError as exc:
        return {"collect": collect, "extra": list(extra), "error": str(exc), "run_dir": str(run_dir)}
    kernels = result.diagnosis.kernels
    return {
        "collect": collect,
        "extra": list(extra),
        "run_dir": str(run_dir),
        "passes": result.passes_total,
        "passes_per_launch": [launch.passes for launch in result.launches],
        "launch": [launch.launch for launch in result.launches],
        "wall_s": round(result.wall_s, 3),
        "total_s": round(time.perf_counter() - start, 3),
        "verdicts": verdicts(result.diagnosis),
        "not_evaluated": sorted({n.rule for k in kernels for n in k.not_evaluated}),
        "metrics": [{name: k.display_metrics.get(name, k.chart_metrics.get(name)) for name in KEY_METRICS} for k in kernels],
        "_diagnosis": result.diagnosis,
    }


def spill_values(run_dir: Path, tool) -> list[dict]:
    """The spill counters of a full report, to settle which raw metric spill_requests may also read."""
    from ncuwrap.kernel.reading import load

    # ncu's CSV export, not the .ncu-rep: ncu 2025.3.1's extras/python ncu_report crashed the lent
    # H200's Python (segfault in IMetric.unit) on some full-set reports.
    frame = load(Path(run_dir) / "report.raw.csv").frame
    return [{m: (None if m not in frame else frame[m].iat[i]) for m in SPILL_METRICS} for i in range(len(frame))]


def expected_of(manifest, family: str, variant: str) -> dict:
    exp = manifest.get(family).variant(variant).expected
    return {"bound": exp.bound.value, "limiter": exp.limiter.value if exp.limiter else None, "findings": sorted(exp.findings)}


def _verdict_text(rows) -> str:
    if not rows:
        return "-"
    return "; ".join(f"{r['bound']}/{r['limiter'] or '-'} [{', '.join(r['findings']) or 'no finding'}]" for r in rows)


def markdown(doc: dict) -> str:
    lines = [
        "# --collect targeted vs --collect full",
        "",
        f"{doc['gpu']} - ncu {doc['ncu']} - {doc['finished_utc'] or 'running'}; target: targeted <= {TARGET_PASSES} passes and "
        f"<= {int(TARGET_RATIO * 100)}% of full's wall time, identical bound, limiter and findings.",
        "",
        "| variant | targeted passes | full passes | targeted s | full s | targeted/full | plain s | same verdict | verdict (targeted) | verdict (full) | "
        "expected (manifest) |",
        "|---|---:|---:|---:|---:|---:|---:|:---:|---|---|---|",
    ]
    for row in doc["variants"]:
        t, f = row.get("targeted") or {}, row.get("full") or {}
        if row.get("error"):
            lines.append(f"| {row['name']} | | | | | | | | {row['error']} | | |")
            continue
        ratio = row.get("wall_ratio")
        same = {True: "yes", False: "**NO**", None: "?"}[row.get("same_verdict")]
        lines.append(
            f"| {row['name']} | {t.get('passes', t.get('error', '?'))} | {f.get('passes', f.get('error', '?'))} | {t.get('wall_s', '')} | "
            f"{f.get('wall_s', '')} | {'' if ratio is None else f'{ratio:.0%}'} | {row.get('plain', {}).get('wall_s', '')} | {same} | "
            f"{_verdict_text(t.get('verdicts'))} | {_verdict_text(f.get('verdicts'))} | {_verdict_text([row['expected']])} |"
        )
    s = doc["summary"]
    lines += ["", f"**{s['measured']} variants measured, {s['identical']} with identical verdicts; targeted passes max "
                  f"{s['max_targeted_passes']}, wall time ratio max {s['max_ratio']}, median {s['median_ratio']}; "
                  f"target met: {s['target_met']}.**"]
    if s["not_run"]:
        lines.append(f"\nNot run (deadline): {', '.join(s['not_run'])}. Run them with --only {','.join(s['not_run'])}.")
    if doc.get("calibration"):
        lines += ["", "## What each part of targeted costs (transpose/naive, one launch)", "", "| collection | passes | ncu wall s |", "|---|---:|---:|"]
        for c in doc["calibration"]:
            lines.append(f"| {c['label']} | {c['passes'] if c['passes'] is not None else '; '.join(c['errors'])} | {c['wall_s']} |")
    if doc.get("spill"):
        lines += ["", "## Spill counters in full reports (which raw metric may spill_requests read?)", "",
                  "| variant | " + " | ".join(SPILL_METRICS) + " |", "|---|" + "---:|" * len(SPILL_METRICS)]
        for name, rows in doc["spill"].items():
            for r in rows:
                lines.append(f"| {name} | " + " | ".join(str(r.get(m)) for m in SPILL_METRICS) + " |")
    return "\n".join(lines) + "\n"


def summarize(doc: dict, not_run: list[str]) -> None:
    rows = [r for r in doc["variants"] if r.get("wall_ratio") is not None]
    ratios = sorted(r["wall_ratio"] for r in rows)
    passes = [r["targeted"]["passes"] for r in rows if r["targeted"].get("passes") is not None]
    identical = sum(1 for r in rows if r["same_verdict"])
    doc["summary"] = {
        "measured": len(rows),
        "identical": identical,
        "max_targeted_passes": max(passes) if passes else None,
        "max_ratio": round(ratios[-1], 3) if ratios else None,
        "median_ratio": round(statistics.median(ratios), 3) if ratios else None,
        "target_met": bool(rows) and identical == len(rows) and max(passes, default=99) <= TARGET_PASSES and ratios[-1] <= TARGET_RATIO,
        "not_run": not_run,
    }


def write(out: Path, doc: dict, not_run: list[str], also: Path | None = None) -> None:
    summarize(doc, not_run)
    for folder in (out, also) if also else (out,):
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "targeted_vs_full.json").write_text(json.dumps(doc, indent=2, default=str) + "\n")
        (folder / "targeted_vs_full.md").write_text(markdown(doc))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=Path("targeted_vs_full"))
    parser.add_argument("--only", help="comma list of families or family/variant")
    parser.add_argument("--deadline", type=float, default=None, help="start no new variant after this many seconds")
    parser.add_argument("--ncu", default=None)
    parser.add_argument("--arch", default=None)
    parser.add_argument("--artifacts", action="store_true", help="also write report.raw.csv and report.html per run (slower)")
    parser.add_argument("--calibrate", action="store_true", help="also measure the parts of targeted on transpose/naive")
    parser.add_argument("--summary-to", type=Path, default=None, help="also keep the JSON and markdown summary there (updated after every variant)")
    args = parser.parse_args(argv)
    t0 = time.monotonic()
    from ncuwrap.bundled.manifest import load_manifest
    from ncuwrap.profile.rundir import nvidia_smi

    manifest = load_manifest()
    todo = selected(manifest, args.only)
    args.out.mkdir(parents=True, exist_ok=True)
    tool = ncu_tool(args.ncu)
    smi = nvidia_smi()
    gpu = (smi.get("gpus") or [{}])[0].get("name", "unknown GPU")
    print(f"{len(todo)} variants; building {len({f for f, _ in todo})} benchmarks ...", flush=True)
    binaries = build_all(sorted({f for f, _ in todo}), manifest, args.arch)
    print(f"built in {time.monotonic() - t0:.0f} s", flush=True)
    doc = {"schema": "ncuwrap.targeted_vs_full/v1", "gpu": gpu, "ncu": tool.version_string, "nvidia_smi": smi,
           "finished_utc": None, "variants": [], "calibration": [], "spill": {}}
    # One throwaway run: the first ncu start on a fresh machine also loads the driver and ncu from disk.
    warm = next(((f, v) for f, v in todo if not isinstance(binaries.get(f), str)), None)
    if warm:
        target = T.bundled(*warm, manifest=manifest, build=lambda name, arch: binaries[name])
        measure(target, args.out / "runs" / "warmup", "targeted", tool, False)
    not_run: list[str] = []
    for family, variant in todo:
        name = f"{family}/{variant}"
        if args.deadline is not None and time.monotonic() - t0 > args.deadline:
            not_run.append(name)
            continue
        row = {"name": name, "expected": expected_of(manifest, family, variant)}
        if isinstance(binaries.get(family), str):
            row["error"] = binaries[family]
            doc["variants"].append(row)
            write(args.out, doc, not_run, args.summary_to)
            continue
        target = T.bundled(family, variant, manifest=manifest, build=lambda n, a: binaries[n])
        row["argv"] = list(target.argv)
        row["plain"] = plain_run(target.argv)
        folder = args.out / "runs" / f"{family}-{variant}"
        targeted = measure(target, folder / "targeted", "targeted", tool, args.artifacts)
        full = measure(target, folder / "full", "full", tool, args.artifacts)
        row["same_verdict"] = (same_verdicts(targeted["_diagnosis"], full["_diagnosis"])
                               if "_diagnosis" in targeted and "_diagnosis" in full else None)
        if targeted.get("wall_s") and full.get("wall_s"):
            row["wall_ratio"] = round(targeted["wall_s"] / full["wall_s"], 3)
        if "_diagnosis" in full and (family in ("spill", "occupancy") or any("local_memory_spill" in v["findings"] for v in full["verdicts"])):
            try:
                doc["spill"][name] = spill_values(folder / "full", tool)
            except NcuwrapError as exc:
                doc["spill"][name] = [{"error": str(exc)}]
        targeted.pop("_diagnosis", None)
        full.pop("_diagnosis", None)
        row["targeted"], row["full"] = targeted, full
        doc["variants"].append(row)
        print(f"{name}: targeted {targeted.get('passes', targeted.get('error'))} passes {targeted.get('wall_s')} s, "
              f"full {full.get('passes', full.get('error'))} passes {full.get('wall_s')} s, same verdict: {row['same_verdict']}", flush=True)
        write(args.out, doc, not_run, args.summary_to)
    if args.calibrate and warm and (args.deadline is None or time.monotonic() - t0 < args.deadline + 60):
        target = T.bundled("transpose", "naive", manifest=manifest, build=lambda n, a: binaries[n])
        doc["calibration"] = calibrate(target, args.out / "runs" / "calibration", tool)
    doc["finished_utc"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    write(args.out, doc, not_run, args.summary_to)
    print((args.out / "targeted_vs_full.md").read_text(), flush=True)
    return 0 if doc["summary"]["target_met"] else 1


if __name__ == "__main__":
    sys.exit(main())
