"""The words and cells every format shows of a timeline's op limits (ncuwrap.timeline.oplimits.model.OpLimits):
the step's FLOPs against the peak of the unit most of them run on (its MFU), its bytes against the fused
minimum, the per-op table, what is not modelled, the peaks, the remedies' predicted steps, and the causes of the
matrix products far below their limit (:class:`~ncuwrap.timeline.oplimits.model.MatmulAdvice`)."""

from __future__ import annotations

from ncuwrap.core.peaks import HBM, UNIT_LABELS
from ncuwrap.timeline.oplimits.model import CAUSAL, FAR_BELOW_PCT, MIN_WORK_PCT, NO_MASK, WINDOW
from ncuwrap.render.names import short
from ncuwrap.render.phrasing import duration, number, percent, si

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


def mask_line(limits) -> str | None:
    """The step's totals with the attention whose mask is not recorded counted under either mask it can have, or None
    without such ops: 'with the attention whose mask nsys does not record (aten::_cudnn_attention_backward,
    aten::_cudnn_attention_forward: 5.9% of the steps): 3.37 TFLOP a step, 126 TFLOP/s (11.8% MFU) if the mask is
    causal; 3.85 TFLOP, 145 TFLOP/s (13.5%) if there is none'."""
    causal, full = limits.reading(CAUSAL), limits.reading(NO_MASK)
    if causal is None or full is None:
        return None

    def mfu(r) -> str:
        return f" ({percent(r.mfu_pct)} MFU)" if r.mfu_pct is not None else ""

    ops = ", ".join(m.op for m in limits.unknown_masks)
    return (f"with the attention whose mask nsys does not record ({ops}: {percent(limits.unknown_mask_pct)} of the steps) counted: "
            f"{si(causal.step_flop, 'FLOP')} {_a_step(limits)}, {si(causal.achieved_flops, 'FLOP/s')}{mfu(causal)} if the mask is causal; "
            f"{si(full.step_flop, 'FLOP')}, {si(full.achieved_flops, 'FLOP/s')}{mfu(full)} if there is none")


def escaping_text(limits) -> str:
    """What the fused bytes hold of the values between a chain's ops that other ops read, and of the values its later
    ops read that it did not make, or that they are not known."""
    if not limits.escapes_known:
        return ("; the values between the fused ops are taken as read nowhere else, and their later ops as reading nothing made "
                "outside the run: the capture does not record which ops read them "
                "(a PyTorch profiler trace keeps no tensor's identity; nsys's --pytorch=autograd-shapes-nvtx does)")
    kinds = limits.escaping
    if not kinds:
        text = "; no value between the fused ops is read by another op (nsys's input_op_ids)"
    else:
        top = kinds[0]
        what = "result" if top.output == 0 else f"output {top.output}"
        unsized = limits.unsized_escapes
        text = (f", {si(limits.step_escaping_bytes, 'B')} of it values between the fused ops that other ops read, which the fused kernels "
                f"still write (nsys's input_op_ids; {len(kinds)} kind{'s' if len(kinds) != 1 else ''}, the most: {top.op}'s {what} "
                f"{top.shapes}, read by {top.reader})" + (f"; {number(unsized)} more whose size is not counted" if unsized else ""))
    return text + outside_text(limits)


def outside_text(limits) -> str:
    """What the fused bytes hold of the values a run's later ops read that no op of the run made (nsys's dataflow known)."""
    inputs = limits.outside_inputs
    if not inputs:
        return "; no op after a run's first reads a value made outside the run"
    top = inputs[0]
    made = f"{top.op}'s" if top.op is not None else "a"
    unsized = limits.unsized_outside_inputs
    return (f"; {si(limits.step_outside_input_bytes, 'B')} of it values the fused ops after the first read that no op of their run made, "
            f"which the fused kernels still read ({len(inputs)} kind{'s' if len(inputs) != 1 else ''}, the most: {made} {top.sizes}, "
            f"read by {top.reader})" + (f"; {number(unsized)} more whose size is not known" if unsized else ""))


def bytes_line(limits) -> str:
    moved, fused = limits.step_bytes, limits.step_min_bytes
    text = f"the modelled ops move at least {si(moved, 'B')} {_a_step(limits)}, each op on its own"
    if limits.chains:
        text += f"; with each run of memory-bound ops fused into one pass, at least {si(fused, 'B')}" + escaping_text(limits)
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


REPLAYED = "lower_precision and fusion: under What fixing it buys, replayed with the rest of the step (or why they are not predicted)"


def remedy_lines(limits) -> list[tuple[str, str]]:
    """(label, text) per remedy's predicted step, without a replay; where the steps are replayed, where to find them."""
    if limits.replayed:
        return [("remedies:", REPLAYED)]
    return [(f"{p.remedy}:", f"{duration(p.step_ns)} {_a_step(limits)}, {p.speedup:.2f}x; assumes {p.assumes}") for p in limits.predictions]


# -- the matrix products far below their limit ----------------------------------------------------------------

def advice_title(limits) -> str:
    return (f"Matrix products far below their limit (under {FAR_BELOW_PCT:.0f}% of it, at least {MIN_WORK_PCT:.0f}% of the kernels' time; "
            "most time first)")


def advice_head(a) -> str:
    """'aten::addmm 256x4096 @ 4096x1024 + 1024 fp32: 33.3% of the FP32 CUDA cores' peak; 31.7% of the kernels' time (0.2% of the steps)'."""
    row = a.row
    limit = "HBM's peak bandwidth" if row.limit == HBM else f"the {UNIT_LABELS.get(row.limit, row.limit)}' peak"
    return (f"{op_label(row)} {row.shapes} {row.dtype}: {percent(row.pct_of_limit)} of {limit}; {percent(a.work_pct)} of the kernels' "
            f"time ({percent(row.share_pct)} of the steps), {number(row.calls)} call{'s' if row.calls != 1 else ''}")


def _kernel(t) -> str:
    return t.tile.word if t.tile is not None else short(t.kernel or "")


def tiling_text(a) -> str:
    """Its kernel, tile, blocks and waves: what the checks below read."""
    t, g = a.tiling, a.gemm
    text = f"its kernel {_kernel(t) or 'unknown'}"
    if t.tile is None:
        text += ": its name gives no tile (tiles, padding and the k loop not checked)"
    else:
        along = "along n" if t.transposed else "along m"
        text += (f": tiles of {t.tile.rows}x{t.tile.cols} (its name; {t.tile.rows} {along}), {number(t.tiles)} over "
                 f"{'the ' if g.batch == 1 else 'the ' + number(g.batch) + ' products of '}{g.m}x{g.n}" + (" product" if g.batch == 1 else ""))
        if t.padded_pct and not any(c.cause == "tile_padding" for c in a.causes):
            text += f" ({percent(t.padded_pct)} of their work past its edge)"
    if t.blocks is None:
        return text + "; its grid is not recorded"
    text += f"; {number(t.blocks)} block{'s' if t.blocks != 1 else ''}"
    if t.persistent:
        text += ", at most one an SM, each looping over tiles (a persistent kernel)"
    elif t.split and t.split > 1:
        text += f", {t.split} a tile (k split {t.split} ways)"
    elif t.tile is not None and t.split is None:
        text += " that are not a multiple of its tiles either way (how they share them is not known)"
    if t.waves is not None and t.persistent:
        text += f": {number(t.units)} tiles over them make {number(t.waves)} wave{'s' if t.waves != 1 else ''}, the last with {number(t.last_wave)}"
    elif t.waves is not None:
        text += f" on {number(t.sms)} SMs: one wave"
    elif not t.persistent and t.sms and t.blocks > t.sms:
        text += f" for {number(t.sms)} SMs (how many an SM runs at once is not recorded: the waves are not known)"
    return text


def _memory_bound(c, a) -> str:
    unit = UNIT_LABELS.get(a.row.unit, a.row.unit)
    text = (f"its shape gives {c.intensity:.3g} FLOP a byte (its FLOPs over its minimal bytes), under the ridge point's {c.ridge:.3g} "
            f"(the {unit}' peak over HBM's): at HBM's peak it would reach {percent(c.reach_pct)} of its unit's peak")
    if c.dim is None:
        return text + "; no one of m, n, k grown alone reaches the ridge"
    return text + f"; {c.dim} = {number(c.size)} would have to be at least {number(c.need)} to reach it"


def _few_tiles(c, a) -> str:
    if c.what == "blocks":
        return (f"its kernel runs {number(c.units)} block{'s' if c.units != 1 else ''} for {number(c.sms)} SMs: {number(c.sms - c.units)} "
                "get none; its name gives no tile, so how far m or the batch would have to grow is not known")
    rows, cols = a.tiling.oriented
    text = f"{number(c.units)} tile{'s' if c.units != 1 else ''} of {rows}x{cols} for {number(c.sms)} SMs"
    if c.split and c.split > 1:
        text += f"; the kernel splits k {c.split} ways to run {number(c.blocks)} blocks (their partial sums added after)"
    elif c.blocks is not None:
        text += f": {number(c.sms - c.blocks)} SMs get none" if c.blocks < c.sms else ""
    if c.need is not None:
        what = f"the batch of {number(c.size)} products" if c.dim == "batch" else f"{c.dim} = {number(c.size)}"
        text += f"; {what} would have to be at least {number(c.need)} for as many tiles as SMs at this tile"
    return text


def _wave_tail(c, a) -> str:
    return (f"{number(c.tiles)} tiles on {number(c.slots)} blocks make {number(c.waves)} waves, the last with {number(c.last)}: "
            f"{percent(c.idle_pct)} of the waves' block time idle")


def _tile_padding(c, a) -> str:
    return (f"the {a.tiling.oriented[0]}x{a.tiling.oriented[1]} tiles cover {c.rows}x{c.cols} of a {a.gemm.m}x{a.gemm.n} product: "
            f"{percent(c.padded_pct)} of their arithmetic is past its edge")


def _short_k(c, a) -> str:
    split = f", split {c.split} ways: {number(c.slice_k)} a block" if c.split and c.split > 1 else ""
    return (f"k = {number(c.k)}{split}, {number(c.steps)} step{'s' if c.steps != 1 else ''} of the kernel's {c.step}-deep k loop, no "
            f"more than the {c.stages} stages its pipeline keeps in flight: it never reaches its steady state, and filling it and "
            "writing each output tile are not amortized over a longer loop")


def _misaligned(c, a) -> str:
    dims = ", ".join(f"{dim} = {number(size)} (padded: {number(padded)})" for dim, size, padded in c.dims)
    return (f"{dims} {'is' if len(c.dims) == 1 else 'are'} not a multiple of {c.granule} elements (16 bytes of {c.dtype}): "
            "NVIDIA's GEMM guide has cuBLAS fastest with m, n and k multiples of 16 bytes; pad them")


def _short_calls(c, a) -> str:
    return f"each call moves {si(c.bytes_per_call, 'B')} in {duration(c.ns_per_call)}; HBM's peak would move them in {duration(c.ns_at_peak)}"


_CAUSES = {"memory_bound": ("memory-bound:", _memory_bound), "too_little_work": ("too little work:", _few_tiles),
           "waves": ("waves:", _wave_tail), "tile_padding": ("tile padding:", _tile_padding), "short_k": ("short k:", _short_k),
           "alignment": ("alignment:", _misaligned), "short_calls": ("short calls:", _short_calls)}


def cause_lines(a) -> list[tuple[str, str]]:
    """(label, text) for each cause its numbers show, what was not checked, or that no check explains it."""
    out = [(_CAUSES[c.cause][0], _CAUSES[c.cause][1](c, a)) for c in a.causes]
    if a.granule is None:
        out.append(("not checked:", f"alignment: no 16-byte granule is known for {a.row.dtype}"))
    if not a.row.peak_flops:
        out.append(("not checked:", "the ridge point: no peak is known for its unit"))
    if not a.causes:
        out.append(("none found:", "no check here explains it (alignment, tiles and waves, the k loop, the ridge point); profile its "
                                   "kernel with ncu to see why (ncuwrap profile --top)"))
    return out


def advice_rest(limits) -> str | None:
    _, more, work = limits.top_advice()
    return f"{more} more, {percent(work)} of the kernels' time (--format json lists them)" if more else None
