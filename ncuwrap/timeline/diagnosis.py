"""A timeline's diagnosis, the process (its type is :mod:`ncuwrap.timeline.verdict`'s, as the kernel's are
``kernel/diagnosis.py`` and ``kernel/verdict.py``): each capture measured in a forked child
(:mod:`ncuwrap.timeline.measured`) while this process imports the evaluator and loads the rules, then judged
here (:func:`decide`).

numpy is imported before the children are forked: both sides need it (the child's columns, the parent's
rules and the arrays it is sent back), and imported once it is not paid twice (what that saves: docs/scale.md,
figures behind the code; the critical path is the same, the child's import moved before the fork). The
evaluator is not: it imports beside the child's read, and two captures (``compare``) are read side by side
(what that buys, measured: ncuwrap.core.forked).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from ncuwrap.core import progress
from ncuwrap.core.rules_choice import RulesChoice
from ncuwrap.timeline import measured
from ncuwrap.timeline.options import TimelineOptions

if TYPE_CHECKING:  # the verdict's module imports the evaluator: not before the children are forked
    from ncuwrap.timeline.verdict import TimelineDiagnosis


class Diagnosing:
    """Captures being measured while the rules load: :meth:`results` gives their diagnoses
    (ncuwrap.timeline.verdict.TimelineDiagnosis), in order. A bad rules file is said, and the measuring
    stopped, before any capture's own error; of two captures' errors, the first one's."""

    def __init__(self, paths, rules: RulesChoice = RulesChoice(), timeline: TimelineOptions = TimelineOptions(), kernels=None):
        self.paths = [str(p) for p in paths]
        self.choice = rules
        self.rules = None  # the RuleSet the results were judged by, once loaded
        self.measuring: list = []
        import numpy  # noqa: F401  (once for both sides: see the module's docstring)

        try:
            for path in paths:
                self.measuring.append(measured.start(path, timeline, kernels))
        except BaseException:
            self.cancel()
            raise

    def results(self) -> list:
        from ncuwrap.timeline.metrics import TIMELINE

        try:
            from ncuwrap import ruleset

            rules = self.rules = ruleset.chosen(self.choice, TIMELINE)
            found = []
            for done, (m, path) in enumerate(zip(self.measuring, self.paths)):
                progress.report(f"reading {Path(path).name}", done, len(self.paths))
                found.append(m.result())
        finally:
            self.cancel()  # stops what is still running after an error or an interrupt
        progress.report("applying the rules", len(self.paths), len(self.paths))
        return [decide(m, rules, source_path=p) for m, p in zip(found, self.paths)]

    def cancel(self) -> None:
        for m in self.measuring:
            m.cancel()


def diagnose_timeline(path: str | Path, rules: RulesChoice = RulesChoice(), timeline: TimelineOptions = TimelineOptions(), kernels=None):
    """Diagnose an nsys capture (.sqlite, .sqlite.gz or .nsys-rep) or a PyTorch trace with ``rules`` (default:
    the bundled timeline rules): over its steady steps where it has steps (found as ``timeline`` says:
    ncuwrap.timeline.steps), else over the whole capture. ``kernels``: a kernel report's verdicts
    (ncuwrap.timeline.kernel_join.DiagnosedKernels) for the what-if's faster_kernel."""
    return Diagnosing([path], rules, timeline, kernels).results()[0]


def decide(measured, rules, *, source_path: str) -> TimelineDiagnosis:
    """Apply ``rules`` (a loaded timeline RuleSet) to a measured capture (ncuwrap.timeline.measured.Measured)."""
    from ncuwrap.ruleset.evaluate import Evaluation
    from ncuwrap.timeline.values import CaptureValues
    from ncuwrap.timeline.verdict import TimelineDiagnosis, TimelineSource

    timeline = measured.timeline
    decision = Evaluation(CaptureValues(timeline.metrics, timeline.unknown), rules).decide(0)
    return TimelineDiagnosis(
        source=TimelineSource(path=source_path, kind=measured.kind, nsys_version=measured.nsys_version, export_schema=measured.export_schema,
                              device=measured.device,
                              # Events built by hand (tests, synthetic ranks) name no producer: nsys's, as the reports always said.
                              producer=measured.producer or f"nsys {measured.nsys_version or '?'}"),
        rules_path=rules.path, rules_version=rules.version, rules_name=rules.name, timeline=timeline, decision=decision,
        notes=measured.notes,
    )


def diagnose_analysed(analysed, rules, *, kernels=None):
    """A capture analysed (ncuwrap.timeline.measured.Analysed: its steps found, its steady steps analysed) replayed
    with ``kernels`` joined (a kernel report's verdicts: ncuwrap.timeline.measured.measure_analysed) and judged by
    ``rules`` (a loaded timeline RuleSet): the steps are not looked for again."""
    from ncuwrap.timeline.measured import measure_analysed

    return decide(measure_analysed(analysed, kernels), rules, source_path=analysed.source_path)
