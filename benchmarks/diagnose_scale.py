"""Scale benchmark: diagnose 10,000 kernels from one raw CSV, against pandas reading the same file.

Target: ``ncuwrap diagnose FILE --format json`` takes no more wall time than ``pandas.read_csv`` of
the same file, with memory bounded, on two CSVs:

- ``full``: every column of an ``ncu --set full`` raw export (~2,240 metric columns);
- ``basic``: only the columns of the three sections of ``ncu --set basic`` (LaunchStats, Occupancy,
  SpeedOfLight; ~530 columns). The column list is that of a real export made with exactly those
  sections, tests/data/h200_ncuwrap/multi/two_processes.raw.csv (10 replay passes, as many as
  ``--set basic`` on the same GPU and ncu: tests/data/h200_ncuwrap/profile/targeted_vs_full.md).

Both CSVs are SYNTHETIC SCALE DATA built from real rows: the raw rows of the four H200 transpose
reports (tests/data/h200/transpose/*.raw.csv, full set) repeated until there are N launches, launch
IDs renumbered; the basic CSV keeps only the basic columns of the same rows. Nothing in them was
measured as such; they only exercise size.

Figures, the machine they were taken on and where the time goes: docs/scale.md.

Each measurement runs in a fresh Python process (imports not timed, on both sides); wall time and
peak RSS (ru_maxrss) are reported, with the ratio ncuwrap / pandas. ``--cli`` also times the whole
``python -m ncuwrap diagnose FILE --format json -o OUT`` process against a process that imports
pandas and reads the file.

``--compile`` writes both trees' bytecode first, as a pip install does (this box sets ``PYTHONDONTWRITEBYTECODE``,
so without it every ncuwrap module is compiled in every process; pandas, as installed, has its bytecode).

``--cli-only`` times only the whole processes (issue 52's figure: each interleaved pair's ratio, ncuwrap's CLI
against ``python -c "import pandas; pandas.read_csv(F)"``, at most 1.3 in every pair):

    python benchmarks/diagnose_scale.py --csv basic --cli-only --compile --repeat 5

``--vary SEED`` builds the CSV with every metric's number varied (SYNTHETIC as well: half of them kept, the rest by up
to +-5%, seeded), so that a kernel's later launches differ from their likes as a training loop's do; with
``--baseline-tree`` each pair's two JSON documents are compared byte for byte.

The floor: the rules file, ncuwrap's read of the file alone and orjson's encoding of the finished
document alone, each timed in a fresh process. Read plus encode is what any evaluation, however fast,
adds to; where it exceeds pandas' time the target is out of reach for this document on this machine.

Usage: python benchmarks/diagnose_scale.py [--csv full|basic|both] [--kernels 10000] [--repeat 1]
                                           [--cli | --cli-only] [--keep] [--json out.json] [--tree DIR] [--no-floor]
                                           [--baseline-tree DIR] [--compile] [--vary SEED]
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import platform
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import process_tree as P

ROOT = Path(__file__).resolve().parent.parent
SOURCES = [ROOT / "tests/data/h200/transpose" / f"{k}.raw.csv" for k in ("copyKernel", "transposeNaive", "transposeShared", "transposePadded")]
# A real raw export of the --set basic sections (LaunchStats, Occupancy, SpeedOfLight): its header is the column list.
BASIC_COLUMNS_FROM = ROOT / "tests/data/h200_ncuwrap/multi/two_processes.raw.csv"

PANDAS_ALONE = """
import sys, resource, time, pandas as pd
t, c = time.perf_counter(), time.process_time(); df = pd.read_csv(sys.argv[1], low_memory=False); t, c = time.perf_counter() - t, time.process_time() - c
print(t, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, len(df), c)
"""
# Context only, not the target: pandas stores text columns in Arrow when pyarrow is importable (it is:
# ncuwrap depends on it), which makes its read_csv of these text-heavy exports 1.5-2.5x faster than
# with Python strings. This is the same read with pyarrow hidden from pandas.
PANDAS_WITHOUT_PYARROW = """
import sys; sys.modules["pyarrow"] = None
""" + PANDAS_ALONE
NCUWRAP = """
import sys, resource, time
try:
    from ncuwrap.kernel.diagnosis import diagnose
except ImportError:  # a tree from before the kernel wing (--tree, --baseline-tree), or before the rename
    try:
        from ncuwrap.kernel_diagnosis import diagnose
    except ImportError:
        from ncuwrap.engine import diagnose
from ncuwrap.render import Format, render
t, c = time.perf_counter(), time.process_time()
d = diagnose(sys.argv[1]); text = render(d, Format.json)
t, c = time.perf_counter() - t, time.process_time() - c
print(t, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, len(d.kernels), c)
"""
# The two steps no way of producing the same document can skip, timed alone: reading the columns the
# rules need (ncuwrap's reader: Arrow, the file's digest beside it) and encoding the finished
# document (orjson, the fastest well-kept encoder measured here; msgspec was no faster). If their sum
# is over pandas' time, the target cannot be met by any evaluation, however fast.
FLOOR = """
import sys, time, orjson
from ncuwrap import ruleset
try:
    from ncuwrap.kernel.diagnosis import diagnose, load, needed_metrics
except ImportError:  # a tree from before the kernel wing (--tree), or before the rename
    try:
        from ncuwrap.kernel_diagnosis import diagnose, load, needed_metrics
    except ImportError:
        from ncuwrap.engine import diagnose, load, needed_metrics
from ncuwrap.render.jsonfmt import dumps
try:
    from ncuwrap.kernel.metrics import KERNEL
except ImportError:  # a tree from before the kernel wing: its rules default to the kernel catalogue
    KERNEL = None
t = time.perf_counter(); rules = ruleset.load(None, KERNEL) if KERNEL else ruleset.load(); t_rules = time.perf_counter() - t
t = time.perf_counter(); load(sys.argv[1], metrics=needed_metrics(rules)); t_read = time.perf_counter() - t
doc = diagnose(sys.argv[1]).to_json()
t = time.perf_counter(); dumps(doc); t_encode = time.perf_counter() - t
print(t_rules, t_read, t_encode)
"""


def _read(path: Path) -> tuple[list[str], list[str], list[list[str]]]:
    with path.open(newline="") as fh:
        header, units, *rows = list(csv.reader(fh))
    return header, units, rows


def basic_columns() -> list[str]:
    return _read(BASIC_COLUMNS_FROM)[0]


def _varied(row: list[str], first_metric: int, rng) -> list[str]:
    """A row with half of its metrics' numbers varied by up to +-5% (in their own format: decimals, thousands separators)."""
    out = list(row)
    for i in range(first_metric, len(row)):
        number = row[i].replace(",", "")
        if rng.random() < 0.5 or not number or not (number.lstrip("-").replace(".", "", 1).isdigit()):
            continue
        decimals = len(number.split(".")[1]) if "." in number else 0
        value = float(number) * (1 + rng.uniform(-0.05, 0.05))
        out[i] = f"{value:,.{decimals}f}" if "," in row[i] else f"{value:.{decimals}f}"
    return out


def build_csv(path: Path, kernels: int, columns: list[str] | None = None, vary: int | None = None) -> int:
    """Write the synthetic CSV: the real rows repeated to ``kernels`` launches, only ``columns``
    (in the full export's order) when given, each launch's numbers varied with the seed ``vary`` when given.
    Returns the number of columns."""
    header = units = None
    rows = []
    for source in SOURCES:
        h, u, data = _read(source)
        if header is None:
            header, units = h, u
        assert h == header, f"{source}: columns differ"
        rows.extend(data)
    keep = list(range(len(header)))
    if columns is not None:
        wanted = set(columns)
        absent = wanted - set(header)
        assert not absent, f"basic columns missing from the full export: {sorted(absent)[:5]}"
        keep = [i for i, c in enumerate(header) if c in wanted]
    rng = random.Random(vary)
    first_metric = header.index("CC") + 1
    with path.open("w", newline="") as fh:
        writer = csv.writer(fh, quoting=csv.QUOTE_ALL)
        writer.writerow([header[i] for i in keep])
        writer.writerow([units[i] for i in keep])
        for n in range(kernels):
            row = rows[n % len(rows)]
            if vary is not None:
                row = _varied(row, first_metric, rng)
            writer.writerow([str(n) if i == 0 else row[i] for i in keep])
    return len(keep)


def measure(script: str, path: Path, tree: Path = ROOT) -> dict:
    """One in-process measurement (imports not timed) in a fresh interpreter, importing ncuwrap from ``tree``."""
    # The tree first, then what the caller's path had (the GPU host's wheels live in a folder of their own:
    # without it the child could not import orjson, which failed the H200's runs of this script).
    out = subprocess.run([sys.executable, "-c", script, str(path)], capture_output=True, text=True, cwd=tree,
                         env=P.with_pythonpath(tree))
    if out.returncode:
        raise SystemExit(f"{tree}: the measurement failed:\n{out.stderr[-2000:]}")
    seconds, rss_kb, rows, cpu = out.stdout.split()
    return {"seconds": float(seconds), "peak_rss_mib": int(rss_kb) / 1024, "rows": int(rows), "cpu_s": float(cpu)}


def measure_process(argv: list[str], tree: Path = ROOT) -> dict:
    """A whole process (start-up and imports included) from a fresh launcher: wall and CPU time, the process
    tree's peak memory (benchmarks/process_tree.py)."""
    with tempfile.TemporaryDirectory(prefix="ncuwrap-scale-out-") as tmp:
        return P.run(argv, Path(tmp) / "stdout", env=P.with_pythonpath(tree), cwd=tree)


def measure_floor(path: Path, tree: Path = ROOT) -> dict:
    """The floor's steps (FLOOR) in a fresh interpreter: seconds to load the rules, read, encode."""
    out = subprocess.run([sys.executable, "-c", FLOOR, str(path)], capture_output=True, text=True, check=True, cwd=tree,
                         env=P.with_pythonpath(tree))
    return dict(zip(("rules_s", "read_s", "encode_s"), map(float, out.stdout.split())))


def _median(samples: list[dict]) -> dict:
    out = dict(samples[0])
    out["seconds"] = round(statistics.median(s["seconds"] for s in samples), 2)
    out["peak_rss_mib"] = round(max(s["peak_rss_mib"] for s in samples), 1)
    out["cpu_s"] = round(statistics.median(s["cpu_s"] for s in samples), 2)
    if len(samples) > 1:
        out["samples_s"] = [round(s["seconds"], 2) for s in samples]
    return out


def run_case(path: Path, repeat: int, cli: bool, tree: Path, floor: bool = True, baseline: Path | None = None, in_process: bool = True) -> dict:
    result: dict = {}
    if in_process:
        result = in_process_case(path, repeat, tree, floor, baseline)
    if cli:
        result["process"] = process_case(path, repeat, tree, baseline)
    return result


def in_process_case(path: Path, repeat: int, tree: Path, floor: bool, baseline: Path | None) -> dict:
    """diagnose + JSON in process against pandas.read_csv in process, imports not timed."""
    # Interleaved (pandas, ncuwrap, pandas, ...): on a shared machine both sides see the same load.
    samples = [(measure(PANDAS_ALONE, path, tree), measure(NCUWRAP, path, tree), measure(PANDAS_WITHOUT_PYARROW, path, tree),
                *([measure(NCUWRAP, path, baseline)] if baseline else []))
               for _ in range(repeat)]
    pandas, ours, plain = (_median([s[i] for s in samples]) for i in range(3))
    before = _median([s[3] for s in samples]) if baseline else None
    ratio = ours["seconds"] / pandas["seconds"]
    print(f"  pandas.read_csv alone : {pandas['seconds']:8.2f} s  peak RSS {pandas['peak_rss_mib']:8.1f} MiB")
    print(f"  (pyarrow hidden)      : {plain['seconds']:8.2f} s  peak RSS {plain['peak_rss_mib']:8.1f} MiB  (context, not the target)")
    print(f"  ncuwrap diagnose+json : {ours['seconds']:8.2f} s  peak RSS {ours['peak_rss_mib']:8.1f} MiB  ({ours['rows']} kernels)")
    print(f"  CPU time (all threads): ncuwrap {ours['cpu_s']:.2f} s, pandas {pandas['cpu_s']:.2f} s")
    print(f"  ratio ncuwrap/pandas  : {ratio:.2f} (target <= 1.0)")
    result = {"pandas": pandas, "ncuwrap": ours, "pandas_without_pyarrow": plain, "ratio": round(ratio, 3), "target_met": ratio <= 1.0}
    if before is not None:
        print(f"  baseline tree         : {before['seconds']:8.2f} s  peak RSS {before['peak_rss_mib']:8.1f} MiB  CPU {before['cpu_s']:.2f} s "
              f"(ratio {before['seconds'] / pandas['seconds']:.2f})")
        result["baseline"] = {**before, "tree": str(baseline), "ratio": round(before["seconds"] / pandas["seconds"], 3)}
    if floor:
        floors = [measure_floor(path, tree) for _ in range(repeat)]
        result["floor"] = f = {key: round(statistics.median(x[key] for x in floors), 3) for key in floors[0]}
        f["read_plus_encode_s"] = round(f["read_s"] + f["encode_s"], 3)
        print(f"  floor: read {f['read_s']:.2f} s + encode {f['encode_s']:.2f} s = {f['read_plus_encode_s']:.2f} s "
              f"({f['read_plus_encode_s'] / pandas['seconds']:.2f} of pandas' time; rules file {f['rules_s']:.2f} s)")
    return result


def process_case(path: Path, repeat: int, tree: Path, baseline: Path | None) -> dict:
    """The whole processes, interleaved pair by pair: ncuwrap's CLI writing the JSON document against a process that
    imports pandas and reads the file; each pair's ratio (issue 52: at most 1.3 in every pair)."""
    outs = [path.with_suffix(".json"), path.with_suffix(".baseline.json")]
    runs = []
    identical = []  # each sample: this tree's document byte for byte the baseline tree's

    def ncuwrap_argv(out: Path) -> list[str]:
        return [sys.executable, "-m", "ncuwrap", "diagnose", str(path), "--format", "json", "-o", str(out), "--force"]

    for _ in range(repeat):  # interleaved, as above
        runs.append((measure_process([sys.executable, "-c", f"import pandas as pd; pd.read_csv({str(path)!r}, low_memory=False)"], tree),
                     measure_process(ncuwrap_argv(outs[0]), tree), *([measure_process(ncuwrap_argv(outs[1]), baseline)] if baseline else [])))
        if baseline:
            identical.append(outs[0].read_bytes() == outs[1].read_bytes())
        for out in outs:
            out.unlink(missing_ok=True)
    pandas_proc, ours_proc = P.median_row([r[0] for r in runs]), P.median_row([r[1] for r in runs])
    proc_ratio = ours_proc["wall_s"] / pandas_proc["wall_s"]
    pairs = [round(r[1]["wall_s"] / r[0]["wall_s"], 3) for r in runs]
    cpu_pairs = [round(r[1]["cpu_s"] / r[0]["cpu_s"], 3) for r in runs]
    print(f"  whole processes       : ncuwrap CLI {ours_proc['wall_s']:.2f} s (CPU {ours_proc['cpu_s']:.2f} s, {ours_proc['peak_mib']:.0f} MiB), "
          f"python -c read_csv {pandas_proc['wall_s']:.2f} s (CPU {pandas_proc['cpu_s']:.2f} s, {pandas_proc['peak_mib']:.0f} MiB), ratio {proc_ratio:.2f} "
          f"(CPU {ours_proc['cpu_s'] / pandas_proc['cpu_s']:.2f})")
    print("  each pair, ncuwrap s / pandas s: " + ", ".join(f"{r[1]['wall_s']:.2f}/{r[0]['wall_s']:.2f}" for r in runs))
    print(f"  each pair's ratio     : {' '.join(f'{x:.2f}' for x in pairs)} (median {statistics.median(pairs):.2f}, largest {max(pairs):.2f}; "
          f"issue 52's target: at most 1.3 in every pair: {'met' if max(pairs) <= 1.3 else 'NOT met'})")
    print(f"  each pair's CPU ratio : {' '.join(f'{x:.2f}' for x in cpu_pairs)}")
    process = {"pandas": pandas_proc, "ncuwrap_cli": ours_proc, "ratio": round(proc_ratio, 3), "cpu_ratio": round(ours_proc["cpu_s"] / pandas_proc["cpu_s"], 3),
               "pair_ratios": pairs, "pair_cpu_ratios": cpu_pairs, "target_met": max(pairs) <= 1.3}
    if baseline:
        before_proc = P.median_row([r[2] for r in runs])
        before_pairs = [round(r[2]["wall_s"] / r[0]["wall_s"], 3) for r in runs]
        print(f"  baseline tree's CLI   : {before_proc['wall_s']:.2f} s (CPU {before_proc['cpu_s']:.2f} s, {before_proc['peak_mib']:.0f} MiB), "
              f"ratio {before_proc['wall_s'] / pandas_proc['wall_s']:.2f}, each pair {' '.join(f'{x:.2f}' for x in before_pairs)}; "
              f"JSON byte-identical in {sum(identical)} of {len(identical)} samples")
        process["baseline_cli"] = before_proc
        process["baseline_pair_ratios"] = before_pairs
        process["json_identical"] = all(identical)
    return process


def compile_tree(tree: Path) -> None:
    """Write the bytecode of ``tree``'s ncuwrap, as a pip install does (compileall writes it whatever
    PYTHONDONTWRITEBYTECODE says)."""
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(tree / "ncuwrap")], check=True)


def _machine() -> str:
    """The CPU model and how many CPUs this process may use."""
    model = platform.machine()
    try:
        with open("/proc/cpuinfo") as fh:
            model = next((line.split(":", 1)[1].strip() for line in fh if line.startswith("model name")), model)
    except OSError:
        pass
    return f"{model}, {len(os.sched_getaffinity(0))} CPUs"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--csv", choices=("full", "basic", "both"), default="both", help="which synthetic CSV (default: both)")
    parser.add_argument("--kernels", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=1, help="measurements of each side (median time, largest RSS)")
    parser.add_argument("--cli", action="store_true", help="also time the whole 'python -m ncuwrap diagnose --format json' process")
    parser.add_argument("--cli-only", action="store_true", help="time only the whole processes (each pair's ratio)")
    parser.add_argument("--vary", type=int, metavar="SEED", help="vary each launch's numbers (seeded): later launches differ from their likes")
    parser.add_argument("--keep", action="store_true", help="keep the generated CSVs")
    parser.add_argument("--json", type=Path, help="write the figures here")
    parser.add_argument("--tree", type=Path, default=ROOT, help="measure the ncuwrap of this source tree (e.g. an older commit's "
                        "'git archive' for before/after figures; default: this one)")
    parser.add_argument("--baseline-tree", type=Path, help="also measure this source tree's ncuwrap in the same interleave (before/after)")
    parser.add_argument("--no-floor", action="store_true", help="skip the floor (a --tree older than the floor's functions)")
    parser.add_argument("--compile", action="store_true", help="compile the timed trees' modules first, as pip install does")
    args = parser.parse_args()
    if args.compile:
        for tree in (args.tree, args.baseline_tree):
            if tree is not None:
                compile_tree(tree.resolve())
    cases = ("full", "basic") if args.csv == "both" else (args.csv,)
    workdir = Path(tempfile.mkdtemp(prefix="ncuwrap-scale-"))
    versions = subprocess.run([sys.executable, "-c", "import pandas, numpy, pyarrow, orjson; print(pandas.__version__, numpy.__version__, "
                               "pyarrow.__version__, orjson.__version__)"], capture_output=True, text=True, check=True).stdout.split()
    when = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime())
    print(f"{when}; {_machine()}; Python {sys.version.split()[0]}, pandas {versions[0]}, numpy {versions[1]}, pyarrow {versions[2]}, "
          f"orjson {versions[3]}; load average {os.getloadavg()[0]:.1f}; tree {args.tree.resolve()}"
          + (f", baseline {args.baseline_tree.resolve()}" if args.baseline_tree else ""))
    print("command: python " + " ".join(sys.argv))
    result = {"date": when, "command": " ".join(sys.argv), "kernels": args.kernels, "synthetic": True, "vary": args.vary, "python": sys.version.split()[0],
              "versions": dict(zip(("pandas", "numpy", "pyarrow", "orjson"), versions)), "machine": _machine(),
              "tree": str(args.tree.resolve()), "repeat": args.repeat, "compiled": args.compile, "csv": {}}
    for case in cases:
        path = workdir / f"synthetic_{case}_{args.kernels}.raw.csv"
        t = time.perf_counter()
        ncols = build_csv(path, args.kernels, basic_columns() if case == "basic" else None, vary=args.vary)
        mb = path.stat().st_size / 1e6
        print(f"{case}: built {path} ({mb:.0f} MB, {ncols} columns, {args.kernels} launches, SYNTHETIC from real rows) in {time.perf_counter() - t:.1f} s")
        result["csv"][case] = {"columns": ncols, "csv_mb": round(mb), **run_case(path, args.repeat, args.cli or args.cli_only, args.tree,
                                                                                  floor=not args.no_floor,
                                                                                  baseline=args.baseline_tree.resolve() if args.baseline_tree else None,
                                                                                  in_process=not args.cli_only)}
        if not args.keep:
            path.unlink()
    if not args.keep:
        workdir.rmdir()
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
