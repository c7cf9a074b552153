"""Rule roles come from the rules file, not from finding ids fixed in Python (issue 21): a user's rules
that rename the stop finding, an Nsight Compute counterpart or the straggler keep every feature.
Real H200 reports; the rules are the bundled files with ids renamed (a user's edit)."""

from __future__ import annotations

import re

import pytest

from ncuwrap import ruleset
from ncuwrap.kernel.diagnosis import diagnose
from ncuwrap.render import Format, render
from ncuwrap.timeline.ranks.diagnosis import diagnose_ranks
from ncuwrap.core.rules_choice import RulesChoice
from ncuwrap.kernel.metrics import KERNEL
from tests.conftest import DATA, H200, ROOT, run_cli

AT_ROOFLINE = DATA / "h200_ncuwrap" / "diag" / "fma_many_accumulators.ncu-rep.gz"  # at_roofline fires on it
NAIVE = H200 / "transpose" / "transposeNaive.ncu-rep.gz"  # ncu's UncoalescedGlobalAccess beside uncoalesced_global_stores
SLOW = DATA / "h200_ncuwrap" / "ranks" / "slow1"


def _renamed(tmp_path, source: str, old: str, new: str, drop: str | None = None):
    """The bundled ``source`` rules with finding id ``old`` renamed ``new`` everywhere (ids, unless lists;
    not the roles), and the line ``drop`` left out."""
    text = (ROOT / "rules" / source).read_text(encoding="utf-8")
    text = "\n".join(line if line.strip().startswith("role:") else re.sub(rf"\b{old}\b", new, line)
                     for line in text.splitlines()) + "\n"
    if drop is not None:
        assert drop in text
        text = "\n".join(line for line in text.splitlines() if line.strip() != drop) + "\n"
    path = tmp_path / source
    path.write_text(text, encoding="utf-8")
    return path


def test_the_stop_finding_renamed_still_stops(tmp_path):
    bundled = diagnose(AT_ROOFLINE).kernels[0]
    assert bundled.stop is not None and bundled.stop.id == "at_roofline" and bundled.at_roofline
    rules = _renamed(tmp_path, "default.yaml", "at_roofline", "nothing_left_here")
    mine = diagnose(AT_ROOFLINE, RulesChoice(rules)).kernels[0]
    assert mine.stop is not None and mine.stop.id == "nothing_left_here" and mine.at_roofline
    assert [f.id for f in mine.issues] == [f.id for f in bundled.issues]
    # Every output says to stop exactly as with the bundled rules; only the id differs.
    ours = render(diagnose(AT_ROOFLINE, RulesChoice(rules)), Format.markdown)
    theirs = render(diagnose(AT_ROOFLINE), Format.markdown)
    assert "**Stop here:**" in ours
    assert ours.replace("nothing_left_here", "at_roofline").replace(str(rules), str(ROOT / "rules" / "default.yaml")) \
        .split("---")[0] == theirs.split("---")[0]


def test_without_the_role_no_finding_stops(tmp_path):
    # The feature follows the role: the same finding without it is an ordinary finding.
    rules = _renamed(tmp_path, "default.yaml", "at_roofline", "at_roofline",
                     drop="role: stop  # ncuwrap says 'stop here' when it fires (rules/reference.yaml: role)")
    kernel = diagnose(AT_ROOFLINE, RulesChoice(rules)).kernels[0]
    assert kernel.stop is None and "at_roofline" in kernel.finding_ids()
    assert "at_roofline" in [f.id for f in kernel.findings if not f.minor]


def test_a_renamed_counterpart_keeps_ncus_estimate_beside_it(tmp_path):
    rules = _renamed(tmp_path, "default.yaml", "uncoalesced_global_stores", "scattered_stores")
    pairs = {r.rule: (r.counterpart, r.agreement) for r in diagnose(NAIVE, RulesChoice(rules)).kernels[0].ncu_rules if r.counterpart}
    bundled = {r.rule: (r.counterpart, r.agreement) for r in diagnose(NAIVE).kernels[0].ncu_rules if r.counterpart}
    assert pairs["UncoalescedGlobalAccess"][0] == "scattered_stores"
    assert pairs["UncoalescedGlobalAccess"][1] == bundled["UncoalescedGlobalAccess"][1]
    assert ruleset.load(rules, KERNEL).ncu_counterparts["UncoalescedGlobalAccess"] == ("uncoalesced_global_loads", "scattered_stores")


def test_the_straggler_renamed_is_still_named(tmp_path):
    rules = _renamed(tmp_path, "ranks.yaml", "straggler", "slowest_rank")
    bundled, mine = diagnose_ranks(SLOW, workers=0), diagnose_ranks(SLOW, rules=RulesChoice(rules), workers=0)
    assert bundled.straggler is not None and mine.straggler == bundled.straggler
    assert "slowest_rank" in [f.id for f in mine.findings]


@pytest.mark.parametrize("edit, message", [
    (("role: stop  # ncuwrap says 'stop here' when it fires (rules/reference.yaml: role)", "role: finished"),
     "finding 'at_roofline': 'role' 'finished' is not a role of kernel rules (stop; see rules/reference.yaml)"),
    (("  - id: warp_divergence\n", "  - id: warp_divergence\n    role: stop\n"),
     "finding 'at_roofline': a second finding with role 'stop'; one finding holds each role"),
])
def test_a_wrong_role_is_one_line(tmp_path, capsys, edit, message):
    text = (ROOT / "rules" / "default.yaml").read_text(encoding="utf-8")
    assert edit[0] in text
    path = tmp_path / "rules.yaml"
    path.write_text(text.replace(edit[0], edit[1]), encoding="utf-8")
    code, out, err = run_cli(capsys, "diagnose", NAIVE, "--rules", path)
    assert (code, out) == (2, "")
    assert err.count("\n") == 1 and err.startswith(f"ncuwrap: error: {path}: ") and err.rstrip().endswith(message), err


def test_an_extension_may_take_a_role_from_the_bundled_rules(tmp_path):
    # --extend with a finding of its own holding 'stop': the bundled at_roofline keeps firing, but only
    # the user's finding stops (one finding holds each role).
    path = tmp_path / "extra.yaml"
    path.write_text("version: 1\nfindings:\n  - id: my_stop\n    under: any\n    when: \"sm_pct >= 0\"\n    role: stop\n"
                    "    severity: info\n    title: \"Stop: mine\"\n    advice: \"Mine.\"\n", encoding="utf-8")
    rules = ruleset.load(path, KERNEL, extend=True)
    assert [f.id for f in rules.findings if f.role == "stop"] == ["my_stop"]
    kernel = diagnose(AT_ROOFLINE, RulesChoice(path, extend=True)).kernels[0]
    assert kernel.stop.id == "my_stop" and "at_roofline" in kernel.finding_ids()
