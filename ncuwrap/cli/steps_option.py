"""The ``--steps`` option, declared once for every command that judges a timeline by its steps."""

from __future__ import annotations

from enum import Enum

import typer


class StepsFind(str, Enum):
    """How a capture's steps are found (ncuwrap.timeline.steps.FIND_CHOICES)."""

    auto = "auto"
    marked = "marked"
    none = "none"


STEPS_HELP = ("How the steps are found: auto (NVTX ranges named like a step, else found by repetition of the launches), "
              "marked (NVTX ranges only), none (no steps: the window from the first GPU work to the last is judged).")


def steps_option(prefix: str = "") -> StepsFind:
    """``--steps`` (``prefix``: a word before the help, e.g. 'Timelines: ')."""
    return typer.Option(StepsFind.auto, "--steps", help=prefix + STEPS_HELP)
