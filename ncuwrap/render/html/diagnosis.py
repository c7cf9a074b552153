"""HTML output: one self-contained page (inline CSS and SVG, no script, no external reference).

The page is drawn by the jinja2 templates in ``templates/`` with autoescaping on: kernel names are
C++ signatures full of ``<``, ``>`` and ``&`` and must show as text, never as markup. Charts are built
in Python (:mod:`ncuwrap.render.svg`), which escapes every text it puts in them.

A report with many launches stays small: the top ``detail`` launches by ncu duration get the full
section (decision path, findings, charts), the summary lists the top ``summary`` launches, and every
other launch is one row of a table.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ncuwrap import __version__
from ncuwrap import metrics as M
from ncuwrap.render.html import environment, svg
from ncuwrap.render import text as T

DETAIL = 10
SUMMARY = 25


@dataclass(frozen=True)
class FindingView:
    finding: object  # FindingResult
    anchor: str


@dataclass(frozen=True)
class KernelView:
    rank: int
    anchor: str
    kernel: object  # KernelVerdict
    share: str
    detailed: bool
    findings: list = field(default_factory=list)
    stop: object = None  # the at_roofline finding, when it fired
    charts: dict = field(default_factory=dict)
    occupancy_limiter: str | None = None
    occupancy_limits: list = field(default_factory=list)
    minor: list = field(default_factory=list)
    ncu_rules: list = field(default_factory=list)


_LIMITS = (("registers", "occ_limit_registers"), ("shared memory", "occ_limit_shared_mem"),
           ("warps", "occ_limit_warps"), ("block limit", "occ_limit_blocks"))


def roofline_note(charts: list[dict]) -> str | None:
    """'roofline not available: <metrics> not collected; re-profile with ...', or None when it is drawn."""
    missing = svg.roofline_missing(charts)
    if not missing:
        return None
    sections = sorted({s for s in (M.section_of(m) for m in missing) if s})
    how = f"--section {' --section '.join(sections)}" if sections else f"--metrics {','.join(missing)}"
    return f"roofline not available: {', '.join(missing)} not collected; re-profile with {how} (or --set full)"


def kernel_charts(charts: list[dict], series: list[str] | None = None) -> dict:
    """The four charts of one kernel (or of a before/after pair), as Markup, and the roofline's note."""
    return {
        "roofline_note": roofline_note(charts),
        "roofline": svg.roofline(charts, series),
        "bandwidth": svg.bandwidth(charts, series),
        "sol": svg.sol(charts, series),
        "occupancy": svg.occupancy(charts, series),
    }


def kernel_view(kernel, rank: int, total_ns: float, detailed: bool) -> KernelView:
    share = T.share(kernel, total_ns)
    anchor = f"k{rank}"
    if not detailed:
        return KernelView(rank, anchor, kernel, share, False)
    findings = [FindingView(f, f"{anchor}-{f.id}") for f in kernel.findings if not f.minor]
    stop = next((f for f in kernel.findings if f.id == "at_roofline"), None)
    chart = kernel.chart or {}
    limits = [(label, chart.get(key)) for label, key in _LIMITS if chart.get(key) is not None]
    return KernelView(rank, anchor, kernel, share, True, findings, stop, kernel_charts([chart]),
                      chart.get("occupancy_limiter"), limits, [f for f in kernel.findings if f.minor], T.ncu_rules_shown(kernel))


def environment_rows(diagnosis) -> list[tuple[str, object]]:
    """(label, value) rows of the environment block; None shows as 'not recorded in the report'."""
    env = dict(diagnosis.environment or {})
    source = diagnosis.source
    clock = env.pop("sm_clock_mhz", None)
    rows = [
        ("GPU", env.pop("gpu", None) or source.device),
        ("compute capability", env.pop("compute_capability", None) or source.compute_capability),
        ("driver", env.pop("driver", None)),
        ("Nsight Compute", env.pop("ncu_version", None) or source.ncu_version),
        ("clock control", env.pop("clock_control", None)),
        ("cache control", env.pop("cache_control", None)),
        ("SM clock while profiled", f"{T.number(clock)} MHz (median over the launches)" if clock is not None else None),
        ("command line", env.pop("command_line", None) or source.command_line),
        ("report", env.pop("report", None) or source.path),
        ("report kind", source.kind),
        ("report sha256", env.pop("sha256", None) or source.sha256),
        ("ncuwrap", __version__),
        ("rules", f"{diagnosis.rules_name} version {diagnosis.rules_version} ({diagnosis.rules_path})"),
    ]
    rows += [(key.replace("_", " "), value) for key, value in env.items()]
    return rows


clock_note = T.clock_note


def page(diagnosis, detail: int = DETAIL, summary: int = SUMMARY) -> dict:
    """What the diagnosis template draws."""
    kernels = diagnosis.by_time()
    total = sum(k.duration_ns or 0 for k in kernels)
    summary = max(summary, detail)
    views = [kernel_view(k, rank, total, rank <= detail) for rank, k in enumerate(kernels, start=1)]
    rest = views[summary:]
    rest_ns = sum(v.kernel.duration_ns or 0 for v in rest)
    return {
        "title": diagnosis.source.path,
        "device": diagnosis.source.device or "unknown GPU",
        "count": len(kernels),
        "total": T.duration(total) if total else "n/a",
        "summary": views[:summary],
        "detailed": [v for v in views if v.detailed],
        "rest": rest,
        "rest_share": f"{100.0 * rest_ns / total:.1f}%" if total else "n/a",
        "environment": environment_rows(diagnosis),
        "clock_note": clock_note(diagnosis),
        "fix_first": [T.priority_line(p) for p in T.fix_first(diagnosis)] if len(kernels) > 1 else [],
    }


def render(diagnosis, detail: int = DETAIL, summary: int = SUMMARY, **_options) -> str:
    template = environment().get_template("diagnosis.html")
    return template.render(page=page(diagnosis, detail=detail, summary=summary), version=__version__)
