"""The diagnosis document's launches shared by the report's columns (ncuwrap.kernel.launch_records) are the ones
json_delta.share_launches writes from each launch's whole record: on every kernel report in tests/data, and on
SYNTHETIC reports of many launches made from real H200 rows with their numbers varied."""

from __future__ import annotations

import csv
import dataclasses
import gzip
import io
import random
import re
from pathlib import Path

import orjson
import pytest

from ncuwrap.kernel.diagnosis import diagnose
from ncuwrap.core.rules_choice import RulesChoice
from ncuwrap.kernel.json_delta import share_launches
from ncuwrap.render import Format, render
from tests.conftest import DATA

REPORT = re.compile(r"\.(ncu-rep|raw\.csv|raw_base\.csv|details\.csv)(\.gz)?$")
REPORTS = sorted(p.relative_to(DATA) for p in DATA.rglob("*") if REPORT.search(p.name) and p.relative_to(DATA).parts[0] not in ("bad",))
# Real raw exports to vary: a full-set report of 13 library kernels (cuBLAS, cuDNN, PyTorch's own; findings fire on
# them) and a basic-set report of 3 kernels in 2 processes.
BLAS = DATA / "realworld" / "blas.raw.csv.gz"
BASIC = DATA / "h200_ncuwrap" / "multi" / "two_processes.raw.csv"


def _both(d) -> tuple[bytes, bytes]:
    """The launches as shared by columns, and as share_launches writes them from the whole records (JSON text)."""
    assert d.columns is not None
    by_columns = d.columns.shared(d.kernels)
    assert by_columns is not None, "the columns declined to share these launches"
    return orjson.dumps(by_columns), orjson.dumps(share_launches(k.document() for k in d.kernels))


def _documents(d) -> tuple[bytes, bytes]:
    """The whole document of a diagnosis whose verdicts are kept as columns, and of the same verdicts made one by one
    (a tuple: its ranking, groups and launches read from each verdict, the launches shared by share_launches)."""
    made = dataclasses.replace(d, kernels=tuple(d.kernels))
    return orjson.dumps(d.to_json()), orjson.dumps(made.to_json())


@pytest.mark.parametrize("report", REPORTS, ids=str)
def test_every_report_shares_alike(report):
    d = diagnose(DATA / report)
    by_columns, whole = _both(d)
    assert by_columns == whole
    columns, made = _documents(d)
    assert columns == made


def test_the_reports_have_later_launches():
    """The test above compares something: many of the reports have later launches of a kernel."""
    later = 0
    for report in (BLAS, BASIC, DATA / "h200_ncuwrap" / "multi" / "two_processes.ncu-rep"):
        later += sum("like" in k for k in orjson.loads(_both(diagnose(report))[0]))
    assert later >= 3


def _varied(source: Path, launches: int, seed: int) -> str:
    """SYNTHETIC: ``source``'s rows repeated to ``launches`` launches (IDs renumbered), each metric's number varied
    (half of them kept, the rest by up to +-5%, a few set to 0, -0 or n/a), a few launches given another grid.
    Nothing here was measured as such; it exercises the launches' differences."""
    opener = gzip.open if source.name.endswith(".gz") else open
    with opener(source, "rt", newline="") as fh:
        header, units, *rows = list(csv.reader(fh))
    rng = random.Random(seed)
    first_metric = header.index("CC") + 1
    grid = header.index("Grid Size")
    out = io.StringIO()
    writer = csv.writer(out, quoting=csv.QUOTE_ALL)
    writer.writerow(header)
    writer.writerow(units)
    for n in range(launches):
        row = list(rows[n % len(rows)])
        row[0] = str(n)
        if rng.random() < 0.05:
            row[grid] = "(7, 3, 1)"
        for i in range(first_metric, len(row)):
            cell = row[i]
            number = cell.replace(",", "")
            if not re.fullmatch(r"-?\d+(\.\d+)?", number) or rng.random() < 0.5:
                continue
            pick = rng.random()
            if pick < 0.01:
                row[i] = "n/a"
            elif pick < 0.02:
                row[i] = rng.choice(["0", "-0", "0.00"])
            else:
                value = float(number) * (1 + rng.uniform(-0.05, 0.05))
                decimals = len(number.split(".")[1]) if "." in number else 0
                row[i] = f"{value:,.{decimals}f}" if "," in cell else f"{value:.{decimals}f}"
        writer.writerow(row)
    return out.getvalue()


# A launch whose duration is n/a and whose estimated gain is 0 makes the evaluator's "saves under saving_minor_ns"
# test multiply infinity by 0 (numpy warns; such a finding is minor by its gain alone): the CLI silences the warning.
@pytest.mark.filterwarnings("ignore:invalid value encountered in multiply:RuntimeWarning")
@pytest.mark.parametrize("source,seed", [(BLAS, 1), (BLAS, 2), (BASIC, 3)], ids=["blas-1", "blas-2", "basic-3"])
def test_varied_launches_share_alike(tmp_path, source, seed):
    report = tmp_path / "varied.raw.csv"
    report.write_text(_varied(source, 240, seed), encoding="utf-8")
    d = diagnose(report)
    by_columns, whole = _both(d)
    assert by_columns == whole
    columns, made = _documents(d)
    assert columns == made
    # The reports meant for people read the verdicts (made from the columns) and their groups alike.
    one_by_one = dataclasses.replace(d, kernels=tuple(d.kernels))
    for fmt in (Format.markdown, Format.table):
        assert render(d, fmt) == render(one_by_one, fmt)
    # What was compared: later launches that differ in metrics, texts by their digits, and launches whose metrics
    # known differ from their like's (a metric of n/a: `metrics` given whole).
    launches = orjson.loads(by_columns)
    later = [k for k in launches if "like" in k]
    assert len(later) > 200
    pointers = [p for k in later for p in k["differs"]]
    assert sum(p.startswith("/compared/") for p in pointers) > 100
    assert any(k.get("digits") for k in later)
    assert "/metrics" in pointers or source is BASIC


def test_replaced_launches_are_shared_whole():
    """A diagnosis whose launches were replaced (a test, a caller picking some) is no longer its columns': its
    document shares the launches it has, from their whole records."""
    d = diagnose(BASIC)
    picked = dataclasses.replace(d, kernels=d.kernels[1:])
    assert d.columns.shared(picked.kernels) is None
    assert orjson.dumps(picked.to_json()["kernels"]) == orjson.dumps(share_launches(k.document() for k in picked.kernels))


# A rule of the user's whose evidence is a text of the report: the kernel's name (SYNTHETIC: "=", the repeat mark).
NAMED = """
version: 1
findings:
  - id: named_mark
    under: any
    when: "kernel_name == '='"
    severity: low
    title: "Named {kernel_name}"
    evidence: [kernel_name, duration_ns]
    advice: "None."
"""


def test_a_report_text_of_the_repeat_mark(tmp_path):
    """A finding whose evidence holds "=" (the repeat mark itself, here a kernel's name): its launches are compared
    plain, as share_launches compares them."""
    rows = list(csv.reader(io.StringIO(_varied(BASIC, 12, 4))))
    name = rows[0].index("Kernel Name")
    for row in rows[2:]:
        row[name] = "="
    out = io.StringIO()
    csv.writer(out, quoting=csv.QUOTE_ALL).writerows(rows)
    report, rules = tmp_path / "marks.raw.csv", tmp_path / "named.yaml"
    report.write_text(out.getvalue(), encoding="utf-8")
    rules.write_text(NAMED, encoding="utf-8")
    d = diagnose(report, RulesChoice(rules, extend=True))
    assert any(f.id == "named_mark" for k in d.kernels for f in k.findings)
    assert d.columns.shared(d.kernels) is None
    doc = d.to_json()
    assert any(k.get("plain") for k in doc["kernels"])
    assert orjson.dumps(doc["kernels"]) == orjson.dumps(share_launches(k.document() for k in d.kernels))
