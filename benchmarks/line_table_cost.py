"""Each instruction's source file and line: from the cubin's own line table (ncuwrap.kernel.reading.line_table)
against NVIDIA's reader (``ncu_report``: load the report, ``source_info`` per PC), side by side.

Each way runs in a fresh process of its own and is timed from before it reads anything (for ncu_report: before
its module is imported, as ncuwrap's attribution worker does) to after the last PC's answer: wall and CPU
seconds, and how far the process's peak RSS rose (ru_maxrss after less before); for the line table also the peak
of Python's allocations while it reads (tracemalloc, a second pass: the first stays under the peak the report's
parse left). The PCs
asked are those of every launch with SourceCounters, read beforehand from the report's file (not timed); both
ways must give the same answers (the script stops otherwise).

    python benchmarks/line_table_cost.py [REPORT.ncu-rep[.gz]] [--repeat 3]

The default report is the bundled sample: its module's cubin is the largest here (112,752 bytes, 6 kernels).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

CHILD = """
import gzip, json, resource, sys, tempfile, time
from pathlib import Path
from ncuwrap.kernel.reading import line_table, ncu_rep_reader, ncu_rep_format, source_counters

source, way = Path(sys.argv[1]), sys.argv[2]
folder = tempfile.mkdtemp()
path = source
if source.suffix == ".gz":
    path = Path(folder) / source.stem
    path.write_bytes(gzip.decompress(source.read_bytes()))
launches = [l for l in ncu_rep_format.launches(path, frozenset(), source_counters.INSTANCED) if l.instances]
pcs = {l.index: sorted({pc for values in l.instances.values() for pc in values}) for l in launches}

rss = lambda: resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
before, wall, cpu = rss(), time.perf_counter(), time.process_time()
answers, traced = {}, 0
if way == "ncu_report":
    context = ncu_rep_reader.load_module().load_report(str(path))
    actions = [context.range_by_idx(r).action_by_idx(a) for r in range(context.num_ranges())
               for a in range(context.range_by_idx(r).num_actions())]
    for index, asked in pcs.items():
        attribution = source_counters.Attribution(actions[index])
        answers[index] = [attribution.where(pc) for pc in asked]
else:
    tables = {}
    for l in launches:
        if l.code.at not in tables:
            tables[l.code.at] = line_table.read(line_table.elf_of(path, l.code))
        found = tables[l.code.at].places(l.code, pcs[l.index])
        answers[l.index] = [found[pc] for pc in pcs[l.index]]
wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
raised = rss() - before
if way == "line_table":  # again, under tracemalloc: what it allocates is far below the process's earlier peak
    import tracemalloc
    tracemalloc.start()
    for l in launches:
        line_table.read(line_table.elf_of(path, l.code)).places(l.code, pcs[l.index])
    traced = tracemalloc.get_traced_memory()[1] / 2**20
    tracemalloc.stop()
print(json.dumps({"wall": wall, "cpu": cpu, "rss": raised, "traced": traced, "pcs": sum(map(len, pcs.values())),
                  "answers": {str(k): [list(p) for p in v] for k, v in answers.items()}}))
"""


def _run(report: Path, way: str) -> dict:
    done = subprocess.run([sys.executable, "-c", CHILD, str(report), way], cwd=ROOT, capture_output=True, text=True, check=False)
    if done.returncode:
        sys.exit(f"{way}: {done.stderr.strip()}")
    return json.loads(done.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("report", nargs="?", type=Path, default=ROOT / "ncuwrap/samples/transpose_h200.ncu-rep.gz")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    runs = {way: [_run(args.report, way) for _ in range(args.repeat)] for way in ("line_table", "ncu_report")}
    if runs["line_table"][0]["answers"] != runs["ncu_report"][0]["answers"]:
        sys.exit("the two ways answer differently")
    print(f"{args.report.name}: {runs['line_table'][0]['pcs']} PCs; median of {args.repeat} fresh processes each")
    print("| way | wall s | CPU s | peak RSS rise MiB | Python allocations' peak MiB (one launch at a time) |")
    print("|---|---:|---:|---:|---:|")
    for way, found in runs.items():
        med = {key: statistics.median(r[key] for r in found) for key in ("wall", "cpu", "rss", "traced")}
        traced = f"{med['traced']:.2f}" if way == "line_table" else "(native)"
        print(f"| {way} | {med['wall']:.4f} | {med['cpu']:.4f} | {med['rss']:.1f} | {traced} |")


if __name__ == "__main__":
    main()
