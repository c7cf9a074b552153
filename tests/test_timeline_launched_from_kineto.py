"""Attribution on a real torch.profiler trace (the GPU-bound GPT training loop, recorded with_stack on the H200):
Kineto's ops and Python frames reach ncuwrap.timeline.launched_from through the same TimelineData fields as nsys's."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from ncuwrap.timeline.readers import kineto_json
from ncuwrap.timeline import launched_from as LF
from ncuwrap.timeline.analysis import analyze
from tests.conftest import DATA, run_cli

TRACE = Path(__file__).parent / "data" / "h200_ncuwrap" / "kineto" / "gpu_train.pt.trace.json.gz"


def test_gpu_train_trace_top_kernels_are_traced_to_lines_of_the_user_file():
    data = kineto_json.read(TRACE)
    timeline = analyze(data)
    top = {k.demangled for k in timeline.top_kernels()}
    kernels = data.kernels.rows(data.kernels["demangled"].isin(top))
    launches = LF.trace(data, kernels)
    ns = np.asarray(kernels["end"] - kernels["start"], dtype=np.int64)
    names = data.frames["name"].categories
    in_user_file = np.array([f >= 0 and str(names[f]).startswith("gpu_train.py(") for f in launches.frame.tolist()])
    assert ns[in_user_file].sum() >= 0.9 * ns.sum()
    backward = launches.via == LF.VIA.index(LF.BACKWARD)
    assert ns[backward & in_user_file].sum() >= 0.3 * ns.sum()  # backward kernels included, by their forward op's frame
    assert all(k.launched_from.file == "gpu_train.py" and k.launched_from.line_is == LF.FIRST_LINE for k in timeline.top_kernels())
    assert timeline.host_time and timeline.host_time[0].file == "gpu_train.py"


def test_host_prep_trace_names_its_preprocessing_function(capsys):
    """The loop whose host prepares each batch in numpy (workloads/steps/host_prep.py): the host's time
    by user function names preprocess() (its function's first line, 36), and the terminal shows it."""
    path = DATA / "h200_ncuwrap" / "kineto" / "host_prep.pt.trace.json.gz"
    code, out, _ = run_cli(capsys, "timeline", str(path), "-f", "json")
    assert code == 0
    host = {(h["file"], h["line"], h["function"]): h["pct"] for h in json.loads(out)["host_time"]}
    assert host[("host_prep.py", 36, "preprocess")] > 20
    code, out, _ = run_cli(capsys, "timeline", str(path))
    assert code == 0 and "host_prep.py:36 preprocess:" in out
