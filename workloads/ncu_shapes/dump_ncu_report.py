"""What NVIDIA's own reader (``ncu_report``) gives for a report, as gzipped JSON, so that tests can compare ncuwrap's
file reader with it without that version of the module (workloads/ncu_shapes/capture.sh runs it with ncu's own
``extras/python``):

    python3 dump_ncu_report.py REPORT.ncu-rep OUT.json.gz

One object: the ncu_report module's file, the ranges' action counts, and per action (in ranges' order) its range
and index, workload type, names in each name base, every metric's value (a string as a string, a number as
``as_double``, None where it has none), the per-instruction values of every metric that has correlation ids
(as [PC, ``value(i)``] pairs: a number or a string), Nsight Compute's rule results, the source files (name ->
sha256 and length of the text), and for every instruction's PC (PER_INSTRUCTION's): its source file and line
and its SASS. NaN and infinities are written as Python's json writes them (NaN, Infinity), which Python's
json reads back.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import sys

import ncu_report

MAX_PCS = 20_000  # a launch's PCs whose line and SASS are written (the kernels captured have far fewer)
# The SourceCounters metrics with one instance per instruction (their correlation ids are PCs; other metrics'
# instances are per unit, not per PC).
PER_INSTRUCTION = ("inst_executed", "smsp__pcsamp_sample_count")


def _value(metric, index=None):
    if metric.kind() == metric.ValueKind_STRING:
        return metric.as_string() if index is None else metric.as_string(index)
    return metric.as_double() if index is None else metric.as_double(index)


def _instances(metric) -> list | None:
    """[PC, value] of each instance where the metric has correlation ids (``value(i)``: a number or a string)."""
    ids = metric.correlation_ids()
    if ids is None or not metric.num_instances():
        return None
    return [[int(ids.as_uint64(i)), metric.value(i)] for i in range(metric.num_instances())]


def _rules(action) -> list:
    out = []
    for result in action.rule_results() if hasattr(action, "rule_results") else []:
        out.append({"rule": result.rule_identifier(), "section": result.section_identifier(),
                    "message": result.rule_message() if result.has_rule_message() else None,
                    "speedup": result.speedup_estimation() if result.has_speedup_estimation() else None})
    return out


def _action(action, r: int, a: int) -> dict:
    bases = {"demangled": action.NameBase_DEMANGLED, "mangled": action.NameBase_MANGLED, "function": action.NameBase_FUNCTION}
    out = {"range": r, "action": a, "workload_type": action.workload_type() if hasattr(action, "workload_type") else None,
           "name": action.name(), "names": {key: action.name(base) for key, base in bases.items()}, "metrics": {}, "instances": {}}
    for name in action.metric_names():
        metric = action.metric_by_name(name)
        if metric is None:
            continue
        try:
            out["metrics"][name] = _value(metric) if metric.has_value() else None
            found = _instances(metric)
        except Exception as exc:  # said, not fatal: the rest of the report is still worth having
            out.setdefault("errors", {})[name] = f"{type(exc).__name__}: {exc}"
            continue
        if found is not None:
            out["instances"][name] = found
    out["rules"] = _rules(action)
    try:
        files = dict(action.source_files())
    except Exception as exc:  # an older module
        files, out["source_files_error"] = {}, f"{type(exc).__name__}: {exc}"
    out["source_files"] = {name: {"sha256": hashlib.sha256(text.encode("utf-8", "replace")).hexdigest(), "chars": len(text)}
                           for name, text in files.items()}
    pcs = sorted({pc for name in PER_INSTRUCTION for pc, _ in out["instances"].get(name, [])})[:MAX_PCS]
    lines, sass = {}, {}
    for pc in pcs:
        info = action.source_info(pc)
        lines[str(pc)] = [info.file_name(), info.line()] if info is not None else None
        sass[str(pc)] = action.sass_by_pc(pc)
    out["lines"], out["sass"] = lines, sass
    return out


def main(report: str, target: str) -> None:
    context = ncu_report.load_report(report)
    doc = {"module": ncu_report.__file__, "report": report, "ranges": [], "actions": []}
    for r in range(context.num_ranges()):
        rng = context.range_by_idx(r)
        doc["ranges"].append(rng.num_actions())
        for a in range(rng.num_actions()):
            doc["actions"].append(_action(rng.action_by_idx(a), r, a))
    with gzip.open(target, "wt", compresslevel=9) as fh:
        json.dump(doc, fh)
    print(f"{report}: {sum(doc['ranges'])} actions in {len(doc['ranges'])} ranges -> {target}")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
