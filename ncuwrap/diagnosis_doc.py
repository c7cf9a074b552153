"""The diagnosis document (JSON) in its versions, and reading one back into a Diagnosis.

``ncuwrap.diagnosis/v4`` (what ``--format json`` writes) says once what the launches of one kernel
share. The first launch of each kernel (by name, in the report's order) is a whole launch record, as
in v2; every later launch of that kernel is::

    {"id": 7, "like": 3, "differs": {"/duration_ns": 25630.0, "/metrics/dram_pct": 71.2}, "digits": {"/why": ["71"]}}

``like`` is the latest earlier launch of the kernel with the same shape (a training loop's launch is like
its twin in the step before), ``differs`` maps RFC 6901 JSON Pointers into that record to this launch's
values there, ``digits`` the texts that differ from it only in their numbers (:mod:`ncuwrap.json_delta`
says exactly how, repeated values included). Beside v2's keys, a launch record holds what ``compare``
reads (``compared``: every metric a finding's evidence or a comparison reads; ``effects``: what
estimates a fix), and the document the rest of the report's facts (``facts``: command line, sha256,
clock and cache control, SM clock) and which finding holds each rule role (``roles``). Everything else
is v2's. v3 (written by ncuwrap until 2026-12-02) is v4 with ``like`` always the kernel's first launch,
no ``digits`` and no repeats marked.

:func:`expand` gives the v2 document back, the same JSON text v2 wrote (tested); :func:`read` gives a
:class:`~ncuwrap.verdict.Diagnosis` of a v2, v3 or v4 file, which ``compare`` takes beside reports.
"""

from __future__ import annotations

from pathlib import Path

import orjson

from ncuwrap.attribution import HotLine, Instruction, Unattributed, Where
from ncuwrap.errors import InputError
from ncuwrap.estimate import KernelEffects
from ncuwrap.fileio import check_file
from ncuwrap.json_delta import expand_launches
from ncuwrap.verdict import (Diagnosis, FindingResult, KernelVerdict, NcuRule, NextStep, NotEvaluated, Reprofile, Roofline, RooflinePoint,
                             SourceInfo, Stall, Step, Undecided)
from ncuwrap.verdict import SCHEMA as V4, SCHEMA_V2 as V2, SCHEMA_V3 as V3

SCHEMAS = (V2, V3, V4)
# A v4 document of 100,000 launches is tens of megabytes, a v2 one of 70,000 full-set launches 1 GB (13.9 KB
# a launch, parsed into ten times that in memory): past it, refused rather than read.
MAX_BYTES = 1 << 30
_FIX = "pass a document written by 'ncuwrap diagnose --format json'"
# What a v3 and v4 launch record holds beside v2's (what 'compare' reads): not in the v2 document.
V3_ONLY = ("compared", "effects")


def expand(doc: dict) -> dict:
    """A v3 or v4 document as the v2 document of the same diagnosis (a v2 document is returned as it is)."""
    if doc.get("schema") == V2:
        return doc
    if doc.get("schema") not in (V3, V4):
        raise ValueError(f"not an ncuwrap diagnosis document (schema {doc.get('schema')!r})")
    out = {key: value for key, value in doc.items() if key not in ("roles", "facts")}
    out["schema"], out["kernels"] = V2, [{key: value for key, value in k.items() if key not in V3_ONLY} for k in _launches(doc)]
    return out


def _launches(doc: dict) -> list[dict]:
    if doc.get("schema") == V2:
        return doc["kernels"]
    return expand_launches(doc["kernels"], marked=doc.get("schema") == V4)


# ------------------------------------------------------------------------------------------ reading


def read(path: str | Path) -> Diagnosis:
    """A diagnosis document (v2, v3 or v4) as the Diagnosis it was written from, for ``compare``. What the
    document does not hold stays empty: the source snippets, ``--top``'s coverage, a bundled lesson's
    stop line; a v2 document also lacks the metrics only a comparison reads and the findings' effects
    (compare then shows fewer evidence changes and no estimate of what the fix should have bought)."""
    path = Path(path)
    check_file(path, folder_fix=_FIX, missing=f"no such file; {_FIX}", empty_fix=_FIX, max_bytes=MAX_BYTES)
    try:
        doc = orjson.loads(path.read_bytes())
    except orjson.JSONDecodeError as exc:
        raise InputError(f"{path}: not valid JSON ({exc}); {_FIX}") from None
    schema = doc.get("schema") if isinstance(doc, dict) else None
    if schema not in SCHEMAS:
        raise InputError(f"{path}: not an ncuwrap diagnosis (schema {schema!r}, expected {' or '.join(SCHEMAS)}); {_FIX}")
    # v3 and v4 name the finding of each role; v2 did not (the bundled rules it was judged by say them).
    roles = {finding: role for role, finding in (doc.get("roles", {}) if schema != V2 else _bundled_roles(doc)).items()}
    try:
        return _diagnosis(doc, roles)
    except (KeyError, TypeError, ValueError, IndexError, AttributeError) as exc:
        raise InputError(f"{path}: a malformed {schema} document ({type(exc).__name__}: {str(exc)[:80]}); {_FIX}") from None


def _bundled_roles(doc: dict) -> dict:
    """A v2 document names no roles: those of the bundled rules it was judged by, when it was (none for a user's)."""
    path = str((doc.get("rules") or {}).get("path", ""))
    if not path.startswith("ncuwrap:rules/") or "+" in path:
        return {}
    from ncuwrap import ruleset
    from ncuwrap.resources import data_dir

    bundled = data_dir("rules") / path.split("/", 1)[1]
    if not bundled.is_file():
        return {}
    return {f.role: f.id for f in ruleset.load(bundled).findings if f.role}


def _diagnosis(doc: dict, roles: dict) -> Diagnosis:
    s, rules = doc["source"], doc["rules"]
    source = SourceInfo(path=s["path"], kind=s["kind"], ncu_version=s.get("ncu_version"), device=s.get("device"),
                        compute_capability=s.get("compute_capability"), **(doc.get("facts") or {}))
    r = doc.get("reprofile")
    reprofile = Reprofile(tuple(r["rules"]), tuple(r["missing"]), r["launches"], r["how"]) if r else None
    return Diagnosis(source=source, rules_path=rules["path"], rules_version=rules["version"], rules_name=rules["name"],
                     kernels=tuple(_kernel(k, roles) for k in _launches(doc)), reprofile=reprofile, lines_hint=doc.get("lines_hint"))


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
