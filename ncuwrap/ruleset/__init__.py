"""Load a rules file (versioned YAML) into typed objects, and merge a user's with the bundled rules (``--extend``).

The format is documented, with comments, in ``rules/reference.yaml``. YAML is read with
``yaml.safe_load`` only; conditions go through :mod:`ncuwrap.core.expr` (no eval). Every error names the
file and the rule. The package: :mod:`.model` (the typed rules), :mod:`.parser` (a document into
them), :mod:`.texts` (the rules' texts and their placeholders); this module reads files and merges.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import yaml

from ncuwrap.core import safeyaml
from ncuwrap.core.catalogue import Catalogue
from ncuwrap.core.errors import RulesError
from ncuwrap.core.fileio import check_file
from ncuwrap.core.resources import data_dir
from ncuwrap.core.rules_choice import RulesChoice
from ncuwrap.ruleset.model import (  # noqa: F401  (the rules' types, for callers)
    ESTIMATE_DEFAULTS, SEVERITIES, SUPPORTED_VERSIONS, Branch, Finding, NextStepRule, RuleSet, SeverityLevel)
from ncuwrap.ruleset.parser import display_path, parse_document  # noqa: F401  (display_path, for callers)
# The rules' texts (placeholders, how they are filled) live in ncuwrap.ruleset.texts; these names stay here too.
from ncuwrap.ruleset.texts import VERDICT_FIELDS, check_formats as _check_formats, chosen_advice, placeholders, render_text, text_names  # noqa: F401


def kind_of_file(path: str | Path) -> str:
    """The ``kind:`` a rules file declares (``kernel`` when absent), for commands that take either."""
    doc = _read_yaml(Path(path))
    return str(doc.get("kind", "kernel")) if isinstance(doc, dict) else "kernel"


def finding_ids(path: str | Path) -> frozenset[str]:
    """The ids of the findings a rules file declares, its expressions not checked: what another file may
    name (the bundled benchmarks' manifest names the kernel rules' findings, below the kernel wing)."""
    doc = _read_yaml(Path(path))
    findings = doc.get("findings") if isinstance(doc, dict) else None
    return frozenset(str(f["id"]) for f in findings or () if isinstance(f, dict) and "id" in f)


def chosen(choice: RulesChoice, catalogue: Catalogue) -> RuleSet:
    """The rules ``choice`` names (``--rules``, ``--extend``), reading ``catalogue``'s names."""
    return load(choice.path, catalogue, extend=choice.extend)


def default_path(catalogue: Catalogue) -> Path:
    return data_dir("rules") / catalogue.rules_file


def load(path: str | Path | None, catalogue: Catalogue, *, extend: bool = False) -> RuleSet:
    """Load ``path`` (default: the bundled rules of ``catalogue``'s kind) as rules that read ``catalogue``'s
    names (ncuwrap.core.catalogue: ``ncuwrap.kernel.metrics.KERNEL``, ``ncuwrap.timeline.metrics.TIMELINE``...). With ``extend``, its findings and constants are
    added to the bundled rules (a finding with an existing id replaces it)."""
    if path is None:
        return _load_file(default_path(catalogue), catalogue)
    user = _load_file(Path(path), catalogue)
    if not extend:
        if not user.bound:
            raise RulesError(f"{path}: no 'bound' branches, so no kernel could get a verdict; add them, or pass --extend to add these findings to the bundled "
                             f"rules")
        return user
    base = _load_file(default_path(catalogue), catalogue)
    bound = user.bound or base.bound
    # A finding 'under: any' in a file without 'bound' applies under every verdict of the merged rules.
    verdicts = tuple(b.verdict for b in bound)
    findings = {f.id: f for f in base.findings}
    findings.update({f.id: f if f.under or user.bound else replace(f, under=verdicts) for f in user.findings})
    # One finding holds each role: a user's finding with a role takes it from the bundled one.
    taken, mine = {f.role for f in user.findings if f.role}, {f.id for f in user.findings}
    findings = {fid: (replace(f, role=None) if f.role in taken and fid not in mine else f) for fid, f in findings.items()}
    return RuleSet(
        path=f"{base.path} + {user.path}",
        version=user.version,
        name=f"{base.name}+{user.name}",
        kind=catalogue.kind,
        constants={**base.constants, **user.constants},
        bound=bound,
        findings=tuple(findings.values()),
        display=tuple(dict.fromkeys(base.display + user.display)),
        units={**base.units, **user.units},
        borderline=user.borderline or base.borderline,
        borderline_note=user.borderline_note if user.borderline else base.borderline_note,
        # A user's next steps come first (an entry with a bundled id replaces it there).
        next=tuple(user.next) + tuple(n for n in base.next if n.id not in {u.id for u in user.next}),
        reach={**base.reach, **user.reach},
        catalogue=catalogue,
    )


def _load_file(path: Path, catalogue: Catalogue) -> RuleSet:
    return parse_document(_read_yaml(path), path, catalogue)


# A rules file is tens of kilobytes (the bundled ones are); more is not a rules file.
MAX_RULES_BYTES = 4 << 20


def _read_yaml(path: Path):
    check_file(path, folder_fix="pass a YAML rules file", missing="rules file not found; pass an existing YAML file to --rules",
               empty_fix=None, max_bytes=MAX_RULES_BYTES, error=RulesError)
    try:
        return safeyaml.load(path.read_text(encoding="utf-8"))
    except safeyaml.TooLarge as exc:
        raise RulesError(f"{path}: {exc}") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark else ""
        raise RulesError(f"{path}: not valid YAML{where} ({getattr(exc, 'problem', exc)}); fix the syntax") from None
    except UnicodeDecodeError:
        raise RulesError(f"{path}: not a text file; pass a YAML rules file") from None
