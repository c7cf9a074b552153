"""Charts as inline SVG, drawn from numbers: Speed-of-Light bars, the roofline, memory bandwidth.

Every chart is one ``<svg>`` element with no script, no style sheet, no font and no link: the HTML
report must open offline from a mail attachment. Text placed in a chart (labels, series names) is
escaped here, and only then is the whole returned as :class:`markupsafe.Markup`, so the template
can insert it without escaping it a second time and without letting a kernel name inject markup.

A series is one set of numbers to draw (one kernel, or the "before" and "after" of a comparison);
each is a ``KernelVerdict.chart_metrics`` dict (see ``ncuwrap.kernel.diagnosis.CHART_METRICS``), or for the
roofline a ``KernelVerdict.roofline``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from markupsafe import Markup, escape

from ncuwrap.kernel.metrics import MEMORY_LEVELS
from ncuwrap.core.numbers import pct as share_pct
from ncuwrap.render import phrasing
from ncuwrap.render.escape import terminal

# One colour per series (1 series: blue; 2 series: before grey, after blue); roofs and grid in greys.
SERIES_COLORS = ("#2563eb",)
PAIR_COLORS = ("#94a3b8", "#2563eb")
# One colour per kernel where a chart shows several kernels of one report (not a before/after pair).
KERNEL_COLORS = ("#2563eb", "#dc2626", "#16a34a", "#d97706", "#7c3aed", "#0891b2", "#db2777", "#4b5563")
ROOF_COLORS = {"DRAM": "#b45309", "L2": "#7c3aed", "L1": "#0f766e", "compute": "#334155"}
GRID = "#e2e8f0"
INK = "#0f172a"
MUTED = "#64748b"
FONT = "font-family=\"system-ui,-apple-system,'Segoe UI',Roboto,sans-serif\""

# Speed-of-Light units: (label, chart key).
SOL_UNITS = (("SM (compute)", "sm_pct"), ("DRAM", "dram_pct"), ("L2", "l2_pct"), ("L1/TEX", "l1tex_pct"))


def _t(text) -> str:
    """Escape a text for an SVG text node or attribute (control characters made visible)."""
    return str(escape(terminal(text)))


def _num(value) -> float | None:
    if value is None or isinstance(value, (str, bool)):
        return None
    value = float(value)
    return None if math.isnan(value) or math.isinf(value) else value


def si(value, unit: str) -> str:
    """``3.1e12, 'B/s'`` -> ``'3.11 TB/s'``; 'n/a' for a missing or non-finite value."""
    value = _num(value)
    return "n/a" if value is None else phrasing.si(value, unit)


def colors(n: int) -> tuple[str, ...]:
    return PAIR_COLORS if n == 2 else SERIES_COLORS * n


def _svg(width: int, height: int, label: str, body: list[str]) -> Markup:
    head = (f'<svg xmlns="http://www.w3.org/2000/svg" class="chart" viewBox="0 0 {width} {height}" width="{width}" height="{height}" '
            f'role="img" aria-label="{_t(label)}" {FONT} font-size="12"><title>{_t(label)}</title>')
    return Markup(head + "".join(body) + "</svg>")


LEGEND_ROW = 16  # height of a legend row


def _legend_item_w(name: str) -> float:
    return 14 + 7.5 * len(name) + 16  # swatch, text at ~7.5 px a character (12 px font), gap


def _legend_layout(items, x: float, right: float) -> list[tuple[str, str, float, int]]:
    """Where each ``(name, color)`` of a legend goes: ``(name, color, x, row)``, in rows from ``x``,
    wrapped before ``right`` (the chart's edge: nothing is drawn outside the SVG)."""
    out, at, row = [], x, 0
    for name, color in items:
        w = _legend_item_w(name)
        if at + w > right and at > x:
            at, row = x, row + 1
        out.append((name, color, at, row))
        at += w
    return out


def legend_rows(items, x: float, right: float) -> int:
    """How many rows the legend of ``items`` takes between ``x`` and ``right``."""
    return max((row for *_, row in _legend_layout(items, x, right)), default=0) + 1


def _legend(items, x: float, y: float, right: float) -> list[str]:
    """``(name, color)`` pairs in rows from ``x``, the first on the baseline ``y``, wrapped before ``right``."""
    return [f'<rect x="{at:.0f}" y="{y + LEGEND_ROW * row - 9:.0f}" width="10" height="10" fill="{color}"/>'
            f'<text x="{at + 14:.0f}" y="{y + LEGEND_ROW * row:.0f}" fill="{INK}">{_t(name)}</text>'
            for name, color, at, row in _legend_layout(items, x, right)]


def _percent_grid(x0: float, width: float, top: float, end: float, label_y: float, step: int) -> list[str]:
    """Vertical lines at 0, step, ..., 100% of ``width`` from ``x0``, from ``top`` to ``end``, labelled at ``label_y``."""
    out = []
    for pct in range(0, 101, step):
        x = x0 + width * pct / 100
        out.append(f'<line x1="{x:.1f}" y1="{top - 4}" x2="{x:.1f}" y2="{end + 4}" stroke="{GRID}"/>'
                   f'<text x="{x:.1f}" y="{label_y}" fill="{MUTED}" font-size="10" text-anchor="middle">{pct}%</text>')
    return out


# ---------------------------------------------------------------------------------------------
# Stacked bars: one row per rank, its window split into categories


def stacked_bars(title: str, rows: list[tuple[str, list[tuple[str, float, str, str]]]], legend: list[tuple[str, str]],
                 width: int = 720) -> Markup:
    """One horizontal bar per row on a 0-100% scale, made of segments ``(name, pct, color, tip)``;
    ``legend`` is ``(name, color)`` pairs, drawn above."""
    label_w, value_w, bar_h, gap = 90, 30, 16, 8  # value_w: room for the "100%" label centred on the right edge
    legend = list(legend)
    top = 14 + LEGEND_ROW * legend_rows(legend, label_w, width - value_w)
    plot_w = width - label_w - value_w
    body = _legend(legend, label_w, 16, width - value_w)
    bottom = top + len(rows) * (bar_h + gap)
    body += _percent_grid(label_w, plot_w, top, bottom - gap, bottom + 10, 25)
    y = top
    for label, segments in rows:
        body.append(f'<text x="{label_w - 8}" y="{y + bar_h - 3}" fill="{INK}" text-anchor="end">{_t(label)}</text>')
        sx = float(label_w)
        for name, pct, color, tip in segments:
            w = plot_w * max(0.0, min(_num(pct) or 0.0, 100.0)) / 100
            if w > 0:
                body.append(f'<rect x="{sx:.1f}" y="{y}" width="{w:.1f}" height="{bar_h}" fill="{color}"><title>{_t(tip)}</title></rect>')
            sx += w
        y += bar_h + gap
    return _svg(width, bottom + 16, title, body)


# ---------------------------------------------------------------------------------------------
# Bars: percentages of a peak (Speed of Light, occupancy)


@dataclass(frozen=True)
class _Groups:
    """The layout of horizontal bars in groups (one group per row, one bar per series) that both bar
    charts share: the label column, the plot, the value column, and the legend above when there are
    several series."""

    series: list[str]
    width: int
    label_w: int
    value_w: int
    bar_h: int = 14

    @property
    def plot_w(self) -> float:
        return self.width - self.label_w - self.value_w - 10

    @property
    def top(self) -> int:
        if len(self.series) < 2:
            return 10
        return 14 + LEGEND_ROW * legend_rows(zip(self.series, colors(len(self.series))), self.label_w, self.width)

    @property
    def group_h(self) -> int:
        return self.bar_h * len(self.series) + 4 * (len(self.series) - 1)

    def head(self) -> list[str]:
        """The legend (several series) or nothing."""
        return _legend(zip(self.series, colors(len(self.series))), self.label_w, 16, self.width) if len(self.series) > 1 else []

    def label(self, y: float, text: str) -> str:
        return f'<text x="{self.label_w - 8}" y="{y + self.group_h / 2 + 4:.1f}" fill="{INK}" text-anchor="end">{_t(text)}</text>'

    def bar(self, y: float, pct: float, color: str, tip: str) -> str:
        w = self.plot_w * max(0.0, min(pct, 100.0)) / 100
        return f'<rect class="bar" x="{self.label_w}" y="{y}" width="{w:.1f}" height="{self.bar_h}" fill="{color}" rx="2"><title>{_t(tip)}</title></rect>'


def percent_bars(title: str, rows: list[tuple[str, list]], series: list[str] | None = None, width: int = 520) -> Markup:
    """Horizontal bars on a 0-100% scale: one group per row, one bar per series (None: not collected)."""
    series = series or [""]
    palette = colors(len(series))
    g = _Groups(series, width, label_w=110, value_w=64)
    label_w, plot_w, top, group_h, bar_h, gap = g.label_w, g.plot_w, g.top, g.group_h, g.bar_h, 10
    height = top + len(rows) * (group_h + gap) + 22
    body = g.head()
    bottom = top + len(rows) * (group_h + gap)
    body += _percent_grid(label_w, plot_w, top, bottom - gap, bottom + 10, 20)
    y = top
    for label, values in rows:
        body.append(g.label(y, label))
        for value, color, name in zip(values, palette, series):
            value = _num(value)
            if value is None:
                body.append(f'<text x="{label_w + 4}" y="{y + bar_h - 3}" fill="{MUTED}" font-size="11">not collected</text>')
            else:
                tip = f"{name}: {value:.1f}%" if name else f"{label}: {value:.1f}%"
                body.append(g.bar(y, value, color, tip) +
                            f'<text x="{label_w + plot_w + 6}" y="{y + bar_h - 3}" fill="{INK}">{value:.1f}%</text>')
            y += bar_h + 4
        y += gap - 4
    return _svg(width, height, title, body)


def sol(charts: list[dict], series: list[str] | None = None) -> Markup:
    """Speed of Light: each unit's throughput as % of its peak."""
    rows = [(label, [c.get(key) for c in charts]) for label, key in SOL_UNITS]
    return percent_bars("Speed of Light: throughput of each unit, % of its peak", rows, series)


def occupancy(charts: list[dict], series: list[str] | None = None) -> Markup:
    rows = [("theoretical", [c.get("theoretical_occupancy_pct") for c in charts]),
            ("achieved", [c.get("achieved_occupancy_pct") for c in charts])]
    return percent_bars("Occupancy: resident warps, % of the SM's warp slots", rows, series)


# ---------------------------------------------------------------------------------------------
# Memory bandwidth against the roofs (also the view of a kernel that does no arithmetic)


def bandwidth(charts: list[dict], series: list[str] | None = None, gaps: list | None = None, width: int = 520) -> Markup | None:
    """Bytes/s at DRAM, L2 and L1 against each level's peak; None when no level was measured. ``gaps``: each series'
    KernelVerdict.level_gaps, the levels or peaks the report holds no counter of (said "not collected")."""
    series = series or [""]
    gaps = gaps or [()] * len(charts)
    levels = [(label, [_num(c.get(achieved)) for c in charts], [_num(c.get(peak)) for c in charts])
              for label, achieved, peak in MEMORY_LEVELS]
    if not any(v is not None for _, achieved, _ in levels for v in achieved):
        return None
    # A level the report holds no counter of stays in the chart, said "not collected": dropped, it would read as
    # if that level did not matter (an older report without the L2 sector counter, of a kernel L2 limits).
    rows = []
    for label, achieved, peaks in levels:
        pcts = [share_pct(a, p) if a is not None and p else None for a, p in zip(achieved, peaks)]
        lacking = [{g.part for g in own if g.level == label} for own in gaps]
        rows.append((label, achieved, peaks, pcts, lacking))
    palette = colors(len(series))
    g = _Groups(series, width, label_w=50, value_w=190)
    label_w, plot_w, top, group_h, bar_h = g.label_w, g.plot_w, g.top, g.group_h, g.bar_h
    height = top + len(rows) * (group_h + 10) + 8
    body = g.head()
    y = top
    for label, achieved, peaks, pcts, lacking in rows:
        body.append(g.label(y, label))
        if any(p is not None for p in peaks):  # the dashed box is the peak: none where no series has one
            body.append(f'<rect x="{label_w}" y="{y - 2}" width="{plot_w}" height="{group_h + 4}" fill="none" stroke="{ROOF_COLORS[label]}" '
                        f'stroke-dasharray="3 2"/>')
        for a, p, pct, parts, color, name in zip(achieved, peaks, pcts, lacking, palette, series):
            # 'not collected' where the model says the counters are not in the report; a value it lacks otherwise is unknown
            if a is None:
                text = "not collected" if "bytes" in parts else "n/a"
            elif pct is None:
                text = f"{si(a, 'B/s')} ({'peak not collected' if 'peak' in parts else 'peak n/a'})"
            else:
                text = f"{si(a, 'B/s')} of {si(p, 'B/s')} ({pct:.0f}%)"
            if pct is not None:
                body.append(g.bar(y, pct, color, f"{name + ': ' if name else ''}{label} {text}"))
            body.append(f'<text x="{label_w + plot_w + 6}" y="{y + bar_h - 3}" fill="{INK}" font-size="11">{_t(text)}</text>')
            y += bar_h + 4
        y += 6
    return _svg(width, height, "Memory bandwidth: bytes per second at each level against its roof (dashed box = peak)", body)


# ---------------------------------------------------------------------------------------------
# Roofline


@dataclass(frozen=True)
class _Point:
    series: int
    level: str
    intensity: float  # FLOP per byte of this level
    flops: float


def _decades(lo: float, hi: float) -> tuple[int, int]:
    return math.floor(math.log10(lo)), math.ceil(math.log10(hi))


def roofline(rooflines: list, series: list[str] | None = None, width: int = 520, height: int = 330,
             palette: tuple[str, ...] | None = None, title: str | None = None, gaps: list | None = None) -> Markup | None:
    """The model's rooflines (KernelVerdict.roofline, one per series) drawn: the device's memory roofs
    (DRAM, L2, L1) and the compute roof of the arithmetic the kernel does, and the kernel's point at
    each memory level. None when no series has a point to draw (no arithmetic, or no counters): the
    page says so in a line instead of an empty chart. ``gaps``: each series' KernelVerdict.level_gaps, a level
    or roof the report holds no counter of, said "not collected" in the roofs' key."""
    series = series or [""]
    palette = palette or colors(len(series))
    roof = next((r for r in reversed(rooflines) if r is not None and r.says_something), None)
    if roof is None:
        return None
    name = roof.label
    title = title or f"Roofline ({name}): FLOP/s against arithmetic intensity, log-log"
    peak, roofs = roof.peak_flops_per_s, list(roof.roofs)
    # Each kernel's own peak (at the clock ncu measured it at), the one its text quotes: where the kernels
    # of one chart ran at different clocks, each gets its own peak line in its colour.
    peak, own_peaks = _own_peaks(rooflines, peak)
    points = [_Point(i, p.level, p.intensity, p.flops_per_s) for i, r in enumerate(rooflines) if r is not None for p in r.points]
    no_flops = [i for i, r in enumerate(rooflines) if r is not None and not r.missing and not r.points]
    no_counters = [i for i, r in enumerate(rooflines) if r is None or r.missing]
    ridges = [peak / bw for _, bw in roofs]
    x_lo, x_hi = _decades(min([min(ridges) / 100] + [p.intensity for p in points]), max([max(ridges) * 10] + [p.intensity for p in points]))
    y_lo, y_hi = _decades(min([peak / 1e3] + [p.flops for p in points]), peak * 1.5)
    left, right, bottom = 62, 14, 40
    named = any(series)  # a legend names the series (none for one unnamed kernel)
    top = 14 + (LEGEND_ROW * legend_rows(zip(series, palette), left, width - right) + 2 if named else 0)
    plot_w, plot_h = width - left - right, height - top - bottom

    def px(ai: float) -> float:
        return left + plot_w * (math.log10(ai) - x_lo) / (x_hi - x_lo)

    def py(flops: float) -> float:
        return top + plot_h * (1 - (math.log10(flops) - y_lo) / (y_hi - y_lo))

    body = [f'<rect x="{left}" y="{top}" width="{plot_w}" height="{plot_h}" fill="#ffffff" stroke="{GRID}"/>']
    if named:
        body += _legend(zip(series, palette), left, 14, width - right)
    for d in range(x_lo, x_hi + 1):
        x = px(10.0**d)
        body.append(f'<line x1="{x:.1f}" y1="{top}" x2="{x:.1f}" y2="{top + plot_h}" stroke="{GRID}"/>'
                    f'<text x="{x:.1f}" y="{top + plot_h + 14}" fill="{MUTED}" font-size="10" text-anchor="middle">{_t(_decade(d))}</text>')
    for d in range(y_lo, y_hi + 1):
        y = py(10.0**d)
        body.append(f'<line x1="{left}" y1="{y:.1f}" x2="{left + plot_w}" y2="{y:.1f}" stroke="{GRID}"/>'
                    f'<text x="{left - 4}" y="{y + 3:.1f}" fill="{MUTED}" font-size="10" text-anchor="end">{_t(si(10.0**d, ""))}</text>')
    body.append(f'<text x="{left + plot_w / 2:.0f}" y="{height - 6}" fill="{INK}" text-anchor="middle">arithmetic intensity (FLOP/byte)</text>'
                f'<text x="14" y="{top + plot_h / 2:.0f}" fill="{INK}" text-anchor="middle" transform="rotate(-90 14 {top + plot_h / 2:.0f})">FLOP/s</text>')
    # Roofs: bandwidth x intensity up to the ridge, then the compute peak.
    x_min, x_max = 10.0**x_lo, 10.0**x_hi
    for label, bw in roofs:
        ridge = peak / bw
        color = ROOF_COLORS[label]
        start_ai = max(x_min, 10.0**y_lo / bw)
        body.append(f'<polyline class="roof" points="{px(start_ai):.1f},{py(bw * start_ai):.1f} {px(ridge):.1f},{py(peak):.1f}" fill="none" stroke="{color}" '
                    f'stroke-width="2">'
                    f'<title>{_t(label + " roof: " + si(bw, "B/s"))}</title></polyline>')
    # Roof key, top left: that corner is above every roof (low intensity, high FLOP/s).
    for j, (label, bw) in enumerate(roofs):
        ky = top + 16 + 15 * j
        body.append(f'<line x1="{left + 8}" y1="{ky - 4}" x2="{left + 26}" y2="{ky - 4}" stroke="{ROOF_COLORS[label]}" stroke-width="2"/>'
                    f'<text x="{left + 31}" y="{ky}" fill="{ROOF_COLORS[label]}" font-size="11">{_t(label + " roof " + si(bw, "B/s"))}</text>')
    # A level without its roof or its point for want of counters is said beneath the roofs, not left to look absent.
    unshown = dict.fromkeys(f"{g.level} roof: not collected" if g.part == "peak" else f"{g.level}: not collected" for own in gaps or () for g in own)
    for j, text in enumerate(unshown, start=len(roofs)):
        body.append(f'<text class="gap" x="{left + 31}" y="{top + 16 + 15 * j}" fill="{MUTED}" font-size="11">{_t(text)}</text>')
    ridge_min = min(ridges)
    body.append(f'<line class="roof" x1="{px(ridge_min):.1f}" y1="{py(peak):.1f}" x2="{px(x_max):.1f}" y2="{py(peak):.1f}" stroke="{ROOF_COLORS["compute"]}" '
                f'stroke-width="2"/>'
                f'<text x="{px(x_max) - 4:.1f}" y="{py(peak) - 6:.1f}" fill="{ROOF_COLORS["compute"]}" font-size="11" '
                f'text-anchor="end">{_t(name + " peak " + si(peak, "FLOP/s") + (", the highest of these kernels" if own_peaks else ""))}</text>')
    for i, own in own_peaks:
        body.append(f'<line class="peak" x1="{px(peak / max(bw for _, bw in roofs)):.1f}" y1="{py(own):.1f}" x2="{px(x_max):.1f}" y2="{py(own):.1f}" '
                    f'stroke="{palette[i]}" stroke-dasharray="6 3" stroke-width="1.5">'
                    f'<title>{_t((series[i] + ": " if series[i] else "") + name + " peak " + si(own, "FLOP/s") + " at its clock")}</title></line>')
    body += _roofline_points(points, series, palette, px, py, (left, top, plot_h))
    body += _roofline_note(_roofline_lines(name, series, no_flops, no_counters), bool(points), (left, top, plot_w, plot_h))
    return _svg(width, height, title, body)


def _own_peaks(rooflines: list, peak: float) -> tuple[float, list[tuple[int, float]]]:
    """The chart's peak and, where the kernels ran at different clocks, each series' own peak (the one its
    text quotes), drawn as a line in its colour; none when they agree within half a percent."""
    own_peaks = [(i, r.peak_flops_per_s) for i, r in enumerate(rooflines) if r is not None and r.drawable]
    if len(own_peaks) > 1 and max(p for _, p in own_peaks) > 1.005 * min(p for _, p in own_peaks):
        return max(p for _, p in own_peaks), own_peaks
    return peak, []


def _roofline_points(points: list[_Point], series: list[str], palette, px, py, frame: tuple) -> list[str]:
    """The kernels' points, one per memory level; with two series, an arrow from before to after at each
    level; and the key of the markers, bottom left."""
    left, top, plot_h = frame
    body = []
    marks = {"DRAM": "circle", "L2": "square", "L1": "diamond"}
    by_level: dict[str, dict[int, _Point]] = {}
    for p in points:
        by_level.setdefault(p.level, {})[p.series] = p
        body.append(_marker(marks[p.level], px(p.intensity), py(p.flops), palette[p.series],
                            f"{series[p.series] + ': ' if series[p.series] else ''}{p.level}: {p.intensity:.3g} FLOP/byte, {si(p.flops, 'FLOP/s')}"))
    if len(series) == 2 and palette == PAIR_COLORS:  # before -> after
        for level, pair in by_level.items():
            if 0 in pair and 1 in pair:
                a, b = pair[0], pair[1]
                body.append(f'<line x1="{px(a.intensity):.1f}" y1="{py(a.flops):.1f}" x2="{px(b.intensity):.1f}" y2="{py(b.flops):.1f}" stroke="{MUTED}" '
                            f'stroke-dasharray="4 3"/>')
    # Marker key.
    if points:
        kx = left + 8
        for level in ("DRAM", "L2", "L1"):
            if level in by_level:
                body.append(_marker(marks[level], kx + 4, top + plot_h - 12, MUTED, f"{level} point") +
                            f'<text x="{kx + 12}" y="{top + plot_h - 8}" fill="{MUTED}" font-size="10">{level}</text>')
                kx += 46
    return body


def _roofline_lines(name: str, series: list[str], no_flops: list[int], no_counters: list[int]) -> list[str]:
    """The note's lines for the series without a point: no arithmetic of this kind, or no roofline counters."""
    lines = []
    if no_flops:
        names = ", ".join(series[i] for i in no_flops if series[i])
        lines += [f"No {name} arithmetic{' (' + names + ')' if names else ''}: 0 FLOP/s,",
                  "so no point on this chart: the kernel only moves",
                  "data. Its bandwidth against each memory roof is",
                  "in the bandwidth chart."]
    if no_counters:
        names = ", ".join(series[i] for i in no_counters if series[i])
        lines += [f"No point for {names or 'this kernel'}: its report lacks", "the roofline counters."]
    return lines


def _roofline_note(lines: list[str], has_points: bool, frame: tuple) -> list[str]:
    """The note in a box, bottom right: the roofs never pass there (high intensity, low FLOP/s)."""
    if not lines:
        return []
    left, top, plot_w, plot_h = frame
    box_w = int(max(len(line) for line in lines) * 6.2) + 14
    bx, by = left + plot_w - box_w, top + plot_h - 10 - 15 * len(lines) - (14 if has_points else 0)
    body = [f'<rect x="{bx - 6}" y="{by - 13}" width="{box_w}" height="{15 * len(lines) + 8}" fill="#fff7ed" stroke="#fdba74" rx="3"/>']
    for j, line in enumerate(lines):
        body.append(f'<text class="note" x="{bx}" y="{by + 15 * j}" fill="{INK}" font-size="11">{_t(line)}</text>')
    return body


def _decade(d: int) -> str:
    return f"{10.0**d:g}" if -3 <= d <= 4 else f"1e{d}"


def _marker(kind: str, x: float, y: float, color: str, tip: str) -> str:
    tip = f"<title>{_t(tip)}</title>"
    if kind == "circle":
        return f'<circle class="point" cx="{x:.1f}" cy="{y:.1f}" r="5" fill="{color}" stroke="#fff">{tip}</circle>'
    if kind == "square":
        return f'<rect class="point" x="{x - 4.5:.1f}" y="{y - 4.5:.1f}" width="9" height="9" fill="{color}" stroke="#fff">{tip}</rect>'
    return (f'<polygon class="point" points="{x:.1f},{y - 6:.1f} {x + 6:.1f},{y:.1f} {x:.1f},{y + 6:.1f} {x - 6:.1f},{y:.1f}" '
            f'fill="{color}" stroke="#fff">{tip}</polygon>')



# ---------------------------------------------------------------------------------------------
# Fix first: each kernel's share of the time, and the part of it fixing its findings would save


def fix_first_bars(rows: list[tuple[str, float, float, str]], width: int = 720) -> Markup | None:
    """One bar per kernel ``(name, share_pct, saves_pct, tip)``: its share of the time (light), and
    inside it what fixing its findings would save (dark), on a scale from 0 to the largest share."""
    if not rows:
        return None
    label_w, value_w, bar_h, gap, top = 230, 150, 16, 8, 30
    plot_w = width - label_w - value_w
    scale = max(max(share for _, share, _, _ in rows), 1e-9)
    body = _legend([("share of the time", "#bfdbfe"), ("what fixing it saves", "#2563eb")], label_w, 16, width)
    y = top
    for name, share, saves, tip in rows:
        shown = name if len(name) <= 34 else name[:33] + "…"
        body.append(f'<text x="{label_w - 8}" y="{y + bar_h - 3}" fill="{INK}" text-anchor="end">{_t(shown)}<title>{_t(name)}</title></text>')
        body.append(f'<rect class="bar" x="{label_w}" y="{y}" width="{plot_w * share / scale:.1f}" height="{bar_h}" fill="#bfdbfe" rx="2">'
                    f'<title>{_t(tip)}</title></rect>')
        body.append(f'<rect class="bar saves" x="{label_w}" y="{y}" width="{plot_w * min(saves, share) / scale:.1f}" height="{bar_h}" '
                    f'fill="#2563eb" rx="2"><title>{_t(tip)}</title></rect>')
        body.append(f'<text x="{label_w + plot_w + 8}" y="{y + bar_h - 3}" fill="{INK}">saves ~{saves:.1f}% of {share:.1f}%</text>')
        y += bar_h + gap
    return _svg(width, y + 4, "Fix first: each kernel's share of the time and what fixing it saves", body)


def report_rooflines(groups: list[tuple[str, list[tuple[str, object, tuple]]]], width: int = 720, height: int = 400) -> list[Markup]:
    """One roofline per kind of arithmetic in a report (``(label, [(kernel name, Roofline, its level gaps)])``): every
    kernel a colour, a point at each memory level (DRAM, L2, L1: the hierarchical roofline)."""
    charts = []
    for label, members in groups:
        names = [n if len(n) <= 40 else n[:39] + "…" for n, _, _ in members]
        chart = roofline([r for _, r, _ in members], names, width=width, height=height, palette=KERNEL_COLORS[:len(members)],
                         title=f"Roofline of the report ({label}): each kernel at each memory level, log-log", gaps=[g for _, _, g in members])
        if chart is not None:
            charts.append(chart)
    return charts
