"""Profile a program (or a bundled benchmark) under Nsight Compute and diagnose what it measured.

>>> from ncuwrap.profile import ProfileOptions, profile, targets
>>> result = profile(targets.resolve(["transpose/naive"]), "runs/naive", ProfileOptions())
>>> result.passes_total, result.wall_s, result.diagnosis.kernels[0].bound

Modules: :mod:`.targets` (what to run), :mod:`.launches` (which launches), :mod:`.collection` (what to
collect), :mod:`.ncu_tool` (find ncu, its version, running it), :mod:`.ncu_argv` (the exact argv),
:mod:`.console` (what ncu prints, read), :mod:`.failure` (a failed run as one line with the fix),
:mod:`.rundir` (the run folder and its JSON files), :mod:`.result` (the typed options and result),
:mod:`.verdict_match` (targeted against full), :mod:`.pipeline` (one run, start to end),
:mod:`.rediagnose` (a run folder diagnosed again), :mod:`.top` and :mod:`.kernel_times` (``--top N``:
nsys first, then ncu on the kernels that take most). The process runner is :mod:`ncuwrap.core.process`.

Which launch is profiled
------------------------
ncu's ``--launch-skip N`` and ``--launch-count C`` count only the launches that match the kernel
filter (``-k``): with ``-k regex:add --launch-skip 6`` ncu profiles the 7th launch *of a kernel
matching "add"*, whatever ran in between. Without ``-k`` every launch counts. ``--nth-launch N``
(ncu's ``--kernel-id :::N``) profiles instead the Nth launch of *each* distinct kernel (ncu counts
per kernel and launch configuration), so one kernel's warm-up never hides another kernel. Every run
says, per profiled kernel, which launch it was (profile.json and the screen).
"""

from __future__ import annotations

import importlib

# What must not change between two collections of the same launches (light: no import).
from ncuwrap.profile.verdict_match import same_verdicts, verdicts  # noqa: E402, F401

# The other names this package offers, each from its module: loaded on first use (PEP 562), so that a
# light module of the package (rundir, rediagnose's run-folder check) does not import pandas with pipeline.
_EXPORTS = {"DEFAULT_PROGRAM_LAUNCH_COUNT": "launches", "LaunchFilter": "launches", "ProfiledLaunch": "launches", "launch_filter": "launches",
            "profile": "pipeline", "ProfileOptions": "result", "ProfileResult": "result"}
__all__ = sorted([*_EXPORTS, "same_verdicts", "verdicts"])


def __getattr__(name: str):
    if name in _EXPORTS:
        return getattr(importlib.import_module(f"ncuwrap.profile.{_EXPORTS[name]}"), name)
    raise AttributeError(f"module 'ncuwrap.profile' has no attribute {name!r}")
