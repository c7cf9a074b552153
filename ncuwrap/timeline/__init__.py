"""Timelines (Nsight Systems captures, PyTorch profiler traces): where a whole program's time goes, and what limits it.

>>> from ncuwrap.timeline.diagnosis import diagnose_timeline
>>> result = diagnose_timeline("run.sqlite")       # or a .nsys-rep (exported with nsys)
>>> result.bound, result.timeline.breakdown_ns["kernel"]

Stages: ``readers.read(path)`` reads a capture, in one call, through the declared readers of :mod:`.readers`
(``readers/nsys_sqlite.py`` an nsys SQLite export, ``readers/kineto_json.py`` a PyTorch profiler trace;
:mod:`.nsysrep` runs nsys to export or profile) into :mod:`.model`'s ``TimelineData`` (the model also holds the
events' vocabulary), :mod:`.steps` and :mod:`.analysis` measure the window (as :mod:`.options` say) into :mod:`.model`'s ``Timeline``
(:mod:`.measured`: one capture file, in a forked child), and :mod:`.diagnosis` runs the two side by side and
applies the YAML rules (rules/timeline.yaml) with ncuwrap.ruleset.evaluate over :mod:`.values` into
:mod:`.verdict`'s ``TimelineDiagnosis`` (the kernel wing's roles: the type ``verdict.py``, the process
``diagnosis.py``); :mod:`.compare` compares two of them and :mod:`.ranks` a run's ranks; ncuwrap.render
draws the result. This package module imports nothing of its own (the rules loader reads :mod:`.metrics`,
the names timeline rules may use, without loading the rest). The API function of a timeline is
``ncuwrap.diagnose_timeline(path)``.
"""
