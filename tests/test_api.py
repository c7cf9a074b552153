"""The Python API (issues 25 and 39): ncuwrap.diagnose / compare_reports / diagnose_timeline / diagnose_ranks /
profile_program return the typed results, each with .to_frame() (pandas), _repr_html_ (the HTML report, for
notebooks) and a one-line repr, on real H200 reports; every public function has its real signature and a
docstring; no module of the package is callable (issue 40)."""

from __future__ import annotations

import html
import inspect
import json
import pkgutil
import re
import subprocess
import sys
import types

import pandas as pd
import pytest

import ncuwrap
from ncuwrap import api
from ncuwrap.kernel.compare import CompareResult
from ncuwrap.core.errors import InputError
from ncuwrap.render import Format, render
from ncuwrap.timeline.compare import TimelineCompare
from ncuwrap.timeline.verdict import TimelineDiagnosis
from ncuwrap.timeline.ranks.verdict import RanksDiagnosis
from ncuwrap.kernel.verdict import Diagnosis
from ncuwrap.kernel.document import expand
from ncuwrap.profile.ncu_argv import NcuOptions
from tests.conftest import DATA, H200, ROOT, run_cli

OURS = DATA / "h200_ncuwrap"
TRANSPOSE = H200 / "transpose"


def test_import_ncuwrap_loads_no_api_until_used():
    # `import ncuwrap` stays cheap (no pandas, no renderers); the first ncuwrap.diagnose loads the API, and
    # the API with its option values still no numpy: a timeline's readers are forked before it is imported.
    code = ("import sys, ncuwrap; before = {'ncuwrap.api', 'pandas'} & set(sys.modules); ncuwrap.diagnose; ncuwrap.TimelineOptions(); "
            "print(sorted(before), 'ncuwrap.api' in sys.modules, 'numpy' in sys.modules, "
            "sorted(n for n in ncuwrap.__dir__() if not n.startswith('_')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT).stdout.split(" ", 3)
    assert out[:3] == ["[]", "True", "False"]
    assert out[3].strip() == ("['LaunchSelection', 'RulesChoice', 'TimelineOptions', 'compare_reports', 'diagnose', 'diagnose_ranks', "
                              "'diagnose_timeline', 'profile_program', 'render_result']")
    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        ncuwrap.nothing


API = ["diagnose", "compare_reports", "diagnose_timeline", "diagnose_ranks", "profile_program", "render_result"]


@pytest.mark.parametrize("name", API)
def test_every_api_function_has_its_signature_and_a_docstring(name):
    """help() and tab completion show the function itself: its parameters by name, and what it does and returns."""
    function = getattr(ncuwrap, name)
    assert inspect.isfunction(function) and function.__module__ == "ncuwrap.api" and function is getattr(api, name)
    parameters = inspect.signature(function).parameters
    assert not any(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in parameters.values()), name
    doc = inspect.getdoc(function)
    assert doc and "Returns:" in doc and "Args:" in doc
    # Every parameter is documented by name in Args.
    args = doc[doc.index("Args:"):doc.index("Returns:")]
    assert [p for p in parameters if not re.search(rf"\b{p}\b", args)] == [], name
    assert name in api.__all__ and name in ncuwrap.__all__


def test_no_module_of_the_package_is_callable():
    """Issue 40: the API's names clash with no module; the modules of 0.1's names are plain modules again."""
    import ncuwrap.kernel.compare
    import ncuwrap.profile
    import ncuwrap.render
    import ncuwrap.timeline

    for module in (ncuwrap.kernel.compare, ncuwrap.timeline, ncuwrap.render, ncuwrap.profile):
        assert type(module) is types.ModuleType and not callable(module)
    modules = {m.name for m in pkgutil.iter_modules(ncuwrap.__path__)}
    assert not modules & set(API + ["ranks"])
    # The short names are no aliases (the package is 0.1.0: nothing to stay compatible with); asked of the
    # package, one names the function.
    assert not any(hasattr(api, name) for name in ("compare", "timeline", "ranks", "render"))
    with pytest.raises(AttributeError, match="the function is ncuwrap.diagnose_ranks"):
        ncuwrap.ranks  # noqa: B018


def test_an_old_name_asked_for_before_its_module_is_loaded_names_the_function():
    code = "import ncuwrap\ntry:\n    ncuwrap.timeline\nexcept AttributeError as e:\n    print(e)\nfrom ncuwrap import timeline\nprint(timeline.__name__)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT).stdout.splitlines()
    assert out == ["module 'ncuwrap' has no attribute 'timeline': the function is ncuwrap.diagnose_timeline, and ncuwrap.timeline "
                   "is a module (import ncuwrap.timeline)", "ncuwrap.timeline"]


def test_results_show_as_one_line():
    """The repr of a result is one line of what it concluded (the whole diagnosis repr was 45,698 characters)."""
    d = ncuwrap.diagnose(TRANSPOSE / "transposeNaive.ncu-rep.gz")
    assert repr(d) == ("<Diagnosis 'tests/data/h200/transpose/transposeNaive.ncu-rep.gz': 1 launch of 1 kernel; most time: 'transposeNaive': "
                       "memory (l2), uncoalesced_global_stores (high)>")
    assert repr(d.kernels[0]) == "<KernelVerdict launch 0 'transposeNaive': memory (l2); uncoalesced_global_stores (high); 1 finding>"
    sample = ncuwrap.diagnose()
    assert repr(sample) == ("<Diagnosis 'ncuwrap:samples/transpose_h200.ncu-rep.gz': 6 launches of 6 kernels; most time: 'transpose_naive': "
                            "memory (l2), uncoalesced_global_stores (high)>")
    assert sample.groups()[0].name == "transpose_naive"  # most time, as said
    t = ncuwrap.compare_reports(OURS / "steps" / "decode_eager.sqlite.gz", OURS / "steps" / "graph_decode.sqlite.gz")
    assert repr(t) == ("<TimelineCompare '…/steps/decode_eager.sqlite.gz' → '…/steps/graph_decode.sqlite.gz': per step, "
                       "period 6.28x faster; resolved: kernels_not_the_bottleneck; introduced: sync_after_each_launch>")
    assert repr(t.before) == ("<TimelineDiagnosis 'tests/data/h200_ncuwrap/steps/decode_eager.sqlite.gz': launch (host code (no CUDA call)); "
                              "64 steps; tiny_kernels, kernels_not_the_bottleneck>")
    assert len(t.before.timeline.steps.records) == 64
    r = ncuwrap.diagnose_ranks(OURS / "ranks" / "slow1", workers=0)
    assert repr(r) == "<RanksDiagnosis 'tests/data/h200_ncuwrap/ranks/slow1': 2 ranks, communication (waiting for rank 1); straggler: rank 1>"
    bench = OURS / "bench_pairs" / "transpose.json"
    c = ncuwrap.compare_reports(OURS / "pairs_full" / "transpose-naive.raw.csv.gz", OURS / "pairs_full" / "transpose-padded_tile.raw.csv.gz",
                                before_timing=bench, after_timing=bench)
    assert repr(c) == "<CompareResult '…/pairs_full/transpose-naive.raw.csv.gz' → '…/transpose-padded_tile.raw.csv.gz': 1 kernel pair; no regression>"
    assert c.regressions == []


def test_a_hostile_name_shows_escaped_in_the_repr(tmp_path):
    report = tmp_path / "evil\x1b[31m.raw.csv"
    report.write_bytes((TRANSPOSE / "transposeNaive.raw.csv").read_bytes())
    shown = repr(ncuwrap.diagnose(report))
    assert "\x1b" not in shown and "\\x1b[31m" in shown


def test_diagnose_gives_the_diagnosis_and_one_row_per_launch():
    d = ncuwrap.diagnose(OURS / "multi" / "two_processes.raw.csv")
    assert isinstance(d, Diagnosis) and len(d.kernels) == 6
    frame = d.to_frame()
    assert list(frame.columns[:19]) == ["id", "kernel", "display_name", "grid", "block", "duration_ns", "bound", "limiter", "pipe", "verdict",
                                        "borderline", "estimated_gain_pct", "headline", "severity", "findings", "not_evaluated", "next_step",
                                        "process", "stream"]
    assert len(frame) == 6 and list(frame["id"]) == [k.id for k in d.kernels]
    assert list(frame["verdict"]) == [k.verdict_label for k in d.kernels]
    assert list(frame["findings"]) == [k.finding_ids() for k in d.kernels]
    # The rules' display metrics are columns too, with the values of the JSON document.
    doc = expand(json.loads(render(d, Format.json)))
    assert frame["sm_pct"].tolist() == [k["metrics"]["sm_pct"] for k in doc["kernels"]]
    assert set(frame["process"]) == {k.process_id for k in d.kernels}


def test_a_notebook_shows_the_html_report_in_a_sandboxed_frame():
    d = ncuwrap.diagnose(TRANSPOSE / "transposeNaive.raw.csv")
    shown = d._repr_html_()
    assert shown.startswith('<iframe srcdoc="') and 'sandbox=""' in shown
    # The frame holds the report itself, escaped into the attribute: nothing of it is markup of the notebook.
    document = html.unescape(shown[len('<iframe srcdoc="'): shown.index('" sandbox')])
    assert document == render(d, Format.html)
    assert "<" not in shown[len('<iframe srcdoc="'): shown.index('" sandbox')]


def test_compare_kernel_reports_and_timelines():
    bench = OURS / "bench_pairs" / "transpose.json"
    c = ncuwrap.compare_reports(OURS / "pairs_full" / "transpose-naive.raw.csv.gz", OURS / "pairs_full" / "transpose-padded_tile.raw.csv.gz",
                        before_timing=bench, after_timing=bench)
    assert isinstance(c, CompareResult)
    frame = c.to_frame()
    assert frame[["kernel", "resolved", "estimated_speedup"]].to_dict("records") == [
        {"kernel": "transpose_naive -> transpose_padded", "resolved": ["uncoalesced_global_stores"], "estimated_speedup": pytest.approx(7.4964, abs=1e-4)}]
    assert frame["speedup"][0] == pytest.approx(6.42, abs=0.01)
    t = ncuwrap.compare_reports(OURS / "steps" / "decode_eager.sqlite.gz", OURS / "steps" / "graph_decode.sqlite.gz")
    assert isinstance(t, TimelineCompare) and t.speedup == pytest.approx(6.275, abs=0.001)
    kernels = t.to_frame()
    assert len(kernels) == 21 and set(kernels["status"]) == {"both"} and kernels["before_launches"].sum() == 123
    assert t._repr_html_().startswith("<iframe")
    with pytest.raises(InputError, match="not an nsys capture"):
        ncuwrap.compare_reports(OURS / "steps" / "decode_eager.sqlite.gz", TRANSPOSE / "transposeNaive.raw.csv")


def test_timeline_one_row_per_step():
    t = ncuwrap.diagnose_timeline(OURS / "steps" / "gpu_train.sqlite.gz")
    assert isinstance(t, TimelineDiagnosis)
    steps = t.to_frame()
    assert len(steps) == 8 and steps["warmup"].tolist() == [True] + [False] * 7
    assert steps["period_ns"].iloc[1:].median() == t.timeline.steps.period_ns
    kernels = t.kernels_frame()
    assert kernels["launches"].sum() == t.timeline.metrics["kernel_count"]
    # The same capture through ncuwrap.diagnose: a timeline is diagnosed as one.
    assert ncuwrap.diagnose(OURS / "steps" / "gpu_train.sqlite.gz").to_json() == t.to_json()
    # A capture without steps has no step rows.
    assert ncuwrap.diagnose_timeline(OURS / "nsys" / "launch_graph.sqlite.gz").to_frame().empty


def test_ranks_one_row_per_rank():
    r = ncuwrap.diagnose_ranks(OURS / "ranks" / "slow1", workers=0)
    assert isinstance(r, RanksDiagnosis)
    frame = r.to_frame()
    assert frame["rank"].tolist() == [0, 1] and frame["straggler"].tolist() == [False, True]
    assert (frame["nccl_ns"] > 0).all() and frame["window_ns"].tolist() == [rank.window_ns for rank in r.ranks]


def test_render_gives_what_the_commands_print(capsys):
    path = TRANSPOSE / "transposeNaive.raw.csv"
    d = ncuwrap.diagnose(path)
    code, out, _ = run_cli(capsys, "diagnose", path, "-f", "markdown")
    assert code == 0 and ncuwrap.render_result(d, "markdown") == out
    assert ncuwrap.render_result(d, "table", width=100) == render(d, Format.table, width=100)


def test_bad_input_raises_the_commands_error(tmp_path):
    with pytest.raises(InputError, match="no such file"):
        ncuwrap.diagnose(tmp_path / "missing.ncu-rep")
    with pytest.raises(InputError, match="--step-range, --warmup and --steps apply to nsys captures"):
        ncuwrap.diagnose(TRANSPOSE / "transposeNaive.raw.csv", timeline=ncuwrap.TimelineOptions(warmup=1))
    assert isinstance(ncuwrap.diagnose().to_frame(), pd.DataFrame)  # the bundled sample


# --- ncuwrap.profile_program: the CLI's run, from Python -----------------------------------------------

FAKE_NCU = ROOT / "tests" / "data" / "profile" / "fake_ncu" / "ncu"


@pytest.fixture
def fake_ncu(monkeypatch, tmp_path):
    """The stand-in ncu of tests/test_profile_cli.py (runs the program, prints ncu's console lines, hands out a
    real H200 report); returns the argv lists it was called with."""
    argv_log = tmp_path / "ncu-argv.jsonl"
    monkeypatch.setenv("FAKE_NCU_ARGV_LOG", str(argv_log))
    for name in ("FAKE_NCU_MODE", "FAKE_NCU_STREAM", "FAKE_NCU_VERSION", "FAKE_NCU_KERNELS"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr("ncuwrap.profile.rundir.nvidia_smi", lambda: {"error": "no GPU in tests"})
    return lambda: [json.loads(line) for line in argv_log.read_text().splitlines()] if argv_log.exists() else []


def _program(tmp_path):
    prog = tmp_path / "prog"
    prog.write_text("#!/bin/sh\necho hello from the program\n")
    prog.chmod(0o755)
    return prog


def test_profile_program_runs_ncu_as_the_command_does_and_gives_its_diagnosis(capsys, tmp_path, fake_ncu):
    from ncuwrap.profile.collection import plan_collection

    prog = _program(tmp_path)
    d = ncuwrap.profile_program([str(prog), "--size", "big"], output=tmp_path / "api", ncu=str(FAKE_NCU),
                                launches=ncuwrap.LaunchSelection(kernel="transpose", launch_count=2),
                                ncu_options=NcuOptions(clock_control="base", nvtx_include=("step/",)))
    assert isinstance(d, Diagnosis) and [k.name for k in d.kernels] == ["transposeNaive"]
    # The exact command line ncu got: the contract with the profiler, as the command writes it.
    targeted = plan_collection("targeted", source=True).argv()
    api_calls = [c for c in fake_ncu() if c and c[0] == "--export"]
    assert api_calls == [["--export", str(tmp_path / "api" / "report"), "--clock-control", "base", "--nvtx", "--nvtx-include", "step/",
                          "--kernel-name", "regex:transpose", "--launch-count", "2", *targeted, str(prog), "--size", "big"]]
    # The command with the same options: the same argv (but the run folder) and the same diagnosis, printed.
    code, out, err = run_cli(capsys, "profile", "--ncu", FAKE_NCU, "-o", tmp_path / "cli", "-k", "transpose", "-c", "2",
                             "--clock-control", "base", "--nvtx-include", "step/", "--", prog, "--size", "big")
    assert code == 0, err
    cli_call = [c for c in fake_ncu() if c and c[0] == "--export"][1]
    assert cli_call == [a.replace(str(tmp_path / "api"), str(tmp_path / "cli")) for a in api_calls[0]]
    assert ncuwrap.render_result(d, "table", width=100) == out.replace(str(tmp_path / "cli"), str(tmp_path / "api"))
    assert json.loads((tmp_path / "api" / "profile.json").read_text())["status"] == "ok"


def test_profile_program_refuses_bad_options_before_running_anything(tmp_path, fake_ncu):
    from ncuwrap.core.errors import OptionError

    with pytest.raises((InputError, OptionError), match="--clock-control"):
        ncuwrap.profile_program([str(_program(tmp_path))], ncu=str(FAKE_NCU), ncu_options=NcuOptions(clock_control="sometimes"),
                                output=tmp_path / "run")
    # A report's launch filter that ncu cannot be given: said before anything runs, as the command's.
    with pytest.raises(OptionError, match="^--process 42: picks the launches of one process of a report"):
        ncuwrap.profile_program([str(_program(tmp_path))], ncu=str(FAKE_NCU), launches=ncuwrap.LaunchSelection(process="42"),
                                output=tmp_path / "run")
    assert fake_ncu() == [] and not (tmp_path / "run").exists()
    with pytest.raises(InputError, match="no such program"):
        ncuwrap.profile_program(["./missing-program"], ncu=str(FAKE_NCU), output=tmp_path / "run")
