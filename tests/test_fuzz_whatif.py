"""Fuzz of the what-if replay's input surface (ncuwrap.timeline.whatif): SYNTHETIC event tables, labelled so.

Any timeline reader's events reach the dependency graph: calls and GPU events out of order, negative
durations, correlations missing, repeated or pointing nowhere, up to 10^6 distinct streams, waits that
overlap everything; a kernel verdict joined to them estimates any gain at all (NaN, infinite, negative, over
100%). Whatever they hold, the replay ends, and every figure it gives is finite and comes with its assumption
(or there is no what-if at all).
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from ncuwrap.timeline import steps as steps_module
from ncuwrap.timeline.events import Events, Labels
from ncuwrap.timeline.kernel_join import DiagnosedKernels, KernelEstimate, join
from ncuwrap.timeline.model import TimelineData
from ncuwrap.timeline.whatif.predict import predict
from tests.test_fuzz import fuzz

CALLS = ["cudaLaunchKernel", "cudaMemcpyAsync", "cudaMemcpy", "cudaStreamSynchronize", "cudaDeviceSynchronize", "cudaEventRecord",
         "cudaStreamWaitEvent", "cuKernelGetName", "cudaGraphLaunch", "cudaMalloc"]
TIMES = st.integers(-10**6, 10**9)


@st.composite
def captures(draw):
    steps = draw(st.integers(2, 8))
    n_api = draw(st.integers(1, 60))
    n_gpu = draw(st.integers(1, 60))
    api_start = np.array(draw(st.lists(TIMES, min_size=n_api, max_size=n_api)), dtype=np.int64)
    api_len = np.array(draw(st.lists(st.integers(-1000, 10**7), min_size=n_api, max_size=n_api)), dtype=np.int64)
    corr = draw(st.lists(st.one_of(st.integers(0, 40), st.just(float("nan"))), min_size=n_api, max_size=n_api))
    names = draw(st.lists(st.sampled_from(CALLS), min_size=n_api, max_size=n_api))
    g_start = np.array(draw(st.lists(TIMES, min_size=n_gpu, max_size=n_gpu)), dtype=np.int64)
    g_len = np.array(draw(st.lists(st.integers(-1000, 10**7), min_size=n_gpu, max_size=n_gpu)), dtype=np.int64)
    g_corr = draw(st.lists(st.one_of(st.integers(0, 40), st.just(float("nan"))), min_size=n_gpu, max_size=n_gpu))
    streams = draw(st.lists(st.integers(0, 10**6), min_size=n_gpu, max_size=n_gpu))
    kinds = draw(st.lists(st.sampled_from(["kernel", "copy", "memset"]), min_size=n_gpu, max_size=n_gpu))
    step_starts = np.sort(np.array(draw(st.lists(TIMES, min_size=steps, max_size=steps, unique=True)), dtype=np.int64))
    tid = draw(st.lists(st.integers(1, 3), min_size=n_api, max_size=n_api))
    return api_start, api_len, corr, names, tid, g_start, g_len, g_corr, streams, kinds, step_starts


def _data(api_start, api_len, corr, names, tid, g_start, g_len, g_corr, streams, kinds, step_starts) -> TimelineData:
    order = np.argsort(api_start, kind="stable")
    api = Events({"start": api_start[order], "end": (api_start + api_len)[order], "tid": np.array(tid, dtype=float)[order],
                  "correlation": np.array(corr, dtype=float)[order], "name": Labels.of([names[i] for i in order])})

    def gpu(kind: str) -> Events:
        rows = [i for i, k in enumerate(kinds) if k == kind]
        columns = {"start": g_start[rows], "end": (g_start + g_len)[rows], "device": np.zeros(len(rows)), "stream": np.array(streams, dtype=float)[rows],
                   "correlation": np.array(g_corr, dtype=float)[rows], "bytes": np.full(len(rows), 1 << 20, dtype=float)}
        if kind == "kernel":
            columns["name"] = columns["demangled"] = columns["mangled"] = Labels.of(["k"] * len(rows))
        if kind == "copy":
            columns.update(direction=Labels.of(["HtoD"] * len(rows)), category=Labels.of(["memcpy_htod"] * len(rows)),
                           host_kind=Labels.of(["pageable"] * len(rows)), pageable=np.ones(len(rows)))
        return Events(columns, n=len(rows))

    ends = np.append(step_starts[1:], step_starts[-1] + 1000)
    nvtx = Events({"start": step_starts, "end": ends, "tid": np.ones(step_starts.size), "name": Labels.of(["step"] * step_starts.size)})
    return TimelineData(path=Path("fuzz.sqlite"), kernels=gpu("kernel"), copies=gpu("copy"), memsets=gpu("memset"), api=api, nvtx=nvtx,
                        host_waits=Events({"start": api_start[:3], "end": api_start[:3] + 10**6, "tid": np.ones(min(3, api_start.size))}))


GAINS = st.one_of(st.none(), st.floats(allow_nan=True, allow_infinity=True), st.floats(-1e3, 1e3))


@fuzz(100)
@given(capture=captures(), gain=GAINS)
def test_fuzz_the_replay(capture, gain):
    data = _data(*capture)
    try:
        steps = steps_module.measure(data, find="marked")
    except ValueError:
        return  # events the steps cannot be measured on: refused before the replay, as the readers do
    if steps is None:
        return
    verdict = KernelEstimate(launch=0, name="k", display_name="k", mangled=None, grid=None, block=None, gain_pct=gain)
    w = predict(data, steps, kernels=join(data.kernels, DiagnosedKernels("fuzz.ncu-rep", (verdict,))))
    if w is None:
        return
    doc = w.to_json()
    for p in doc["remedies"]:
        assert p["assumes"]
        assert p["step_ns"] is None or math.isfinite(p["step_ns"])
        assert p["speedup"] is None or math.isfinite(p["speedup"])
    assert all(math.isfinite(v) for v in (w.measured_step_ns, w.replayed_step_ns, w.untraced_step_ns))
