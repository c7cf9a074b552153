"""``ncuwrap diagnose`` on reports with repeated launches (real H200 captures): which launches
-k/--kernel-name, --launch-skip, --launch-count and --process keep (counted as ncu counts them), and
the launches of one kernel grouped (count, total, median, min, max computed once in KernelGroup),
with processes and streams shown where a report has several. Full outputs against goldens."""

from __future__ import annotations
import json
import re
import statistics

import pandas as pd
import pytest

from ncuwrap import ruleset
from ncuwrap.kernel.diagnosis import diagnose, diagnose_profile
from ncuwrap.kernel.reading import load
from ncuwrap.core.kernel_filter import LaunchSelection
from ncuwrap.render import Format, render
from ncuwrap.kernel.document import expand
from ncuwrap.kernel.metrics import KERNEL
from tests.conftest import DATA, H200, golden, golden_json, run_cli

TWO = DATA / "h200_ncuwrap" / "multi" / "two_processes.raw.csv"  # 3 kernels x 2 processes, launches 0-5
VECADD = H200 / "vecadd" / "bench_add.raw.csv"  # coalesced_add twice


def _ids(capsys, *args):
    code, out, err = run_cli(capsys, "diagnose", TWO, "-f", "json", *args)
    assert code == 0, err
    return [k["id"] for k in json.loads(out)["kernels"]]


def _error(capsys, *args):
    code, out, err = run_cli(capsys, "diagnose", *args)
    assert code == 2 and out == "" and len(err.splitlines()) == 1, err
    return err.strip()[len("ncuwrap: error: "):]


# ------------------------------------------------------------------------------- which launches

@pytest.mark.parametrize("args, ids", [
    ([], [0, 1, 2, 3, 4, 5]),
    (["-k", "scale_add"], [0, 1, 3, 4]),
    (["-k", "regex:scale_add"], [0, 1, 3, 4]),  # ncu's spelling
    (["--kernel-name", "regex:^scale_add<float"], [0, 3]),
    (["--kernel", "strided"], [2, 5]),
    # --launch-skip/--launch-count count only launches matching -k (and --process), in launch order, like ncu.
    (["-k", "scale_add", "--launch-skip", "1", "--launch-count", "2"], [1, 3]),
    (["-k", "scale_add", "-s", "3"], [4]),
    (["-s", "4"], [4, 5]),
    (["-c", "1"], [0]),
    (["-c", "0"], [0, 1, 2, 3, 4, 5]),  # 0: no limit, as for profile
    (["--process", "2751"], [3, 4, 5]),
    (["--process", "templated"], [0, 1, 2, 3, 4, 5]),  # by name: both processes are 'templated'
    (["--process", "2751", "-k", "strided"], [5]),
    (["--process", "2751", "-s", "1", "-c", "1"], [4]),
])
def test_launch_selection(capsys, args, ids):
    # The JSON lists the kernels by time; the launch IDs kept are what matters here.
    assert sorted(_ids(capsys, *args)) == ids


def test_selection_matches_ncu_counting_on_the_raw_launch_order():
    """Independent of ncuwrap's code: the Nth matching launch, read straight from the CSV."""
    frame = pd.read_csv(TWO, skiprows=[1], dtype=str)  # ncu's raw page: header, units row, then launches
    matching = frame[frame["Kernel Name"].str.contains("scale_add") & (frame["Process ID"] == "2709")]
    expected = [int(i) for i in matching["ID"].iloc[1:2]]
    got = diagnose(TWO, select=LaunchSelection(kernel="scale_add", process="2709", launch_skip=1, launch_count=1))
    assert [k.id for k in got.kernels] == expected == [1]


@pytest.mark.parametrize("args, message", [
    ([TWO, "--process", "9"], f"--process '9' matched no process of {TWO}; its processes: 2709 (templated), 2751 (templated)"),
    ([TWO, "-k", "scale", "--launch-skip", "9"],
     f"--launch-skip 9 skips all 4 launches matching -k 'scale' of {TWO}; give a --launch-skip below 4"),
    ([TWO, "--process", "2709", "-s", "3"],
     f"--launch-skip 3 skips all 3 launches matching --process 2709 of {TWO}; give a --launch-skip below 3"),
    ([TWO, "--kernel-name", "regex:gemm"],
     f"--kernel 'gemm' matched no kernel of {TWO}; its kernels: scale_add<float, 4>, scale_add<double, 1>, ops::strided_copy<8>"),
    ([TWO, "-s", "-1"], "--launch-skip must be 0 or more (got -1)"),
    ([TWO, "-c", "-2"], "--launch-count must be 0 (no limit) or more (got -2)"),
    ([DATA / "h200_ncuwrap" / "multi" / "two_processes.ncu-rep", "--process", "2709"],
     f"{DATA / 'h200_ncuwrap' / 'multi' / 'two_processes.ncu-rep'}: the report records no process for its launches, so --process "
     "cannot select; diagnose ncu's CSV export of it instead (ncu --import REPORT --csv --page raw > REPORT.raw.csv)"),
    ([DATA / "h200_ncuwrap" / "nsys" / "launch_graph.sqlite.gz", "--launch-count", "1"],
     f"{DATA / 'h200_ncuwrap' / 'nsys' / 'launch_graph.sqlite.gz'}: --kernel, --launch-skip, --launch-count, --process, --ncu-rules and "
     "--source-page apply to Nsight Compute reports; a timeline is diagnosed as a whole"),
])
def test_selecting_nothing_is_one_line(capsys, args, message):
    assert _error(capsys, *args) == message


# ------------------------------------------------------------------------------- grouped launches

def test_group_statistics_are_those_of_the_raw_durations():
    """count, total, median, min and max per kernel, against the durations read straight from the CSV."""
    frame = pd.read_csv(TWO, skiprows=[1], dtype=str)
    assert pd.read_csv(TWO, nrows=1, dtype=str)["gpu__time_duration.sum"].iloc[0] == "us"
    groups = {g.name: g for g in diagnose(TWO).groups()}
    assert len(groups) == 3
    for name, rows in frame.groupby(frame["Kernel Name"].str.extract(r"^(?:void )?([^(]+)\(")[0]):
        durations = [round(float(v) * 1000) for v in rows["gpu__time_duration.sum"]]  # us -> ns
        g = groups[name]
        assert (g.count, g.total_ns, g.median_ns, g.min_ns, g.max_ns) == (2, sum(durations), statistics.median(durations),
                                                                          min(durations), max(durations))
        assert [k.id for k in g.in_order()] == sorted(int(i) for i in rows["ID"])
        assert g.processes == ("2709", "2751") and g.streams == ("7",)


def test_groups_in_the_json(capsys):
    code, out, err = run_cli(capsys, "diagnose", TWO, "-f", "json")
    assert code == 0, err
    data = json.loads(out)
    assert [g["launch_ids"] for g in data["groups"]] == [[0, 3], [1, 4], [2, 5]]
    assert data["groups"][0] == {"name": "scale_add<float, 4>", "launches": 2, "launch_ids": [0, 3], "total_ns": 50560, "median_ns": 25280,
                                 "min_ns": 24928, "max_ns": 25632, "share_pct": 45.612,
                                 "verdicts": [{"verdict": "memory (l2)", "launches": 2}], "processes": ["2709", "2751"], "streams": ["7"]}
    assert {k["stream"] for k in expand(data)["kernels"]} == {"7"}
    golden_json("diagnose_two_processes.json", data)


@pytest.mark.parametrize("fmt, name", [("table", "diagnose_two_processes_table.txt"), ("markdown", "diagnose_two_processes.md")])
def test_grouped_outputs(capsys, fmt, name):
    code, out, err = run_cli(capsys, "diagnose", TWO, "-f", fmt)
    assert code == 0, err
    golden(name, out)


def test_grouped_html_has_a_row_per_kernel_with_its_launches(capsys):
    code, out, err = run_cli(capsys, "diagnose", TWO, "-f", "html")
    assert code == 0, err
    section = out[out.index('<h3 id="kernels">'):out.index("<h3>By launch</h3>")]
    golden("diagnose_two_processes_groups.html", section)
    assert section.count("<details><summary>its 2 launches</summary>") == 3


def test_one_launch_per_kernel_is_not_grouped(capsys):
    code, out, err = run_cli(capsys, "diagnose", H200 / "transpose" / "transposeNaive.raw.csv", "-f", "html")
    assert code == 0 and 'id="kernels"' not in out and "<th>stream</th>" not in out
    assert not diagnose(H200 / "transpose" / "transposeNaive.raw.csv").grouped


def _two_streams():
    """The two-process capture as if the second process had used stream 13: streams are then shown."""
    profile = load(TWO)
    frame = profile.frame.copy()
    frame.loc[frame["process_id"] == "2751", "stream"] = "13"
    profile.frame = frame
    return diagnose_profile(profile, ruleset.load(None, KERNEL))


def test_streams_are_shown_where_the_report_has_several(monkeypatch):
    monkeypatch.setenv("COLUMNS", "100")
    diagnosis = _two_streams()
    assert diagnosis.streams == ("7", "13") and diagnosis.groups()[0].streams == ("7", "13")
    table = render(diagnosis, Format.table)
    assert re.search(r"^ +0 +pid 2709 \(templated\) +7 +25\.63 us +memory \(l2\) +n/a$", table, re.M), table
    assert re.search(r"^ +3 +pid 2751 \(templated\) +13 +24\.93 us +memory \(l2\) +n/a$", table, re.M), table
    assert "(the longest of 2 launches: launch 0, pid 2709 (templated), stream 7)" in " ".join(table.split())
    markdown = render(diagnosis, Format.markdown)
    assert "| launch | process              | stream | ncu time | verdict     |" in markdown
    assert "|      3 | pid 2751 (templated) | 13     | 24.93 us | memory (l2) |" in markdown
    html = render(diagnosis, Format.html)
    assert html.count("<th>stream</th>") == 4  # the per-launch summary and the three kernels' launch tables
    # One stream: no stream column anywhere.
    single = diagnose(TWO)
    assert "stream" not in render(single, Format.table) and "| stream" not in render(single, Format.markdown)


def test_ncu_rep_streams_read_as_the_csv_does():
    rep = diagnose(DATA / "h200_ncuwrap" / "multi" / "two_processes.ncu-rep")
    assert [k.stream for k in rep.kernels] == ["7"] * 6


def test_vecadd_two_launches_of_one_kernel():
    vec = diagnose(VECADD)
    (group,) = vec.groups()
    raw = [round(float(v) * 1000) for v in pd.read_csv(VECADD, skiprows=[1], dtype=str)["gpu__time_duration.sum"]]  # us -> ns
    assert raw == [62880, 63936]
    assert group.count == 2 and group.total_ns == sum(raw) and group.median_ns == statistics.median(raw)

