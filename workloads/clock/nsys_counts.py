#!/usr/bin/env python3
"""What an nsys export holds inside each NVTX range whose name starts with a prefix (stdlib only).

For each such range (e.g. tracer_cost.py's ``tracer_cost:PHASE:REP``): its length, the CUDA runtime/driver
API calls that start inside it on its thread (all, and the kernel launches among them), the kernels those
launches made (joined on correlationId), and the other NVTX ranges that start inside it on its thread (with
--pytorch=autograd-nvtx these are PyTorch's op ranges; the counts of the most frequent op names too).
Prints one JSON line: {"program": "nsys_counts", "sqlite": ..., "ranges": [...]}.

    python3 workloads/clock/nsys_counts.py REPORT.sqlite [--prefix tracer_cost:]
"""

from __future__ import annotations

import argparse
import json
import re
import sqlite3


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("sqlite")
    p.add_argument("--prefix", default="tracer_cost:")
    args = p.parse_args()
    db = sqlite3.connect(args.sqlite)
    tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    strings = dict(db.execute("SELECT id, value FROM StringIds"))

    def text(row_text, text_id):
        return row_text if row_text is not None else strings.get(text_id)

    nvtx = [(s, e, text(t, tid), g) for s, e, t, tid, g in
            db.execute("SELECT start, end, text, textId, globalTid FROM NVTX_EVENTS WHERE end IS NOT NULL ORDER BY start")]
    marks = [r for r in nvtx if r[2] and r[2].startswith(args.prefix)]
    api = []
    for table in ("CUPTI_ACTIVITY_KIND_RUNTIME",):
        if table in tables:
            api += db.execute(f"SELECT start, end, nameId, correlationId, globalTid FROM {table}").fetchall()
    kernels_by_corr = {}
    if "CUPTI_ACTIVITY_KIND_KERNEL" in tables:
        for (corr,) in db.execute("SELECT correlationId FROM CUPTI_ACTIVITY_KIND_KERNEL"):
            kernels_by_corr[corr] = kernels_by_corr.get(corr, 0) + 1
    launch = re.compile(r"^(cudaLaunch|cuLaunch)")
    out = []
    for start, end, name, gtid in marks:
        calls = [a for a in api if start <= a[0] <= end and a[4] == gtid]
        launches = [a for a in calls if launch.match(strings.get(a[2], ""))]
        inner = [r for r in nvtx if start < r[0] <= end and r[3] == gtid and r[2] != name]
        ops = {}
        for r in inner:
            op = (r[2] or "").split(",")[0]
            ops[op] = ops.get(op, 0) + 1
        call_names = {}
        for a in calls:
            n = strings.get(a[2], str(a[2]))
            call_names[n] = call_names.get(n, 0) + 1
        out.append({
            "range": name, "ns": end - start, "api_calls": len(calls), "launches": len(launches),
            "kernels": sum(kernels_by_corr.get(a[3], 0) for a in launches),
            "nvtx_inside": len(inner),
            "ops": dict(sorted(ops.items(), key=lambda kv: -kv[1])[:20]),
            "api_names": dict(sorted(call_names.items(), key=lambda kv: -kv[1])[:10]),
        })
    print(json.dumps({"program": "nsys_counts", "sqlite": args.sqlite, "prefix": args.prefix, "ranges": out}))


if __name__ == "__main__":
    main()
