"""Issue 40, item 5: the rules engine knows no domain. Each catalogue declares what its rules may read
(names, text names, per-instruction wastes, the time estimates scale, the raw inputs behind a name); the
parser, the rule model and the evaluator ask the catalogue, and estimates come from the model handed to
the evaluation."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from ncuwrap.kernel import attribution, metrics
from ncuwrap.core.catalogue import Catalogue
from ncuwrap.timeline.metrics import TIMELINE
from ncuwrap.timeline.ranks.metrics import RANKS
from tests.conftest import run_cli

ROOT = Path(__file__).resolve().parent.parent
ENGINE = ("ncuwrap/ruleset/parser.py", "ncuwrap/ruleset/model.py", "ncuwrap/ruleset/texts.py", "ncuwrap/ruleset/evaluate.py", "ncuwrap/core/catalogue.py")
DOMAIN = {"ncuwrap.kernel.metrics", "ncuwrap.kernel.attribution", "ncuwrap.kernel.estimate", "ncuwrap.timeline", "ncuwrap.kernel.diagnosis"}


def _runtime_imports(path: Path) -> set[str]:
    """Modules ``path`` imports when it runs (what only a type checker reads left out)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    checking = [n for n in ast.walk(tree) if isinstance(n, ast.If) and "TYPE_CHECKING" in ast.unparse(n.test)]
    skipped = {id(x) for block in checking for x in ast.walk(block)}
    out = set()
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            out |= {node.module} | {f"{node.module}.{a.name}" for a in node.names}
    return out


@pytest.mark.parametrize("rel", ENGINE)
def test_the_engine_imports_no_domain(rel):
    imported = _runtime_imports(ROOT / rel)
    assert not {m for m in imported if any(m == d or m.startswith(d + ".") for d in DOMAIN)}, rel


@pytest.mark.parametrize("catalogue", [metrics.KERNEL, TIMELINE, RANKS], ids=lambda c: c.kind)
def test_every_catalogue_declares_its_domain(catalogue: Catalogue):
    assert catalogue.text_names and catalogue.text_names <= catalogue.names
    # Every name has something to measure behind it, but a launch's own name (read from its row).
    assert [n for n in catalogue.names if not catalogue.inputs(n)] == (["kernel_name"] if catalogue.kind == "kernel" else [])
    if catalogue.kind == "kernel":
        assert catalogue.wastes == tuple(attribution.WASTES) and catalogue.time_metric == "duration_ns"
        assert catalogue.inputs("l2_bytes_per_s") == ["lts__t_sectors.sum", "gpu__time_duration.sum"]
    else:  # one value per capture: no per-instruction wastes, no estimates, a name is its own input
        assert catalogue.wastes == () and catalogue.time_metric is None
        assert all(catalogue.inputs(n) == [n] for n in catalogue.names)
    assert {"host_limiter", "window_host_limiter", "top_kernel"} <= TIMELINE.text_names and "comm_limiter" in RANKS.text_names


def _rules(tmp_path, when: str, extra: str = "") -> Path:
    path = tmp_path / "mine.yaml"
    path.write_text(f"""version: 1
kind: timeline
bound:
  - verdict: launch
    when: {when}
findings:
  - id: mine
    when: "idle_pct > 10"
    title: idle
    advice: look{extra}
""", encoding="utf-8")
    return path


def test_a_timeline_word_is_compared_never_computed_with(capsys, tmp_path):
    """`host_limiter > 3` passed `ncuwrap rules check` (only the kernel catalogue's text names were known)."""
    code, out, err = run_cli(capsys, "rules", "check", str(_rules(tmp_path, '"host_limiter > 3"')))
    assert code == 2 and "'host_limiter' is text: compare it with == or != to a quoted value" in err, (out, err)
    code, out, err = run_cli(capsys, "rules", "check", str(_rules(tmp_path, "\"host_limiter == 'launch calls'\"")))
    assert code == 0, err


def test_a_timeline_finding_cannot_point_at_instructions(capsys, tmp_path):
    code, out, err = run_cli(capsys, "rules", "check", str(_rules(tmp_path, '"idle_pct > 50"', "\n    where: global_load_excess")))
    assert code == 2 and "'where: global_load_excess' names no per-instruction waste (these rules have none)" in err, err


def test_a_kernel_rule_may_name_a_waste(capsys, tmp_path):
    path = tmp_path / "k.yaml"
    path.write_text("""version: 1
bound:
  - verdict: memory
    when: "dram_pct > 50"
findings:
  - id: mine
    under: [memory]
    when: "dram_pct > 10"
    title: t
    advice: a
    where: nowhere
""", encoding="utf-8")
    code, _, err = run_cli(capsys, "rules", "check", str(path))
    assert code == 2 and "'where: nowhere' names no per-instruction waste (one of global_load_excess" in err, err
