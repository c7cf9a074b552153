"""Issue 40 item 4: renderers are declared (ncuwrap.render.RENDERERS), not picked by a class name and
importlib; every entry holds to its contract, and a result without a format says so in one line."""

from __future__ import annotations

import importlib
import inspect
import json
from pathlib import Path

import pytest

from ncuwrap.core.errors import InputError, OptionError
from ncuwrap.render import RENDERERS, RESULTS, Format, formats, render, type_name
from tests.conftest import DATA

RENDER = Path(__file__).resolve().parent.parent / "ncuwrap" / "render"


@pytest.mark.parametrize("key", sorted(RENDERERS, key=str), ids=lambda k: f"{k[0].rsplit('.', 1)[1]}-{k[1].value}")
def test_every_entry_names_a_result_and_a_renderer(key):
    result, fmt = key
    module_name, _, cls = result.rpartition(".")
    assert result in RESULTS and inspect.isclass(getattr(importlib.import_module(module_name), cls))
    draw = importlib.import_module(RENDERERS[key]).render
    params = inspect.signature(draw).parameters
    assert list(params)[0] == "result" or next(iter(params.values())).kind == inspect.Parameter.POSITIONAL_OR_KEYWORD
    assert any(p.kind == inspect.Parameter.VAR_KEYWORD for p in params.values()), RENDERERS[key]  # takes the shared options


def test_every_renderer_module_is_declared():
    """A module under render/<format>/ that no entry names would be dead, or an undeclared way in."""
    declared = set(RENDERERS.values())
    for fmt in (Format.table, Format.markdown, Format.html):
        for path in sorted((RENDER / fmt.value).glob("*.py")):
            module = f"ncuwrap.render.{fmt.value}.{path.stem}"
            if path.stem == "__init__" or "def render(" not in path.read_text(encoding="utf-8"):
                continue  # the package's shared layout, or helpers (svg, lists) the renderers call
            assert module in declared, module
    assert all(any(k[0] == result and k[1] == Format.json for k in RENDERERS) for result in RESULTS)


def _results():
    import ncuwrap
    from ncuwrap.bundled import report

    diagnosis = ncuwrap.diagnose(DATA / "h200" / "transpose" / "transposeShared.raw.csv")
    bench = report.read(DATA / "h200_ncuwrap" / "bench" / "bench_all_runs3.json")
    timeline = ncuwrap.diagnose_timeline(DATA / "h200_ncuwrap" / "steps" / "gpu_train.sqlite.gz")
    return {"diagnosis": diagnosis, "bench": bench, "timeline": timeline}


@pytest.fixture(scope="module")
def results():
    return _results()


def test_each_result_renders_in_each_format_it_declares_and_refuses_the_others(results):
    for name, result in results.items():
        has = formats(result)
        assert Format.json in has and Format.table in has, name
        for fmt in Format:
            if fmt in has:
                out = render(result, fmt)
                assert out.strip(), (name, fmt)
                if fmt == Format.json:
                    json.loads(out)
            else:
                with pytest.raises(OptionError) as info:
                    render(result, fmt)
                assert "\n" not in str(info.value)
    assert formats(results["bench"]) == (Format.table, Format.json)


def test_a_bench_report_in_markdown_is_one_line_not_a_traceback(results):
    """`ncuwrap.render(bench_report, "markdown")` raised ModuleNotFoundError (issue 40)."""
    import ncuwrap

    with pytest.raises(OptionError, match=r"^a benchmark report has no markdown form; use table or json$"):
        ncuwrap.render_result(results["bench"], "markdown")


def test_what_is_not_a_result_is_said(results):
    with pytest.raises(InputError, match=r"^dict: not a result of ncuwrap"):
        render({"kernels": []}, Format.table)
    assert type_name(results["diagnosis"]) == "ncuwrap.kernel.verdict.Diagnosis"
