"""Nsight Systems timelines: where a whole program's time goes, and what limits it.

>>> from ncuwrap.timeline import diagnose_timeline
>>> result = diagnose_timeline("run.sqlite")       # or a .nsys-rep (exported with nsys)
>>> result.bound, result.timeline.breakdown_ns["kernel"]

Stages: :mod:`.sqlite` reads an nsys SQLite export, :mod:`.nsysrep` runs nsys (export, profile),
:mod:`.analysis` measures the window, :mod:`ncuwrap.evaluate` applies the YAML rules (rules/timeline.yaml)
over :mod:`.values`,
:mod:`.model` and :mod:`.diagnosis` hold the typed results; ncuwrap.render draws them.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from ncuwrap.errors import InputError, ToolNotFoundError

__all__ = ["diagnose_timeline", "diagnose_data", "read_timeline"]


def read_timeline(path: str | Path, nsys: str | Path | None = None):
    """The raw events of ``path`` (.sqlite, or .nsys-rep exported to a temporary .sqlite with nsys)."""
    from ncuwrap import ingest
    from ncuwrap.timeline import nsysrep, sqlite

    path = Path(path)
    nsysrep.check_not_qdstrm(path)
    name = path.name.lower()
    if name.endswith(".nsys-rep"):
        ingest.check_file(path, folder_fix="give an nsys .sqlite export or .nsys-rep report",
                          empty_fix="capture the program again with nsys profile")
        try:
            exe = nsysrep.find_nsys(nsys)
        except ToolNotFoundError:
            where = f"{nsys} is not an nsys executable" if nsys else "nsys is not on PATH"
            raise ToolNotFoundError(f"{path}: reading a .nsys-rep needs nsys to export it to SQLite, and {where}; install Nsight "
                                    f"Systems and put nsys on PATH, or run 'nsys export --type sqlite {path}' where nsys is "
                                    "installed and diagnose the .sqlite") from None
        with tempfile.TemporaryDirectory(prefix="ncuwrap-nsys-") as tmp:
            exported = nsysrep.export_sqlite(path, Path(tmp) / (path.name[: -len(".nsys-rep")] + ".sqlite"), nsys=exe)
            return sqlite.read(exported), "nsys-rep"
    if name.endswith(".sqlite"):
        return sqlite.read(path), "nsys-sqlite"
    raise InputError(f"{path}: not an Nsight Systems timeline; give a .nsys-rep or its 'nsys export --type sqlite' .sqlite")


def diagnose_data(data, rules, *, source_path: str, kind: str):
    """Analyse the events of one capture and apply ``rules`` (a loaded timeline RuleSet)."""
    from ncuwrap.timeline.analysis import analyze
    from ncuwrap.evaluate import Evaluation
    from ncuwrap.timeline.diagnosis import TimelineDiagnosis, TimelineSource
    from ncuwrap.timeline.values import CaptureValues

    timeline = analyze(data)
    decision = Evaluation(CaptureValues(timeline.metrics, timeline.unknown), rules).decide(0)
    return TimelineDiagnosis(
        source=TimelineSource(path=source_path, kind=kind, nsys_version=data.nsys_version, export_schema=data.export_schema,
                              device=data.device),
        rules_path=rules.path, rules_version=rules.version, rules_name=rules.name, timeline=timeline,
        bound=decision.bound, limiter=decision.limiter, why=decision.why, findings=decision.findings,
        not_evaluated=decision.not_evaluated, path=decision.path,
        notes=tuple(data.notes),
    )


def diagnose_timeline(path: str | Path, rules_path: str | Path | None = None, extend: bool = False, nsys: str | Path | None = None):
    """Diagnose an nsys capture (.sqlite or .nsys-rep) with the bundled timeline rules or ``rules_path``."""
    from ncuwrap import ruleset

    rules = ruleset.load(rules_path, kind="timeline", extend=extend)
    data, kind = read_timeline(path, nsys=nsys)
    return diagnose_data(data, rules, source_path=str(path), kind=kind)
