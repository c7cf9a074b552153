"""The .ncu-rep reader's children and their memory: k forked readers, with and without NVIDIA's reader set up in
the parent first (issue 41).

NVIDIA's ``ncu_report`` builds about 130 MiB of private state the first time a process reads a launch of any
report (a second report adds 3 MiB). Each forked reading child builds its own (``ncu_rep_reader.start(parts=k)``);
set up in the parent before the fork, the children would share it copy-on-write. Each sample is a fresh
process, started from a fresh launcher (benchmarks/process_tree.py): ``ncu_rep_reader.start(REPORT, parts=k).result()``,
"cold" as ncuwrap runs it, or "warm": the parent first reads the first launch of the bundled sample report
(``ncuwrap/samples``) and drops it. Reported: wall and CPU time of the tree, the tree's peak summed PSS and the
largest single process's peak RSS.

    python scripts/probes/ncurep_children_memory.py REPORT.ncu-rep --parts 1 2 3 --repeat 2

A prototype measurement, not ncuwrap's behaviour: the warm set-up runs NVIDIA's native reader in the parent,
which ncuwrap keeps out of it (a crash on a report takes only a child).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))
import process_tree as P  # noqa: E402

SAMPLE = """
import gzip, sys, tempfile, time
from pathlib import Path
from ncuwrap.kernel.reading import ncu_rep_reader
from ncuwrap.core.resources import sample_report
path, parts, warm = Path(sys.argv[1]), int(sys.argv[2]), sys.argv[3] == "warm"
t = time.perf_counter()
if warm:
    module = ncu_rep_reader.load_module(None)
    with tempfile.TemporaryDirectory() as tmp:
        copy = Path(tmp) / "sample.ncu-rep"
        copy.write_bytes(gzip.decompress(sample_report().read_bytes()))
        context = module.load_report(str(copy))
        context.range_by_idx(0).action_by_idx(0).metric_names()
        del context
reading = ncu_rep_reader.start(path, parts=parts)
time.sleep(0.3)  # the children side by side for the sampler
profile = reading.result()
print(time.perf_counter() - t, len(profile.frame))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("report", type=Path)
    parser.add_argument("--parts", type=int, nargs="+", default=[1, 2, 3])
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory(prefix="ncuwrap-children-") as tmp:
        for _ in range(args.repeat):
            for parts in args.parts:
                for how in ("cold", "warm"):
                    out = Path(tmp) / "out.txt"
                    run = P.run([sys.executable, "-c", SAMPLE, str(args.report.resolve()), str(parts), how], out,
                                env=P.with_pythonpath(ROOT), cwd=ROOT)
                    rows.append({"parts": parts, "setup": how, "wall_s": run["wall_s"], "cpu_s": run["cpu_s"],
                                 "tree_pss_mib": run["tree_pss_sampled"] / 2**20, "max_process_mib": run["max_process_rss"] / 2**20,
                                 "launches": int(out.read_text().split()[1])})
                    r = rows[-1]
                    print(f"children {parts} {how:4}: wall {r['wall_s']:.2f} s, CPU {r['cpu_s']:.2f} s, tree PSS peak {r['tree_pss_mib']:.0f} MiB, "
                          f"largest process {r['max_process_mib']:.0f} MiB ({r['launches']} launches)", flush=True)
    if args.json:
        args.json.write_text(json.dumps(rows, indent=2) + "\n")


if __name__ == "__main__":
    main()
