"""Load a rules file (versioned YAML) into typed objects.

The format is documented, with comments, in ``rules/reference.yaml``. YAML is read with
``yaml.safe_load`` only; conditions go through :mod:`ncuwrap.expr` (no eval). Every error names the
file and the rule.
"""

from __future__ import annotations

import ast
import functools
import math
import re
from dataclasses import dataclass, field, replace
from pathlib import Path

import yaml

from ncuwrap import metrics, safeyaml
from ncuwrap.errors import RulesError
from ncuwrap.ingest import check_file
from ncuwrap.expr import MAX_INT, Expression, ExpressionError, parse
from ncuwrap.resources import data_dir

SUPPORTED_VERSIONS = (1,)
# Estimate settings a rules file may set among its constants (documented in rules/reference.yaml).
ESTIMATE_DEFAULTS = {"roof": 90.0, "launch_floor_ns": 2000.0, "gain_minor": 5.0, "gain_high": 20.0, "saving_minor_ns": 1000.0, "busy": 60.0}
# Facts of the verdict (not metrics) that texts and advice_by may name.
VERDICT_FIELDS = ("bound",)
SEVERITIES = ("high", "medium", "low", "minor", "info")
_ID = re.compile(r"^[a-z][a-z0-9_]*$")
_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_.]*)(?::([<>^]?\d*(?:\.\d+)?[fgde%]?))?\}")
# Bounds of a placeholder's format spec ({dram_pct:8.2f}): {x:200000000f} is 800 MB per text.
MAX_WIDTH = 64
MAX_PRECISION = 12


@dataclass(frozen=True)
class Branch:
    """One step of the ``bound`` decision: the first branch whose condition holds gives the verdict."""

    verdict: str
    when: Expression
    why: str
    limiter: str  # metric holding the limiting unit's name, or a literal unit
    # Sentences naming the cause (stall reasons, the busiest pipe): each shown only when every
    # metric it reads is known for the launch.
    cause: tuple[str, ...] = ()


@dataclass(frozen=True)
class SeverityLevel:
    level: str
    when: Expression | None


@dataclass(frozen=True)
class Finding:
    id: str
    under: tuple[str, ...]  # verdicts this cause applies to
    when: Expression
    severity: tuple[SeverityLevel, ...]
    title: str
    evidence: tuple[str, ...]
    advice: str | dict[str, str]
    advice_by: str | None = None
    unless: tuple[str, ...] = ()
    # What fixing it buys (ncuwrap.estimate): the share of each unit's work the fix removes, and the
    # share of the GPU the launch keeps busy. A finding with either has its severity set by the gain.
    removes: dict[str, Expression] = field(default_factory=dict)
    fills: Expression | None = None

    @property
    def estimated(self) -> bool:
        return bool(self.removes) or self.fills is not None

    def value_names(self) -> list[str]:
        """Every metric its output shows: the evidence, and the placeholders of title and advice."""
        texts = [self.title] + (list(self.advice.values()) if isinstance(self.advice, dict) else [self.advice])
        names = list(self.evidence) + ([self.advice_by] if self.advice_by and self.advice_by not in VERDICT_FIELDS else [])
        names += [name for text in texts for name in placeholders(text)]
        return list(dict.fromkeys(names))


@dataclass(frozen=True)
class RuleSet:
    path: str
    version: int
    name: str
    kind: str  # kernel | timeline
    constants: dict[str, float]
    bound: tuple[Branch, ...]
    findings: tuple[Finding, ...]
    display: tuple[str, ...] = field(default=())  # metrics shown per kernel besides the evidence
    # The units estimates move work between: unit name -> the metric giving its utilization (%).
    units: dict[str, str] = field(default_factory=dict)
    # When the bound decision is too close to call (another run may decide otherwise), and what to say.
    borderline: Expression | None = None
    borderline_note: str = ""

    def setting(self, name: str) -> float:
        """An estimate setting: the rules' constant, else ESTIMATE_DEFAULTS."""
        return float(self.constants.get(name, ESTIMATE_DEFAULTS[name]))

    def metric_names(self) -> list[str]:
        """Every metric name (canonical, derived or raw) the rules read."""
        names: list[str] = []

        def add(items):
            names.extend(n for n in items if n not in names)

        for branch in self.bound:
            add(branch.when.names + branch.when.optional)
            add([n for text in (branch.why, *branch.cause) for n in placeholders(text)])
            if branch.limiter in metrics.DERIVED or branch.limiter in metrics.CANONICAL:
                add([branch.limiter])
        for finding in self.findings:
            add(finding.when.names + finding.when.optional)
            for level in finding.severity:
                if level.when:
                    add(level.when.names + level.when.optional)
            for expr in [*finding.removes.values(), *([finding.fills] if finding.fills else [])]:
                add(expr.names + expr.optional)
            add(finding.value_names())
        if any(f.estimated for f in self.findings):
            add(list(self.units.values()) + ["duration_ns"])
        if self.borderline is not None:
            add(self.borderline.names + self.borderline.optional)
        add(self.display)
        return names

    def raw_metrics(self) -> list[str]:
        """The raw ncu metrics needed to evaluate every rule (what targeted profiling collects)."""
        out: list[str] = []
        for name in self.metric_names():
            out.extend(m for m in metrics.raw_inputs(name) if m not in out)
        return out


def kind_of_file(path: str | Path) -> str:
    """The ``kind:`` a rules file declares (``kernel`` when absent), for commands that take either."""
    doc = _read_yaml(Path(path))
    return str(doc.get("kind", "kernel")) if isinstance(doc, dict) else "kernel"


def default_path(kind: str = "kernel") -> Path:
    return data_dir("rules") / ("default.yaml" if kind == "kernel" else "timeline.yaml")


def load(path: str | Path | None = None, *, kind: str = "kernel", extend: bool = False) -> RuleSet:
    """Load ``path`` (default: the bundled rules). With ``extend``, its findings and constants are
    added to the bundled rules (a finding with an existing id replaces it)."""
    if path is None:
        return _load_file(default_path(kind), kind)
    user = _load_file(Path(path), kind)
    if not extend:
        if not user.bound:
            raise RulesError(f"{path}: no 'bound' branches, so no kernel could get a verdict; add them, or pass --extend to add these findings to the bundled rules")
        return user
    base = _load_file(default_path(kind), kind)
    bound = user.bound or base.bound
    # A finding 'under: any' in a file without 'bound' applies under every verdict of the merged rules.
    verdicts = tuple(b.verdict for b in bound)
    findings = {f.id: f for f in base.findings}
    findings.update({f.id: f if f.under or user.bound else replace(f, under=verdicts) for f in user.findings})
    return RuleSet(
        path=f"{base.path} + {user.path}",
        version=user.version,
        name=f"{base.name}+{user.name}",
        kind=kind,
        constants={**base.constants, **user.constants},
        bound=bound,
        findings=tuple(findings.values()),
        display=tuple(dict.fromkeys(base.display + user.display)),
        units={**base.units, **user.units},
        borderline=user.borderline or base.borderline,
        borderline_note=user.borderline_note if user.borderline else base.borderline_note,
    )


def display_path(path: Path) -> str:
    """Bundled rules are shown as 'ncuwrap:rules/NAME' so outputs do not depend on the install location."""
    try:
        bundled = data_dir("rules").resolve()
        if path.resolve().parent == bundled:
            return f"ncuwrap:rules/{path.name}"
    except FileNotFoundError:
        pass
    return str(path)


def _load_file(path: Path, kind: str) -> RuleSet:
    return _parse(_read_yaml(path), path, kind)


# A rules file is tens of kilobytes (the bundled one: 15 KB); more is not a rules file.
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


def known_names(kind: str) -> tuple[frozenset[str], bool, str]:
    """The names a rules file of ``kind`` may read, whether raw ncu names (with "__") are allowed, and
    where a user finds the list. Kernel rules read ncu metrics; timeline rules read one value per
    capture (ncuwrap.timeline.metrics)."""
    if kind == "timeline":
        from ncuwrap.timeline.metrics import NAMES

        return NAMES, False, "timeline rules read the names listed at the end of rules/timeline.yaml"
    return frozenset(metrics.CANONICAL) | frozenset(metrics.DERIVED), True, "see 'ncuwrap rules metrics --all' for the names"


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


def _fail(path: Path, where: str, message: str) -> RulesError:
    return RulesError(f"{path}: {where}: {message}")


def _parse(doc, path: Path, kind: str) -> RuleSet:
    if not isinstance(doc, dict):
        raise RulesError(f"{path}: expected a mapping with 'version', 'bound' and 'findings'; see rules/reference.yaml")
    version = doc.get("version")
    if version not in SUPPORTED_VERSIONS:
        raise RulesError(f"{path}: unsupported rules version {version!r}; this ncuwrap reads version 1 (add 'version: 1')")
    file_kind = doc.get("kind", "kernel")
    if file_kind != kind:
        raise RulesError(f"{path}: a '{file_kind}' rules file where '{kind}' rules are needed; pass the matching file")
    unknown = set(doc) - {"version", "name", "kind", "description", "constants", "bound", "findings", "display", "units", "borderline"}
    if unknown:
        raise RulesError(f"{path}: unknown top-level key(s) {sorted(unknown)}; see rules/reference.yaml")
    constants = doc.get("constants") or {}
    if not isinstance(constants, dict) or not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in constants.values()):
        raise RulesError(f"{path}: 'constants' must map names to numbers")
    for name, value in constants.items():
        # Evaluated as floats: an integer past 2**53 is not exact, .inf/.nan compare with nothing.
        if not (abs(value) <= MAX_INT if isinstance(value, int) else math.isfinite(value)):
            raise RulesError(f"{path}: constants: {name}: {str(value)[:24]} is out of range (a finite number, integers up to 2**53)")
    known, raw_allowed, listing = known_names(kind)

    def expr(text, where: str) -> Expression:
        try:
            parsed = parse(str(text) if text is not None else "", constants)
        except ExpressionError as exc:
            raise _fail(path, where, str(exc)) from None
        for name in parsed.names + parsed.optional:
            # A raw ncu name (with "__") may be used through metric("..."); anything else must be known.
            if name not in known and not (raw_allowed and "__" in name):
                raise _fail(path, where, f"unknown metric {name!r} ({listing})")
        text_names = [n for n in parsed.names + parsed.optional if n in metrics.STRING_METRICS]
        if text_names and _computes_with(parsed.tree, set(text_names)):
            raise _fail(path, where, f"{text_names[0]!r} is text: compare it with == or != to a quoted value, e.g. {text_names[0]} == 'l2'")
        return replace(parsed, origin=f"{path}: {where}")

    units = doc.get("units") or {}
    if not isinstance(units, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in units.items()):
        raise RulesError(f"{path}: 'units' must map unit names to the metric giving each one's utilization, e.g. {{dram: dram_pct}}")
    for unit_name, metric_name in units.items():
        if not _ID.match(unit_name):
            raise RulesError(f"{path}: units: {unit_name!r} is not a name (lower-case letters, digits, '_')")
        if metric_name not in known and not (raw_allowed and "__" in metric_name):
            raise RulesError(f"{path}: units: {unit_name}: unknown metric {metric_name!r} ({listing})")
    for key in ("bound", "findings", "display"):
        if doc.get(key) is not None and not isinstance(doc[key], list):
            raise RulesError(f"{path}: '{key}' must be a list (of {'branches' if key == 'bound' else 'findings' if key == 'findings' else 'metric names'}); see rules/reference.yaml")
    bound = []
    for i, item in enumerate(doc.get("bound") or []):
        where = f"bound[{i}]"
        if not isinstance(item, dict) or "verdict" not in item or "when" not in item:
            raise _fail(path, where, "each branch needs 'verdict' and 'when'")
        if not isinstance(item["verdict"], str) or not isinstance(item.get("why", ""), str):
            raise _fail(path, where, "'verdict' and 'why' must be text")
        limiter = str(item.get("limiter", ""))
        cause = item.get("cause") or []
        cause = [cause] if isinstance(cause, str) else cause
        if not isinstance(cause, list) or not all(isinstance(c, str) for c in cause):
            raise _fail(path, where, "'cause' must be a sentence or a list of sentences")
        for name in (name for text in [item.get("why", ""), *cause] for name in placeholders(text)):
            if name not in known and not (raw_allowed and "__" in name):
                raise _fail(path, where, f"placeholder {{{name}}} names no metric ({listing})")
        _check_formats([item.get("why", ""), *cause], path, where)
        bound.append(Branch(verdict=str(item["verdict"]), when=expr(item["when"], f"{where} ({item['verdict']})"), why=str(item.get("why", "")),
                            limiter=limiter, cause=tuple(" ".join(c.split()) for c in cause)))
    verdicts = {b.verdict for b in bound}

    findings = []
    seen: set[str] = set()
    for i, item in enumerate(doc.get("findings") or []):
        if not isinstance(item, dict):
            raise _fail(path, f"findings[{i}]", "each finding must be a mapping")
        fid = item.get("id")
        where = f"finding {fid!r}" if fid else f"findings[{i}]"
        if not isinstance(fid, str) or not _ID.match(fid):
            raise _fail(path, where, "needs an 'id' of lower-case letters, digits and '_'")
        if fid in seen:
            raise _fail(path, where, "duplicate id")
        seen.add(fid)
        missing = [k for k in ("when", "title", "advice") if k not in item]
        if missing:
            raise _fail(path, where, f"missing {', '.join(missing)}")
        extra = set(item) - {"id", "under", "when", "severity", "title", "evidence", "advice", "advice_by", "unless", "estimate"}
        if extra:
            raise _fail(path, where, f"unknown key(s) {sorted(extra)}")
        under = item.get("under", "any")
        under = tuple(verdicts) if under == "any" else tuple([under] if isinstance(under, str) else under)
        if bound and any(u not in verdicts for u in under):
            raise _fail(path, where, f"'under' names a verdict not in 'bound' ({sorted(verdicts)})")
        severity = _severity(item.get("severity", "medium"), lambda t, w=where: expr(t, f"{w} severity"), path, where)
        if not isinstance(item["title"], str) or not isinstance(item["advice"], (str, dict)):
            raise _fail(path, where, "'title' must be text and 'advice' text or a mapping of cases")
        evidence = item.get("evidence") or []
        if not isinstance(evidence, list) or not all(isinstance(e, str) for e in evidence):
            raise _fail(path, where, "'evidence' must be a list of metric names, e.g. [dram_pct, l2_pct]")
        evidence = tuple(evidence)
        for name in evidence:
            if name not in known and not (raw_allowed and "__" in name):
                raise _fail(path, where, f"unknown evidence metric {name!r}")
        advice = item["advice"]
        if isinstance(advice, dict):
            advice = {str(k): str(v).strip() for k, v in advice.items()}
            if not item.get("advice_by"):
                raise _fail(path, where, "advice given per case needs 'advice_by' naming the metric that picks the case")
        else:
            advice = str(advice).strip()
        unless = tuple(item.get("unless") or ())
        for other in unless:
            if other not in seen:
                raise _fail(path, where, f"'unless' names {other!r}, which is not a finding defined above it")
        texts = [item["title"]] + (list(advice.values()) if isinstance(advice, dict) else [advice])
        for name in (name for text in texts for name in placeholders(text)):
            if name not in known and name not in VERDICT_FIELDS and not (raw_allowed and "__" in name):
                raise _fail(path, where, f"placeholder {{{name}}} names no metric ({listing})")
        _check_formats(texts, path, where)
        removes, fills = _estimate(item.get("estimate"), units, lambda t, w=where: expr(t, f"{w} estimate"), path, where)
        findings.append(Finding(id=fid, under=under, when=expr(item["when"], where), severity=severity, title=str(item["title"]).strip(),
                                evidence=evidence, advice=advice, advice_by=item.get("advice_by"), unless=unless, removes=removes, fills=fills))
    display = tuple(doc.get("display") or ())
    borderline, note = None, ""
    if doc.get("borderline") is not None:
        spec = doc["borderline"]
        if not isinstance(spec, dict) or set(spec) - {"when", "note"} or "when" not in spec or not isinstance(spec.get("note", ""), str):
            raise RulesError(f"{path}: 'borderline' takes 'when' (a condition) and 'note' (text); see rules/reference.yaml")
        borderline, note = expr(spec["when"], "borderline"), " ".join(str(spec.get("note", "")).split())
        _check_formats([note], path, "borderline")
    return RuleSet(path=display_path(path), version=version, name=str(doc.get("name", path.stem)), kind=kind, constants=dict(constants),
                   bound=tuple(bound), findings=tuple(findings), display=display, units=dict(units), borderline=borderline, borderline_note=note)


def _estimate(spec, units: dict, expr, path: Path, where: str) -> tuple[dict[str, Expression], Expression | None]:
    """A finding's ``estimate: {removes: {unit: share}, fills: share}``, checked against ``units``."""
    if spec is None:
        return {}, None
    if not isinstance(spec, dict) or not spec or set(spec) - {"removes", "fills"}:
        raise _fail(path, where, "'estimate' takes 'removes' (a share of each unit's work) and/or 'fills' (the share of the GPU in use); see rules/reference.yaml")
    removes = spec.get("removes") or {}
    if not isinstance(removes, dict):
        raise _fail(path, where, "estimate: 'removes' must map unit names to shares, e.g. {dram: gld_waste_share}")
    if not units:
        raise _fail(path, where, "an estimate needs the top-level 'units' (unit -> utilization metric)")
    for unit_name in removes:
        if unit_name not in units:
            raise _fail(path, where, f"estimate: unit {unit_name!r} is not in 'units' ({sorted(units)})")
    fills = spec.get("fills")
    return {str(u): expr(str(v)) for u, v in removes.items()}, (expr(str(fills)) if fills is not None else None)


def _severity(spec, expr, path: Path, where: str) -> tuple[SeverityLevel, ...]:
    if isinstance(spec, str):
        if spec not in SEVERITIES:
            raise _fail(path, where, f"severity {spec!r} is not one of {SEVERITIES}")
        return (SeverityLevel(spec, None),)
    if not isinstance(spec, list) or not spec:
        raise _fail(path, where, "severity must be a level or a list of {level, when}")
    levels = []
    for entry in spec:
        level = entry.get("level") if isinstance(entry, dict) else None
        if level not in SEVERITIES:
            raise _fail(path, where, f"severity level {level!r} is not one of {SEVERITIES}")
        levels.append(SeverityLevel(level, expr(entry["when"]) if entry.get("when") is not None else None))
    return tuple(levels)


def _check_formats(texts, path: Path, where: str) -> None:
    """Refuse a placeholder whose width or precision would make a text huge ({x:200000000f})."""
    for text in texts:
        for match in _PLACEHOLDER.finditer(text):
            spec = re.fullmatch(r"[<>^]?(\d*)(?:\.(\d+))?[fgde%]?", match.group(2) or "")
            width, precision = spec.group(1), spec.group(2)
            # Lengths first: int() refuses more than 4,300 digits.
            if (width and (len(width) > 3 or int(width) > MAX_WIDTH)) or (precision and (len(precision) > 3 or int(precision) > MAX_PRECISION)):
                raise _fail(path, where, f"placeholder {match.group(0)[:40]} is too wide (width at most {MAX_WIDTH}, "
                                         f"precision at most {MAX_PRECISION}), e.g. {{{match.group(1)}:.1f}}")


def placeholders(text: str) -> list[str]:
    """The metric names a text's {name} / {name:.1f} placeholders read."""
    return list(_placeholders(text))


@functools.lru_cache(maxsize=1024)
def _placeholders(text: str) -> tuple[str, ...]:
    # Cached: the same few texts are filled for every launch of a large report.
    return tuple(m.group(1) for m in _PLACEHOLDER.finditer(text))


def render_text(template: str, values: dict) -> str:
    """Fill ``{name}`` / ``{name:.1f}`` placeholders from ``values`` (no attribute access, no eval)."""

    def fill(match: re.Match) -> str:
        name, spec = match.group(1), match.group(2)
        value = values.get(name)
        if value is None or (isinstance(value, float) and value != value):
            return "n/a"
        if spec and isinstance(value, (int, float)):
            try:
                return format(value, spec)
            except ValueError:
                return str(value)
        if isinstance(value, float):
            return f"{value:.4g}"
        return str(value)

    return _PLACEHOLDER.sub(fill, template)
