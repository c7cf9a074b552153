"""A multi-GPU run from one capture per rank (nsys, or a PyTorch profiler trace): the same stages as a single capture, for a set.

:mod:`.files` finds the rank captures in a folder, :mod:`.capture` runs ``torchrun`` with one
``nsys profile`` per rank, :mod:`.analysis` measures each rank and compares them into :mod:`.model`,
:mod:`.metrics` names what rank rules (rules/ranks.yaml) may read, and :mod:`.diagnosis` applies them
(in parallel on Dask). This package module imports nothing, so the rules loader can read
:mod:`.metrics` alone.

>>> from ncuwrap.timeline.ranks.diagnosis import diagnose_ranks
>>> result = diagnose_ranks("captures/")              # rank0.sqlite, rank1.sqlite, ...
"""
