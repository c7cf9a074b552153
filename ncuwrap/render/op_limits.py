"""The words and cells every format shows of a timeline's op limits (ncuwrap.timeline.oplimits.model.OpLimits):
the step's FLOPs against the peak of the unit most of them run on (its MFU), its bytes against the fused
minimum, the per-op table, what is not modelled, the peaks and the remedies' predicted steps."""

from __future__ import annotations

from ncuwrap.core.peaks import HBM, UNIT_LABELS
from ncuwrap.timeline.oplimits.model import WINDOW
from ncuwrap.render.phrasing import duration, percent, si

COLUMNS = ("op", "shapes", "calls", "time", "share", "FLOP", "bytes", "achieved", "limit", "of limit")
RIGHT = ("calls", "time", "share", "FLOP", "bytes", "achieved", "of limit")
# The columns a narrow terminal leaves out first (the JSON has every one).
DROP = (("FLOP", "bytes"), ("calls",), ("time",))


def title(limits) -> str:
    if limits.scope == WINDOW:
        return "Ops against their limits (the whole window: no steps)"
    return f"Ops against their limits ({limits.steps} steady step{'s' if limits.steps != 1 else ''})"


def _a_step(limits) -> str:
    return "in the window" if limits.scope == WINDOW else "a step"


def shapes_line(limits) -> str:
    over = "the window" if limits.scope == WINDOW else f"the {limits.steps} steady step{'s' if limits.steps != 1 else ''}"
    return (f"shapes from {limits.shapes_from}; calls, time, FLOP and bytes are over {over}, share is of their time, achieved is "
            "the rate of the op's limit")


def shapes_sentence(limits) -> str:
    """:func:`shapes_line` as a sentence of its own."""
    line = shapes_line(limits)
    return line[:1].upper() + line[1:] + "."


def step_line(limits) -> str:
    """'8.74 TFLOP a step in 30.60 ms: 285 TFLOP/s, 26.7% of the BF16 tensor cores' peak (1.07 PFLOP/s), the unit most
    of the step's FLOPs run on (MFU)'."""
    head = (f"{si(limits.step_flop, 'FLOP')} {_a_step(limits)} in {duration(limits.step_ns)}: {si(limits.achieved_flops, 'FLOP/s')}"
            if limits.scope != WINDOW else f"{si(limits.step_flop, 'FLOP')} in {duration(limits.step_ns)}: {si(limits.achieved_flops, 'FLOP/s')}")
    unit = limits.dtype_unit
    if unit is None:
        return f"{head}; no peak is known for the unit most of its FLOPs run on"
    return (f"{head}, {percent(limits.mfu_pct)} of the {UNIT_LABELS[unit]}' peak ({si(limits.peak_flops, 'FLOP/s')}), the unit most of the "
            "step's FLOPs run on (MFU)")


def bytes_line(limits) -> str:
    moved, fused = limits.step_bytes, limits.step_min_bytes
    text = f"the modelled ops move at least {si(moved, 'B')} {_a_step(limits)}, each op on its own"
    if limits.chains:
        text += f"; with each run of memory-bound ops fused into one pass, at least {si(fused, 'B')}"
    if limits.bytes_unknown_pct:
        text += (f"; the bytes of ops taking {percent(limits.bytes_unknown_pct)} of the steps are unknown (a dtype neither recorded "
                 "nor named by their kernels) and not in these sums")
    return text


def coverage_line(limits) -> str:
    """What share of the kernels' time is modelled, and the ops that are not, with why."""
    text = f"ops taking {percent(limits.modelled_pct)} of the kernels' time"
    if not limits.unmodelled:
        return text
    named, more, share = limits.top_unmodelled()
    shown = "; ".join(f"{u.op} ({percent(u.share_pct)} of the steps: {u.reason})" for u in named)
    return f"{text}. Not modelled: {shown}" + (f"; {more} more, {percent(share)}" if more else "")


def peaks_line(limits) -> str:
    p = limits.peaks
    units = ", ".join(f"{label.split(' ')[0]} {si(p.of(unit), 'FLOP/s')}" for unit, label in UNIT_LABELS.items()
                      if unit != HBM and p.of(unit) is not None)
    where = f"{p.device or 'unknown GPU'}" + (f", {p.sm_count} SMs at {p.sm_clock_hz / 1e9:.2f} GHz" if p.sm_count and p.sm_clock_hz else "")
    memory = f"HBM {si(p.dram_bytes_per_s, 'B/s')}" if p.dram_bytes_per_s else "HBM bandwidth unknown"
    text = f"{where}: {units + ' dense; ' if units else 'no compute peak known; '}{memory}"
    sources = "; ".join(p.sources)
    return text + (f". {sources[0].upper()}{sources[1:]}" if sources else "")


def op_label(row) -> str:
    return row.op + (f" (backward of {row.forward_op})" if row.forward_op and row.forward_op != row.op else "")


def cells(row) -> dict[str, str]:
    """A row of the per-op table, by column."""
    rate = si(row.achieved_bytes_per_s, "B/s") if row.limit == HBM else si(row.achieved_flops, "FLOP/s")
    return {"op": op_label(row), "shapes": f"{row.shapes} {row.dtype or 'dtype unknown'}", "calls": f"{row.calls:,}", "time": duration(row.time_ns),
            "share": percent(row.share_pct), "FLOP": si(row.flop, "FLOP"), "bytes": si(row.bytes, "B") if row.bytes is not None else "unknown",
            "achieved": rate if row.limit is not None else "n/a", "limit": UNIT_LABELS.get(row.limit, "unknown") if row.limit else "unknown",
            "of limit": percent(row.pct_of_limit)}


def rest_line(limits) -> str | None:
    count, share = limits.rest()
    return f"{count} more op{'s' if count != 1 else ''}, {percent(share)} of the steps (--format json lists them)" if count else None


def unit_lines(limits) -> list[str]:
    """How the units were told: TF32 where it was seen, the dtype where the kernels' names gave it."""
    out = []
    if limits.tf32:
        out.append(f"TF32: {limits.tf32}")
    if any(r.dtype_how == "the kernels' names" for r in limits.rows):
        out.append("dtypes not recorded with the shapes are read from the kernels' names")
    return out


REPLAYED = "lower_precision and fusion are predicted with the rest of the step replayed, under What fixing it buys"


def remedy_lines(limits) -> list[tuple[str, str]]:
    """(label, text) per remedy's predicted step, without a replay; where the steps are replayed, where to find them."""
    if limits.replayed:
        return [("remedies:", REPLAYED)]
    return [(f"{p.remedy}:", f"{duration(p.step_ns)} {_a_step(limits)}, {p.speedup:.2f}x; assumes {p.assumes}") for p in limits.predictions]
