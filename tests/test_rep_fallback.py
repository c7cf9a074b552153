"""What the .ncu-rep file reader does with what it does not expect (issue 52): a kernel with C linkage (an empty
demangled name) is named as NVIDIA's reader names it; a launch laid out otherwise is read by NVIDIA's reader,
that launch alone; every fallback is a note in the outputs and, under --debug, what the reader met on stderr;
and no report in tests/data falls back at all.

The variants are SYNTHETIC: real reports from tests/data with their launches edited (tests/rep_variants.py).
NVIDIA's reader runs only in forked children here (``ncu_rep_reader.start``): run in this process, it leaves native
state that a child forked later can hang on."""

from __future__ import annotations

import json

import pytest

from ncuwrap.core.errors import InputError
from ncuwrap.kernel.reading import disassembly, ncu_rep_reader, ncu_rep_format
from ncuwrap.kernel.reading.model import ReadFallback
from tests import rep_variants as variants
from tests.conftest import DATA, H200, ROOT, plain_report, run_cli
from tests.ncu_rep_compare import by_ncu_report, same_profile

pytest.importorskip("ncu_report")

TWO_PROCESSES = DATA / "h200_ncuwrap" / "multi" / "two_processes.ncu-rep"  # 6 launches, 2 processes, 3 kernels
NAIVE = H200 / "transpose" / "transposeNaive.ncu-rep.gz"
WITH_COUNTERS = DATA / "h200_ncuwrap" / "source" / "transpose-naive.ncu-rep.gz"  # SourceCounters, imported sources
REPORTS = [*sorted(p for p in [*DATA.rglob("*.ncu-rep"), *DATA.rglob("*.ncu-rep.gz")] if "bad" not in p.parts),
           ROOT / "ncuwrap" / "samples" / "transpose_h200.ncu-rep.gz"]


def _by_ncu_report(path):
    """The Profile NVIDIA's reader gives for the whole report (the file reader told the file is not for it)."""
    profile = by_ncu_report(path)
    assert profile.fallback == ReadFallback((), ("told to",), len(profile.frame))
    return profile


def test_no_report_here_falls_back():
    """Every launch of every report in tests/data (and the bundled sample) is read by the file reader: none is left to
    NVIDIA's reader, and no file is. The real reports of every shape issue 52 lists are among them
    (tests/test_rep_shapes.py reads each as the command does); a report added to tests/data that falls back fails here."""
    import tempfile
    from pathlib import Path

    from tests.test_rep_shapes import SHAPES

    assert len(REPORTS) >= 40 and {report.name for report in SHAPES} <= {report.name for report in REPORTS}
    tool = disassembly.nvdisasm()
    fallen = {}
    with tempfile.TemporaryDirectory() as folder:
        for report in REPORTS:
            try:
                parsed = list(ncu_rep_reader._parse(plain_report(report, Path(folder)), None, tool, None))
            except ncu_rep_format.FormatError as exc:  # the whole file left to NVIDIA's reader
                fallen[str(report)] = f"the whole report: {exc}"
                continue
            assert parsed, report
            unread = {p.index: p.unread for p in parsed if p.unread is not None}
            if unread:
                fallen[str(report)] = unread
    assert fallen == {}


@pytest.mark.parametrize("names, shown", [
    ({variants.DEMANGLED: "", variants.MANGLED: "triton_poi_fused_add_0", variants.FUNCTION: "triton_poi_fused_add_0"}, "triton_poi_fused_add_0"),
    ({variants.DEMANGLED: "", variants.FUNCTION: ""}, "_Z14transposeNaivePfPKf"),  # no function name either: the mangled one
], ids=["extern-c", "mangled"])
def test_a_kernel_with_c_linkage_is_named_by_its_mangled_name(tmp_path, names, shown):
    """A kernel with C linkage (Triton's, extern "C") has an empty demangled name in the file: ncu_report names it by its
    mangled name (and its function name, where empty, too); so does the file reader, and reads it whole."""
    path = tmp_path / "c.ncu-rep"
    variants.rewrite(plain_report(NAIVE, tmp_path), path, lambda index, launch: variants.with_names(launch, names))
    (launch,) = ncu_rep_format.read(path, frozenset())
    assert (launch.demangled, launch.function) == (shown, names.get(variants.FUNCTION) or launch.mangled)
    new = ncu_rep_reader.start(path).result()
    assert new.fallback is None
    assert new.frame[["name", "display_name"]].values.tolist() == [[shown, shown]]
    assert same_profile(new, _by_ncu_report(path))


def test_a_kernel_with_c_linkage_keeps_its_source_counters(tmp_path):
    """Its instruction table, lines and SASS read as NVIDIA's reader reads them, the source texts too."""
    path = tmp_path / "c.ncu-rep"
    variants.rewrite(plain_report(WITH_COUNTERS, tmp_path), path, lambda index, launch: variants.with_names(launch, {variants.DEMANGLED: ""}))
    new = ncu_rep_reader.start(path).result()
    assert new.fallback is None and new.sources and new.frame["display_name"].str.startswith("_Z").all()
    assert same_profile(new, _by_ncu_report(path))


@pytest.mark.parametrize("parsers", [1, 2])
def test_a_launch_laid_out_otherwise_is_read_by_ncu_report_alone(tmp_path, parsers):
    """A rule message of a type the file reader has not seen, in launch 2 of 6: that launch alone is read by NVIDIA's
    reader (from a copy of the report holding it), the others by the file reader; the Profile is NVIDIA's reader's."""
    path = tmp_path / "rule.ncu-rep"
    variants.rewrite(TWO_PROCESSES, path, lambda index, launch: variants.with_rule_message_type(launch, 3) if index == 2 else launch)
    read = ncu_rep_format.read(path, frozenset())
    assert [type(launch).__name__ for launch in read] == ["Launch"] * 2 + ["Unread"] + ["Launch"] * 3
    assert read[2] == ncu_rep_format.Unread(2, "a rule message of type 3")
    new = ncu_rep_reader.start(path, parsers=parsers).result()
    assert new.fallback == ReadFallback((2,), ("a rule message of type 3",), 6)
    assert same_profile(new, _by_ncu_report(path))


def test_a_launch_neither_reader_can_name_is_an_input_error(tmp_path):
    """No name at all (a damaged launch): left to NVIDIA's reader, which says the report is corrupt, as before."""
    path = tmp_path / "nameless.ncu-rep"
    variants.rewrite(TWO_PROCESSES, path, lambda index, launch: variants.with_names(launch, {variants.DEMANGLED: "", variants.MANGLED: ""})
                     if index == 4 else launch)
    assert ncu_rep_format.read(path, frozenset())[4] == ncu_rep_format.Unread(4, "a launch without a name")
    with pytest.raises(InputError, match=r"nameless.ncu-rep: the report is truncated or corrupt \(launch 4 has no name or metrics\)"):
        ncu_rep_reader.start(path).result()


def test_a_launch_that_does_not_parse_is_unread_and_the_next_is_read(tmp_path):
    path = tmp_path / "bad.ncu-rep"
    variants.rewrite(TWO_PROCESSES, path, lambda index, launch: b"\xff\xff" if index == 1 else launch)
    read = ncu_rep_format.read(path, frozenset())
    assert isinstance(read[1], ncu_rep_format.Unread) and "a launch does not parse" in read[1].why
    assert [launch.index for launch in read if isinstance(launch, ncu_rep_format.Launch)] == [0, 2, 3, 4, 5]


def test_a_module_whose_source_data_is_laid_out_otherwise_leaves_its_launches(monkeypatch):
    """Every launch of that module is unread, not only the first, which met it (every report here has one module:
    two_processes' 6 launches)."""
    calls = []

    def refuse(self, at, data, reference=None, process=None):
        calls.append(reference)
        raise ncu_rep_format.FormatError("laid out otherwise")

    monkeypatch.setattr(ncu_rep_format._Modules, "_take", refuse)
    read = ncu_rep_format.read(TWO_PROCESSES, frozenset())
    assert read == [ncu_rep_format.Unread(i, "its module's SourceData: laid out otherwise") for i in range(6)]
    assert len(calls) == 1  # met once, for the first launch; the others know it


def test_every_fallback_is_a_note_in_every_format_and_debug_says_why(tmp_path, capsys):
    path = tmp_path / "rule.ncu-rep"
    variants.rewrite(TWO_PROCESSES, path, lambda index, launch: variants.with_rule_message_type(launch, 3) if index in (1, 2) else launch)
    note = ("launches 1, 2 (2 of 6) read by NVIDIA's ncu_report: ncuwrap's own reader did not expect how the report holds them "
            "(--debug says what)")
    for fmt in ("table", "markdown", "json", "html"):
        out = tmp_path / f"out.{fmt}"
        code, _, err = run_cli(capsys, "diagnose", path, "-f", fmt, "-o", out, "--force")
        text = out.read_text()
        assert code == 0 and "debug" not in err, (fmt, err)
        if fmt == "json":
            assert json.loads(text)["notes"] == [note]
        else:
            shown = {"html": note.replace("'", "&#39;"), "markdown": note.replace("_", "\\_")}.get(fmt, note)
            assert " ".join(text.split()).count(shown) == 1, fmt
    code, _, err = run_cli(capsys, "--debug", "diagnose", path, "-f", "json", "-o", tmp_path / "out.json", "--force")
    assert code == 0
    assert err.splitlines()[:2] == [f"ncuwrap: debug: {path}: launch {i} read by NVIDIA's ncu_report: a rule message of type 3" for i in (1, 2)]
    code, _, err = run_cli(capsys, "diagnose", path, "-f", "json", "-o", tmp_path / "again.json", "--force")
    assert "debug" not in err  # the next command without --debug says nothing of it
    code, out, _ = run_cli(capsys, "compare", tmp_path / "out.json", path, "-f", "json")
    assert json.loads(out)["notes"] == [f"BEFORE: {note}", f"AFTER: {note}"]  # the document carries its note


def test_a_report_read_wholly_by_ncu_report_says_so(monkeypatch, capsys, tmp_path):
    def refuse(*args, **kwargs):
        raise ncu_rep_format.FormatError("range or command list results, or graph viewer data")

    monkeypatch.setattr(ncu_rep_reader, "_collect_file", refuse)
    code, out, err = run_cli(capsys, "--debug", "diagnose", NAIVE, "-f", "json")
    assert code == 0
    assert json.loads(out)["notes"] == ["read by NVIDIA's ncu_report: ncuwrap's own reader did not expect how this report is laid out (more "
                                        "time and memory; --debug says what)"]
    assert f"ncuwrap: debug: {NAIVE}: read wholly by NVIDIA's ncu_report: range or command list results, or graph viewer data" in err.splitlines()
