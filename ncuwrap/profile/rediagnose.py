"""``ncuwrap diagnose RUN_DIR``: a run folder of ``ncuwrap profile`` diagnosed again, on any machine:
its raw CSV export (or the report) read as the profile run read it (the report's path, ncu version
and command line from profile.json, the source pages beside it), and for a bundled benchmark the
stop line from the bench.json there."""

from __future__ import annotations

import shlex
from dataclasses import replace
from pathlib import Path

from ncuwrap.core import safejson
from ncuwrap.core.errors import InputError
from ncuwrap.profile import rundir

# profile.json is a few kilobytes (tens with many launches); more is not ncuwrap's.
MAX_PROFILE_BYTES = 4 << 20


def is_run_dir(path: Path) -> bool:
    return path.is_dir() and (path / rundir.PROFILE).is_file()


def run_dir_inputs(path: Path) -> tuple[Path, ...]:
    """The files of a run folder that diagnosing it reads (an output must replace none of them)."""
    rd = rundir.RunDir(path)
    return (rd.profile, rd.raw_csv, rd.report, rd.source_csv, rd.source_sass_csv, rd.bench)


def diagnose_run_dir(path: Path, rules=None, *, ncu: str | None = None, select=None):
    """The run folder's diagnosis by ``rules`` (a RulesChoice; default: the bundled rules) of the launches
    ``select`` keeps, with the stop line where the folder has a bundled benchmark's bench.json."""
    from ncuwrap.core.rules_choice import RulesChoice
    from ncuwrap.kernel.diagnosis import diagnose_profile, needed_metrics
    from ncuwrap.kernel.metrics import KERNEL
    from ncuwrap.kernel.reading import load
    from ncuwrap.kernel.reading.source_counters import is_source_page
    from ncuwrap.profile.pipeline import attach_source_page, load_raw_csv

    rd = rundir.RunDir(path)
    record = _record(rd)
    from ncuwrap import ruleset

    rules = ruleset.chosen(rules or RulesChoice(), KERNEL)
    if rd.raw_csv.is_file():
        loaded = load_raw_csv(rd, record["ncu_version"], record["command_line"], metrics=needed_metrics(rules))
        # The pages the profile run attached, as it attached them: cuda,sass first, then the SASS form.
        for page in (rd.source_csv, rd.source_sass_csv):
            if page.is_file() and is_source_page(page) and attach_source_page(loaded, page):
                break
    elif rd.report.is_file():
        loaded = load(rd.report, ncu=ncu, metrics=needed_metrics(rules))
    else:
        raise InputError(f"{path}: the run folder has neither {rundir.RAW_CSV} nor {rundir.REPORT} (the run failed?); profile again")
    diagnosis = diagnose_profile(loaded, rules, select=select)
    target = record["target"]
    if target.get("benchmark") and target.get("variant") and rd.bench.is_file():
        from ncuwrap.bundled.report import read
        from ncuwrap.bundled.stopline import stop_line

        line = stop_line(read(rd.bench), str(target["benchmark"]), str(target["variant"]), source=str(rd.bench))
        diagnosis = replace(diagnosis, stop_line=line)
    return diagnosis


def _record(rd: rundir.RunDir) -> dict:
    """What diagnosing needs from profile.json: the target, ncu's version and the command line."""
    from ncuwrap.kernel.reading import check_file

    check_file(rd.profile, max_bytes=MAX_PROFILE_BYTES, folder_fix="give a run folder of 'ncuwrap profile'")
    try:
        doc = safejson.loads(rd.profile.read_text(encoding="utf-8"))
    except (safejson.Refused, OSError, UnicodeDecodeError, ValueError) as exc:
        raise InputError(f"{rd.profile}: not a readable profile.json ({str(exc).splitlines()[0][:120]}); profile again") from None
    if not isinstance(doc, dict) or doc.get("schema") != rundir.SCHEMA or not isinstance(doc.get("target"), dict):
        raise InputError(f"{rd.profile}: not written by 'ncuwrap profile' (schema {rundir.SCHEMA} expected); pass a report file instead")
    ncu = doc.get("ncu") if isinstance(doc.get("ncu"), dict) else {}
    argv = doc.get("argv")
    command = shlex.join(argv) if isinstance(argv, list) and all(isinstance(a, str) for a in argv) else None
    version = ncu.get("version") if isinstance(ncu.get("version"), str) else None
    return {"target": doc["target"], "ncu_version": version, "command_line": command}
