"""Which rules judge a result (``--rules FILE [--extend]``), as one value the command line, the API and
the workflows below them pass on whole.

A value of the core, not of :mod:`ncuwrap.ruleset`: the rules' expressions import numpy, and the command
line and the API make this value before any work starts (a timeline's readers are forked before numpy is
imported). :func:`ncuwrap.ruleset.chosen` loads the rules it names."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ncuwrap.core.errors import OptionError


@dataclass(frozen=True)
class RulesChoice:
    """The rules of a diagnosis: the bundled rules of the result's kind (``path`` None), a rules YAML
    replacing them, or (``extend``) one whose findings and constants are added to them.

        >>> RulesChoice()                                   # the bundled rules
        >>> RulesChoice("my_rules.yaml", extend=True)       # ncuwrap diagnose --rules my_rules.yaml --extend
    """

    path: Path | None = None
    extend: bool = False

    def __post_init__(self):
        if self.path is not None and not isinstance(self.path, Path):
            object.__setattr__(self, "path", Path(self.path))
        if self.extend and self.path is None:
            raise OptionError("--extend adds the rules of --rules FILE to the bundled ones; give --rules too")
