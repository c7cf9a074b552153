"""``ncuwrap rules``: what the rules need, and checking a rules file."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from ncuwrap.cli.root import app
from ncuwrap.cli.options import Extend, Rules, rules_choice
from ncuwrap.render.escape import terminal

rules_app = typer.Typer(help="Inspect and check rule files.", no_args_is_help=True)
app.add_typer(rules_app, name="rules")


@rules_app.command("metrics")
def metrics_cmd(
    rules: Rules = None,
    extend: Extend = False,
    all_names: bool = typer.Option(False, "--all", help="List every canonical and derived name the rules may use."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON (as --format json)."),
    fmt: str = typer.Option("lines", "--format", "-f", help="lines (one metric a line), json, or ncu: one comma-separated list that "
                            "'ncu --metrics' takes (the metrics only a section gives, launch__* and derived__*, named on stderr)."),
) -> None:
    """Print the ncu metrics the active rules read (what targeted profiling collects)."""
    from ncuwrap import ruleset
    from ncuwrap.kernel import metrics as kernel_metrics
    from ncuwrap.core.errors import InputError

    if fmt not in ("lines", "json", "ncu"):
        raise InputError(f"--format {terminal(fmt[:40])}: expected lines, json or ncu")
    as_json = as_json or fmt == "json"
    if all_names:
        rows = [{"name": c.name, "kind": "canonical", "unit": c.unit, "ncu": list(c.aliases),
                 "description": c.description} for c in kernel_metrics.CANONICAL.values()]
        rows += [{"name": d.name, "kind": "derived", "unit": d.unit, "inputs": list(d.inputs),
                  "description": d.description} for d in kernel_metrics.DERIVED.values()]
        if as_json:
            typer.echo(json.dumps(rows, indent=2))
        else:
            from ncuwrap.render.table.lists import metrics

            typer.echo(metrics(rows), nl=False)
        return
    loaded = ruleset.chosen(rules_choice(rules, extend), kernel_metrics.KERNEL)
    raw = loaded.raw_metrics()
    if as_json:
        typer.echo(json.dumps({"rules": loaded.path, "metrics": raw}, indent=2))
    elif fmt == "ncu":
        from ncuwrap.profile.collection import ALWAYS_RECORDED_PREFIX, by_name, section_for

        typer.echo(terminal(",".join(m for m in raw if by_name(m))))
        by_section: dict[str, list[str]] = {}
        # Device attributes are in every report: nothing to ask for.
        for m in (m for m in raw if not by_name(m) and not m.startswith(ALWAYS_RECORDED_PREFIX)):
            by_section.setdefault(section_for(m) or "no known section", []).append(m)
        for section, names in by_section.items():
            typer.echo(terminal(f"not for --metrics, collected with --section {section}: {', '.join(names)}"), err=True)
    else:
        # Metric names come from the rules file (metric("...")): shown, never sent to the terminal as codes.
        typer.echo("\n".join(terminal(name) for name in raw))


@rules_app.command("check")
def check_cmd(path: Path = typer.Argument(..., help="Rules YAML to validate.")) -> None:
    """Validate a rules file; errors name the file and the rule."""
    from ncuwrap import ruleset

    from ncuwrap.kernel.metrics import KERNEL
    from ncuwrap.timeline.metrics import TIMELINE
    from ncuwrap.timeline.ranks.metrics import RANKS

    # Whichever kind the file declares; an unknown kind is refused by the kernel rules' loader, in one line.
    catalogue = {c.kind: c for c in (KERNEL, TIMELINE, RANKS)}.get(ruleset.kind_of_file(path), KERNEL)
    loaded = ruleset.load(path, catalogue)
    steps = f", {len(loaded.next)} next steps" if loaded.next else ""
    typer.echo(f"{terminal(path)}: ok ({loaded.kind} rules: {len(loaded.bound)} bound branches, {len(loaded.findings)} findings{steps}, "
               f"version {loaded.version})")
