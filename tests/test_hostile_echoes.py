"""Every text that reaches the terminal is escaped (issue 22): the name of a rules file and the metric
names in it, the path after "wrote", a verdict text from a rules file in the summary table, and what
rich would read as markup. The hostile names are SYNTHETIC; the reports are real H200 exports."""

from __future__ import annotations

from pathlib import Path

from conftest import run_cli

DATA = Path(__file__).resolve().parent / "data"
ROOT = Path(__file__).resolve().parent.parent
EVIL = "\x1b]0;pwned\x07\x1b[2J\u202e"


def shown_not_sent(text: str) -> None:
    assert "\x1b" not in text and "\x07" not in text and "\u202e" not in text


def test_rules_check_escapes_the_file_name(tmp_path, capsys):
    rules = tmp_path / f"rules{EVIL}.yaml"
    rules.write_text((ROOT / "rules" / "reference.yaml").read_text())
    code, out, err = run_cli(capsys, "rules", "check", rules)
    assert code == 0, err
    shown_not_sent(out)
    assert "\\x1b]0;pwned\\x07" in out


def test_rules_metrics_escapes_raw_metric_names(tmp_path, capsys):
    rules = tmp_path / "rules.yaml"
    text = (ROOT / "rules" / "reference.yaml").read_text()
    rules.write_text(text.replace('when: "dram_pct >= 50 and gld_waste_share > 0.1"',
                                  'when: "dram_pct >= 50 and metric(\'evil__x\\\\u001b]0;pwned\\\\u0007.sum\') > 0.1"'))
    code, out, err = run_cli(capsys, "rules", "metrics", "--rules", rules)
    assert code == 0, err
    shown_not_sent(out)
    assert "evil__x\\x1b]0;pwned\\x07.sum" in out


def test_wrote_escapes_the_output_path(tmp_path, capsys):
    target = tmp_path / f"out{EVIL}.json"
    code, out, err = run_cli(capsys, "diagnose", DATA / "h200" / "vecadd" / "bench_add.raw.csv", "-f", "json", "-o", target)
    assert code == 0, err
    shown_not_sent(err)
    assert err.startswith("wrote ") and "\\x1b]0;pwned\\x07" in err


def test_the_summary_table_escapes_a_verdict_from_a_rules_file(tmp_path, capsys):
    rules = tmp_path / "rules.yaml"
    text = (ROOT / "rules" / "reference.yaml").read_text()
    rules.write_text(text.replace("verdict: memory", 'verdict: "mem[bold red]x\\u001b[31m"'))
    code, out, err = run_cli(capsys, "diagnose", DATA / "h200" / "vecadd" / "bench_add.raw.csv", "--rules", rules)
    assert code == 0, err
    shown_not_sent(out)
    summary = out.split("\n\n")[1]
    assert "mem[bold red]x\\x1b[31m" in summary  # shown as written: not read as rich markup


def _capture(tmp_path: Path) -> Path:
    import gzip

    out = tmp_path / "small_launch.sqlite"
    out.write_bytes(gzip.decompress((DATA / "h200_ncuwrap" / "steps" / "small_launch.sqlite.gz").read_bytes()))
    return out


def test_step_range_is_re2_with_the_rules_of_k(tmp_path, capsys):
    """--step-range runs on NVTX names from the capture: RE2 (linear time), refusing what -k refuses."""
    code, out, err = run_cli(capsys, "timeline", _capture(tmp_path), "--step-range", "(?=step)")
    assert (code, out) == (2, "")
    assert err == ("ncuwrap: error: --step-range '(?=step)': not a valid regular expression (invalid perl operator: (?=); "
                   "quote it or escape special characters (RE2 syntax: no lookarounds or backreferences)\n")
    code, out, err = run_cli(capsys, "timeline", _capture(tmp_path), "--step-range", "x" * 600)
    assert code == 2 and "the regular expression is 600 characters long (at most 512)" in err


def test_step_range_with_a_group_warns_nothing_and_finds_the_same_steps(tmp_path, capsys):
    import json
    import warnings

    capture = _capture(tmp_path)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # pandas' "has match groups" UserWarning would fail the test
        code, grouped, err = run_cli(capsys, "timeline", capture, "--step-range", "(st)ep", "-f", "json")
    assert code == 0 and "match groups" not in err, err
    code, plain, err = run_cli(capsys, "timeline", capture, "--step-range", "step", "-f", "json")
    assert code == 0, err
    assert json.loads(grouped)["steps"] == json.loads(plain)["steps"] and json.loads(plain)["steps"]["count"] > 0
