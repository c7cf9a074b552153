"""The Python API (issue 25): ncuwrap.diagnose / compare / timeline / ranks return the typed results, each
with .to_frame() (pandas) and _repr_html_ (the HTML report, for notebooks), on real H200 reports."""

from __future__ import annotations

import html
import json
import subprocess
import sys

import pandas as pd
import pytest

import ncuwrap
from ncuwrap.compare import CompareResult
from ncuwrap.errors import InputError
from ncuwrap.render import Format, render
from ncuwrap.timeline.compare import TimelineCompare
from ncuwrap.timeline.diagnosis import TimelineDiagnosis
from ncuwrap.timeline.ranks.diagnosis import RanksDiagnosis
from ncuwrap.verdict import Diagnosis
from ncuwrap.diagnosis_doc import expand
from tests.conftest import DATA, H200, ROOT, run_cli

OURS = DATA / "h200_ncuwrap"
TRANSPOSE = H200 / "transpose"


def test_import_ncuwrap_loads_no_api_until_used():
    # `import ncuwrap` stays cheap (no pandas, no renderers); the first ncuwrap.diagnose loads the API.
    code = ("import sys, ncuwrap; before = {'ncuwrap.api', 'pandas'} & set(sys.modules); ncuwrap.diagnose; "
            "print(sorted(before), 'ncuwrap.api' in sys.modules, sorted(n for n in ncuwrap.__dir__() if not n.startswith('_')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT).stdout.split(" ", 2)
    assert out[:2] == ["[]", "True"]
    assert out[2].strip() == "['compare', 'diagnose', 'ranks', 'render', 'timeline']"
    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        ncuwrap.nothing


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
    c = ncuwrap.compare(OURS / "pairs_full" / "transpose-naive.raw.csv.gz", OURS / "pairs_full" / "transpose-padded_tile.raw.csv.gz",
                        before_timing=bench, after_timing=bench)
    assert isinstance(c, CompareResult)
    frame = c.to_frame()
    assert frame[["kernel", "resolved", "estimated_speedup"]].to_dict("records") == [
        {"kernel": "transpose_naive -> transpose_padded", "resolved": ["uncoalesced_global_stores"], "estimated_speedup": pytest.approx(7.4964, abs=1e-4)}]
    assert frame["speedup"][0] == pytest.approx(6.42, abs=0.01)
    t = ncuwrap.compare(OURS / "steps" / "decode_eager.sqlite.gz", OURS / "steps" / "graph_decode.sqlite.gz")
    assert isinstance(t, TimelineCompare) and t.speedup == pytest.approx(5.016, abs=0.001)
    kernels = t.to_frame()
    assert len(kernels) == 21 and set(kernels["status"]) == {"both"} and kernels["before_launches"].sum() == 123
    assert t._repr_html_().startswith("<iframe")
    with pytest.raises(InputError, match="not an nsys capture"):
        ncuwrap.compare(OURS / "steps" / "decode_eager.sqlite.gz", TRANSPOSE / "transposeNaive.raw.csv")


def test_timeline_one_row_per_step():
    t = ncuwrap.timeline(OURS / "steps" / "gpu_train.sqlite.gz")
    assert isinstance(t, TimelineDiagnosis)
    steps = t.to_frame()
    assert len(steps) == 8 and steps["warmup"].tolist() == [True] + [False] * 7
    assert steps["period_ns"].iloc[1:].median() == t.timeline.steps.period_ns
    kernels = t.kernels_frame()
    assert kernels["launches"].sum() == t.timeline.metrics["kernel_count"]
    # The same capture through ncuwrap.diagnose: a timeline is diagnosed as one.
    assert ncuwrap.diagnose(OURS / "steps" / "gpu_train.sqlite.gz").to_json() == t.to_json()
    # A capture without steps has no step rows.
    assert ncuwrap.timeline(OURS / "nsys" / "launch_graph.sqlite").to_frame().empty


def test_ranks_one_row_per_rank():
    r = ncuwrap.ranks(OURS / "ranks" / "slow1", workers=0)
    assert isinstance(r, RanksDiagnosis)
    frame = r.to_frame()
    assert frame["rank"].tolist() == [0, 1] and frame["straggler"].tolist() == [False, True]
    assert (frame["nccl_ns"] > 0).all() and frame["window_ns"].tolist() == [rank.window_ns for rank in r.ranks]


def test_render_gives_what_the_commands_print(capsys):
    path = TRANSPOSE / "transposeNaive.raw.csv"
    d = ncuwrap.diagnose(path)
    code, out, _ = run_cli(capsys, "diagnose", path, "-f", "markdown")
    assert code == 0 and ncuwrap.render(d, "markdown") == out
    assert ncuwrap.render(d, "table", width=100) == render(d, Format.table, width=100)


def test_bad_input_raises_the_commands_error(tmp_path):
    with pytest.raises(InputError, match="no such file"):
        ncuwrap.diagnose(tmp_path / "missing.ncu-rep")
    with pytest.raises(InputError, match="--step-range, --warmup and --steps apply to nsys captures"):
        ncuwrap.diagnose(TRANSPOSE / "transposeNaive.raw.csv", warmup=1)
    assert isinstance(ncuwrap.diagnose().to_frame(), pd.DataFrame)  # the bundled sample
