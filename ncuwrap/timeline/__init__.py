"""Timelines (Nsight Systems captures, PyTorch profiler traces): where a whole program's time goes, and what limits it.

>>> from ncuwrap.timeline.pipeline import diagnose_timeline
>>> result = diagnose_timeline("run.sqlite")       # or a .nsys-rep (exported with nsys)
>>> result.bound, result.timeline.breakdown_ns["kernel"]

Stages: :mod:`.files` reads a capture through the declared readers of :mod:`.readers` (:mod:`.sqlite` an
nsys SQLite export, :mod:`.nsysrep` runs nsys to export or profile, :mod:`.kineto` a PyTorch profiler
trace), :mod:`.steps` and :mod:`.analysis` measure the window (as :mod:`.options` say) into :mod:`.model`
(:mod:`.measured`: one capture file, in a forked child), :mod:`.diagnosis` applies the YAML rules
(rules/timeline.yaml) with ncuwrap.ruleset.evaluate over :mod:`.values`, and :mod:`.pipeline` runs the two
side by side; :mod:`.compare` compares two of them and :mod:`.ranks` a run's ranks; ncuwrap.render
draws the result. This package module imports nothing of its own (the rules loader reads :mod:`.metrics`,
the names timeline rules may use, without loading the rest). The API function of a timeline is
``ncuwrap.diagnose_timeline(path)``.
"""
