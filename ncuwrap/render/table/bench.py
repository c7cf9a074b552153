"""Terminal output of ``ncuwrap bench``: one row per variant (a BenchReport), laid out for the terminal's width.

Reports with fair ceilings (copy ceilings measured at each variant's bytes as well as at the large
size) get two percentage columns, ``%same`` and ``%large``, the one the manifest judges the variant by
marked ``*``; older reports keep the single ``%ceil`` column.
"""

from __future__ import annotations

from ncuwrap.render import phrasing
from ncuwrap.render.table import Page


def _fmt(value: float | None, spec: str) -> str:
    return "-" if value is None else format(value, spec)


def _size(nbytes: int | None) -> str:
    return phrasing.size(nbytes, ".4g", "?")


def _marked(value: float | None, judged: bool) -> str:
    return _fmt(value, ".0f") + ("*" if judged and value is not None else "")


# The columns, and the order they leave a table too wide for the terminal (--format json has them all).
# The library's advice leaves last, to lines under the table.
DROP = (("spread%",), ("TFLOP/s",), ("%peak",), ("library",))


def render(report, width: int | None = None, **_options) -> str:
    """The report as a table laid out for the terminal's width, for people."""
    page = Page(width)
    env = report.env
    page.line(f"{env.get('gpu', '?')} (cc {env.get('cc', '?')}, {env.get('sm_count', '?')} SMs), "
              f"driver {env.get('driver_version', '?')}, runtime {env.get('runtime_version', '?')}")
    if report.ceiling:
        at = f" at {_size(report.ceiling.bytes)} moved" if report.ceiling.bytes is not None else ""
        page.line(f"{report.ceiling.gbps:.0f} GB/s{at} ({report.ceiling.source})", label="copy ceiling:")
    fair = any(b.ceiling_basis for b in report.benchmarks)
    if report.ceilings:
        page.line(", ".join(f"{_size(c.bytes)} {c.gbps:.0f} GB/s" for c in report.ceilings), label="copy ceiling at the variants' own bytes moved:")
    if fair:
        page.line("% of the copy ceiling at the same bytes / at the large size; * = the one the manifest judges by", label="%same / %large:")
    ceiling = ("%same", "%large") if fair else ("%ceil",)
    columns = ("benchmark", "variant", "ok", "median ms", "spread%", "GB/s", "TFLOP/s", "%peak", *ceiling, "library")
    rows = []
    for b in report.benchmarks:
        if not fair:
            pct = {"%ceil": _fmt(b.pct_of_ceiling, ".0f")}
        elif b.ceiling_basis is None:  # no same-bytes ceiling for this variant: the large one
            pct = {"%same": "-", "%large": _marked(b.pct_of_ceiling, False)}
        else:
            pct = {"%same": _marked(b.pct_of_ceiling_same_bytes, b.ceiling_basis == "same_bytes"),
                   "%large": _marked(b.pct_of_ceiling_large, b.ceiling_basis == "large")}
        rows.append({"benchmark": b.name, "variant": b.variant, "ok": "yes" if b.verified else "NO", "median ms": f"{b.median_ms:.4f}",
                     "spread%": _fmt(b.spread_pct, ".1f"), "GB/s": _fmt(b.gbps, ".0f"), "TFLOP/s": _fmt(b.tflops, ".2f"),
                     "%peak": _fmt(b.pct_of_peak, ".0f"), **pct, "library": (b.library.advice or b.library.note or "") if b.library else ""})

    if not any(row["library"] for row in rows):  # no library compared (--no-library): no column for it
        columns = columns[:-1]

    def build(shown):
        table = page.table(*shown, right=("median ms", "spread%", "GB/s", "TFLOP/s", "%peak", "%same", "%large", "%ceil"), prose=("library",))
        for row in rows:
            table.add_row(*(row[c] for c in shown))
        return table

    table, left_out, whole = page.fit(build, columns, tuple(g for g in DROP if set(g) <= set(columns)))
    page.print(table)
    numbers = [c for c in left_out if c != "library"]
    if numbers:
        page.line(f"{', '.join(numbers)}: in --format json (a terminal of {whole} columns shows them in the table)", "dim",
                  label="left out of the table:")
    if "library" in left_out and any(row["library"] for row in rows):  # under the table, a line per variant that has it
        page.heading("library")
        for row in rows:
            if row["library"]:
                page.line(row["library"], indent=2, label=f"{row['benchmark']}/{row['variant']}:")
    return page.text()
