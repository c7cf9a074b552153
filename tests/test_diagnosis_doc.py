"""The diagnosis document v3 (issue 23): a kernel's later launches say only what they differ in, the v2
document comes back from it exactly, and `compare` reads documents of either version as it reads reports.

The v2 documents in tests/data/diagnosis_v2 are what ncuwrap wrote (schema v2) for these real H200
reports before v3; each is the same diagnosis as today's v3 document of the report."""

from __future__ import annotations

import json

import pytest

from ncuwrap.diagnosis_doc import expand, read
from ncuwrap.json_delta import expand_launches, share_launches
from tests.conftest import DATA, H200, run_cli

V2 = DATA / "diagnosis_v2"
TWO = DATA / "h200_ncuwrap" / "multi" / "two_processes.raw.csv"  # 3 kernels x 2 processes: launches 3-5 repeat 0-2
NAIVE, PADDED = H200 / "transpose" / "transposeNaive.ncu-rep", H200 / "transpose" / "transposePadded.ncu-rep"


def _json(capsys, report) -> tuple[dict, str]:
    code, out, err = run_cli(capsys, "diagnose", report, "-f", "json")
    assert code == 0, err
    return json.loads(out), out


@pytest.mark.parametrize("report, recorded", [
    (TWO, "diagnose_two_processes.json"),
    (NAIVE, "diagnose_transposeNaive_rep.json"),
    (H200 / "transpose" / "transposeShared.raw.csv", "diagnose_transposeShared_raw.json"),
])
def test_expanding_v3_gives_the_v2_document_v2_wrote(capsys, report, recorded):
    doc, _ = _json(capsys, report)
    assert doc["schema"] == "ncuwrap.diagnosis/v3"
    assert json.dumps(expand(doc), indent=2) + "\n" == (V2 / recorded).read_text(encoding="utf-8")


def test_later_launches_of_a_kernel_say_only_what_differs(capsys):
    doc, text = _json(capsys, TWO)
    first, later = doc["kernels"][:3], doc["kernels"][3:]
    assert [k["name"] for k in first] == ["scale_add<float, 4>", "scale_add<double, 1>", "ops::strided_copy<8>"]
    assert [(k["id"], k["like"]) for k in later] == [(3, 0), (4, 1), (5, 2)]
    assert set(later[0]) == {"id", "like", "differs"}
    # The other process's launch of scale_add: its own time, throughputs and process; names, advice and
    # the rest shared (its "why" quotes its throughputs, so it is its own).
    assert later[0]["differs"]["/duration_ns"] == 24928 and later[0]["differs"]["/process/id"] == "2751"
    assert {p.split("/")[1] for k in later for p in k["differs"]} == {"chart", "compared", "decision_path", "duration_ns", "effects", "metrics",
                                                                      "pipe_pct", "process", "why"}
    whole = json.loads((V2 / "diagnose_two_processes.json").read_text(encoding="utf-8"))["kernels"]
    sizes = [(len(json.dumps(k)), len(json.dumps(whole[k["id"]]))) for k in later]
    assert all(own < whole_v2 / 3 for own, whole_v2 in sizes), sizes


def test_pointers_escape_and_lists_of_another_length_are_whole():
    first = {"id": 0, "name": "k", "m": {"a/b": 1, "c~d": 2.0}, "xs": [1, 2], "ys": [{"v": 1}], "t": 1}
    later = {"id": 1, "name": "k", "m": {"a/b": 3, "c~d": 2.0}, "xs": [1, 2, 3], "ys": [{"v": 2}], "t": 1.0}
    shared = share_launches([first, later])
    assert shared[1] == {"id": 1, "like": 0, "differs": {"/m/a~1b": 3, "/xs": [1, 2, 3], "/ys/0/v": 2, "/t": 1.0}}
    assert json.dumps(expand_launches(json.loads(json.dumps(shared)))) == json.dumps([first, later])  # 1.0 stays 1.0
    other = {"id": 2, "name": "k", "extra": 1}
    assert expand_launches(share_launches([first, other])) == [first, other]


@pytest.mark.parametrize("fmt", ["table", "json", "markdown", "html"])
def test_compare_of_two_documents_is_compare_of_their_reports(capsys, tmp_path, fmt):
    paths = []
    for report in (NAIVE, PADDED):
        out = tmp_path / f"{report.stem}.json"
        code, _, err = run_cli(capsys, "diagnose", report, "-f", "json", "-o", out)
        assert code == 0, err
        paths.append(out)
    pair = ("--pair", "transposeNaive=transposePadded", "-f", fmt)
    code, from_docs, err = run_cli(capsys, "compare", *paths, *pair)
    assert code == 0, err
    code, from_reports, err = run_cli(capsys, "compare", NAIVE, PADDED, *pair)
    assert code == 0, err
    assert from_docs == from_reports
    assert "6.34x" in from_docs or fmt == "json"  # the estimate of what fixing the stores buys, read back from the effects


def test_compare_reads_the_v2_documents_ncuwrap_wrote(capsys):
    # A v2 document holds no effects nor the metrics only a comparison reads: the pairs, verdicts and
    # findings are those of the reports; the evidence of a resolved finding and the estimate are not known.
    code, out, err = run_cli(capsys, "compare", V2 / "diagnose_transposeNaive_rep.json", V2 / "diagnose_transposeNaive_rep.json", "-f", "json")
    assert code == 0, err
    doc = json.loads(out)
    (pair,) = doc["pairs"]
    assert pair["resolved"] == [] and pair["introduced"] == [] and set(pair["persisting"]) >= {"uncoalesced_global_stores"}
    d = read(V2 / "diagnose_two_processes.json")
    assert [k.id for k in d.kernels] == list(range(6)) and d.kernels[3].name == "scale_add<float, 4>" and d.kernels[3].effects is None


@pytest.mark.parametrize("text, says", [
    ("{", "not valid JSON"),
    ('{"schema": "ncuwrap.compare/v1"}', "not an ncuwrap diagnosis (schema 'ncuwrap.compare/v1'"),
    ('[1, 2]', "not an ncuwrap diagnosis (schema None"),
    ('{"schema": "ncuwrap.diagnosis/v3", "source": {}}', "a malformed ncuwrap.diagnosis/v3 document"),
])
def test_a_bad_document_is_one_line(capsys, tmp_path, text, says):
    bad = tmp_path / "bad.json"
    bad.write_text(text, encoding="utf-8")
    code, out, err = run_cli(capsys, "compare", bad, NAIVE)
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1
    assert err.startswith(f"ncuwrap: error: {bad}: {says}") and "diagnose --format json" in err
