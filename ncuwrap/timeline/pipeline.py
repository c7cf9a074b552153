"""A timeline diagnosis under way: each capture measured in a forked child (:mod:`ncuwrap.timeline.measured`)
while this process imports the evaluator and loads the rules, then judged here.

numpy is imported before the children are forked: both sides need it (the child's columns, the parent's
rules and the arrays it is sent back), and imported once it is not paid twice (a small capture's whole
timeline: 0.1 s of CPU on the 2-core box; the critical path is the same, the child's import moved before
the fork). The evaluator is not: it imports beside the child's read, and two captures (``compare``) are
read side by side (what that buys, measured: ncuwrap.core.forked).
"""

from __future__ import annotations

from pathlib import Path

from ncuwrap.core import progress
from ncuwrap.core.rules_choice import RulesChoice
from ncuwrap.timeline import measured
from ncuwrap.timeline.options import TimelineOptions


class Diagnosing:
    """Captures being measured while the rules load: :meth:`results` gives their diagnoses
    (ncuwrap.timeline.diagnosis.TimelineDiagnosis), in order. A bad rules file is said, and the measuring
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
        from ncuwrap.timeline.diagnosis import decide
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
