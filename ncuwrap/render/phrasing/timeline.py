"""The sentences of a timeline's diagnosis (``ncuwrap timeline``, and ``compare`` of two timelines): the window, the
steps and their pace, the tracer's cost, what fixing it buys, where kernels were launched from."""

from __future__ import annotations

from ncuwrap.render.phrasing import duration, percent


def amdahl_lesson(timeline) -> str:
    """'Kernels are 7.4% of the window: 4x faster kernels make the run 1.06x faster end to end, and even
    kernels taking no time only 1.08x.'"""
    four, ceiling = timeline.amdahl_at(4.0), timeline.amdahl_at(None)
    if four is None or ceiling is None:
        return ""
    return (f"Kernels are {timeline.kernel_share_pct:.1f}% of the window: 4x faster kernels make the run {four.end_to_end_speedup:.2f}x "
            f"faster end to end, and even kernels taking no time only {ceiling.end_to_end_speedup:.2f}x.")


def window_title(timeline) -> str:
    """'Steady steps (7 of 8), all together: 195.37 ms', 'First to last GPU work: 8.25 s' or 'Traced window:
    6.12 s': the breakdown's scope (its rows add up to this)."""
    if timeline.steps is not None:
        return f"Steady steps ({len(timeline.steps.steady)} of {timeline.steps.count}), all together: {duration(timeline.window_ns)}"
    if timeline.scope == "active":
        return f"First to last GPU work: {duration(timeline.window_ns)}"
    return f"Traced window: {duration(timeline.window_ns)}"


def startup_label(timeline) -> str:
    """What the start-up line of a timeline without steps measures."""
    return ("start-up (before the first GPU work, left out):" if timeline.scope == "active"
            else "start-up (first CUDA call to first GPU work):")


def steps_title(steps) -> str:
    """'Steps ('step')' for NVTX ranges, 'Steps (found by repetition)'."""
    return "Steps (found by repetition)" if steps.found is not None else f"Steps ('{steps.name}')"


def step_lines(timeline) -> list[tuple[str, str]]:
    """The phases of a capture with steps, as (label, text): how they were found (by repetition), start-up,
    warm-up, steady steps, after. A step's busy share is a median over the steps; beside it, the busy and
    idle shares of all steady steps together (the breakdown's scope), so that no busy figure stands beside
    an idle one of another."""
    steps, m = timeline.steps, timeline.metrics
    w = steps.warmup
    found = steps.found_text()
    lines = [("found by repetition:", found)] if found else []
    lines += [("start-up:", f"{duration(steps.startup_ns)} before the first step" + ("" if found else f" ('{steps.name}')")),
              ("warm-up:", f"{w} step{'s' if w != 1 else ''}, {duration(steps.warmup_ns)}: {steps.warmup_why}")]
    busy = steps.gpu_busy_pct
    lines.append(("steady:", f"{len(steps.steady)} steps, {duration(steps.steady_ns)}: a step every {duration(steps.period_ns)} "
                             f"(median; mean {duration(steps.mean_period_ns)}), "
                             f"{duration(steps.gpu_work_ns)} of GPU work launched in it, GPU busy "
                             f"{'n/a' if busy != busy else f'{busy:.0f}%'} of the step (medians); all steady steps together: "
                             f"GPU busy {percent(m.get('gpu_busy_pct'))}, idle {percent(m.get('idle_pct'))}"))
    lines.append(("pace:", pace_text(steps)))
    if timeline.tracer is not None:
        lines.append(("tracer:", tracer_text(timeline.tracer)))
    launches = steps.median("launches")
    if launches == launches:
        lines.append(("host:", f"{launches:.0f} launch calls a step; "
                               f"{steps.median('host_code_pct'):.0f}% of a step in host code with no CUDA call (medians)"))
    cut = " (the loop's last step, cut short at its last launch, left out)" if steps.cut_last else ""
    lines.append(("after:", f"{duration(steps.after_ns)} after the last {'steady ' if cut else ''}step{cut}"))
    return lines


def pace_text(steps) -> str:
    """Who sets the steady steps' pace, and the host's own start-to-start where the GPU does."""
    if steps.paced_by == "gpu":
        return (f"the GPU's: the host starts each step while the GPU still runs the steps before it, so a step runs from "
                f"when the GPU has finished those to when it has finished this one; the host starts a step every "
                f"{duration(steps.host_period_ns)} (median), ahead of the GPU")
    return ("the host's: the GPU has finished the steps before each step when the host starts it, so a step runs from "
            "its start to the next step's")


def tracer_text(t) -> str:
    """'traced: 4.18 ms a step (mean); nsys added ~2.01 ms of host time a step (...): ~2.17 ms untraced, host-bound (GPU busy ~13%)'."""
    counted = f"{t.calls:,.0f} CUDA calls" + (f", {t.ops:,.0f} op ranges" if t.ops else "") + (f", {t.frames:,.0f} Python frames" if t.frames else "")
    if t.graph_launches:
        launches = "the CUDA graph launch" if t.graph_launches == 1 else f"the {t.graph_launches:.3g} CUDA graph launches"
        counted += (f"; ~{duration(t.graph_added_ns)} of it in {launches} a step, whose {t.graph_nodes:.0f} nodes it recorded one by one, "
                    "over an untraced launch")
    from ncuwrap.timeline.tracer import scaled_text

    scaled = scaled_text(t.scale, t.launch_mean_ns, t.calibration)
    added = f"{t.tracer} added ~{duration(t.added_ns)} of host time a step ({counted}; per-event costs measured on {t.calibration.machine}{scaled})"
    bound = "host-bound" if t.untraced_bound == "host" else "GPU-bound"
    after = f"~{duration(t.untraced_ns)} untraced, {bound} (GPU busy ~{t.untraced_busy_pct:.0f}%)"
    if t.paced_by == "gpu":
        return f"traced: {duration(t.traced_ns)} a step (mean); {added}, which the GPU's pace hides: {after}"
    if t.saved_ns < t.added_ns and (t.host_wait_ns or 0) > 0:
        waited = (f"; the step's thread waited ~{duration(t.host_wait_ns)} a step for other processes or queues, which absorbs "
                  f"{'it' if t.saved_ns == 0 else f'all but ~{duration(t.saved_ns)}'}")
    elif t.saved_ns < t.added_ns:
        waited = f"; the steps replayed without it are ~{duration(t.saved_ns)} shorter (the rest ran while the host waited for the GPU)"
    else:
        waited = ""
    floor = " (no shorter than the GPU's busy time a step)" if t.untraced_ns == t.gpu_busy_ns and t.saved_ns > 0 else ""
    return f"traced: {duration(t.traced_ns)} a step (mean); {added}{waited}: {after}{floor}"

REMEDY_LABELS = {"no_tracer": "without the tracer", "cuda_graphs": "CUDA graphs", "no_sync": "no host waits",
                 "pinned_overlap": "pinned, overlapped copies", "host_parallel": "host work in workers", "lower_precision": "lower precision",
                 "fusion": "fused elementwise ops", "faster_kernel": "faster top kernels"}


def whatif_title(w) -> str:
    """'What fixing it buys (65 steady steps replayed on their dependency graph: 1.92 ms a step, measured 1.92 ms, +0.0%)'."""
    return (f"What fixing it buys ({w.steps} steady steps replayed on their dependency graph: {duration(w.replayed_step_ns)} a step, "
            f"measured {duration(w.measured_step_ns)}, {w.replay_error_pct:+.1f}%)")


def whatif_rows(w) -> list[tuple[str, str, str, str]]:
    """(remedy, its label, 'predicted step', 'speedup') per remedy replayed: the tracer's own cost first, then the rest ranked."""
    rows = []
    for p in w.remedies:
        over = "traced over untraced" if p.remedy == "no_tracer" else f"over the untraced {duration(w.untraced_step_ns)}"
        rows.append((p.remedy, REMEDY_LABELS.get(p.remedy, p.remedy), f"~{duration(p.step_ns)} a step", f"{p.speedup:.2f}x ({over})"))
    return rows


def critical_path_text(w) -> str:
    """'host code 82.6%, CUDA calls 17.3% of a step (1.92 ms)': where the replayed step's critical path runs."""
    return (", ".join(f"{part} {share:.1f}%" for part, _, share in w.path_shares())
            + f" of a step ({duration(w.replayed_step_ns)}): what the step waits on, end to end")


def whatif_lines(w) -> list[tuple[str, str]]:
    """(label, text) per remedy, its assumption after it; then the remedies not predicted and why."""
    lines = [("critical path:", critical_path_text(w))] if w.critical_path else []
    lines += [(f"{p.remedy}:", f"{step}, {gain}; assumes {p.assumes}") for (_, _, step, gain), p in zip(whatif_rows(w), w.remedies)]
    lines += [(f"{n.remedy}:", f"not predicted: {n.why}") for n in w.not_predicted]
    return lines


def times_from(*sources) -> str:
    """Where a timeline's (or two timelines') durations come from, for a footer."""
    recorded = list(dict.fromkeys(s.recorded_by for s in sources))
    return (f"Times are from {' and '.join(recorded)} (recorded as the program ran, not replayed), the tracer's own cost "
            "included.")


def timeline_verdict(diagnosis) -> str:
    return f"{diagnosis.bound} ({diagnosis.limiter})" if diagnosis.limiter else diagnosis.bound


def timeline_header(diagnosis) -> str:
    s = diagnosis.source
    return f"{s.path}  ({s.kind}; {s.device or 'unknown GPU'}; {s.producer})"


def launched_from(place) -> str:
    """'gpu_train.py:43 forward (aten::mm, backward of aten::addmm), 52% of its time': a kernel's
    ncuwrap.timeline.model.LaunchedFrom, for every format's 'from:' line."""
    if place.op is None and place.file is None:
        return "unknown (launch not traced, or replayed from a CUDA graph)"
    ops = ", ".join(p for p in (place.op, f"backward of {place.forward_op}" if place.forward_op else None) if p)
    where = f"{place.file}:{place.line} {place.function}" if place.file is not None else None
    text = f"{where} ({ops})" if where and ops else where or ops
    return f"{text}, {place.share_pct:.0f}% of its time" if place.partial else text


def line_is_note(kernels, host_time=None) -> str | None:
    """What the line of a 'from:' or host-time place is (torch.profiler's frames name the function's first
    line), once; None when no place shows a line."""
    places = [k.launched_from for k in kernels if k.launched_from is not None] + list(host_time or ())
    kind = next((p.line_is for p in places if p.line_is), None)
    return f"file:line is the {kind}, as the profiler names Python frames" if kind else None


def host_time_line(h) -> str:
    """'gpu_train.py:100 main: 92.5 ms (75.6% of the window)'."""
    return f"{h.file}:{h.line} {h.function}: {duration(h.ns)} ({h.pct:.1f}% of the window)"
