"""The rules format: safe expressions, typed loading, metrics needed, extension."""

from __future__ import annotations

import numpy as np
import pytest

from ncuwrap import ruleset
from ncuwrap.core.expr import ExpressionError, parse
from ncuwrap.core.rules_choice import RulesChoice
from ncuwrap.kernel.metrics import KERNEL
from tests.conftest import run_cli


@pytest.mark.parametrize(
    "text",
    ["__import__('os')", "a.b", "a[0]", "lambda: 1", "open('x')", "a if b else c", "(1).__class__", "metric(x)",
     "a @ b", "[1, 2]", "a in b", "a is b", "{'a': 1}", "f'{a}'", "max(a, key=b)", "", "   "],
)
def test_expression_language_refuses_anything_but_arithmetic_and_comparisons(text):
    with pytest.raises(ExpressionError):
        parse(text)


def test_expression_evaluates_vectorised_with_nan_as_false():
    expr = parse("a > 1.5 * b and max(c, 2) >= high or not d", {"high": 3})
    assert expr.names == ("a", "b", "c", "d")
    values = {"a": np.array([5.0, 1.0, np.nan]), "b": np.ones(3), "c": np.array([4.0, 1.0, 1.0]), "d": np.array([1.0, 0.0, 1.0])}
    assert expr.evaluate(values.__getitem__, {"high": 3}).tolist() == [True, True, False]


def test_fallback_marks_its_name_optional():
    expr = parse("a > 1.25 * fallback(b, 16)")
    assert (expr.names, expr.optional) == (("a",), ("b",))
    values = {"a": np.array([32.0, 8.0, 8.0]), "b": np.array([np.nan, np.nan, 4.0])}
    assert expr.evaluate(values.__getitem__, {}).tolist() == [True, False, True]


def test_string_comparison():
    expr = parse("memory_unit == 'dram'")
    assert expr.evaluate(lambda n: np.array(["dram", "l2", None], dtype=object), {}).tolist() == [True, False, False]


def test_default_rules_load_into_typed_objects():
    rules = ruleset.load(None, KERNEL)
    assert (rules.version, rules.name, rules.kind, rules.path) == (1, "ncuwrap-default", "kernel", "ncuwrap:rules/default.yaml")
    assert [b.verdict for b in rules.bound] == ["latency", "compute", "memory"]
    assert [f.id for f in rules.findings] == [
        "uncoalesced_global_loads", "uncoalesced_global_stores", "shared_bank_conflicts", "local_memory_spill",
        "warp_divergence", "atomic_contention", "grid_too_small", "low_achieved_occupancy", "at_roofline",
    ]
    assert rules.constants["high"] == 80 and rules.constants["busy"] == 60


def test_reference_file_is_a_valid_rules_file(capsys):
    code, out, _ = run_cli(capsys, "rules", "check", "rules/reference.yaml")
    assert code == 0 and out.strip() == "rules/reference.yaml: ok (kernel rules: 2 bound branches, 2 findings, 2 next steps, version 1)"


def test_rules_check_reads_the_kind_from_the_file(capsys):
    code, out, _ = run_cli(capsys, "rules", "check", "rules/timeline.yaml")
    assert code == 0 and out.startswith("rules/timeline.yaml: ok (timeline rules: ")


def test_rules_metrics_lists_raw_ncu_metrics(capsys):
    code, out, _ = run_cli(capsys, "rules", "metrics")
    assert code == 0
    names = out.split()
    assert names == ruleset.load(None, KERNEL).raw_metrics()
    for expected in ["sm__throughput.avg.pct_of_peak_sustained_elapsed", "lts__throughput.avg.pct_of_peak_sustained_elapsed",
                     "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum", "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
                     "launch__occupancy_limit_registers", "lts__d_atomic_input_cycles_active.max.pct_of_peak_sustained_elapsed"]:
        assert expected in names
    assert all("__" in n for n in names)


def test_extend_adds_and_replaces_findings(tmp_path):
    extra = tmp_path / "extra.yaml"
    extra.write_text(
        "version: 1\nfindings:\n"
        "  - id: grid_too_small\n    when: 'waves_per_sm < 4'\n    title: 'fewer than 4 waves'\n    advice: 'more blocks'\n"
        "  - id: dram_heavy\n    when: 'dram_pct > 50'\n    title: 'DRAM {dram_pct:.0f}%'\n    advice: 'cache it'\n"
    )
    rules = ruleset.load(extra, KERNEL, extend=True)
    ids = [f.id for f in rules.findings]
    assert ids.count("grid_too_small") == 1 and ids[-1] == "dram_heavy"
    assert next(f for f in rules.findings if f.id == "grid_too_small").when.text == "waves_per_sm < 4"
    assert [b.verdict for b in rules.bound] == ["latency", "compute", "memory"]


def test_render_text_fills_only_names():
    assert ruleset.render_text("{a:.1f} of {b} {c.__class__}", {"a": 3.14159, "b": "l2"}) == "3.1 of l2 n/a"  # a dict lookup, never attribute access
    assert ruleset.render_text("{missing}", {}) == "n/a"


@pytest.mark.parametrize("template", ["{a:.1f} of {b} ({a}) {c.__class__}", "{b:>6}%", "no placeholder", "{a:.0%}", ""])
def test_rows_rendered_by_columns_read_as_each_row_rendered(template):
    """The decision's texts of 10,000 launches are filled by whole columns (texts.render_rows): the same texts."""
    from ncuwrap.ruleset.texts import render_rows, render_text

    columns = {"a": [3.14159, None, float("nan"), 7, -0.0, True, "x"], "b": ["l2", 1.5, None, 0, 12345.678, "", 2]}
    rows = [{name: column[i] for name, column in columns.items()} for i in range(7)]
    assert render_rows(template, columns, 7) == [render_text(template, row) for row in rows]
    assert render_rows(template, {}, 2) == [render_text(template, {})] * 2 and render_rows(template, columns, 0) == []


def test_advice_placeholders_are_filled(tmp_path):
    from ncuwrap.kernel.diagnosis import diagnose

    extra = tmp_path / "advice.yaml"
    extra.write_text(
        "version: 1\nfindings:\n"
        "  - id: l2_note\n    under: any\n    when: 'l2_pct > 50'\n    title: 'L2 busy'\n"
        "    advice: 'L2 at {l2_pct:.0f}% and DRAM at {dram_pct:.0f}%: keep the working set in L2.'\n"
    )
    (kernel,) = diagnose("tests/data/h200/transpose/transposeNaive.ncu-rep.gz", RulesChoice(extra, extend=True)).kernels
    note = next(f for f in kernel.findings if f.id == "l2_note")
    assert note.advice == "L2 at 76% and DRAM at 10%: keep the working set in L2."


def test_rules_metrics_for_ncu_is_one_list_ncu_takes(capsys):
    # Issue 25: one metric a line is not what `ncu --metrics` takes; --ncu prints the comma list, and
    # names on stderr what only a section gives.
    from ncuwrap.profile.collection import by_name

    code, out, err = run_cli(capsys, "rules", "metrics", "--format", "ncu")
    assert code == 0 and out.count("\n") == 1 and " " not in out.strip()
    listed = out.strip().split(",")
    assert listed == [m for m in ruleset.load(None, KERNEL).raw_metrics() if by_name(m)] and len(listed) > 80
    assert "not for --metrics, collected with --section LaunchStats: launch__registers_per_thread" in err
    assert "device__attribute" not in err and not any(m.startswith(("launch__", "derived__", "device__")) for m in listed)
    code, _, err = run_cli(capsys, "rules", "metrics", "--format", "csv")
    assert code == 2 and err == "ncuwrap: error: --format csv: expected lines, json or ncu\n"
