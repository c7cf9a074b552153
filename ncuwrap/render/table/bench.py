"""Terminal output of ``ncuwrap bench``: one fixed-width row per variant (a BenchReport)."""

from __future__ import annotations

from ncuwrap.render.escape import terminal


def _fmt(value: float | None, spec: str) -> str:
    return "-" if value is None else format(value, spec)


def render(report, **_options) -> str:
    """A fixed-width text table of a report, for people."""
    env = report.env
    lines = [
        f"{env.get('gpu', '?')} (cc {env.get('cc', '?')}, {env.get('sm_count', '?')} SMs), "
        f"driver {env.get('driver_version', '?')}, runtime {env.get('runtime_version', '?')}"
    ]
    if report.ceiling:
        lines.append(f"copy ceiling: {report.ceiling.gbps:.0f} GB/s ({report.ceiling.source})")
    header = f"{'benchmark':<16} {'variant':<20} {'ok':<3} {'median ms':>10} {'spread%':>8} {'GB/s':>8} {'TFLOP/s':>8} {'%peak':>6} {'%ceil':>6}  library"
    lines += [header, "-" * len(header)]
    for b in report.benchmarks:
        lib_text = (b.library.advice or b.library.note or "") if b.library else ""
        lines.append(
            f"{b.name:<16} {b.variant:<20} {'yes' if b.verified else 'NO':<3} {b.median_ms:>10.4f} "
            f"{_fmt(b.spread_pct, '.1f'):>8} {_fmt(b.gbps, '.0f'):>8} {_fmt(b.tflops, '.2f'):>8} "
            f"{_fmt(b.pct_of_peak, '.0f'):>6} {_fmt(b.pct_of_ceiling, '.0f'):>6}  {lib_text}"
        )
    return terminal("\n".join(line.rstrip() for line in lines)) + "\n"
