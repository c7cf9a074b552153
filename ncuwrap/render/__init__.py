"""Output formats, one subpackage each (table, markdown, html) and one JSON renderer (:mod:`.jsonfmt`);
what they share: :mod:`.names` (kernel names), :mod:`.phrasing` (numbers and sentences), :mod:`.escape`,
:mod:`.breakdown` (the timeline's bar) and :mod:`.timeline_diff` (the words of a timeline comparison).

Renderers only format: every number, hint and decision they show is computed in the model
(ncuwrap.kernel.verdict, ncuwrap.kernel.compare, ncuwrap.timeline.model). :data:`RENDERERS` declares which result
type has which format and the module that draws it; :func:`render` looks the pair up there. Modules
are imported on first use (jinja2 only for html). tests/test_render_registry.py holds every entry to
its contract.
"""

from __future__ import annotations

import importlib
from enum import Enum

from ncuwrap.core.errors import InputError, OptionError


class Format(str, Enum):
    """The output formats: each result type declares which of them it has (RENDERERS)."""
    table = "table"
    json = "json"
    markdown = "markdown"
    html = "html"


# The result types, by module and class, that render() draws (without importing the model to look
# them up): what each is called in messages, and the module name of its renderer in each of the
# formats it has besides JSON (none: JSON only).
_TYPES = {
    "ncuwrap.kernel.verdict.Diagnosis": ("a kernel diagnosis", "diagnosis", (Format.table, Format.markdown, Format.html)),
    "ncuwrap.kernel.compare.CompareResult": ("a comparison of two kernel reports", "compare", (Format.table, Format.markdown, Format.html)),
    "ncuwrap.timeline.verdict.TimelineDiagnosis": ("a timeline diagnosis", "timeline", (Format.table, Format.markdown, Format.html)),
    "ncuwrap.timeline.compare.TimelineCompare": ("a comparison of two timelines", "timeline_compare",
                                                 (Format.table, Format.markdown, Format.html)),
    "ncuwrap.timeline.ranks.verdict.RanksDiagnosis": ("a diagnosis of ranks", "ranks", (Format.table, Format.markdown, Format.html)),
    "ncuwrap.bundled.report.BenchReport": ("a benchmark report", "bench", (Format.table,)),
    "ncuwrap.profile.result.ProfileDocument": ("a profile's diagnosis and timeline as one document", None, ()),
}
RESULTS = {name: what for name, (what, _, _) in _TYPES.items()}
# (result type, format) -> the module whose ``render(result, **options) -> str`` draws it. JSON draws
# every result from its to_json().
RENDERERS: dict[tuple[str, Format], str] = {
    **{(name, Format.json): "ncuwrap.render.jsonfmt" for name in _TYPES},
    **{(name, fmt): f"ncuwrap.render.{fmt.value}.{module}" for name, (_, module, own) in _TYPES.items() for fmt in own},
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
