"""`ncuwrap compare BEFORE AFTER` on the real H200 transpose reports.

Full outputs (JSON, Markdown, terminal table) are compared with golden files under tests/golden/;
regenerate them after an intended change with `NCUWRAP_REGEN=1 python -m pytest tests/test_compare.py`
and review the diff. Real speedups pair the bundled transpose kernels' reports (tests/data/h200_ncuwrap/
pairs_full) with `ncuwrap bench transpose --runs 3` of the same build (bench_pairs/transpose.json), both
recorded on the H200.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

import ncuwrap
from ncuwrap.kernel.compare import (PAIRED_BY_ELIMINATION, PAIRED_BY_NAME, PAIRED_BY_OPTION, PAIRED_BY_ORDER, SCHEMA,
                             compare, compare_files, load_bench)
from ncuwrap.core.errors import InputError
from ncuwrap.render import Format, render
from tests.conftest import DATA, H200, golden, golden_json, run_cli
from tests.multi import hostile, single
from tests.test_render_html import assert_self_contained, Page
from tests.test_render_markdown import assert_clean_gfm

T = H200 / "transpose"
NAIVE, SHARED, PADDED = T / "transposeNaive.ncu-rep.gz", T / "transposeShared.ncu-rep.gz", T / "transposePadded.ncu-rep.gz"
VECADD = H200 / "vecadd" / "bench_add.ncu-rep"
TIMINGS = DATA / "bench_timings"  # broken bench files, one per error
OURS = DATA / "h200_ncuwrap"
B_NAIVE, B_SHARED, B_PADDED = (OURS / "pairs_full" / f"transpose-{v}.raw.csv.gz" for v in ("naive", "shared_tile", "padded_tile"))
BENCH = OURS / "bench_pairs" / "transpose.json"


def test_shared_to_padded_resolves_the_bank_conflicts_and_moves_the_limiter():
    result = compare_files(SHARED, PADDED)
    (pair,) = result.pairs
    assert pair.paired_by == PAIRED_BY_ELIMINATION
    assert pair.resolved == ("shared_bank_conflicts",)
    assert pair.introduced == ()  # padded: DRAM-bound at 65% under ncu, short of the roof
    assert (pair.before.bound, pair.before.limiter, pair.after.bound, pair.after.limiter) == ("memory", "l1tex", "memory", "dram")
    assert pair.verdict_changed
    # What BEFORE's counters said padding would buy, against the real 2.29x of the program's own timings.
    assert pair.estimated_gain_pct == pytest.approx(73.1, abs=0.1) and pair.estimated_speedup == pytest.approx(3.72, abs=0.01)
    assert pair.evidence["shared_bank_conflicts"]["shared_ld_n_way"].before == pytest.approx(32.2386)
    assert pair.evidence["shared_bank_conflicts"]["shared_ld_n_way"].after == pytest.approx(1.0566)
    assert pair.deltas["duration_ns"].label == "ncu duration, instrumented"
    assert pair.speedup is None and pair.ncu_speedup == pytest.approx(108128 / 36192)
    assert result.regressions == []


def test_naive_to_shared_resolves_the_stores_and_introduces_the_bank_conflicts():
    result = compare_files(NAIVE, SHARED)
    (pair,) = result.pairs
    assert pair.resolved == ("uncoalesced_global_stores",)
    assert pair.introduced == ("shared_bank_conflicts",)
    assert (pair.before.limiter, pair.after.limiter) == ("l2", "l1tex")
    # 2.61x faster by ncu's durations: the bank conflicts are reported, and do not fail the default gate.
    assert result.regressions == []
    assert result.not_gating == ["transposeNaive -> transposeShared: finding shared_bank_conflicts introduced (high), "
                                 "while 2.61x faster (ncu duration, instrumented)"]
    assert compare_files(NAIVE, SHARED, fail_on_finding="high").regressions == [
        "transposeNaive -> transposeShared: finding shared_bank_conflicts introduced (high)"]


NOT_GATING_HEADING = "Introduced, not gating (the change made it measurably faster; --fail-on-finding LEVEL counts them):"


@pytest.mark.parametrize(
    "gate, code, err",
    [
        ((), 0, ""),
        (("--fail-on-finding", "high"), 1,
         "ncuwrap: regression: transposeNaive -> transposeShared: finding shared_bank_conflicts introduced (high)\n"),
        (("--fail-on-finding", "none"), 0, ""),
        # 2.61x faster is not faster by more than a 200% threshold: the finding counts again.
        (("--threshold", "200"), 1,
         "ncuwrap: regression: transposeNaive -> transposeShared: finding shared_bank_conflicts introduced (high)\n"),
    ],
)
def test_the_gate_passes_a_kernel_that_got_faster(capsys, monkeypatch, gate, code, err):
    monkeypatch.setenv("COLUMNS", "200")  # one line a regression
    # The example: naive -> shared is 2.61x faster under ncu (282.72 -> 108.13 us) and exposes bank conflicts.
    got, out, got_err = run_cli(capsys, "compare", NAIVE, SHARED, "--fail-on-regression", *gate)
    assert (got, got_err) == (code, err)
    lines = out.splitlines()
    if gate == ():
        assert lines[lines.index(NOT_GATING_HEADING):lines.index(NOT_GATING_HEADING) + 2] == [
            NOT_GATING_HEADING,
            "  transposeNaive -> transposeShared: finding shared_bank_conflicts introduced (high), while 2.61x faster (ncu duration, instrumented)"]
        assert not any(line.startswith("Regressions") for line in lines)
    elif code:
        assert NOT_GATING_HEADING not in lines
        assert [line for line in lines if line.startswith("Regressions")] == [
            "Regressions (more than 5% slower, or a HIGH finding introduced):" if gate[0] == "--fail-on-finding" else
            "Regressions (more than 200% slower, or a HIGH finding introduced to a kernel not more than 200% faster):"]
    else:
        assert NOT_GATING_HEADING not in lines and not any(line.startswith("Regressions") for line in lines)


def test_golden_json_shared_to_padded(capsys):
    code, out, _ = run_cli(capsys, "compare", SHARED, PADDED, "-f", "json")
    assert code == 0
    doc = json.loads(out)
    golden_json("compare_shared_padded.json", doc)
    assert doc["schema"] == SCHEMA
    pair = doc["pairs"][0]
    assert {"name", "before", "after", "resolved", "introduced", "deltas"} <= set(pair)
    assert set(doc["unpaired"]) == {"before", "after"}
    # Each side is the kernel exactly as the diagnosis document's v2 record writes it.
    assert pair["before"] == single("transposeShared").kernels[0].to_json()
    assert pair["after"] == single("transposePadded").kernels[0].to_json()


def test_golden_markdown_naive_to_shared_with_real_timings(capsys):
    code, out, _ = run_cli(capsys, "compare", B_NAIVE, B_SHARED, "-f", "markdown", "--before-timing", BENCH, "--after-timing", BENCH)
    assert code == 0  # regressions are reported, but only --fail-on-regression fails
    golden("compare_transpose_naive_shared.md", out)
    assert "**3.15x faster** (0.2581 ms → 0.08186 ms)" in out
    assert ("- `transpose_naive` → `transpose_shared`: finding `shared_bank_conflicts` introduced (high), while 3.15x faster "
            "(bench median, uninstrumented)") in out
    assert_clean_gfm(out)


def test_golden_markdown_and_table_shared_to_padded_with_real_timings(capsys):
    args = ("compare", B_SHARED, B_PADDED, "--before-timing", BENCH, "--after-timing", BENCH)
    code, out, _ = run_cli(capsys, *args, "-f", "markdown")
    assert code == 0
    golden("compare_transpose_shared_padded.md", out)
    assert "**2.03x faster** (0.08186 ms → 0.04024 ms)" in out and "78.24 us → 34.94 us (2.24x faster)" in out
    assert_clean_gfm(out)
    code, out, _ = run_cli(capsys, *args)
    assert code == 0
    golden("compare_transpose_shared_padded_table.txt", out)


def test_html_has_both_points_and_stays_self_contained(capsys, tmp_path):
    out = tmp_path / "compare.html"
    code, _, _ = run_cli(capsys, "compare", B_SHARED, B_PADDED, "--before-timing", BENCH, "--after-timing", BENCH, "-f", "html", "-o", out)
    assert code == 0
    text = out.read_text(encoding="utf-8")
    assert_self_contained(text)
    page = Page(text)
    content = " ".join(page.content.split())
    # Neither side does arithmetic: no roofline chart (a point at 0 FLOP/s says nothing), one line instead.
    assert len(page.with_class("svg", "chart")) == 3 and not page.with_class("figure", "roofline")
    assert text.count('fill="#0f172a">before</text>') == 3 and text.count('fill="#0f172a">after</text>') == 3  # legends
    assert "1.46 TB/s of 4.81 TB/s (30%)" in content and "3.23 TB/s of 4.81 TB/s (67%)" in content
    assert "No roofline: the kernel does no FP32 arithmetic (0 FLOP/s); the bandwidth chart shows where it stands." in content
    assert "resolved high Shared-memory bank conflicts: 94% of shared wavefronts are replays" in content
    assert "Payoff: estimated 2.70x (63% of the time), measured 2.03x faster." in content
    assert ('<td><strong>bench median (uninstrumented)</strong></td><td class="num">0.08186 ms</td>'
            '<td class="num">0.04024 ms</td><td class="num"><strong>2.03x faster</strong></td>') in text
    assert "No regression" in content


def test_repeated_names_pair_in_launch_order():
    result = compare_files(VECADD, VECADD)
    assert [(p.before.id, p.after.id, p.paired_by) for p in result.pairs] == [(1, 1, PAIRED_BY_ORDER), (0, 0, PAIRED_BY_ORDER)]
    assert all(not p.resolved and not p.introduced and not p.regressions for p in result.pairs)


def test_same_name_pairs_by_name_and_leftovers_stay_unpaired():
    four = compare(single("copyKernel"), single("copyKernel"))
    assert [p.paired_by for p in four.pairs] == [PAIRED_BY_NAME]
    result = compare_files(VECADD, SHARED)
    assert result.pairs == () and [k.name for k in result.unpaired_before] == ["coalesced_add", "coalesced_add"]
    assert [k.name for k in result.unpaired_after] == ["transposeShared"]
    assert "--pair BEFORE_NAME=AFTER_NAME" in result.notes[0]
    text = render(result, Format.markdown)
    assert "*Only in before:* `coalesced_add` (launch 0), `coalesced_add` (launch 1)" in text


def test_explicit_pair_option(capsys):
    result = compare_files(VECADD, SHARED, pairs=[("coalesced_add", "transposeShared")])
    assert [(p.before.id, p.paired_by) for p in result.pairs] == [(0, PAIRED_BY_OPTION)]
    assert [k.id for k in result.unpaired_before] == [1]
    code, _, err = run_cli(capsys, "compare", SHARED, PADDED, "--pair", "transposeShared=nope")
    assert code == 2 and err == f"ncuwrap: error: {PADDED}: --pair transposeShared=nope: no kernel named 'nope' in this report\n"
    code, _, err = run_cli(capsys, "compare", SHARED, PADDED, "--pair", "transposeShared")
    assert code == 2 and "write it as BEFORE_NAME=AFTER_NAME" in err


def test_a_finding_the_other_side_did_not_evaluate_is_neither_resolved_nor_introduced():
    """vecadd's report lacks the shared-memory counters: a bank conflict there is unknown, not gone."""
    shared = single("transposeShared")
    unmeasured = dataclasses.replace(compare_files(VECADD, VECADD).pairs[0].after, name="transposeShared")
    pair = compare(shared, dataclasses.replace(shared, kernels=(unmeasured,))).pairs[0]
    assert pair.resolved == () and pair.not_comparable == ("shared_bank_conflicts",)


def test_mixed_kinds_rep_and_csv():
    result = compare_files(NAIVE, T / "transposeShared.raw.csv")
    (pair,) = result.pairs
    assert pair.resolved == ("uncoalesced_global_stores",) and pair.introduced == ("shared_bank_conflicts",)


@pytest.mark.parametrize(
    "before, after, args, code, message",
    [
        (PADDED, SHARED, ("--fail-on-regression",), 1,
         "ncuwrap: regression: transposePadded -> transposeShared: finding shared_bank_conflicts introduced (high)"),
        (B_PADDED, B_SHARED, ("--fail-on-regression", "--before-timing", BENCH, "--after-timing", BENCH), 1,
         "ncuwrap: regression: transpose_padded -> transpose_shared: 103.4% slower (bench median 0.04024 -> 0.08186 ms; threshold 5%)"),
        (PADDED, SHARED, (), 0, None),
    ],
)
def test_fail_on_regression_exit_codes(capsys, before, after, args, code, message):
    got, out, err = run_cli(capsys, "compare", before, after, *args)
    assert got == code
    assert "Regressions (more than 5% slower, or a HIGH finding introduced to a kernel not more than 5% faster):" in out
    if message:
        assert message in err.splitlines()
    else:
        assert err == ""


def test_slower_by_ncu_duration_counts_when_no_timings_are_given(capsys):
    # Padded -> copy: no finding introduced, copyKernel is 24% slower under ncu.
    code, _, err = run_cli(capsys, "compare", PADDED, T / "copyKernel.ncu-rep.gz", "--fail-on-regression")
    assert code == 1
    assert "24.3% slower (ncu duration, instrumented: 36.19 -> 44.99 us; threshold 5%)" in err
    code, _, _ = run_cli(capsys, "compare", PADDED, T / "copyKernel.ncu-rep.gz", "--fail-on-regression", "--threshold", "30")
    assert code == 0


def test_a_timeline_and_a_kernel_report_are_refused(capsys):
    # Two timelines compare (tests/test_timeline_compare.py); a timeline and a kernel report do not.
    code, _, err = run_cli(capsys, "compare", SHARED, H200 / "nsys" / "bench.sqlite")
    assert code == 2
    assert err == (f"ncuwrap: error: {SHARED}: not an nsys capture, while {H200 / 'nsys' / 'bench.sqlite'} is; compare two timelines "
                   "(.sqlite, .sqlite.gz, .nsys-rep) or two kernel reports\n")


@pytest.mark.parametrize(
    "name, message",
    [
        ("bad_truncated.json", "bad_truncated.json: not a readable JSON file (Expecting value: line 1 column 47 (char 46)); "
                               "give the JSON written by 'ncuwrap bench'"),
        ("bad_schema.json", "bad_schema.json: not an ncuwrap bench result (schema 'ncuwrap.timeline/v1', expected 'ncuwrap.bench/v1'); "
                            "write one with 'ncuwrap bench'"),
        ("bad_no_median.json", "bad_no_median.json: benchmarks[2] (transpose_shared): missing key median_ms; give the JSON written by 'ncuwrap bench'"),
        ("bad_no_kernel.json", "bad_no_kernel.json: benchmarks[0]: missing key kernel; give the JSON written by 'ncuwrap bench'"),
        ("bad_zero_median.json", "bad_zero_median.json: benchmarks[2] (transpose_shared).median_ms: expected a positive time in ms, got 0; "
                                 "give the JSON written by 'ncuwrap bench'"),
        ("bad_verified_text.json", "bad_verified_text.json: benchmarks[1] (transpose_naive).verified: expected true or false, "
                                   "got the text 'yes'; give the JSON written by 'ncuwrap bench'"),
        ("missing.json", "missing.json: no such file; give the JSON written by 'ncuwrap bench'"),
    ],
)
def test_bad_timing_files_name_the_file(capsys, name, message):
    with pytest.raises(InputError) as info:
        load_bench(TIMINGS / name)
    assert str(info.value) == f"{TIMINGS}/{message}"
    code, out, err = run_cli(capsys, "compare", B_SHARED, B_PADDED, "--before-timing", TIMINGS / name, "--after-timing", BENCH)
    assert (code, out, err) == (2, "", f"ncuwrap: error: {TIMINGS}/{message}\n")


def test_ambiguous_and_missing_timings_are_notes_not_guesses(tmp_path):
    """Two entries for one kernel (the real shared-tile result, and again at another size) must not be guessed between."""
    doc = json.loads(BENCH.read_text())
    shared = next(b for b in doc["benchmarks"] if b["kernel"] == "transpose_shared")
    doc["benchmarks"].append({**shared, "sizes": {"cols": 2048, "rows": 2048}, "median_ms": shared["median_ms"] / 4})
    ambiguous = tmp_path / "two_sizes.json"
    ambiguous.write_text(json.dumps(doc))
    result = compare_files(B_SHARED, B_PADDED, before_timing=ambiguous, after_timing=BENCH)
    pair = result.pairs[0]
    assert pair.speedup is None and pair.after_timing.median_ms == 0.04024000095
    assert pair.timing_notes == (f"{ambiguous}: 2 benchmarks of kernel transpose_shared (ambiguous)",)
    other = OURS / "bench_pairs" / "vecadd.json"
    result = compare_files(B_SHARED, B_PADDED, before_timing=other, after_timing=BENCH)
    assert result.pairs[0].timing_notes == (f"{other}: no benchmark of kernel transpose_shared",)
    result = compare_files(B_SHARED, B_PADDED, before_timing=BENCH)
    assert result.notes == ("real speedup needs uninstrumented timings of both sides (--before-timing and --after-timing)",)


def test_every_format_is_rendered_for_both_result_types():
    result = compare_files(SHARED, PADDED)
    diagnosis = single("transposeShared")
    for fmt in Format:
        assert render(result, fmt).strip() and render(diagnosis, fmt).strip()


def test_commands_have_help(capsys):
    code, out, _ = run_cli(capsys, "compare", "--help")
    assert code == 0
    for option in ("--before-timing", "--after-timing", "--fail-on-regression", "--threshold", "--pair", "--format"):
        assert option in out


def test_hostile_kernel_names_are_escaped_in_every_compare_format():
    """transposeShared's real Diagnosis, renamed (dataclasses.replace) to a hostile C++ name."""
    hostile_name = '<img src=x onerror=alert(1)>k<T&>|`x`'
    result = compare(hostile(hostile_name), single("transposePadded"))
    text = render(result, Format.html)
    assert "<img" not in text
    assert_self_contained(text)
    assert f"{hostile_name} -> transposePadded" in Page(text).content
    html = assert_clean_gfm(render(result, Format.markdown))
    assert "<img" not in html
    assert json.loads(render(result, Format.json))["pairs"][0]["before"]["name"] == hostile_name


def test_compare_html_in_headless_chromium(tmp_path):
    from tests.test_render_html import _chromium, _console

    page = tmp_path / "compare.html"
    page.write_text(render(compare_files(B_SHARED, B_PADDED, before_timing=BENCH, after_timing=BENCH), Format.html), encoding="utf-8")
    shot = tmp_path / "compare.png"
    run = _chromium(tmp_path, page.as_uri(), f"--screenshot={shot}", "--window-size=1400,2400")
    assert run.returncode == 0 and _console(run.stderr) == [] and shot.stat().st_size > 50_000
    run = _chromium(tmp_path, page.as_uri(), "--dump-dom")
    dom = Page(run.stdout)
    assert _console(run.stderr) == [] and len(dom.with_class("svg", "chart")) == 3
    assert len(dom.with_class("rect", "bar")) >= 2 * (4 + 2) + 6


def test_gate_fails_when_nothing_was_paired(capsys):
    from tests.conftest import run_cli

    code, _, err = run_cli(capsys, "compare", "tests/data/h200/vecadd/bench_add.ncu-rep",
                           "tests/data/h200/transpose/transposeNaive.ncu-rep.gz", "--fail-on-regression", "-f", "json")
    assert code == 1
    assert err.splitlines() == [
        "ncuwrap: regression: no kernel of BEFORE could be paired with one of AFTER, so nothing was compared (use --pair OLD=NEW)",
        "ncuwrap: regression: transposeNaive: a kernel only AFTER has, with uncoalesced_global_stores",
    ]


OCC = Path("tests/data/h200_ncuwrap/pairs_full")
OCC_T = Path("tests/data/h200_ncuwrap/bench_pairs/occupancy.json")


@pytest.mark.parametrize("gate, code", [((), 0), (("--fail-on-finding", "medium"), 1), (("--fail-on-finding", "none"), 0)])
def test_a_faster_change_with_an_expected_medium_finding_passes_the_default_gate(capsys, gate, code):
    # Real H200 pair: __launch_bounds__ caps the registers of occupancy-regs_heavy; it runs 1.13x faster
    # (bench medians 0.183 -> 0.162 ms) and spills a little (local_memory_spill, medium). Only a gate asking for medium fails it.
    args = ("compare", OCC / "occupancy-regs_heavy.raw.csv.gz", OCC / "occupancy-launch_bounds.raw.csv.gz",
            "--before-timing", OCC_T, "--after-timing", OCC_T, "--fail-on-regression", *gate)
    got, out, err = run_cli(capsys, *args)
    assert got == code
    assert "introduced     local_memory_spill (medium)" in out and "real speedup: 1.13x faster" in out
    if code:
        assert err.splitlines() == ["ncuwrap: regression: occupancy_regs_heavy -> occupancy_launch_bounds: finding local_memory_spill introduced (medium)"]
    else:
        assert err == ""


def test_fail_on_finding_choices_match_the_library():
    from ncuwrap.cli.compare import FailOn
    from ncuwrap.ruleset.gate import FAIL_ON_FINDING_CHOICES

    assert tuple(FailOn.__members__) == FAIL_ON_FINDING_CHOICES


def test_a_run_folder_compares_and_another_folder_is_refused_with_what_to_give(capsys):
    # 'diagnose' takes a run folder of 'ncuwrap profile'; so does compare (this one holds report.raw.csv, no .ncu-rep).
    run = DATA / "h200_ncuwrap" / "profile" / "sample_run"
    assert not list(run.glob("*.ncu-rep"))
    result = ncuwrap.compare_reports(run, run)  # the API hands compare_files the profile wing's run folders
    assert len(result.pairs) == len(result.before.kernels) >= 4 and result.before.source.path.startswith(str(run))
    # The same report on both sides: nothing resolved (a finding minor on both sides once was), nothing introduced.
    assert all(not p.introduced and not p.resolved and not p.not_comparable for p in result.pairs)
    code, out, err = run_cli(capsys, "compare", H200, NAIVE)
    assert (code, out) == (2, "")
    assert err == (f"ncuwrap: error: {H200}: is a folder; give a report file (.ncu-rep or an ncu CSV export), or a run folder of "
                   "'ncuwrap profile' (one holding profile.json)\n")
