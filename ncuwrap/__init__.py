"""ncuwrap: verdicts a kernel author can act on, from Nsight Compute and Nsight Systems data.

The Python API (:mod:`ncuwrap.api`): ``ncuwrap.diagnose``, ``ncuwrap.compare``, ``ncuwrap.timeline``,
``ncuwrap.ranks`` and ``ncuwrap.render``, loaded on first use so that ``import ncuwrap`` stays cheap.
"""

import importlib
import sys
import types

__version__ = "0.1.0"

_API = ("diagnose", "compare", "timeline", "ranks", "render")
# API names that are also modules of the package (ncuwrap/compare.py, ncuwrap/timeline/, ncuwrap/render/):
# importing one binds the module to the package's attribute of that name, so the module itself is
# made callable as the API function (entry below), whichever was imported first.
_MODULES = ("compare", "timeline", "render")


class _Entry(types.ModuleType):
    """A module that is also the API function of its name: ``ncuwrap.compare(before, after)``."""

    def __call__(self, *args, **kwargs):
        return getattr(importlib.import_module("ncuwrap.api"), self.__name__.rpartition(".")[2])(*args, **kwargs)


def entry(module_name: str) -> None:
    """Make the module ``module_name`` (one of _MODULES) callable as the API function of its name."""
    sys.modules[module_name].__class__ = _Entry


def __getattr__(name: str):
    # PEP 562: the API (it imports the renderers) is loaded when one of its names is first used.
    if name in _MODULES:
        return importlib.import_module(f"ncuwrap.{name}")
    if name in _API:
        return getattr(importlib.import_module("ncuwrap.api"), name)
    raise AttributeError(f"module 'ncuwrap' has no attribute {name!r}")


def __dir__():
    # What to discover: the API (the package's modules and helpers are imported, not browsed).
    return sorted(["__version__", *_API])
