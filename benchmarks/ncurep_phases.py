"""Where ``ncuwrap diagnose REPORT.ncu-rep`` goes, phase by phase, in one process (issue 41): the reading
child's own phases (the file parsed launch by launch while NVIDIA's reader answers lines beside it where
a cubin has a line table, the shown SASS by nvdisasm, then the instruction tables), the read as the diagnosis waits on it, the diagnosis, the JSON document.

    python benchmarks/ncurep_phases.py REPORT.ncu-rep [--profile]

``--profile``: the CPU profile (``cProfile`` on process time) of the parse and of the diagnosis after the read,
the 15 functions that cost most in each.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

T0 = time.perf_counter()


def at() -> float:
    return round(time.perf_counter() - T0, 3)


def _profiled(what: str, run) -> None:
    import cProfile
    import pstats

    profile = cProfile.Profile(time.process_time)
    profile.runcall(run)
    print(f"--- {what}: CPU by function")
    pstats.Stats(profile, stream=sys.stdout).sort_stats("tottime").print_stats(15)


def main(path: Path, profile: bool = False) -> None:
    from ncuwrap import ruleset
    from ncuwrap.kernel import metrics
    from ncuwrap.kernel.reading import ncu_rep, ncu_rep_file, source_counters

    rules = ruleset.load(None, metrics.KERNEL)
    wanted = frozenset(metrics.report_metrics(rules)) | ncu_rep.LAUNCH_METRICS
    print("imported", at())
    # The reading child's work, here in process: parse, the shown SASS by nvdisasm, lines by NVIDIA's reader, tables.
    has = lambda launch: any(m in launch.names for m in source_counters.MARKERS)  # noqa: E731
    disassembled = ncu_rep._Disassembling(path, ncu_rep.disassembly.nvdisasm())
    attributor, pending, cpu = None, [], time.process_time()
    for launch in ncu_rep_file.launches(path, wanted, source_counters.INSTANCED, source_counters.CODED, files_of=has):
        found = source_counters.instructions(launch.names, launch.instances, launch.codes)
        if found is not None:
            lines, sass = found.asked(launch.lines)
            if disassembled.take(launch, sass):
                sass = []
            if lines or sass:
                attributor = attributor or ncu_rep._Attributor(path, ncu_rep.load_module(), path)
                attributor.ask(launch.index, lines, sass)
            pending.append((launch, found))
    print("parsed", at(), "launches", len(pending), "parse cpu", round(time.process_time() - cpu, 3))
    texts = disassembled.result()
    print("disassembled", at(), "instructions", sum(map(len, (texts or {}).values())), "nvdisasm", "failed" if texts is None else "ok")
    answers = attributor.answers() if attributor else {}
    if attributor:
        attributor.close()
    print("answered", at(), "by NVIDIA's reader", len(answers))
    cache: dict = {}
    for launch, found in pending:
        lines, sass = answers.get(launch.index, ({}, {}))
        if texts is not None and launch.index in disassembled.asked:
            arch, pcs = disassembled.asked[launch.index]
            sass = {pc: texts[arch][pc] for pc in pcs}
        source_counters.table(launch.function, found, lambda: launch.files, source_counters.Answered(lines, sass), cache)
    print("tables", at())
    # As the command runs it: the read in its child, then the diagnosis and the document.
    import ncuwrap
    from ncuwrap.kernel import reading

    t = time.perf_counter()
    reading.start(path, metrics=wanted).result()
    print("read as diagnose does", round(time.perf_counter() - t, 3))
    t = time.perf_counter()
    diagnosis = ncuwrap.diagnose(path)
    print("ncuwrap.diagnose", round(time.perf_counter() - t, 3))
    t = time.perf_counter()
    diagnosis.to_json()
    print("to_json", round(time.perf_counter() - t, 3))
    if profile:
        def parse() -> None:
            for launch in ncu_rep_file.launches(path, wanted, source_counters.INSTANCED, source_counters.CODED, files_of=has):
                source_counters.instructions(launch.names, launch.instances, launch.codes)

        _profiled("the parse and the instruction tables", parse)
        profile_read = reading.start(path, metrics=wanted).result()
        from ncuwrap.kernel.diagnosis import diagnose_profile

        _profiled("the diagnosis after the read", lambda: diagnose_profile(profile_read, rules))


if __name__ == "__main__":
    main(Path(sys.argv[1]), "--profile" in sys.argv[2:])
