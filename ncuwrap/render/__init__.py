"""Output formats, one subpackage each (table, markdown, html) and one JSON renderer (:mod:`.jsonfmt`);
what they share: :mod:`.names` (kernel names), :mod:`.phrasing` (numbers and sentences), :mod:`.escape`,
:mod:`.breakdown` (the timeline's bar) and :mod:`.timeline_diff` (the words of a timeline comparison).

Renderers only format: every number, hint and decision they show is computed in the model
(ncuwrap.verdict, ncuwrap.compare, ncuwrap.timeline.model). :data:`RENDERERS` declares which result
type has which format and the module that draws it; :func:`render` looks the pair up there. Modules
are imported on first use (jinja2 only for html). tests/test_render_registry.py holds every entry to
its contract.
"""

from __future__ import annotations

import importlib
from enum import Enum

from ncuwrap.errors import InputError, OptionError


class Format(str, Enum):
    """The output formats: each result type declares which of them it has (RENDERERS)."""
    table = "table"
    json = "json"
    markdown = "markdown"
    html = "html"


# The result types, by module and class, that render() draws (without importing the model to look
# them up), each with what it is called in messages.
RESULTS = {
    "ncuwrap.verdict.Diagnosis": "a kernel diagnosis",
    "ncuwrap.compare.CompareResult": "a comparison of two kernel reports",
    "ncuwrap.timeline.diagnosis.TimelineDiagnosis": "a timeline diagnosis",
    "ncuwrap.timeline.compare.TimelineCompare": "a comparison of two timelines",
    "ncuwrap.timeline.ranks.diagnosis.RanksDiagnosis": "a diagnosis of ranks",
    "ncuwrap.bundled.report.BenchReport": "a benchmark report",
    "ncuwrap.profile.result.ProfileDocument": "a profile's diagnosis and timeline as one document",
}
_OWN = {"ncuwrap.verdict.Diagnosis": "diagnosis", "ncuwrap.compare.CompareResult": "compare",
        "ncuwrap.timeline.diagnosis.TimelineDiagnosis": "timeline", "ncuwrap.timeline.compare.TimelineCompare": "timeline_compare",
        "ncuwrap.timeline.ranks.diagnosis.RanksDiagnosis": "ranks"}
# (result type, format) -> the module whose ``render(result, **options) -> str`` draws it. JSON draws
# every result from its to_json(); a benchmark report is a table or JSON only, and a profile's one
# document (`profile --nsys -f json`) JSON only.
RENDERERS: dict[tuple[str, Format], str] = {
    **{(result, Format.json): "ncuwrap.render.jsonfmt" for result in RESULTS},
    **{(result, fmt): f"ncuwrap.render.{fmt.value}.{module}" for result, module in _OWN.items()
       for fmt in (Format.table, Format.markdown, Format.html)},
    ("ncuwrap.bundled.report.BenchReport", Format.table): "ncuwrap.render.table.bench",
}


def type_name(result) -> str:
    """The key of ``result``'s type in :data:`RESULTS`."""
    kind = type(result)
    return f"{kind.__module__}.{kind.__qualname__}"


def formats(result) -> tuple[Format, ...]:
    """The formats ``result`` has, in Format's order."""
    name = type_name(result)
    return tuple(fmt for fmt in Format if (name, fmt) in RENDERERS)


def render(result, fmt: Format, **options) -> str:
    """Render ``result`` in ``fmt``: InputError for what is not a result, OptionError for a format it lacks."""
    fmt, name = Format(fmt), type_name(result)
    if name not in RESULTS:
        raise InputError(f"{type(result).__name__}: not a result of ncuwrap; give what ncuwrap.diagnose and the others return")
    module = RENDERERS.get((name, fmt))
    if module is None:
        raise OptionError(f"{RESULTS[name]} has no {fmt.value} form; use {' or '.join(f.value for f in formats(result))}")
    draw = importlib.import_module(module).render
    return draw(result, **options)
