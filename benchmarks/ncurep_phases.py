"""Where ``ncuwrap diagnose REPORT.ncu-rep`` goes, phase by phase, in one process (issue 41): the reading
child's own phases (the file parsed, by as many processes as the command uses; the shown SASS by nvdisasm;
the instruction tables), the read as the diagnosis waits on it, the diagnosis, the JSON document.

    python benchmarks/ncurep_phases.py REPORT.ncu-rep [--profile]

``--profile``: the CPU profile (``cProfile`` on process time) of the parse (in one process) and of the diagnosis after the read,
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
    from ncuwrap.kernel.reading import ncu_rep_reader

    rules = ruleset.load(None, metrics.KERNEL)
    wanted = frozenset(metrics.report_metrics(rules)) | ncu_rep_reader.LAUNCH_METRICS
    print("imported", at())
    # The reading child's work, here in process: the parse (by parse_parts processes, this one among them), the
    # shown SASS by nvdisasm, the instruction tables. (What NVIDIA's reader would answer, where a line table or
    # nvdisasm cannot, is left out: no report measured here needs it.)
    tool, parts = ncu_rep_reader.disassembly.nvdisasm(), ncu_rep_reader.parse_parts(path)
    disassembled, parsed, cpu = ncu_rep_reader._Disassembling(path), {}, time.process_time()
    for launch in ncu_rep_reader._launches(path, wanted, tool, parts):
        parsed[launch.index] = launch
        if launch.located is not None:
            disassembled.take(launch.index, launch.sass_pcs, *launch.located)
    print("parsed", at(), "launches", len(parsed), "parsers", parts, "parse cpu here", round(time.process_time() - cpu, 3))
    texts = disassembled.result(tool)
    print("disassembled", at(), "instructions", sum(map(len, (texts or {}).values())), "nvdisasm", "failed" if texts is None else "ok")
    ncu_rep_reader._joined(parsed, {}, disassembled.asked, texts)
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
            for _ in ncu_rep_reader._parse(path, wanted, tool, None):
                pass

        _profiled("the parse and the instruction tables", parse)
        profile_read = reading.start(path, metrics=wanted).result()
        from ncuwrap.kernel.diagnosis import diagnose_profile

        _profiled("the diagnosis after the read", lambda: diagnose_profile(profile_read, rules))


if __name__ == "__main__":
    main(Path(sys.argv[1]), "--profile" in sys.argv[2:])
