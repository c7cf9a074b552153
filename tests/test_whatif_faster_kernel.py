"""faster_kernel: the kernels ncu diagnosed as fast as their verdicts estimate, replayed (ncuwrap.timeline.whatif), on the
REAL ``profile --top 5`` run of the H200 (tests/data/h200_ncuwrap/top: its nsys capture, its ncu CSV exports and
report.mangled.csv).

- The join (ncuwrap.timeline.kernel_join) finds each verdict's launches in the capture by mangled name, grid and
  block, as ``profile --top``'s coverage does; by name where the mangled names are not known.
- The remedy shortens those launches by their estimates and replays the step; its assumption names each kernel
  with its speedup; where nothing is joined it is not predicted, and says why.
- ``ncuwrap timeline CAPTURE --kernels REPORT``, ``ncuwrap.diagnose_timeline(kernels=...)`` and ``profile --top``
  show it.
"""

from __future__ import annotations

import dataclasses
import json
import sys

import numpy as np
import pytest

from ncuwrap.inputs import kind_of
from ncuwrap.profile.kernel_estimates import read
from ncuwrap.timeline import steps as steps_module
from ncuwrap.timeline.readers import read as read_timeline
from ncuwrap.timeline.kernel_join import DiagnosedKernels, KernelEstimate, join, matching
from ncuwrap.timeline.model import launch_dims
from ncuwrap.timeline.whatif.predict import predict
from ncuwrap.timeline.whatif.remedies import faster_kernel
from tests.conftest import DATA, run_cli
from tests.test_profile_top import FAKE_NCU, FAKE_NSYS, fakes  # noqa: F401  (the stand-in ncu and nsys of the H200 run)

RUN = DATA / "h200_ncuwrap" / "top"
CAPTURE = RUN / "timeline.sqlite.gz"
SOFTMAX = "cunn_SoftMaxForwardReg"
# (nsys's short name, grid, block, launches in the capture) of the 5 profiled kernels, as profile --top ranked them
JOINED = [("nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_bias_TNT", (2, 66, 1), (384, 1, 1), 48),
          ("nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_NNT", (2, 66, 1), (384, 1, 1), 54),
          ("nvjet_sm90_tst_128x256_64x4_2x1_v_bz_coopA_NTN", (2, 64, 1), (384, 1, 1), 24),
          ("cudnn_generated_fort_native_sdpa_sm90_flash_bprop_wgmma_f16_knob_26_64x64x64_1x4x1_cga1x1x1_kernel0_0", (132, 1, 1), (384, 1, 1), 12),
          (SOFTMAX, (8192, 1, 1), (1024, 1, 1), 6)]


@pytest.fixture(scope="module")
def capture():
    data, _ = read_timeline(CAPTURE)
    return data, steps_module.measure(data)


@pytest.fixture(scope="module")
def verdicts() -> DiagnosedKernels:
    return read(RUN, kind_of)  # the run folder: its raw CSV diagnosed, its mangled names with it


def _joined(j) -> list:
    return [(k.name, k.grid, k.block, k.launches) for k in j.joined]


def test_the_verdicts_join_their_kernels_by_mangled_name_grid_and_block(capture, verdicts):
    data, _ = capture
    assert all(e.mangled for e in verdicts.estimates) and len(verdicts.estimates) == 5
    j = join(data.kernels, verdicts)
    assert _joined(j) == JOINED and j.unmatched == ()
    # Each joined launch of the capture carries its kernel's remaining share; no other launch does.
    assert int(np.isfinite(j.row_remaining).sum()) == sum(k[3] for k in JOINED) == 144
    softmax = next(k for k in j.joined if k.name == SOFTMAX)
    assert softmax.verdicts[0].findings == ("low_achieved_occupancy",)
    assert softmax.remaining == pytest.approx(1 - softmax.verdicts[0].gain_pct / 100) and 1.7 < softmax.speedup < 1.9
    rows = np.flatnonzero(data.kernels["name"] == SOFTMAX)
    assert np.all(j.row_remaining[rows] == softmax.remaining)


def test_without_the_mangled_names_the_function_name_decides(capture, verdicts):
    """A report alone (ncu's raw CSV, no report.mangled.csv): ncu's demangled names against nsys's, as profile --top's fallback."""
    data, _ = capture
    alone = read(RUN / "report.raw.csv", kind_of)
    assert not any(e.mangled for e in alone.estimates)
    assert _joined(join(data.kernels, alone)) == _joined(join(data.kernels, verdicts))


def test_a_verdict_of_another_launch_configuration_is_not_joined(capture, verdicts):
    data, _ = capture
    moved = dataclasses.replace(verdicts, estimates=tuple(dataclasses.replace(e, grid=(1, 1, 1)) if i == 4 else e
                                                          for i, e in enumerate(verdicts.estimates)))
    j = join(data.kernels, moved)
    assert _joined(j) == JOINED[:4] and [u.launch for u in j.unmatched] == [4]


def test_coverage_and_the_join_share_one_rule():
    class Group:
        def __init__(self, name, demangled, mangled):
            self.name, self.demangled, self.mangled = name, demangled, mangled

    a, b = Group("k", "void k<float>(float*)", "_Z1kIfEvPT_"), Group("k", "void k<int>(int*)", "_Z1kIiEvPT_")
    assert matching([a, b], name="void k<int>(int*)", display_name="k", mangled="_Z1kIiEvPT_") == [b]
    # Without the mangled name, the short name names both: ambiguous (the caller joins only one match).
    assert matching([a, b], name="k<int>", display_name="k", mangled=None) == [a, b]
    # A mangled name that names no group falls back on the function's name.
    c = Group("c", "void c(float*)", "_Z1cPf")
    assert matching([a, c], name="void c(float*)", display_name="c", mangled="_Zunknown") == [c]


def test_faster_kernel_is_replayed_with_its_assumption(capture, verdicts):
    data, steps = capture
    j = join(data.kernels, verdicts)
    w = predict(data, steps, kernels=j)
    p = w.get("faster_kernel")
    assert p is not None and "faster_kernel" not in {n.remedy for n in w.not_predicted}
    assert p.step_ns < w.untraced_step_ns and 1.004 < p.speedup < 1.01
    assert p.assumes == (
        "the 5 kernels ncu diagnosed (tests/data/h200_ncuwrap/top) run as fast as their verdicts estimate, all of a kernel's findings fixed "
        "together: cunn_SoftMaxForwardReg 1.81x, cudnn_generated_fort_native_sdpa_sm90_flash_bprop_wgmma_f16_knob_26_64x64x64_1x4x1_cga1x1x1_"
        "kernel0_0 1.02x, nvjet_sm90_tst_128x256_64x4_2x1_v_bz_coopA_NTN 1.01x; nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_NNT, "
        "nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_bias_TNT unchanged (no finding of theirs costs time); every launch of them in the steps "
        "takes that share of its captured time; GPU work the capture had queued before the steps is taken as done when they begin; the "
        "rest of the step replayed as captured")
    doc = w.to_json()
    assert [k["name"] for k in doc["kernel_verdicts"]["joined"]] == [k[0] for k in JOINED]
    assert doc["kernel_verdicts"]["report"] == str(RUN) and doc["kernel_verdicts"]["unmatched"] == []
    # Replayed, not Amdahl's arithmetic: the step is host-bound (host code is most of its critical path), so it
    # gains less than the GPU time the faster kernels give back.
    from ncuwrap.timeline.whatif import graph as graph_module

    g = graph_module.build(data, steps)
    launches = (g.g_kind == graph_module.KERNEL) & (g.g_call >= 0)
    given_back = float(np.nansum(g.g_dur[launches] * (1.0 - j.row_remaining[g.g_row[launches]]))) / g.steps
    assert 0 < w.untraced_step_ns - p.step_ns < 0.5 * given_back


def test_each_reason_it_is_not_predicted(capture, verdicts):
    data, steps = capture

    def why(kernels) -> str:
        w = predict(data, steps, kernels=None if kernels is None else join(data.kernels, kernels))
        assert w.get("faster_kernel") is None
        return next(n.why for n in w.not_predicted if n.remedy == "faster_kernel")

    assert why(None) == faster_kernel.NO_VERDICTS
    renamed = dataclasses.replace(verdicts, estimates=tuple(dataclasses.replace(e, name="x", display_name="x", mangled="x")
                                                            for e in verdicts.estimates))
    assert why(renamed) == ("none of the 5 kernels ncu diagnosed (tests/data/h200_ncuwrap/top) is a kernel of the capture "
                            "(by mangled name or name, grid and block)")
    unknown = dataclasses.replace(verdicts, estimates=tuple(dataclasses.replace(e, gain_pct=None) for e in verdicts.estimates))
    assert why(unknown) == "no verdict of the 5 kernels joined to the capture has an estimate"
    # A kernel launched only before the steady steps (the model's initialisation).
    name = "distribution_elementwise_grid_stride_kernel"
    row = int(np.flatnonzero(data.kernels["name"] == name)[0])
    early = KernelEstimate(launch=0, name=name, display_name=name, mangled=None, grid=tuple(launch_dims(data.kernels, row, "grid")),
                           block=tuple(launch_dims(data.kernels, row, "block")), gain_pct=50.0)
    assert why(DiagnosedKernels("early.ncu-rep", (early,))) == "none of the 1 kernel joined to the capture runs in the steps replayed"


def test_timeline_kernels_option_in_every_format(capsys):
    code, out, err = run_cli(capsys, "timeline", CAPTURE, "--kernels", RUN, "-f", "json")
    assert code == 0, err
    what_if = json.loads(out)["what_if"]
    assert "faster_kernel" in [r["remedy"] for r in what_if["remedies"]]
    assert len(what_if["kernel_verdicts"]["joined"]) == 5
    for fmt, shown in (("table", "faster_kernel: ~"), ("markdown", "**faster\\_kernel** assumes the 5 kernels ncu diagnosed"),
                       ("html", "<span class=\"mono\">faster_kernel</span>")):
        code, out, err = run_cli(capsys, "timeline", CAPTURE, "--kernels", RUN, "-f", fmt)
        assert code == 0 and shown in out, (fmt, err)


@pytest.mark.parametrize("kernels,message", [
    ("nowhere.ncu-rep", "nowhere.ncu-rep: --kernels: no such file or folder; give an Nsight Compute report"),
    (str(CAPTURE), "timeline.sqlite.gz: --kernels: a timeline, not a kernel report"),
    (str(DATA / "h200_ncuwrap"), "h200_ncuwrap: --kernels: a folder, but not a run folder of 'ncuwrap profile'"),
])
def test_a_bad_kernels_report_is_one_line(capsys, kernels, message):
    code, out, err = run_cli(capsys, "timeline", CAPTURE, "--kernels", kernels)
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1 and message in err, err


def test_kernels_is_refused_with_ranks(capsys):
    code, _, err = run_cli(capsys, "timeline", "--ranks", DATA / "h200_ncuwrap" / "ranks", "--kernels", RUN)
    assert code == 2 and "--kernels joins one report's verdicts to one timeline" in err


def test_the_api_takes_a_report_or_a_diagnosis():
    import ncuwrap
    from ncuwrap.kernel.diagnosis import diagnose

    by_path = ncuwrap.diagnose_timeline(CAPTURE, kernels=RUN).timeline.whatif
    by_diagnosis = ncuwrap.diagnose_timeline(CAPTURE, kernels=diagnose(RUN / "report.raw.csv")).timeline.whatif
    assert by_path.get("faster_kernel").step_ns == by_diagnosis.get("faster_kernel").step_ns
    from ncuwrap.core.errors import InputError

    with pytest.raises(InputError, match="kernels=int: expected a report's path"):
        ncuwrap.diagnose_timeline(CAPTURE, kernels=3)


def test_profile_top_predicts_faster_kernel_from_its_own_verdicts(capsys, fakes, tmp_path):  # noqa: F811
    """The H200 run replayed with the stand-in ncu and nsys: the timeline part shows the remedy, its JSON the join."""
    code, out, err = run_cli(capsys, "profile", "--top", "5", "--ncu", FAKE_NCU, "--nsys-path", FAKE_NSYS, "-o", "top", "--", sys.executable,
                             "-c", "pass")
    assert code == 0, err
    assert "faster_kernel: ~" in out and "cunn_SoftMaxForwardReg 1.81x" in " ".join(out.split())
    timeline = json.loads((tmp_path / "top" / "timeline.json").read_text())
    joined = timeline["what_if"]["kernel_verdicts"]
    assert joined["report"] == "top/report.ncu-rep" and [k["name"] for k in joined["joined"]] == [k[0] for k in JOINED]
    # The mangled names profile --top exported were used: the cudnn kernel's is its own name, the softmax's is mangled.
    assert next(k for k in joined["joined"] if k["name"] == SOFTMAX)["mangled"].startswith("_ZN2at6native")


def test_profile_top_finds_and_analyses_the_steps_once(capsys, fakes, monkeypatch):  # noqa: F811
    """The ranking run's capture is analysed once: its steps found and their window analysed before ncu runs (the
    ranking reads them), replayed once ncu's verdicts are joined to them after, not diagnosed a second time."""
    from ncuwrap.timeline import analysis
    from ncuwrap.timeline.whatif import predict as predict_module

    calls = {"steps": 0, "analysis": 0, "what-if": 0}

    def counted(module, name, key):
        real = getattr(module, name)

        def counting(*args, **kwargs):
            calls[key] += 1
            return real(*args, **kwargs)

        monkeypatch.setattr(module, name, counting)

    counted(steps_module, "measure", "steps")
    counted(analysis, "steady_analysis", "analysis")
    counted(predict_module, "predict", "what-if")
    code, out, err = run_cli(capsys, "profile", "--top", "5", "--ncu", FAKE_NCU, "--nsys-path", FAKE_NSYS, "-o", "top", "--", sys.executable,
                             "-c", "pass")
    assert code == 0, err
    assert "cunn_SoftMaxForwardReg 1.81x" in " ".join(out.split())  # the what-if with the verdicts joined
    assert calls == {"steps": 1, "analysis": 1, "what-if": 1}
