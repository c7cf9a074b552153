"""What the op limits (ncuwrap.timeline.oplimits: each op's work, the fusion runs, their dataflow) cost on a big
nsys capture with shapes, beside reading the tables they come from with pandas.

SYNTHETIC SCALE DATA: the real H200 transformer training capture (tests/data/h200_ncuwrap/op_limits/transformer, nsys
with ``--pytorch=autograd-shapes-nvtx``: 15,356 NVTX ranges, 7 steps) repeated until it holds N op ranges, as
benchmarks/timeline_scale.make repeats a capture (every event table copied whole, each copy shifted in time past the
previous one, correlationIds renumbered), and each copy's op ranges renumbered too: their ``op_id``, ``seq`` and the
op_ids their ``input_op_ids`` name, so that every copy's dataflow is its own (an op_id two ops carry is left out).

Measured, each in a fresh process, interleaved, medians of --repeat:
- ncuwrap: the capture read and its steps found (not timed), then ``oplimits.analysis.measure`` (timed), peak RSS;
  with ``--baseline-tree OLD``, the same in OLD's tree, interleaved;
- the yardstick: ``pandas.read_sql_query`` of the NVTX ranges and the kernels (what the op limits are made from),
  peak RSS.

    python benchmarks/oplimits_scale.py --ranges 1000000 --repeat 3 [--baseline-tree OLD] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import re
import sqlite3
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import timeline_scale as T  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
SOURCE = ROOT / "tests/data/h200_ncuwrap/op_limits/transformer.sqlite.gz"
MEASURE = """
import resource, sys, time
from ncuwrap.timeline import readers, steps as S
from ncuwrap.timeline.oplimits import analysis
data, _ = readers.read(sys.argv[1])
steps = S.measure(data)
t = time.perf_counter()
limits = analysis.measure(data, steps)
seconds = time.perf_counter() - t
print(seconds, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024, f"{len(limits.chains)} chains, {limits.step_min_bytes:.0f} B")
"""
_OP_ID = re.compile(r"\bop_id = (\d+)")
_SEQ = re.compile(r"\bseq = (\d+)")
_INPUTS = re.compile(r"\((\d+),(-?\d+)\)")


def _renumber(text: str, op_ids: int, seqs: int) -> str:
    text = _OP_ID.sub(lambda m: f"op_id = {int(m.group(1)) + op_ids}", text)
    text = _SEQ.sub(lambda m: f"seq = {int(m.group(1)) + seqs}", text)
    head, sep, tail = text.partition("input_op_ids = ")
    if sep:  # (0, -1) names no producer: kept
        tail = _INPUTS.sub(lambda m: f"({int(m.group(1)) + op_ids if int(m.group(1)) else 0},{m.group(2)})", tail)
    return head + sep + tail


def make(source: Path, ranges: int, out: Path) -> dict:
    """``source`` repeated until it holds at least ``ranges`` NVTX ranges, each copy's op ids its own."""
    db = sqlite3.connect(source)
    per_copy = db.execute('SELECT COUNT(*) FROM "NVTX_EVENTS"').fetchone()[0]
    kernels = db.execute('SELECT COUNT(*) FROM "CUPTI_ACTIVITY_KIND_KERNEL"').fetchone()[0]
    # timeline_scale.make shifts copy k by k spans of the capture, a millisecond apart.
    tables = [t for t in T.EVENT_TABLES if db.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (t,)).fetchone()]
    lo = min(db.execute(f'SELECT MIN(start) FROM "{t}"').fetchone()[0] for t in tables)
    hi = max(db.execute(f'SELECT MAX("end") FROM "{t}"').fetchone()[0] for t in tables)
    texts = [t for (t,) in db.execute('SELECT text FROM "NVTX_EVENTS" WHERE text LIKE \'%op_id = %\'')]
    db.close()
    span = hi - lo + 1_000_000
    op_ids = 1 + max(int(m) for t in texts for m in _OP_ID.findall(t))
    seqs = 1 + max((int(m) for t in texts for m in _SEQ.findall(t)), default=0)
    made = T.make(source, -(-ranges // per_copy) * kernels, out)
    db = sqlite3.connect(out)
    rows = db.execute('SELECT rowid, start, text FROM "NVTX_EVENTS" WHERE text LIKE \'%op_id = %\' AND start >= ?', (lo + span,)).fetchall()
    db.executemany('UPDATE "NVTX_EVENTS" SET text = ? WHERE rowid = ?',
                   ((_renumber(t, op_ids * ((s - lo) // span), seqs * ((s - lo) // span)), rowid) for rowid, s, t in rows))
    db.commit()
    count = db.execute('SELECT COUNT(*) FROM "NVTX_EVENTS"').fetchone()[0]
    db.close()
    return {"copies": made["copies"], "ranges": count, "bytes": out.stat().st_size}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--ranges", type=int, nargs="+", default=[1_000_000])
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--baseline-tree", type=Path, help="an older tree's ncuwrap timed on the same input, interleaved")
    p.add_argument("--json", type=Path)
    args = p.parse_args()
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        plain = T.unpack(SOURCE, Path(tmp))
        for ranges in args.ranges:
            path = Path(tmp) / f"transformer_{ranges}.sqlite"
            made = make(plain, ranges, path)
            ours, old, theirs = [], [], []
            for _ in range(args.repeat):
                ours.append(T._python(MEASURE, str(path)))
                if args.baseline_tree:
                    old.append(T._python(MEASURE, str(path), tree=args.baseline_tree.resolve()))
                theirs.append(T._python(T.YARDSTICK, str(path), "NVTX_EVENTS", "CUPTI_ACTIVITY_KIND_KERNEL"))
            row = {**made, "measure_s": statistics.median(o[0] for o in ours), "measure_samples": [o[0] for o in ours],
                   "measure_peak_bytes": max(o[1] for o in ours), "what": ours[0][2],
                   "yardstick_s": statistics.median(t[0] for t in theirs), "yardstick_samples": [t[0] for t in theirs],
                   "yardstick_peak_bytes": max(t[1] for t in theirs)}
            if old:
                row |= {"baseline_s": statistics.median(o[0] for o in old), "baseline_samples": [o[0] for o in old],
                        "baseline_peak_bytes": max(o[1] for o in old), "baseline_what": old[0][2]}
            results.append(row)
            print(json.dumps(row))
    if args.json:
        args.json.write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
