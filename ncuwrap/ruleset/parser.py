"""A rules file's YAML document into a :class:`~ncuwrap.ruleset.model.RuleSet`: every key checked
against the format (rules/reference.yaml), every condition parsed by :mod:`ncuwrap.core.expr` (no eval),
every name against the catalogue of the rules' kind; each error names the file and the rule."""

from __future__ import annotations

import ast
import math
from dataclasses import replace
from pathlib import Path

from ncuwrap.core import schema
from ncuwrap.core.catalogue import Catalogue
from ncuwrap.core.errors import RulesError
from ncuwrap.core.expr import MAX_INT, Expression, ExpressionError, parse
from ncuwrap.core.resources import data_dir
from ncuwrap.ruleset.model import ID_PATTERN, SEVERITIES, SUPPORTED_VERSIONS, Branch, Finding, NextStepRule, RuleSet, SeverityLevel
from ncuwrap.ruleset.texts import VERDICT_FIELDS, check_formats as _check_formats, placeholders
from ncuwrap.core.schema import Node


def display_path(path: Path) -> str:
    """Bundled rules are shown as 'ncuwrap:rules/NAME' so outputs do not depend on the install location."""
    try:
        bundled = data_dir("rules").resolve()
        if path.resolve().parent == bundled:
            return f"ncuwrap:rules/{path.name}"
    except FileNotFoundError:
        pass
    return str(path)


def _computes_with(tree, names: set[str]) -> bool:
    """True when a text metric is used in arithmetic, a function, or an ordering comparison."""

    def is_text(node) -> bool:
        return isinstance(node, ast.Name) and node.id in names

    for node in ast.walk(tree):
        if isinstance(node, ast.BinOp) and (is_text(node.left) or is_text(node.right)):
            return True
        if isinstance(node, ast.UnaryOp) and not isinstance(node.op, ast.Not) and is_text(node.operand):
            return True
        if isinstance(node, ast.Call) and any(is_text(a) for a in node.args):
            return True
        if isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            if any(is_text(s) for s in sides) and any(not isinstance(op, (ast.Eq, ast.NotEq)) for op in node.ops):
                return True
    return False


_TOP = ("version", "name", "kind", "description", "constants", "bound", "findings", "display", "units", "borderline", "next", "reach")
_BRANCH = ({"verdict", "when"}, {"why", "limiter", "cause", "where"})
_FINDING = ({"id", "when", "title", "advice"}, {"under", "severity", "evidence", "advice_by", "unless", "estimate", "where", "role",
                                                "ncu_rules"})

_NEXT = ({"id", "when", "title", "advice"}, {"under", "advice_by"})


def _where(item: Node, wastes: tuple[str, ...]) -> str | None:
    """A ``where:`` naming a per-instruction waste, one of the catalogue's ``wastes``."""
    node = item["where"]
    if node.absent:
        return None
    name = node.text()
    if name not in wastes:
        known = f"one of {', '.join(wastes)}" if wastes else "these rules have none"
        raise node.fail(f"'where: {name[:40]}' names no per-instruction waste ({known})")
    return name


def _labelled(item: Node, key: str, label: str) -> Node:
    """``item`` named by its ``key`` (``finding 'x'``) when it has one, so errors say which rule is wrong."""
    value = item.value.get(key) if isinstance(item.value, dict) else None
    return item.at(label.format(value)) if isinstance(value, str) and value else item


def parse_document(doc, path: Path, catalogue: Catalogue) -> RuleSet:
    """The rules of ``doc`` (the YAML of ``path``), each name checked against ``catalogue``."""
    kind = catalogue.kind
    root = schema.document(doc, str(path), RulesError, hint="see rules/reference.yaml")
    if not isinstance(doc, dict):
        raise root.fail("expected a mapping with 'version', 'bound' and 'findings'; see rules/reference.yaml")
    # Version and kind first: they say what is wrong with a file that is not these rules at all.
    version = root["version"].value
    if version not in SUPPORTED_VERSIONS:
        raise root.fail(f"unsupported rules version {version!r}; this ncuwrap reads version 1 (add 'version: 1')")
    file_kind = root.get("kind", "kernel").value
    if file_kind != kind:
        raise root.fail(f"a '{file_kind}' rules file where '{kind}' rules are needed; pass the matching file")
    root.mapping(optional=_TOP)
    reader = _Sections(path, catalogue, _constants(root))
    units = reader.units(root["units"])
    reach = {}
    for unit_name, node in root["reach"].pairs(what="a mapping of unit names to what a fixed kernel can reach there (% of peak)"):
        if unit_name not in units:
            raise node.fail(f"unit {unit_name!r} is not in 'units' ({sorted(units)})")
        reach[unit_name] = reader.expr(str(node.value), node)
    bound = reader.bound(root["bound"])
    findings = reader.findings(root["findings"], units)
    steps = reader.next_steps(root["next"])
    display = root["display"].texts(what="a list of metric names")
    borderline, note = None, ""
    spec = root["borderline"]
    if not spec.absent:
        spec.mapping({"when"}, {"note"}, what="a mapping with 'when' (a condition) and 'note' (text)")
        borderline, note = reader.expr(spec["when"].value, spec), " ".join(spec.get("note", "").text(nonempty=False).split())
        _check_formats([note], path, "borderline")
    return RuleSet(path=display_path(path), version=version, name=str(root.get("name", path.stem).value), kind=kind, constants=reader.constants,
                   bound=tuple(bound), findings=tuple(findings), display=display, units=units, borderline=borderline, borderline_note=note,
                   next=tuple(steps), reach=reach, catalogue=catalogue)


def _constants(root: Node) -> dict[str, float]:
    """The file's ``constants``, each a number the evaluation (in floats) holds exactly."""
    constants = {name: node.number() for name, node in root["constants"].pairs(what="a mapping of names to numbers")}
    for name, value in constants.items():
        # Evaluated as floats: an integer past 2**53 is not exact, .inf/.nan compare with nothing.
        if not (abs(value) <= MAX_INT if isinstance(value, int) else math.isfinite(value)):
            raise root.fail(f"constants: {name}: {str(value)[:24]} is out of range (a finite number, integers up to 2**53)")
    return constants


class _Sections:
    """What the sections of one rules file share while they are read: its path, its catalogue of names,
    its constants, and the verdicts of its 'bound' (which 'under' may name); one method per section."""

    def __init__(self, path: Path, catalogue: Catalogue, constants: dict[str, float]):
        self.path, self.catalogue, self.constants = path, catalogue, constants
        self.listing = catalogue.listing
        self.verdicts: tuple[str, ...] = ()
        self.has_bound = False

    def is_metric(self, name: str) -> bool:
        # A raw ncu name (with "__") may be used through metric("..."); anything else must be known.
        return name in self.catalogue.names or (self.catalogue.raw_allowed and "__" in name)

    def expr(self, text, at: Node) -> Expression:
        """A condition or share, parsed, every name it reads known and text metrics only compared."""
        try:
            parsed = parse(str(text) if text is not None else "", self.constants)
        except ExpressionError as exc:
            raise at.fail(str(exc)) from None
        for name in parsed.names + parsed.optional:
            if not self.is_metric(name):
                raise at.fail(f"unknown metric {name!r} ({self.listing})")
        text_names = [n for n in parsed.names + parsed.optional if n in self.catalogue.text_names]
        if text_names and _computes_with(parsed.tree, set(text_names)):
            raise at.fail(f"{text_names[0]!r} is text: compare it with == or != to a quoted value, e.g. {text_names[0]} == 'l2'")
        return replace(parsed, origin=f"{self.path}: {at.where}")

    def units(self, spec: Node) -> dict[str, str]:
        """``units``: each unit's name and the metric of its utilization."""
        units = {}
        for unit_name, node in spec.pairs(what="a mapping of unit names to the metric giving each one's utilization, e.g. {dram: dram_pct}"):
            if not ID_PATTERN.match(unit_name):
                raise node.fail(f"{unit_name!r} is not a name (lower-case letters, digits, '_')")
            units[unit_name] = node.text()
            if not self.is_metric(units[unit_name]):
                raise node.fail(f"unknown metric {units[unit_name]!r} ({self.listing})")
        return units

    def bound(self, spec: Node) -> list[Branch]:
        """``bound``: the branches that pick the verdict; remembers the verdicts for 'under'."""
        bound = []
        for item in spec.items(what="a list of branches"):
            item = _labelled(item, "verdict", f"{item.where} ({{}})").mapping(*_BRANCH)
            cause = item["cause"].texts(what="a sentence or a list of sentences", single=True)
            why = item.get("why", "").text(nonempty=False)
            for name in (name for text in [why, *cause] for name in placeholders(text)):
                if not self.is_metric(name):
                    raise item.fail(f"placeholder {{{name}}} names no metric ({self.listing})")
            _check_formats([why, *cause], self.path, item.where)
            bound.append(Branch(verdict=item["verdict"].text(), when=self.expr(item["when"].value, item), why=why,
                                limiter=str(item.get("limiter", "").value), cause=tuple(" ".join(c.split()) for c in cause),
                                where=_where(item, self.catalogue.wastes)))
        self.verdicts = tuple(dict.fromkeys(b.verdict for b in bound))  # in the order of 'bound', whatever the hash seed
        self.has_bound = bool(bound)
        return bound

    def rule_id(self, item: Node, seen: set[str]) -> str:
        """A finding's or next step's id: a name, not taken before (``seen`` is updated)."""
        rid = item["id"].value
        if not isinstance(rid, str) or not ID_PATTERN.match(rid):
            raise item.fail("needs an 'id' of lower-case letters, digits and '_'")
        if rid in seen:
            raise item.fail("duplicate id")
        seen.add(rid)
        return rid

    def rule_under(self, item: Node) -> tuple[str, ...]:
        """The verdicts a finding or next step applies under ('any': all of them)."""
        under = item.get("under", "any").texts(what="a verdict, a list of verdicts, or any", single=True)
        under = self.verdicts if under == ("any",) else under
        if self.has_bound and any(u not in self.verdicts for u in under):
            raise item.fail(f"'under' names a verdict not in 'bound' ({sorted(self.verdicts)})")
        return under

    def check_texts(self, item: Node, title: str, advice) -> None:
        """Every placeholder of a title and its advice names a metric, with a bounded format."""
        texts = [title] + (list(advice.values()) if isinstance(advice, dict) else [advice])
        for name in (name for text in texts for name in placeholders(text)):
            if not self.is_metric(name) and name not in VERDICT_FIELDS:
                raise item.fail(f"placeholder {{{name}}} names no metric ({self.listing})")
        _check_formats(texts, self.path, item.where)

    def findings(self, spec: Node, units: dict[str, str]) -> list[Finding]:
        """``findings``, in order: 'unless' may name only a finding above it."""
        findings: list[Finding] = []
        seen: set[str] = set()
        for item in spec.items(what="a list of findings"):
            item = _labelled(item, "id", "finding {!r}").mapping(*_FINDING)
            fid, under = self.rule_id(item, seen), self.rule_under(item)
            severity = _severity(item.get("severity", "medium"), lambda t, at=item.at(f"{item.where} severity"): self.expr(t, at))
            evidence = item["evidence"].texts(what="a list of metric names, e.g. [dram_pct, l2_pct]")
            for name in evidence:
                if not self.is_metric(name):
                    raise item.fail(f"unknown evidence metric {name!r}")
            advice = _advice(item)
            unless = item["unless"].texts(what="a list of finding ids", single=True)
            for other in unless:
                if other not in seen:
                    raise item.fail(f"'unless' names {other!r}, which is not a finding defined above it")
            title = item["title"].text()
            self.check_texts(item, title, advice)
            removes, fills = _estimate(item["estimate"], units, lambda t, at=item.at(f"{item.where} estimate"): self.expr(t, at))
            role = self.role(item, findings)
            ncu_rules = item["ncu_rules"].texts(what="a list of Nsight Compute rule identifiers, e.g. [UncoalescedGlobalAccess]", single=True)
            findings.append(Finding(id=fid, under=under, when=self.expr(item["when"].value, item), severity=severity, title=title.strip(),
                                    evidence=evidence, advice=advice, advice_by=item["advice_by"].value, unless=unless, removes=removes,
                                    fills=fills, where=_where(item, self.catalogue.wastes), role=role, ncu_rules=ncu_rules))
        return findings

    def role(self, item: Node, findings: list[Finding]) -> str | None:
        """A finding's ``role``: one the catalogue declares, held by no finding before it."""
        role = item["role"].value
        if role is not None and role not in self.catalogue.roles:
            raise item.fail(f"'role' {str(role)[:40]!r} is not a role of {self.catalogue.kind} rules "
                            f"({', '.join(sorted(self.catalogue.roles)) or 'they have none'}; see rules/reference.yaml)")
        if role is not None and any(f.role == role for f in findings):
            raise item.fail(f"a second finding with role {role!r}; one finding holds each role")
        return role

    def next_steps(self, spec: Node) -> list[NextStepRule]:
        """``next``: the steps suggested after a verdict."""
        steps = []
        taken: set[str] = set()
        for item in spec.items(what="a list of next steps"):
            item = _labelled(item, "id", "next step {!r}").mapping(*_NEXT)
            sid, under = self.rule_id(item, taken), self.rule_under(item)
            title, advice = item["title"].text(), _advice(item)
            by = item["advice_by"].value
            if by is not None and not (isinstance(by, str) and (self.is_metric(by) or by in VERDICT_FIELDS)):
                raise item.fail(f"'advice_by' names no metric ({self.listing})")
            self.check_texts(item, title, advice)
            steps.append(NextStepRule(id=sid, under=under, when=self.expr(item["when"].value, item), title=" ".join(title.split()), advice=advice,
                                  advice_by=item["advice_by"].value))
        return steps


def _advice(item: Node) -> str | dict[str, str]:
    """A rule's ``advice``: one text, or texts per value of its ``advice_by``."""
    node = item["advice"]
    if isinstance(node.value, dict):
        if item["advice_by"].absent:
            raise item.fail("advice given per case needs 'advice_by' naming the metric that picks the case")
        return {name: str(value.value).strip() for name, value in node.pairs()}
    return node.text(nonempty=False).strip()


def _estimate(spec: Node, units: dict, expr) -> tuple[dict[str, Expression], Expression | None]:
    """A finding's ``estimate: {removes: {unit: share}, fills: share}``, checked against ``units``."""
    if spec.absent:
        return {}, None
    spec.mapping(optional={"removes", "fills"}, what="a mapping with 'removes' and/or 'fills'")
    if not spec.value:
        raise spec.fail("takes 'removes' (a share of each unit's work) and/or 'fills' (the share of the GPU in use); see rules/reference.yaml")
    removes = spec["removes"].pairs(what="a mapping of unit names to shares, e.g. {dram: gld_waste_share}")
    if not units:
        raise spec.fail("needs the top-level 'units' (each unit and the metric of its utilization), e.g. units: {dram: dram_pct}")
    for unit_name, node in removes:
        if unit_name not in units:
            raise node.fail(f"unit {unit_name!r} is not in 'units' ({sorted(units)})")
    fills = spec["fills"]
    return {u: expr(str(node.value)) for u, node in removes}, (None if fills.absent else expr(str(fills.value)))


def _severity(spec: Node, expr) -> tuple[SeverityLevel, ...]:
    if isinstance(spec.value, str):
        return (SeverityLevel(spec.choice(SEVERITIES), None),)
    levels = []
    for entry in spec.items(what="a level or a list of {level, when}", nonempty=True):
        entry.mapping({"level"}, {"when"})
        when = entry["when"]
        levels.append(SeverityLevel(entry["level"].choice(SEVERITIES), None if when.absent else expr(when.value)))
    return tuple(levels)
