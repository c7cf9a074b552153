"""The sentence of a bundled lesson's stop line (``ncuwrap bench``, ``profile`` of a bundled benchmark)."""

from __future__ import annotations

from ncuwrap.render.phrasing import ms


def stop_line_text(line) -> str:
    """A bundled lesson's stop line in one paragraph: how fast the variant runs uninstrumented, against
    what, and whether to stop or which variant goes further."""
    runs = f"{line.runs} run{'s' if line.runs != 1 else ''}"
    if line.value is not None and line.unit == "GB/s":
        speed = f"{line.value:,.0f} GB/s effective ({ms(line.median_ms)}, "
    elif line.value is not None and line.unit == "TFLOP/s":
        speed = f"{line.value:,.1f} TFLOP/s ({ms(line.median_ms)}, "
    else:  # a lesson measured by its time alone (no bytes or FLOPs to count)
        speed = f"{ms(line.median_ms)} ("
    text = f"{line.variant}: {speed}uninstrumented: ncuwrap bench, median of {runs}, spread {line.spread_pct:.1f}%)"
    further = line.further
    if line.pct is not None:
        figure = f"{line.yardstick_value:,.0f} GB/s" if line.yardstick_unit == "GB/s" else ms(line.yardstick_value)
        text += f" = {line.pct:.0f}% of {line.yardstick} ({figure})"
        if line.decision == "stop":
            return text + (f": past the {line.stop_pct:.0f}% stop line: stop here; only moving fewer bytes (or less work) goes further.")
        text += f": short of the {line.stop_pct:.0f}% stop line"
        if further is not None:
            pct = f"{further.pct:.0f}%, " if further.pct is not None else ""
            return text + f"; {further.variant} goes further ({pct}{ms(further.median_ms)})."
        if line.yardstick_unit == "ms":
            return text + "; no variant of the lesson goes further: use the library."
        return text + "; no variant of the lesson goes further."
    text += ": nothing measured judges this lesson (no copy ceiling, no library)"
    if further is not None:
        return text + f"; {further.variant} is {line.median_ms / further.median_ms:.1f}x faster ({ms(further.median_ms)})."
    return text + "; it is the fastest variant measured."
