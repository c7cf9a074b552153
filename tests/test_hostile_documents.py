"""Diagnosis documents handed to 'compare' (issue 42): read through a schema. Each input is a real document
(the v4 golden of transposeNaive, the v2 one of transposeShared, tests/data/diagnosis_v2) with one field
rewritten in tmp_path.

What must hold: a field of the wrong type is one line naming the document and the field, exit 2 (it was
an internal error: AttributeError, TypeError); `rules.path` never leads out of the bundled rules; a value
nested deeper than the JSON output writes is refused when read; expanding `like` records shares what a
launch does not change (a launch like a record of 60,000 metrics, 3,000 times over, grew to gigabytes)
and copies no more than a budget; what a document says reaches no output unchecked (a severity outside
the rules' own, a rules version that is not a number).
"""

from __future__ import annotations

import copy
import json
import os
import tracemalloc

import pytest

from ncuwrap.kernel import document as diagnosis_doc
from ncuwrap.core.errors import InputError
from ncuwrap.core.resources import data_dir
from tests.conftest import DATA, GOLDEN, H200, run_cli

V4_DOC = GOLDEN / "diagnose_transposeNaive_rep.json"
V2_DOC = DATA / "diagnosis_v2" / "diagnose_transposeShared_raw.json"
NAIVE = H200 / "transpose" / "transposeNaive.raw.csv"
FIX = "pass a document written by 'ncuwrap diagnose --format json'"


def _doc(source=V4_DOC) -> dict:
    return json.loads(source.read_text(encoding="utf-8"))


def _write(tmp_path, doc: dict, name: str = "doc.json"):
    path = tmp_path / name
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path


def _one_line(capsys, path, says: str) -> None:
    code, out, err = run_cli(capsys, "compare", path, NAIVE, "-f", "json")
    assert (code, out) == (2, "") and len(err.splitlines()) == 1, err
    assert err == f"ncuwrap: error: {path}: {says}; {FIX}\n"


def _set(doc: dict, where: str, value) -> dict:
    node = doc
    keys = where.split(".")
    for key in keys[:-1]:
        node = node[int(key)] if isinstance(node, list) else node[key]
    node[keys[-1] if isinstance(node, dict) else int(keys[-1])] = value
    return doc


@pytest.mark.parametrize("where, value, says", [
    ("roles", ["stop"], "roles: expected a mapping, found a list"),
    ("kernels.0.name", ["k"], "kernels[0].name: expected a text, found a list"),
    ("rules", "ncuwrap:rules/default.yaml", "rules: expected a mapping, found the text 'ncuwrap:rules/default.yaml'"),
    ("kernels.0.compared.dram_pct", [1, 2], "kernels[0].compared.dram_pct: expected a number, a text or null, found a list"),
    ("kernels.0.findings.0.severity", "<img src=x onerror=alert(1)>\n# owned",
     "kernels[0].findings[0].severity: expected one of high, medium, low, minor, info, found the text '<img src=x onerror=alert(1)>\\n# owned'"),
    ("rules.version", "1\u202e\n# heading", "rules.version: expected a whole number, found the text '1\\u202e\\n# heading'"),
])
def test_a_field_of_the_wrong_type_is_one_line(capsys, tmp_path, where, value, says):
    doc = _doc()
    _set(doc, where, value)
    _one_line(capsys, _write(tmp_path, doc), says)


def test_rules_path_never_leaves_the_package(capsys, tmp_path):
    """A v2 document names its rules; 'ncuwrap:rules/../../x.yaml' read x.yaml (any file) as rules, and a
    broken one was reported under its own name. Now only a bundled rules file is looked up, by name."""
    evil = tmp_path / "evil.yaml"
    evil.write_text("version: [not, a, rules, file\n", encoding="utf-8")
    doc = _doc(V2_DOC)
    doc["rules"]["path"] = "ncuwrap:rules/" + os.path.relpath(evil, data_dir("rules"))
    assert doc["rules"]["path"].startswith("ncuwrap:rules/../")
    code, out, err = run_cli(capsys, "compare", _write(tmp_path, doc), NAIVE, "-f", "json")
    assert (code, err) == (0, "") and "evil.yaml" not in out
    assert json.loads(out)["schema"] == "ncuwrap.compare/v1"


def test_a_value_deeper_than_the_output_writes(capsys, tmp_path):
    """300 levels (orjson reads 1,024 and writes 254): the compare document failed to be written."""
    doc = _doc()
    deep = 1.0
    for _ in range(300):
        deep = [deep]
    doc["kernels"][0]["effects"] = {"deep": deep}
    _one_line(capsys, _write(tmp_path, doc), "kernels[0].effects.deep" + ".0" * 3 + ": nested deeper than 4 levels")


def _many_launches(launches: int, metrics: int, change: str) -> dict:
    """The golden's launch with ``metrics`` more metrics, then ``launches`` launches like it, each differing
    at ``change`` (a v4 document as 'ncuwrap diagnose' writes one: synthetic)."""
    doc = _doc()
    first = doc["kernels"][0]
    first["metrics"].update({f"synthetic__m{i}": float(i) for i in range(metrics)})
    doc["kernels"] = [first] + [{"id": i, "like": i - 1, "differs": {change: float(i)}} for i in range(1, launches + 1)]
    return doc


def test_launches_share_what_they_do_not_change(tmp_path):
    """2,999 launches like one record of 60,000 metrics, each with its own duration: every launch was a
    deep copy of the record before (gigabytes); now each shares its metrics with the one before."""
    path = _write(tmp_path, _many_launches(2_999, 60_000, "/duration_ns"))
    tracemalloc.start()
    try:
        diagnosis = diagnosis_doc.read(path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert len(diagnosis.kernels) == 3_000 and diagnosis.kernels[-1].duration_ns == 2_999.0
    assert diagnosis.kernels[5].display_metrics is diagnosis.kernels[6].display_metrics
    assert peak < 200 << 20, f"{peak >> 20} MiB"


def test_expansion_has_a_budget(tmp_path):
    """The same launches each changing a metric: every launch needs a copy of the 60,000 (180 million
    values for a 1.5 MB document), refused in one line."""
    path = _write(tmp_path, _many_launches(2_999, 60_000, "/metrics/synthetic__m7"))
    with pytest.raises(InputError, match=r"copy more values than allowed, far more than a diagnosis of this size holds"):
        diagnosis_doc.read(path)


def test_the_real_documents_read_as_before():
    """Shared parts change nothing a reader sees: the golden v4 documents expand to what v2 wrote."""
    for name in ("diagnose_two_processes.json", "diagnose_transposeNaive_rep.json"):
        doc = _doc(GOLDEN / name)
        before = copy.deepcopy(doc)
        assert json.dumps(diagnosis_doc.expand(doc)) == json.dumps(diagnosis_doc.expand(before))
        assert doc == before  # reading changed nothing in the document
        assert diagnosis_doc.read(GOLDEN / name).kernels
