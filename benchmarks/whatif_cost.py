"""What the what-if replay (ncuwrap.timeline.whatif) adds to ``ncuwrap timeline`` on a big capture.

SYNTHETIC SCALE DATA: tests/data/h200_ncuwrap/steps/small_launch_200 repeated until it holds N kernel launches
(benchmarks/timeline_scale.make). In one process per sample: the whole ``diagnose_timeline`` (read, analyse
with the replay, decide), then the replay alone (graph built, replayed unmodified and under each remedy) on the
same steps; the replay's share is its time over the rest. Target (issue 50): at most 20% more on 1M launches.

    python benchmarks/whatif_cost.py --launches 1000000 --repeat 3
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import timeline_scale  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = r'''
import json, sys, time
from ncuwrap.timeline.diagnosis import diagnose_timeline
from ncuwrap.timeline import readers
from ncuwrap.timeline import steps as S
from ncuwrap.timeline.whatif.predict import predict
path = sys.argv[1]
t0 = time.perf_counter(); d = diagnose_timeline(path); whole = time.perf_counter() - t0
data, _ = readers.read(path); steps = S.measure(data)
t0 = time.perf_counter(); w = predict(data, steps); alone = time.perf_counter() - t0
print(json.dumps({"whole_s": whole, "whatif_s": alone, "events": w.events, "steps": w.steps}))
'''


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--launches", type=int, default=1_000_000)
    p.add_argument("--repeat", type=int, default=3)
    args = p.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "scaled.sqlite"
        facts = timeline_scale.make(timeline_scale.unpack(timeline_scale.SOURCE, Path(tmp)), args.launches, path)
        runs = [json.loads(subprocess.run([sys.executable, "-c", SAMPLE, str(path)], check=True, capture_output=True, text=True,
                                          cwd=ROOT).stdout.splitlines()[-1]) for _ in range(args.repeat)]
    shares = [100.0 * r["whatif_s"] / (r["whole_s"] - r["whatif_s"]) for r in runs]
    print(json.dumps({"launches": args.launches, "capture": facts, "runs": runs, "whatif_adds_pct": shares,
                      "median_pct": statistics.median(shares)}, indent=1))


if __name__ == "__main__":
    main()
