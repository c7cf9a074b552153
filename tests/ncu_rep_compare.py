"""What ncuwrap.kernel.reading.ncu_rep_format reads from a .ncu-rep against what ncu_report returns for it, launch by
launch: every metric's name and value, the names, the rule results, the per-instruction values and the
source texts; a launch the file reader leaves to NVIDIA's reader is a mismatch too. Run in a process of its
own (tests/test_ingest_rep_file.py): NVIDIA's reader leaves native state that a child forked later can hang on.

    python -m tests.ncu_rep_compare REPORT [REPORT...]   -> one JSON object: counts and mismatches

And the same at the level of the Profile the command reads (:func:`by_ncu_report`, :func:`same_profile`): there
NVIDIA's reader runs in the forked children ``ncu_rep_reader.start`` makes, never in the test's own process.
"""

from __future__ import annotations

import collections
import gzip
import json
import math
import sys
import tempfile
from pathlib import Path

from ncuwrap.kernel.reading import ncu_rep_format, source_counters

PER_PC = source_counters.INSTANCED | source_counters.CODED


def _same(a, b) -> bool:
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return type(a) is type(b) and a == b


def _ncu_value(metric):
    return metric.as_string() if metric.kind() == metric.ValueKind_STRING else metric.as_double()


def compare(path: Path, counts: collections.Counter, wrong: list) -> None:
    import ncu_report

    try:
        launches = ncu_rep_format.read(path, None, source_counters.INSTANCED, source_counters.CODED, files_of=lambda launch: True)
    except ncu_rep_format.FormatError as exc:  # the whole file left to NVIDIA's reader
        wrong.append(f"{path}: not read by the file reader ({exc})")
        return
    context = ncu_report.load_report(str(path))
    actions = [context.range_by_idx(r).action_by_idx(a) for r in range(context.num_ranges())
               for a in range(context.range_by_idx(r).num_actions())]
    if len(actions) != len(launches):
        wrong.append(f"{path}: {len(actions)} launches in ncu_report, {len(launches)} in the file")
        return
    for action, launch in zip(actions, launches):
        where = f"{path.name} launch {launch.index}"
        counts["launches"] += 1
        if isinstance(launch, ncu_rep_format.Unread):  # left to NVIDIA's reader: no report here may be
            wrong.append(f"{where}: not read by the file reader ({launch.why})")
            continue
        names = (action.name(action.NameBase_DEMANGLED), action.name(action.NameBase_MANGLED), action.name(action.NameBase_FUNCTION))
        if names != (launch.demangled, launch.mangled, launch.function):
            wrong.append(f"{where}: names {names} != {(launch.demangled, launch.mangled, launch.function)}")
        if set(action.metric_names()) != launch.names:
            wrong.append(f"{where}: metric names differ: {sorted(set(action.metric_names()) ^ launch.names)[:5]}")
        expected = {}
        for name in action.metric_names():
            metric = action.metric_by_name(name)
            if metric is not None and metric.has_value():
                expected[name] = _ncu_value(metric)
        counts["metrics"] += len(expected)
        if list(expected) != list(launch.metrics):
            wrong.append(f"{where}: valued metrics differ: {sorted(set(expected) ^ set(launch.metrics))[:5]}")
        for name, value in expected.items():
            if name in launch.metrics and not _same(value, launch.metrics[name]):
                wrong.append(f"{where}: {name} = {value!r} in ncu_report, {launch.metrics[name]!r} in the file")
        rules = _rules(action)
        counts["rule_results"] += len(rules)
        if rules != launch.rules:
            wrong.append(f"{where}: rule results differ")
        _per_pc(action, launch, where, counts, wrong)
        files = dict(action.source_files())
        counts["source_files"] += len(files)
        if files != launch.files:
            wrong.append(f"{where}: source files differ: {sorted(files)} != {sorted(launch.files)}")


def _rules(action) -> tuple:
    rules = []
    for result in action.rule_results():
        message = result.rule_message() if result.has_rule_message() else None
        speedup = result.speedup_estimation() if result.has_speedup_estimation() else None
        rules.append((result.rule_identifier(), result.section_identifier(),
                      None if message is None else (message["type"], message["title"], message["message"]),
                      None if speedup is None else (speedup["type"], speedup["speedup"])))
    return tuple(rules)


def _per_pc(action, launch, where: str, counts: collections.Counter, wrong: list) -> None:
    for name in sorted(PER_PC & launch.names):
        metric = action.metric_by_name(name)
        if name in source_counters.CODED:
            mine, theirs = launch.codes[name].to_dict(), source_counters._codes(metric)
        else:
            mine, theirs = launch.instances[name].to_dict(), source_counters._instances(metric)
        counts["per_pc_metrics"] += 1
        counts["per_pc_values"] += len(theirs)
        if mine != theirs:
            wrong.append(f"{where}: per-instruction {name} differs")
    # The cubin's line table, as the file says it: where it has none, ncu_report gives no PC a line (the
    # reader then does not ask); where it has one, ncu_report gives every PC one.
    pcs = {pc for name in PER_PC & launch.names for pc in (launch.codes.get(name) or launch.instances[name]).pcs.tolist()}
    if pcs:
        with_line = sum(1 for pc in pcs if (info := action.source_info(pc)) is not None and info.file_name())
        counts[f"pcs_lines_{launch.lines}"] += len(pcs)
        if launch.lines is not (with_line == len(pcs)) or (not launch.lines and with_line):
            wrong.append(f"{where}: line table {launch.lines}, ncu_report gives {with_line} of {len(pcs)} PCs a line")


def by_ncu_report(path: Path):
    """The Profile NVIDIA's reader gives for the whole report at ``path``, as the command reads it when the file reader
    finds the file not laid out as it expects (told so here: "told to")."""
    from unittest import mock

    from ncuwrap.kernel.reading import ncu_rep_reader

    def refuse(*args, **kwargs):
        raise ncu_rep_format.FormatError("told to")

    with mock.patch.object(ncu_rep_reader, "_collect_file", refuse):
        return ncu_rep_reader.start(path).result()


def same_profile(new, old) -> bool:
    """Frames equal (NaN where NaN), the rule results, the source facts and every instruction table with its files."""
    return (new.frame.equals(old.frame) and list(new.frame) == list(old.frame) and new.rules == old.rules and new.source == old.source
            and new.sources.keys() == old.sources.keys()
            and all(new.sources[k].table.equals(old.sources[k].table) and list(new.sources[k].table) == list(old.sources[k].table)
                    and (new.sources[k].function, new.sources[k].origin, new.sources[k].files)
                    == (old.sources[k].function, old.sources[k].origin, old.sources[k].files) for k in new.sources))


def main(paths: list[str]) -> None:
    counts: collections.Counter = collections.Counter()
    wrong: list[str] = []
    for name in paths:
        path = Path(name)
        if name.endswith(".gz"):
            with tempfile.NamedTemporaryFile(suffix=".ncu-rep") as plain:
                plain.write(gzip.decompress(path.read_bytes()))
                plain.flush()
                compare(Path(plain.name), counts, wrong)
        else:
            compare(path, counts, wrong)
        counts["reports"] += 1
    print(json.dumps({"counts": counts, "wrong": wrong}))


if __name__ == "__main__":
    main(sys.argv[1:])
