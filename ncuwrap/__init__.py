"""ncuwrap: verdicts a kernel author can act on, from Nsight Compute and Nsight Systems data and PyTorch profiler traces.

The Python API (:mod:`ncuwrap.api`), each function a command of the CLI:

- ``ncuwrap.diagnose(report)``: the verdict of every kernel (``ncuwrap diagnose``);
- ``ncuwrap.compare_reports(before, after)``: two reports or timelines (``ncuwrap compare``);
- ``ncuwrap.diagnose_timeline(capture)``: where a program's time goes (``ncuwrap timeline FILE``);
- ``ncuwrap.diagnose_ranks(folder)``: a multi-GPU run (``ncuwrap timeline --ranks``);
- ``ncuwrap.profile_program(["./my_app", ...])``: ncu on this machine's GPU, then diagnose (``ncuwrap profile``);
- ``ncuwrap.render_result(result, "markdown")``: any result as the commands print it.

Their options are typed values, as the commands make them from their flags: ``ncuwrap.RulesChoice``
(``--rules``, ``--extend``), ``ncuwrap.LaunchSelection`` (``-k``, ``--launch-skip``...) and
``ncuwrap.TimelineOptions`` (``--step-range``, ``--warmup``, ``--steps``, ``--nsys-path``).

They are loaded on first use, so that ``import ncuwrap`` stays cheap. No function has the name of a
module of the package (``ncuwrap.timeline``, ``ncuwrap.render`` and ``ncuwrap.profile`` are modules), so
nothing here is both (docs/api.md says why). No module of the package imports this one: the version is
:mod:`ncuwrap.core.version`.
"""

import importlib

from ncuwrap.core.version import __version__  # noqa: F401  (ncuwrap.__version__)

_API = ("diagnose", "compare_reports", "diagnose_timeline", "diagnose_ranks", "profile_program", "render_result")
# The options the functions take, each a typed value (ncuwrap.diagnose(path, rules=ncuwrap.RulesChoice("my.yaml"))).
_OPTIONS = ("RulesChoice", "LaunchSelection", "TimelineOptions")
# Short names a reader may try (the functions' names before issue 40): no aliases; asked for (before the
# module of that name is imported, where there is one), the answer names the function.
_RENAMED = {"compare": "compare_reports", "timeline": "diagnose_timeline", "ranks": "diagnose_ranks", "render": "render_result",
            "profile": "profile_program"}
_MODULES = ("timeline", "render", "profile")  # (compare is ncuwrap.kernel.compare: the name is no module here)
__all__ = [*_API, *_OPTIONS]


def __getattr__(name: str):
    # PEP 562: the API (it imports the renderers) is loaded when one of its names is first used.
    if name in _API or name in _OPTIONS:
        return getattr(importlib.import_module("ncuwrap.api"), name)
    if name in _MODULES:  # `import ncuwrap.timeline` and `from ncuwrap import timeline` still import the module
        raise AttributeError(f"module 'ncuwrap' has no attribute {name!r}: the function is ncuwrap.{_RENAMED[name]}, "
                             f"and ncuwrap.{name} is a module (import ncuwrap.{name})")
    if name in _RENAMED:
        raise AttributeError(f"module 'ncuwrap' has no attribute {name!r}: the function is ncuwrap.{_RENAMED[name]}")
    raise AttributeError(f"module 'ncuwrap' has no attribute {name!r}")


def __dir__():
    # What to discover: the API (the package's modules and helpers are imported, not browsed).
    return sorted(["__version__", *_API, *_OPTIONS])
