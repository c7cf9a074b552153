"""Each top kernel traced to the op and the Python line that launched it (issue 37): on real nsys captures
of PyTorch programs recorded with --pytorch=autograd-nvtx on the H200, and on small tables built here for
what nsys does not record (Python frames: torch.profiler's)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from conftest import golden_json
from ncuwrap.timeline import launched_from as LF
from ncuwrap.timeline.analysis import analyze
from ncuwrap.timeline.readers import pytorch_nvtx
from ncuwrap.timeline.events import Events, Labels
from ncuwrap.timeline import readers
from ncuwrap.timeline.model import TimelineData

KINETO = Path(__file__).parent / "data" / "h200_ncuwrap" / "kineto"


@pytest.fixture(scope="module")
def gpu_train():
    """A GPU-bound 4-layer GPT training loop (workloads/steps/gpu_train.py), nsys --pytorch=autograd-nvtx."""
    data, _ = readers.read(KINETO / "cost_gpu_train_backtrace1.sqlite.gz")
    # The whole capture: its only step-like ranges are PyTorch's Optimizer.step ops, which the steps may stop taking.
    return data, analyze(data)


def _top_rows(data, timeline):
    top = {k.demangled for k in timeline.top_kernels()}
    return data.kernels.rows(data.kernels["demangled"].isin(top))


def test_gpu_train_top_kernels_are_traced_to_their_ops_backward_included(gpu_train):
    data, timeline = gpu_train
    assert data.frames is None  # nsys's --python-backtrace=cuda left no Python stack in the export (no callchain at all)
    kernels = _top_rows(data, timeline)
    launches = LF.trace(data, kernels)
    ns = np.asarray(kernels["end"] - kernels["start"], dtype=np.int64)
    assert ns[launches.op >= 0].sum() >= 0.9 * ns.sum()
    backward = launches.via == LF.VIA.index(LF.BACKWARD)
    assert ns[backward].sum() >= 0.3 * ns.sum()  # a training step: most of the top kernels' time is backward
    assert (launches.forward_op[backward] >= 0).all()  # each paired with its forward op by sequence number
    assert all(k.launched_from is not None for k in timeline.top_kernels())


def test_gpu_train_launched_from_matches_golden(gpu_train):
    _, timeline = gpu_train
    golden_json("launched_from_gpu_train.json", {"top_kernels": [{"name": k.name, "total_ns": k.total_ns, "launched_from": k.launched_from.to_json()}
                                                                 for k in timeline.top_kernels()],
                                                 "host_time": timeline.host_time})


def test_small_launch_every_top_kernel_has_its_op():
    data, _ = readers.read(KINETO / "cost_small_launch_backtrace1.sqlite.gz")
    timeline = analyze(data)
    places = [k.launched_from for k in timeline.top_kernels()]
    assert all(p.op is not None and p.share_pct == 100.0 for p in places)
    assert {"aten::addmm", "aten::addcdiv_"} <= {p.op for p in places}  # the MLP's GEMM and Adam's update


def test_ops_are_parsed_from_autograd_nvtx_names(gpu_train):
    data, _ = gpu_train
    ops = data.ops
    names = set(ops["name"].categories)
    assert {"aten::addmm", "AddmmBackward0", "autograd::engine::evaluate_function: AddmmBackward0", "torch::autograd::AccumulateGrad",
            "Optimizer.step#AdamW.step"} <= names
    assert not any("op_id" in n or "seq =" in n for n in names)
    assert "cub::DeviceRadixSort" not in names  # a library's own range, not an op
    assert len(np.unique(ops["tid"])) == 2  # the main thread and the autograd thread


@pytest.mark.parametrize("text, parsed", [
    ("aten::addmm, seq = 1644, op_id = 19026", ("aten::addmm", 1644)),
    ("AddmmBackward0, seq = 1644, op_id = 20245", ("AddmmBackward0", 1644)),
    ("AddmmBackward0, stashed seq = 3, op_id = 5", ("AddmmBackward0", 3)),
    ("autograd::engine::evaluate_function: AddmmBackward0, op_id = 20244", ("autograd::engine::evaluate_function: AddmmBackward0", -1)),
    ("aten::mm, op_id = 2, sizes = [[1, 2], [2, 3]]", ("aten::mm", -1)),
    ("Optimizer.step#AdamW.step, op_id = 10049", ("Optimizer.step#AdamW.step", -1)),
    ("cub::DeviceRadixSort", None), ("train_step", None), ("step 3", None)])
def test_pytorch_nvtx_parse(text, parsed):
    assert pytorch_nvtx.parse(text) == parsed


@pytest.mark.parametrize("name, mine", [
    ("gpu_train.py(43): forward", True), ("models/gpt.py(15): forward", True), ("/home/me/train.py(9): step", True),
    ("marks.py(66): pop", True),
    ("torch/nn/modules/module.py(1783): _call_impl", False), ("torch/_tensor.py(1225): __hash__", False),
    ("typing.py(2154): cast", False), ("concurrent/futures/thread.py(58): run", False), ("threading.py(1012): run", False),
    ("<frozen os>(680): __getitem__", False), ("<built-in method append of list object at 0x7f3b>", False),
    ("/usr/lib/python3.12/json/decoder.py(338): decode", False),
    ("/opt/venv/lib/python3.12/site-packages/transformers/modeling.py(10): f", False),
    ("/usr/lib/python3/dist-packages/numpy/core.py(3): g", False), ("no line here", False)])
def test_user_frame_filter(name, mine):
    assert LF.user_frame(name) is mine


def test_parse_frame_and_backward_names():
    assert LF.parse_frame("gpt_model.py(15): forward") == ("gpt_model.py", 15, "forward")
    assert LF.parse_frame("a (b).py(3): <lambda>") == ("a (b).py", 3, "<lambda>")
    assert [LF.is_backward(n) for n in ("AddmmBackward0", "autograd::engine::evaluate_function: AddmmBackward0",
                                        "torch::autograd::AccumulateGrad", "aten::addmm", "aten::_log_softmax_backward_data")] == [
        True, True, True, False, False]


def test_seq_pairing_takes_the_forward_op_with_that_number_that_started_last():
    # Forward ops: a composite op (linear) shares its number with the inner op that takes it (view);
    # the same numbers again on another thread much earlier; a backward node is never a forward op.
    seq = np.array([5, 5, 6, 5, 7, 5])
    start = np.array([100, 110, 120, 10, 130, 300])
    forward = np.array([True, True, True, True, True, False])
    got = LF.forward_op(seq, start, forward, want_seq=np.array([5, 6, 7, 8, 5]), before=np.array([400, 400, 400, 400, 105]))
    assert got.tolist() == [1, 2, 4, -1, 0]


def test_enclosing_finds_the_innermost_range_on_the_same_thread():
    start = np.array([0, 10, 20, 50, 0])
    end = np.array([100, 40, 30, 60, 100])
    tid = np.array([1, 1, 1, 1, 2])
    at = np.array([25, 35, 55, 70, 5, 200, 25])
    at_tid = np.array([1, 1, 1, 1, 1, 1, 2])
    assert LF.enclosing(start, end, tid, at, at_tid).tolist() == [2, 1, 3, 0, 0, -1, 4]


def _events(rows: list[tuple], columns: tuple[str, ...], text: tuple[str, ...] = ("name",)) -> Events:
    return Events({c: (Labels.of(r[i] for r in rows) if c in text else np.array([r[i] for r in rows], dtype=np.int64))
                   for i, c in enumerate(columns)}, n=len(rows))


def _synthetic() -> TimelineData:
    """A forward linear on the main thread (1), its backward on the autograd thread (2), as torch.profiler records them."""
    frames = _events([(0, 1000, "train.py(10): main", 1, 1, -1), (100, 400, "model.py(20): forward", 1, 2, 1),
                      (110, 390, "torch/nn/modules/linear.py(130): forward", 1, 3, 2), (500, 900, "typing.py(2154): cast", 1, 4, 1)],
                     ("start", "end", "name", "tid", "python_id", "parent_id"))
    ops = _events([(120, 380, "aten::linear", 1, 7, -1, -1), (130, 370, "aten::addmm", 1, 8, -1, -1),
                   (600, 700, "autograd::engine::evaluate_function: AddmmBackward0", 2, 8, 1, -1),
                   (610, 690, "AddmmBackward0", 2, 8, 1, -1), (620, 680, "aten::mm", 2, -1, -1, -1)],
                  ("start", "end", "name", "tid", "seq", "fwd_tid", "external_id"))
    api = _events([(140, 150, "cudaLaunchKernel", 1, 1), (630, 640, "cudaLaunchKernel", 2, 2), (950, 960, "cudaGraphLaunch", 1, 3)],
                  ("start", "end", "name", "tid", "correlation"))
    kernels = _events([(200, 300, "gemm", "gemm", 1), (700, 900, "gemm_bwd", "gemm_bwd", 2), (970, 990, "graph_kernel", "graph_kernel", 3)],
                      ("start", "end", "name", "demangled", "correlation"), text=("name", "demangled"))
    empty = Events({c: np.array([], dtype=np.int64) for c in ("start", "end", "bytes", "device", "stream")})
    return TimelineData(path=Path("synthetic"), kernels=kernels, copies=empty, memsets=empty, api=api, ops=ops, frames=frames)


def test_frames_give_the_line_forward_and_backward():
    data = _synthetic()
    places = LF.trace_groups(data, data.kernels, np.array([0, 1, 2]), 3)
    assert places[0] == LF.LaunchedFrom(op="aten::addmm", forward_op=None, file="model.py", line=20, function="forward", via=LF.STACK,
                                        share_pct=100.0, line_is=LF.FIRST_LINE)
    # The backward kernel: no user frame on the autograd thread; its forward op's (aten::addmm, seq 8) instead.
    assert places[1] == LF.LaunchedFrom(op="aten::mm", forward_op="aten::addmm", file="model.py", line=20, function="forward",
                                        via=LF.BACKWARD, share_pct=100.0, line_is=LF.FIRST_LINE)
    # Replayed from a CUDA graph: where it was captured is not in the capture.
    assert places[2].via == LF.UNKNOWN and places[2].op is None and places[2].file is None


def test_a_kernel_launched_from_two_places_shows_the_heavier_and_its_share():
    data = _synthetic()
    places = LF.trace_groups(data, data.kernels, np.array([0, 0, 0]), 1)  # one kernel: 100 ns forward, 200 ns backward, 20 ns replayed
    assert places[0].via == LF.BACKWARD and places[0].partial and round(places[0].share_pct, 4) == round(100 * 200 / 320, 4)


def test_host_time_goes_to_the_innermost_user_frame():
    data = _synthetic()
    # main: 1000 ns less forward's 300 (typing.cast is the standard library's: its time stays with main); forward: 300 with
    # linear's library time folded in. A window cuts them.
    assert [(h.file, h.line, h.function, h.ns) for h in LF.host_time(data, 0, 1000)] == [("train.py", 10, "main", 700),
                                                                                      ("model.py", 20, "forward", 300)]
    assert [(h.function, h.ns, h.pct) for h in LF.host_time(data, 200, 600)] == [("forward", 200, 50.0), ("main", 200, 50.0)]
    assert LF.host_time(TimelineData(path=Path("x"), kernels=data.kernels, copies=data.copies, memsets=data.memsets, api=data.api), 0, 1) is None


def test_without_ops_or_frames_nothing_is_traced():
    data = _synthetic()
    plain = TimelineData(path=Path("x"), kernels=data.kernels, copies=data.copies, memsets=data.memsets, api=data.api)
    assert LF.attach(plain, ("k",)) == ("k",)
