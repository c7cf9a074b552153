"""Terminal output of ``ncuwrap bench``: one fixed-width row per variant (a BenchReport).

Reports with fair ceilings (copy ceilings measured at each variant's bytes as well as at the large
size) get two percentage columns, ``%same`` and ``%large``, the one the manifest judges the variant by
marked ``*``; older reports keep the single ``%ceil`` column.
"""

from __future__ import annotations

from ncuwrap.render import phrasing as T
from ncuwrap.render.escape import terminal


def _fmt(value: float | None, spec: str) -> str:
    return "-" if value is None else format(value, spec)


def _size(nbytes: int | None) -> str:
    return T.size(nbytes, ".4g", "?")


def _marked(value: float | None, judged: bool) -> str:
    return _fmt(value, ".0f") + ("*" if judged and value is not None else "")


def render(report, **_options) -> str:
    """A fixed-width text table of a report, for people."""
    env = report.env
    lines = [
        f"{env.get('gpu', '?')} (cc {env.get('cc', '?')}, {env.get('sm_count', '?')} SMs), "
        f"driver {env.get('driver_version', '?')}, runtime {env.get('runtime_version', '?')}"
    ]
    if report.ceiling:
        at = f" at {_size(report.ceiling.bytes)} moved" if report.ceiling.bytes is not None else ""
        lines.append(f"copy ceiling: {report.ceiling.gbps:.0f} GB/s{at} ({report.ceiling.source})")
    fair = any(b.ceiling_basis for b in report.benchmarks)
    if report.ceilings:
        same = ", ".join(f"{_size(c.bytes)} {c.gbps:.0f} GB/s" for c in report.ceilings)
        lines.append(f"copy ceiling at the variants' own bytes moved: {same}")
    if fair:
        lines.append("%same / %large: % of the copy ceiling at the same bytes / at the large size; * = the one the manifest judges by")
    cols = f"{'%same':>7} {'%large':>7}" if fair else f"{'%ceil':>6}"
    header = f"{'benchmark':<16} {'variant':<20} {'ok':<3} {'median ms':>10} {'spread%':>8} {'GB/s':>8} {'TFLOP/s':>8} {'%peak':>6} {cols}  library"
    lines += [header, "-" * len(header)]
    for b in report.benchmarks:
        lib_text = (b.library.advice or b.library.note or "") if b.library else ""
        if not fair:
            pct = f"{_fmt(b.pct_of_ceiling, '.0f'):>6}"
        elif b.ceiling_basis is None:  # no same-bytes ceiling for this variant: the large one
            pct = f"{'-':>7} {_marked(b.pct_of_ceiling, False):>7}"
        else:
            pct = (
                f"{_marked(b.pct_of_ceiling_same_bytes, b.ceiling_basis == 'same_bytes'):>7} "
                f"{_marked(b.pct_of_ceiling_large, b.ceiling_basis == 'large'):>7}"
            )
        lines.append(
            f"{b.name:<16} {b.variant:<20} {'yes' if b.verified else 'NO':<3} {b.median_ms:>10.4f} "
            f"{_fmt(b.spread_pct, '.1f'):>8} {_fmt(b.gbps, '.0f'):>8} {_fmt(b.tflops, '.2f'):>8} "
            f"{_fmt(b.pct_of_peak, '.0f'):>6} {pct}  {lib_text}"
        )
    return terminal("\n".join(line.rstrip() for line in lines)) + "\n"
