"""Where one diagnosis of a large raw CSV spends its time, phase by phase, in fresh processes.

Companion of diagnose_scale.py (same SYNTHETIC SCALE DATA: real H200 rows repeated to N launches):
for each of ``--repeat`` fresh interpreters, the seconds of loading the rules, reading the CSV,
deciding every launch, building the JSON document's dicts, encoding them (orjson) and decoding the
bytes to text. Used to find which phase varies from one process to the next.

Usage: python scripts/probes/diagnose_phases.py [--csv full|basic] [--kernels 10000] [--repeat 5] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import diagnose_scale  # noqa: E402  (its data and its process launcher)

PHASES = """
import sys, time, orjson
from ncuwrap import ruleset
from ncuwrap.core.gc_pause import no_collection_pauses
from ncuwrap.kernel.diagnosis import diagnose_profile, load, needed_metrics
t = [time.perf_counter()]
from ncuwrap.kernel.metrics import KERNEL
rules = ruleset.load(None, KERNEL); t.append(time.perf_counter())
profile = load(sys.argv[1], metrics=needed_metrics(rules)); t.append(time.perf_counter())
d = diagnose_profile(profile, rules); t.append(time.perf_counter())
with no_collection_pauses():
    doc = d.to_json(); t.append(time.perf_counter())
    data = orjson.dumps(doc, option=orjson.OPT_INDENT_2 | orjson.OPT_APPEND_NEWLINE); t.append(time.perf_counter())
    data.decode("utf-8"); t.append(time.perf_counter())
print(*(b - a for a, b in zip(t, t[1:])))
"""
NAMES = ("rules", "read", "decide", "to_json", "encode", "decode")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--csv", choices=("full", "basic"), default="basic")
    parser.add_argument("--kernels", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--json", type=Path, help="write the samples here")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="ncuwrap-phases-") as tmp:
        path = Path(tmp) / f"synthetic_{args.csv}_{args.kernels}.raw.csv"
        diagnose_scale.build_csv(path, args.kernels, diagnose_scale.basic_columns() if args.csv == "basic" else None)
        samples = []
        for _ in range(args.repeat):
            out = subprocess.run([sys.executable, "-c", PHASES, str(path)], capture_output=True, text=True, check=True,
                                 env={**os.environ, "PYTHONPATH": str(diagnose_scale.ROOT)})
            seconds = dict(zip(NAMES, map(float, out.stdout.split())))
            samples.append(seconds)
            print("  ".join(f"{n} {seconds[n]:.3f}" for n in NAMES) + f"  total {sum(seconds.values()):.3f}")
    if args.json:
        args.json.write_text(json.dumps({"csv": args.csv, "kernels": args.kernels, "synthetic": True, "samples": samples}, indent=2) + "\n")


if __name__ == "__main__":
    main()
