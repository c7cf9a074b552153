"""The diagnosis document (JSON) in its versions, and reading one back into a Diagnosis.

``ncuwrap.diagnosis/v4`` (what ``--format json`` writes) says once what the launches of one kernel
share. The first launch of each kernel (by name, in the report's order) is a whole launch record, as
in v2; every later launch of that kernel is::

    {"id": 7, "like": 3, "differs": {"/duration_ns": 25630.0, "/metrics/dram_pct": 71.2}, "digits": {"/why": ["71"]}}

``like`` is the latest earlier launch of the kernel with the same shape (a training loop's launch is like
its twin in the step before), ``differs`` maps RFC 6901 JSON Pointers into that record to this launch's
values there, ``digits`` the texts that differ from it only in their numbers (:mod:`ncuwrap.kernel.json_delta`
says exactly how, repeated values included). Beside v2's keys, a launch record holds the memory levels its
charts lack for want of counters (``level_gaps``: a v4 document written before it has none) and what
``compare`` reads (``compared``: every metric a finding's evidence or a comparison reads; ``effects``: what
estimates a fix), and the document the rest of the report's facts (``facts``: command line, sha256,
clock and cache control, SM clock) and which finding holds each rule role (``roles``). Everything else
is v2's. v3 (what ncuwrap wrote before v4, 6a32746) is v4 with ``like`` always the kernel's first launch,
no ``digits`` and no repeats marked.

:func:`expand` gives the v2 document back, the same JSON text v2 wrote (tested); :func:`read` gives a
:class:`~ncuwrap.kernel.verdict.Diagnosis` of a v2, v3 or v4 file, which ``compare`` takes beside reports.
"""

from __future__ import annotations

from pathlib import Path

import orjson

from ncuwrap.kernel.attribution import HotLine, Instruction, Unattributed, Where
from ncuwrap.core.errors import InputError
from ncuwrap.kernel.estimate import KernelEffects
from ncuwrap.core.fileio import check_file
from ncuwrap.kernel.json_delta import OverBudget, expand_launches
from ncuwrap.kernel.verdict import Diagnosis, KernelVerdict, LevelGap, NcuRule, Reprofile, Roofline, RooflinePoint, SourceInfo, Stall
from ncuwrap.ruleset.outcome import FindingResult, NextStep, NotEvaluated, Step, Undecided
from ncuwrap.kernel.verdict import SCHEMA as V4, SCHEMA_V2 as V2, SCHEMA_V3 as V3
from ncuwrap.ruleset.model import SEVERITIES
from ncuwrap.core.schema import _kind

SCHEMAS = (V2, V3, V4)
# A v4 document of 100,000 launches is tens of megabytes, a v2 one of 70,000 full-set launches 1 GB (13.9 KB
# a launch, parsed into ten times that in memory): past it, refused rather than read.
MAX_BYTES = 1 << 30
_FIX = "pass a document written by 'ncuwrap diagnose --format json'"
# Values a v3 or v4 document's launches may copy from the ones they are 'like' (json_delta.expand_launches),
# by the document's size: the real ones copy at most 0.024 a byte (tests/data/diagnosis_v3/train_step_660:
# 80,202 for 3.3 MB), 800 times under this; 3,000 launches each changing a metric of a 60,000-metric
# record would copy 180 million for 1.5 MB.
EXPAND_FLOOR = 10_000_000
EXPAND_PER_BYTE = 20
# What a v3 and v4 launch record holds beside v2's (the memory levels its charts lack, what 'compare' reads): not in
# the v2 document.
V3_ONLY = ("level_gaps", "compared", "effects")


def expand(doc: dict) -> dict:
    """A v3 or v4 document as the v2 document of the same diagnosis (a v2 document is returned as it is)."""
    if doc.get("schema") == V2:
        return doc
    if doc.get("schema") not in (V3, V4):
        raise ValueError(f"not an ncuwrap diagnosis document (schema {doc.get('schema')!r})")
    out = {key: value for key, value in doc.items() if key not in ("roles", "facts")}
    out["schema"], out["kernels"] = V2, [{key: value for key, value in k.items() if key not in V3_ONLY} for k in _launches(doc)]
    return out


def _launches(doc: dict, budget: int | None = None) -> list[dict]:
    if doc.get("schema") == V2:
        return doc["kernels"]
    return expand_launches(doc["kernels"], marked=doc.get("schema") == V4, budget=budget)


# ------------------------------------------------------------------------------------------ reading


def read(path: str | Path) -> Diagnosis:
    """A diagnosis document (v2, v3 or v4) as the Diagnosis it was written from, for ``compare``. What the
    document does not hold stays empty: the source snippets, ``--top``'s coverage, a bundled lesson's
    stop line; a v2 document also lacks the metrics only a comparison reads and the findings' effects
    (compare then shows fewer evidence changes and no estimate of what the fix should have bought)."""
    path = Path(path)
    check_file(path, folder_fix=_FIX, missing=f"no such file; {_FIX}", empty_fix=_FIX, max_bytes=MAX_BYTES)
    text = path.read_bytes()
    try:
        doc = orjson.loads(text)
    except orjson.JSONDecodeError as exc:
        raise InputError(f"{path}: not valid JSON ({exc}); {_FIX}") from None
    schema = doc.get("schema") if isinstance(doc, dict) else None
    if schema not in SCHEMAS:
        raise InputError(f"{path}: not an ncuwrap diagnosis (schema {schema!r}, expected {' or '.join(SCHEMAS)}); {_FIX}")
    try:
        DOCUMENT.check(doc, "", {})
        launches = _launches(doc, budget=EXPAND_FLOOR + EXPAND_PER_BYTE * len(text))
        seen: dict = {}
        for i, launch in enumerate(launches):
            LAUNCH.check(launch, f"kernels[{i}]", seen)
    except _WrongType as exc:
        raise InputError(f"{path}: {exc}; {_FIX}") from None
    except OverBudget as exc:
        raise InputError(f"{path}: {exc}, far more than a diagnosis of this size holds; {_FIX}") from None
    except (KeyError, TypeError, ValueError, IndexError) as exc:  # a 'like' or pointer that leads nowhere
        raise InputError(f"{path}: a malformed {schema} document ({type(exc).__name__}: {str(exc)[:80]}); {_FIX}") from None
    # v3 and v4 name the finding of each role; v2 did not (the bundled rules it was judged by say them).
    roles = {finding: role for role, finding in (doc.get("roles", {}) if schema != V2 else _bundled_roles(doc)).items()}
    try:
        return _diagnosis(doc, roles, launches)
    except (KeyError, TypeError, ValueError, IndexError, AttributeError) as exc:
        raise InputError(f"{path}: a malformed {schema} document ({type(exc).__name__}: {str(exc)[:80]}); {_FIX}") from None


def _bundled_roles(doc: dict) -> dict:
    """A v2 document names no roles: those of the bundled rules it was judged by, when it was (none for a user's)."""
    path = doc["rules"]["path"]
    if not path.startswith("ncuwrap:rules/") or "+" in path:
        return {}
    from ncuwrap import ruleset
    from ncuwrap.kernel.metrics import KERNEL
    from ncuwrap.core.resources import data_dir

    # Looked up among the bundled files by name, never joined as a path ('ncuwrap:rules/../../etc/passwd'
    # read any file on the machine as rules, and its errors named that file instead of the document).
    folder = data_dir("rules")
    bundled = {p.relative_to(folder).as_posix(): p for p in folder.rglob("*.yaml")}.get(path.removeprefix("ncuwrap:rules/"))
    if bundled is None:
        return {}
    return {f.role: f.id for f in ruleset.load(bundled, KERNEL).findings if f.role}


def _diagnosis(doc: dict, roles: dict, launches: list[dict]) -> Diagnosis:
    s, rules = doc["source"], doc["rules"]
    source = SourceInfo(path=s["path"], kind=s["kind"], ncu_version=s.get("ncu_version"), device=s.get("device"),
                        compute_capability=s.get("compute_capability"), **(doc.get("facts") or {}))
    r = doc.get("reprofile")
    reprofile = Reprofile(tuple(r["rules"]), tuple(r["missing"]), r["launches"], r["how"]) if r else None
    return Diagnosis(source=source, rules_path=rules["path"], rules_version=rules["version"], rules_name=rules["name"],
                     kernels=tuple(_kernel(k, roles) for k in launches), reprofile=reprofile, lines_hint=doc.get("lines_hint"),
                     notes=tuple(doc.get("notes") or ()))


def _kernel(k: dict, roles: dict) -> KernelVerdict:
    launch, process, step = k["launch"], k.get("process") or {}, k.get("next_step")
    return KernelVerdict(
        id=k["id"], name=k["name"], display_name=k["display_name"], grid=launch.get("grid"), block=launch.get("block"),
        duration_ns=k["duration_ns"], bound=k["bound"], limiter=k["limiter"], why=k["why"],
        findings=tuple(_finding(f, roles) for f in k["findings"]),
        not_evaluated=tuple(NotEvaluated(n["rule"], tuple(n["missing"]), n["message"]) for n in k["not_evaluated"]),
        display_metrics=k["metrics"], path=tuple(Step(**s) for s in k["decision_path"]), chart_metrics=k["chart"],
        compared_metrics=k.get("compared") or {}, effects=KernelEffects.from_json(k["effects"]) if k.get("effects") else None,
        borderline=k["borderline"], pipe=k["pipe"], pipe_pct=k["pipe_pct"], tensor=k["tensor"], estimated_gain_pct=k["estimated_gain_pct"],
        stalls=tuple(Stall(**s) for s in k["stalls"]), ncu_rules=tuple(NcuRule(**r) for r in k["ncu_rules"]),
        roofline=_roofline(k["roofline"]), process_id=process.get("id"), process_name=process.get("name"), stream=k["stream"],
        where=_where(k["where"]), source_counters=k["source_counters"],
        # v2, v3 and a v4 written before level_gaps say none: their charts show 'n/a' where a value is missing.
        level_gaps=tuple(LevelGap(g["level"], g["part"], tuple(g["missing"]), g["why"], g["how"]) for g in k.get("level_gaps") or ()),
        next_step=NextStep(step["id"], step["title"], step["advice"], tuple(Undecided(u["id"], u["title"], tuple(u["missing"]), u["how"])
                                                                            for u in step["undecided"])) if step else None)


def _finding(f: dict, roles: dict) -> FindingResult:
    return FindingResult(id=f["id"], severity=f["severity"], title=f["title"], evidence=f["evidence"], advice=f["advice"],
                         estimated_speedup=f.get("estimated_speedup"), limited_after=f.get("limited_after"), where=_where(f.get("where")),
                         role=roles.get(f["id"]))


def _roofline(r: dict | None) -> Roofline | None:
    if r is None:
        return None
    return Roofline(kind=r["kind"], peak_flops_per_s=r["peak_flops_per_s"], roofs=tuple(r["roofs"].items()), flops_per_s=r["flops_per_s"],
                    points=tuple(RooflinePoint(**p) for p in r["points"]), missing=tuple(r["missing"]),  # its 'how' is not in the document
                    l1_left_out=_l1_left_out(r.get("l1_left_out")))


def _l1_left_out(doc: dict | None):
    """A document written before the L1 point could be left out has no such key, and one written while it
    was judged by bytes (ncuwrap 0.1.0 before issue 38's L1 point) has other keys: None, no reason shown."""
    if not isinstance(doc, dict) or "l1_sectors" not in doc or "l2_requests_from_sms" not in doc:
        return None
    return (doc["l1_sectors"], doc["l2_requests_from_sms"])


def _where(w: dict | None):
    if w is None:
        return None
    if "lines" not in w:
        return Unattributed(w["waste"], w["why"])
    lines = tuple(HotLine(file=h["file"], line=h["line"], text=h["text"], value=h["value"], share=h["share"],
                          instructions=tuple(Instruction(int(i["pc"], 16), i["sass"], i["value"]) for i in h["sass"]),
                          counters=h["counters"], stalls=tuple((s["reason"], s["share"]) for s in h["stalls"]), contributors=h["instructions"])
                  for h in w["lines"])
    return Where(waste=w["waste"], label=w["label"], function=w["function"], total=w["total"], by_line=w["by"] == "line", lines=lines,
                 covered=w["covered"])


# ------------------------------------------------------------------------------------------ schema
# A document handed to 'compare' is anyone's file: every field read below is type-checked first, so that a
# list where a name goes, or a text where a number goes, is one line naming the document and the field
# (not an error deep inside compare). The types bound the nesting too: every field has a fixed depth, so
# nothing read is deeper than the JSON output writes (orjson reads 1,024 levels and writes 254).


class _WrongType(Exception):
    """A field of the wrong type: where, and what it should be."""


class _Type:
    def __init__(self, what: str, check):
        self.what, self.check = what, check


def _scalar(kinds: tuple, what: str) -> _Type:
    return _Type(what, lambda value, where, seen: None if type(value) in kinds else _wrong(value, where, what))


def _at(where: str, key) -> str:
    return f"{where}.{key}" if where else str(key)


def _wrong(value, where: str, what: str):
    raise _WrongType(f"{where}: expected {what}, found {_kind(value)}")


INT, NUM, TEXT, BOOL = (_scalar((int,), "a whole number"), _scalar((int, float), "a number"), _scalar((str,), "a text"),
                        _scalar((bool,), "true or false"))
SCALAR = _scalar((int, float, str, type(None)), "a number, a text or null")


def _opt(t: _Type) -> _Type:
    return _Type(f"{t.what} or null", lambda value, where, seen: None if value is None else t.check(value, where, seen))


def _one_of(choices: tuple[str, ...]) -> _Type:
    what = "one of " + ", ".join(choices)
    return _Type(what, lambda value, where, seen: None if type(value) is str and value in choices else _wrong(value, where, what))


def _shared(check):
    """A container check done once per object: a v4 document's launches share their unchanged parts."""
    def once(value, where, seen):
        if id(value) in seen.setdefault(id(once), set()):
            return
        check(value, where, seen)
        seen[id(once)].add(id(value))
    return once


def _list(t: _Type) -> _Type:
    def check(value, where, seen):
        if type(value) is not list:
            _wrong(value, where, "a list")
        for i, item in enumerate(value):
            t.check(item, f"{where}[{i}]", seen)
    return _Type(f"a list of {t.what}", _shared(check))


def _map(t: _Type) -> _Type:
    def check(value, where, seen):
        if type(value) is not dict:
            _wrong(value, where, "a mapping")
        for key, item in value.items():
            t.check(item, _at(where, key), seen)
    return _Type(f"a mapping of {t.what}", _shared(check))


def _record(required: dict, optional: dict | None = None) -> _Type:
    optional = optional or {}

    def check(value, where, seen):
        if type(value) is not dict:
            _wrong(value, where, "a mapping")
        for key, t in required.items():
            if key not in value:
                raise _WrongType(f"{where or 'the document'}: no {key!r}")
            t.check(value[key], _at(where, key), seen)
        for key, t in optional.items():
            if key in value:
                t.check(value[key], _at(where, key), seen)
    return _Type("a mapping", _shared(check))


def _json(depth: int) -> _Type:
    """Any JSON value nested at most ``depth`` deep (a field read by a type of its own)."""
    def check(value, where, seen, left=depth):
        if type(value) in (dict, list):
            if left == 0:
                raise _WrongType(f"{where}: nested deeper than {depth} levels")
            for key, item in (value.items() if type(value) is dict else enumerate(value)):
                check(item, _at(where, key), seen, left - 1)
    return _Type("JSON", check)


_DIMS = _opt(_list(INT))
_WHERE_LINE = _record({"file": _opt(TEXT), "line": _opt(INT), "text": _opt(TEXT), "value": NUM, "share": NUM, "counters": _map(NUM),
                       "sass": _list(_record({"pc": TEXT, "sass": _opt(TEXT), "value": NUM})), "instructions": INT,
                       "stalls": _list(_record({"reason": TEXT, "share": NUM}))})
_ATTRIBUTED = _record({"waste": TEXT, "label": TEXT, "function": TEXT, "total": NUM, "by": TEXT, "lines": _list(_WHERE_LINE), "covered": NUM})
_UNATTRIBUTED = _record({"waste": TEXT, "why": TEXT})
_WHERE = _opt(_Type("a mapping", lambda v, where, seen: (_ATTRIBUTED if type(v) is dict and "lines" in v else _UNATTRIBUTED).check(v, where, seen)))
_FINDING = _record({"id": TEXT, "severity": _one_of(SEVERITIES), "title": TEXT, "evidence": _map(SCALAR), "advice": TEXT},
                   {"estimated_speedup": _opt(NUM), "limited_after": _opt(TEXT), "where": _WHERE})
_ROOFLINE = _record({"kind": TEXT, "peak_flops_per_s": _opt(NUM), "roofs": _map(NUM), "flops_per_s": _opt(NUM), "missing": _list(TEXT),
                     "points": _list(_record({"level": TEXT, "intensity": NUM, "flops_per_s": NUM, "bytes_per_s": NUM}))},
                    {"l1_left_out": _opt(_record({"l1_bytes_per_s": NUM, "l2_to_sm_bytes_per_s": NUM}))})
LAUNCH = _record({
    "id": INT, "name": TEXT, "display_name": TEXT, "launch": _record({}, {"grid": _DIMS, "block": _DIMS}), "duration_ns": _opt(NUM),
    "bound": TEXT, "limiter": TEXT, "why": TEXT, "findings": _list(_FINDING),
    "not_evaluated": _list(_record({"rule": TEXT, "missing": _list(TEXT), "message": TEXT})), "metrics": _map(SCALAR),
    "decision_path": _list(_record({"verdict": TEXT, "when": TEXT, "holds": BOOL, "values": _map(SCALAR)}, {"constants": _map(SCALAR)})),
    "chart": _map(_Type("a number, a text, null or a list of them",
                        lambda v, where, seen: _list(SCALAR).check(v, where, seen) if type(v) is list else SCALAR.check(v, where, seen))),
    "borderline": BOOL, "pipe": _opt(TEXT), "pipe_pct": _opt(NUM), "tensor": _opt(_map(SCALAR)), "estimated_gain_pct": _opt(NUM),
    "stalls": _list(_record({"reason": TEXT, "share_pct": NUM})),
    "ncu_rules": _list(_record({"rule": TEXT, "section": TEXT, "kind": TEXT, "speedup_type": _opt(TEXT), "estimated_speedup": _opt(NUM),
                                "message": TEXT}, {"counterpart": _opt(TEXT), "agreement": _opt(TEXT)})),
    "roofline": _opt(_ROOFLINE), "stream": _opt(TEXT), "where": _WHERE, "source_counters": _opt(_map(SCALAR)),
    "next_step": _opt(_record({"id": TEXT, "title": TEXT, "advice": TEXT,
                               "undecided": _list(_record({"id": TEXT, "title": TEXT, "missing": _list(TEXT), "how": TEXT}))})),
}, {"process": _opt(_record({}, {"id": _opt(_Type("a text or a number", lambda v, where, seen: None if type(v) in (str, int) else
                                                   _wrong(v, where, "a text or a number"))), "name": _opt(TEXT)})),
    "compared": _opt(_map(SCALAR)), "effects": _opt(_json(4)),
    "level_gaps": _list(_record({"level": TEXT, "part": _one_of(("bytes", "peak")), "missing": _list(TEXT), "why": TEXT, "how": TEXT}))})
# v3's and v4's launch records as written: whole, or what one differs in from an earlier one.
_SHARED_LAUNCH = _record({"id": INT, "like": INT, "differs": _map(_json(64))}, {"digits": _map(_list(TEXT)), "plain": BOOL})
DOCUMENT = _record({
    "schema": TEXT, "source": _record({"path": TEXT, "kind": TEXT}, {"ncu_version": _opt(TEXT), "device": _opt(TEXT),
                                                                     "compute_capability": _opt(TEXT)}),
    "rules": _record({"path": TEXT, "version": INT, "name": TEXT}), "kernels": _list(_Type("a mapping", lambda v, where, seen: (
        _SHARED_LAUNCH if type(v) is dict and "like" in v else _record({"id": INT})).check(v, where, seen))),
}, {"facts": _opt(_map(SCALAR)), "roles": _map(TEXT), "lines_hint": _opt(TEXT), "notes": _list(TEXT),
    "reprofile": _opt(_record({"rules": _list(TEXT), "missing": _list(TEXT), "launches": INT, "how": TEXT}))})
