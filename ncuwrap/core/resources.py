"""Where the data files shipped with ncuwrap live (rules, templates, kernels, samples).

Installed, they sit inside the package (the wheel maps the repository's top-level folders there);
in a source checkout they are the top-level folders themselves.
"""

from __future__ import annotations

from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent.parent  # ncuwrap/ (this file is ncuwrap/core/resources.py)


def data_dir(name: str) -> Path:
    """Return the folder ``name`` (``rules``, ``templates``, ``kernels``) for this installation."""
    inside = _PACKAGE / name
    if inside.is_dir():
        return inside
    checkout = _PACKAGE.parent / name
    if checkout.is_dir():
        return checkout
    raise FileNotFoundError(f"ncuwrap data folder {name!r} is missing from this installation; reinstall ncuwrap")


def sample_report() -> Path:
    """The real H200 report diagnosed when ``ncuwrap diagnose`` is given no report."""
    return _PACKAGE / "samples" / "transpose_h200.ncu-rep.gz"
