"""Bad input ends in one line naming the file and the fix, exit code 2, no traceback, nothing overwritten."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import DATA, H200, run_cli

BAD = DATA / "bad"


@pytest.mark.parametrize(
    "report, message",
    [
        (BAD / "missing.ncu-rep", r"missing.ncu-rep: no such file; check the path"),
        (BAD / "empty.ncu-rep", r"empty.ncu-rep: the file is empty"),
        (BAD / "garbage.ncu-rep", r"garbage.ncu-rep: not an Nsight Compute report \(bad file header\)"),
        (BAD / "fake_header.ncu-rep", r"fake_header.ncu-rep: the report holds no profiled kernel"),
        (BAD / "truncated.ncu-rep", r"truncated.ncu-rep: the report is truncated or corrupt"),
        (BAD / "truncated_quote.raw.csv", r"truncated_quote.raw.csv: the CSV is truncated \(it ends inside a quoted field\); export it again"),
        (BAD / "truncated_row.raw.csv", r"truncated_row.raw.csv: the CSV is truncated \(last row incomplete\)"),
        (BAD / "not_ncu.csv", r"not_ncu.csv: not an Nsight Compute CSV export"),
        (H200 / "nsys" / "bench_st_cuda_api_sum.csv", r"bench_st_cuda_api_sum.csv: not an Nsight Compute CSV export"),
        (BAD / "README.md", r"README.md: unknown file type; give a \.ncu-rep, an ncu CSV export \(\.csv or \.csv\.gz\), an nsys capture "
                                 r"\(\.nsys-rep, \.sqlite or \.sqlite\.gz\), or a PyTorch profiler trace \(\.json or \.json\.gz\)$"),
        (DATA / "diagnosis_v2" / "diagnose_two_processes.json", r"diagnose_two_processes.json: a diagnosis document, not a kernel report; 'ncuwrap compare'"),
        (BAD, r"bad: is a folder"),
    ],
)
def test_bad_report(capsys, tmp_path, report, message):
    out_file = tmp_path / "keep.json"
    out_file.write_text("previous content")
    # --force: the output may be replaced, but only by a complete result, never by a failed run.
    code, out, err = run_cli(capsys, "diagnose", report, "-f", "json", "-o", out_file, "--force")
    assert code == 2
    assert out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith(f"ncuwrap: error: {report}"), lines[0]
    import re

    assert re.search(message, lines[0]), lines[0]
    assert "Traceback" not in err
    assert out_file.read_text() == "previous content"


@pytest.mark.parametrize(
    "rules, message",
    [
        ("rules_not_yaml.yaml", r"not valid YAML at line \d+"),
        ("rules_no_version.yaml", r"unsupported rules version None; this ncuwrap reads version 1"),
        ("rules_eval_attempt.yaml", r"bound\[0\] \(memory\): only max\(\), min\(\), abs\(\), fallback\(\) and metric"),
        ("rules_python_tag.yaml", r"not valid YAML"),
        ("rules_unknown_metric.yaml", r"finding 'typo': unknown metric 'dram_pcnt'"),
        ("rules_duplicate_id.yaml", r"finding 'twice': duplicate id"),
        ("rules_bad_severity.yaml", r"finding 'loud'\.severity: 'critical' is not one of high, medium, low, minor, info$"),
        ("rules_wrong_kind.yaml", r"a 'timeline' rules file where 'kernel' rules are needed"),
        ("no_such_rules.yaml", r"rules file not found"),
        ("rules_bound_not_a_list.yaml", r"bound: expected a list of branches, got the number 5; see rules/reference\.yaml$"),
        ("rules_text_arithmetic.yaml", r"bound\[0\] \(memory\): 'memory_unit' is text: compare it with == or !="),
        ("rules_empty_min.yaml", r"min\(\) needs at least one argument"),
        ("rules_unknown_placeholder.yaml", r"finding 'busy': placeholder \{dram_pcnt\} names no metric"),
        ("rules_no_bound.yaml", r"no 'bound' branches, so no kernel could get a verdict"),
        ("rules_estimate_unknown_unit.yaml", r"finding 'waste'\.estimate\.removes\.hbm: unit 'hbm' is not in 'units' \(\['dram'\]\)"),
        ("rules_estimate_without_units.yaml",
         r"finding 'waste'\.estimate: needs the top-level 'units' \(each unit and the metric of its utilization\), e\.g\. units: \{dram: dram_pct\}$"),
        ("rules_bad_borderline.yaml", r"borderline: expected a mapping with 'when' \(a condition\) and 'note' \(text\), got the text"),
    ],
)
def test_bad_rules(capsys, tmp_path, rules, message):
    pwned = Path("/tmp/ncuwrap-pwned")
    pwned.unlink(missing_ok=True)
    code, out, err = run_cli(capsys, "diagnose", H200 / "transpose" / "transposeNaive.raw.csv", "--rules", BAD / rules)
    assert code == 2
    line = err.strip()
    assert "\n" not in line and "Traceback" not in err
    assert line.startswith(f"ncuwrap: error: {BAD / rules}: ")
    import re

    assert re.search(message, line), line
    assert not pwned.exists(), "a rules file ran code"


def test_output_folder_missing(capsys, tmp_path):
    code, _, err = run_cli(capsys, "diagnose", H200 / "transpose" / "copyKernel.raw.csv", "-o", tmp_path / "nope" / "x.json")
    assert code == 2 and "does not exist" in err and "Traceback" not in err


def test_missing_ncu_report_module_names_the_fix(monkeypatch, capsys):
    import builtins

    real_import = builtins.__import__

    def no_ncu_report(name, *args, **kwargs):
        if name == "ncu_report":
            raise ImportError("No module named 'ncu_report'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_ncu_report)
    monkeypatch.setattr("importlib.import_module", lambda name: no_ncu_report(name))
    monkeypatch.setenv("PATH", "/nonexistent")
    code, _, err = run_cli(capsys, "diagnose", H200 / "transpose" / "copyKernel.ncu-rep.gz")
    assert code == 2
    assert "the ncu_report module is missing; run 'pip install ncu-report' or pass --ncu" in err


def test_invalid_kernel_regex(capsys):
    code, out, err = run_cli(capsys, "diagnose", H200 / "vecadd" / "bench_add.raw.csv", "--kernel", "[")
    assert code == 2 and out == ""
    assert err.strip() == ("ncuwrap: error: --kernel '[': not a valid regular expression (missing ]: [); quote it or escape special characters "
                           "(RE2 syntax: no lookarounds or backreferences)")
