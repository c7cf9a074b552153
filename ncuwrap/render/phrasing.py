"""Small formatting helpers shared by the text renderers (table, markdown, html)."""

from __future__ import annotations


def duration(ns) -> str:
    """Human duration from ns: '36.19 us'."""
    if ns is None:
        return "n/a"
    ns = float(ns)
    for unit, scale in (("s", 1e9), ("ms", 1e6), ("us", 1e3)):
        if ns >= scale:
            return f"{ns / scale:.2f} {unit}"
    return f"{ns:.0f} ns"


def ms(value) -> str:
    """A bench median: '0.08186 ms' (4 significant digits: the runs' spread is larger)."""
    return "n/a" if value is None else f"{float(value):.4g} ms"


def percent(value) -> str:
    return "n/a" if value is None else f"{float(value):.1f}%"


def number(value) -> str:
    if value is None:
        return "n/a"
    if isinstance(value, str):
        return value
    value = float(value)
    if value.is_integer() and abs(value) < 1e15:
        return f"{int(value):,}"
    if abs(value) >= 100:
        return f"{value:,.0f}"
    return f"{value:.3g}"


def display_path(path) -> str:
    """A report path as a shared document shows it: relative to the current folder when inside it;
    otherwise the file name (an absolute path names someone's machine, not the report)."""
    from pathlib import Path

    text = str(path)
    p = Path(text)
    if not p.is_absolute():
        return text
    try:
        return str(p.relative_to(Path.cwd()))
    except ValueError:
        return p.name


def launch(dims) -> str:
    return "x".join(str(d) for d in dims) if dims else "n/a"


def verdict(kernel) -> str:
    return kernel.verdict_label


def gain(value) -> str:
    """An estimated speedup (% of the kernel's time) as a reader wants it: '74%', '<1%', 'n/a'."""
    if value is None:
        return "n/a"
    value = float(value)
    return "<1%" if 0 < value < 1 else f"{value:.0f}%"


def gain_factor(value) -> str:
    """The same estimate as a speedup factor: 74% of the time saved is '3.85x'."""
    if value is None:
        return "n/a"
    value = float(value)
    return "n/a" if value >= 100 else f"{1.0 / (1.0 - value / 100.0):.2f}x"


def finding_gain(finding) -> str:
    """'est. 74% of the time (after the fix: dram limits)' for a finding with an estimate."""
    if finding.estimated_speedup is None:
        return ""
    after = f"; then {finding.limited_after} limits" if finding.limited_after else ""
    return f"est. {gain(finding.estimated_speedup)} of its time{after}"


def ncu_rule_line(rule) -> str:
    """One of Nsight Compute's rules beside ncuwrap's: 'UncoalescedGlobalAccess: est. 39% (global); differ: ...'."""
    est = f"est. {gain(rule.estimated_speedup)}" + (f" ({rule.speedup_type})" if rule.speedup_type else "") if rule.estimated_speedup is not None else rule.kind
    tail = f"; {rule.agreement}" if rule.agreement else ""
    return f"{rule.rule}: {est}{tail}"


def share(pct: float | None) -> str:
    """A share of the profiled time (Diagnosis.share_pct), as the reports print it."""
    return "n/a" if pct is None else f"{pct:.1f}%"


def si(value, unit: str) -> str:
    """``3.1e12, 'B/s'`` -> ``'3.11 TB/s'``."""
    if value is None or isinstance(value, str):
        return "n/a" if value is None else value
    value = float(value)
    for prefix, scale in (("P", 1e15), ("T", 1e12), ("G", 1e9), ("M", 1e6), ("k", 1e3)):
        if abs(value) >= scale:
            return f"{value / scale:.3g} {prefix}{unit}"
    return f"{value:.3g} {unit}"


_SI_UNITS = {"byte/s": "B/s", "flop/s": "FLOP/s", "hz": "Hz"}


def metric(name: str, value) -> str:
    """A metric's value with its unit, as a reader expects it: '64.6%', '3.11 TB/s', '36.19 us', '16,378,009'."""
    from ncuwrap.kernel import metrics as kernel_metrics

    if value is None or isinstance(value, str):
        return number(value)
    unit = kernel_metrics.unit(name)
    if unit == "%":
        return percent(value)
    if unit == "ns":
        return duration(value)
    if unit in _SI_UNITS:
        return si(value, _SI_UNITS[unit])
    return number(value)


def signed(value, digits: int = 1, suffix: str = "") -> str:
    """'+12.3' / '-4.0' / 'n/a'."""
    return "n/a" if value is None else f"{float(value):+.{digits}f}{suffix}"


def change(delta) -> str:
    """A compare Delta as '22.0% → 64.6% (+42.6 pts)', '108.13 us → 36.19 us (-66.5%)', 'l1tex → l2'."""
    before, after = metric(delta.name, delta.before), metric(delta.name, delta.after)
    if delta.delta is None:
        return f"{before} → {after}"
    if delta.unit == "%":
        return f"{before} → {after} ({delta.delta:+.1f} pts)"
    if delta.change_pct is not None:
        return f"{before} → {after} ({delta.change_pct:+.1f}%)"
    return f"{before} → {after}"


def speedup(ratio) -> str:
    """before/after time ratio: '2.99x faster', '1.25x slower', 'n/a'."""
    if ratio is None:
        return "n/a"
    return f"{ratio:.2f}x faster" if ratio >= 1 else f"{1 / ratio:.2f}x slower"


def estimate_vs_measured(pair) -> str:
    """'estimated 4.50x, measured 6.42x' for a compare pair: what BEFORE's counters said the resolved
    findings cost, against the bench timings."""
    if pair.estimated_gain_pct is None:
        return "no estimate (no resolved finding with one)"
    est = f"estimated {gain_factor(pair.estimated_gain_pct)} ({gain(pair.estimated_gain_pct)} of the time)"
    return f"{est}, measured {speedup(pair.speedup)}" if pair.speedup is not None else f"{est}; measured: give both bench timings"


def verdict_change(pair) -> str:
    before, after = verdict(pair.before), verdict(pair.after)
    return f"{before} → {after}" if pair.verdict_changed else f"{after} (unchanged)"


def change_only(delta) -> str:
    """Just the change of a compare Delta: '+42.6 pts', '-66.5%', '' when it has none."""
    if delta.delta is None:
        return ""
    if delta.unit == "%":
        return f"{delta.delta:+.1f} pts"
    if delta.change_pct is not None:
        return f"{delta.change_pct:+.1f}%"
    return f"{delta.delta:+g}"


# Plain names of the key metrics compared by 'ncuwrap compare'.
# The heading of the findings a comparison introduced but did not gate on (ncuwrap.kernel.compare.gates_on).
NOT_GATING = "Introduced, not gating (the change made it measurably faster; --fail-on-finding LEVEL counts them)"

METRIC_LABELS = {
    "duration_ns": "ncu duration (instrumented)",
    "sm_pct": "SM throughput",
    "memory_pct": "memory throughput (busiest unit)",
    "dram_pct": "DRAM throughput",
    "l2_pct": "L2 throughput",
    "l1tex_pct": "L1/TEX throughput",
    "achieved_occupancy_pct": "achieved occupancy",
}


def clock_note(diagnosis) -> str:
    """How the GPU clocks were handled while ncu measured, from the report's command line; a report
    without one (a CSV export) does not say, and neither does this."""
    control = diagnosis.source.clock_control
    if control is None:
        return "clock control unknown (the report does not record ncu's command line)"
    if control.startswith("none"):
        return "clocks were left alone (--clock-control none)"
    if control.startswith("base"):
        return "clocks were locked to base by ncu (--clock-control base, its default)"
    return f"clocks were set by ncu (--clock-control {control})"


def l1_left_out(roofline, series: str = "") -> str:
    """Why a roofline has no L1 point (Roofline.l1_left_out): the SMs' traffic reaches L2 without L1."""
    sectors, requests = roofline.l1_left_out
    return (f"{series + ': ' if series else ''}no L1 point: L1 looked up {round(sectors):,} sectors while the SMs sent "
            f"{round(requests):,} requests to L2: their traffic bypasses L1 (as TMA copies and wgmma operands do), so L1 does not "
            f"carry this kernel's traffic.")


def priority_line(p, program: bool, name) -> str:
    """``program``: the shares are of the whole program's GPU time (profile --top), not of the profiled time;
    ``name``: the document's kernel names (ncuwrap.render.names.Names)."""
    scope = "the program's GPU time" if program else "the profiled time"
    return (f"{name(p.name)}: fixing it saves ~{p.saves_pct:.1f}% of {scope} ({p.share_pct:.1f}% of the time x est. "
            f"{gain(p.gain_pct)} gain){f'; first: {p.headline}' if p.headline else ''}")


def fix_first_scope(diagnosis) -> str:
    """What the 'fix first' shares are of: the program's GPU time (profile --top) or the profiled time."""
    return f"share of {gpu_time_of(diagnosis.coverage)}" if diagnosis.coverage else "share of the time"


def fix_first_title(diagnosis) -> str:
    return f"Fix first ({fix_first_scope(diagnosis)} x estimated gain):"


def gpu_time_of(coverage) -> str:
    """Whose GPU time the shares of profile --top are of."""
    return "the steady steps' GPU time" if coverage.scope == "steady steps" else "the program's GPU time"


def coverage_line(c) -> str:
    """profile --top: the whole program as nsys measured it, and what the profiled kernels cover of it."""
    n = len(c.kernels)
    where = "Steady steps" if c.scope == "steady steps" else "Whole program"
    return (f"{where} (nsys, not instrumented): {duration(c.gpu_ns)} of GPU time in {c.launches:,} launches of "
            f"{c.distinct:,} kernels (by name and launch configuration); the {n} profiled kernel{'s' if n != 1 else ''} "
            f"(top {c.top} by GPU time, launch {c.nth_launch} of each) cover {c.covered_pct:.1f}% of it.")


def program_line(kernel, coverage) -> str | None:
    """A profiled kernel's launches and GPU time in the whole program (profile --top)."""
    covered = coverage.of(kernel.id) if coverage else None
    if covered is None:
        return None
    t = covered.time
    return (f"#{covered.rank} by GPU time: {t.launches:,} launch{'es' if t.launches != 1 else ''}, {duration(t.total_ns)} in total "
            f"({t.share_pct:.1f}% of {gpu_time_of(coverage)}); per launch median {duration(t.median_ns)}, "
            f"min {duration(t.min_ns)}, max {duration(t.max_ns)}"
            + (f"; from: {launched_from(t.launched_from)}" if t.launched_from is not None else ""))


def headline_text(kernel) -> str:
    """The summary line of a kernel: its first finding, and how many rules could not be evaluated."""
    head = kernel.headline
    text = head.title if head else no_issue(kernel)
    if kernel.not_evaluated:
        text += f" ({not_evaluated_count(kernel)})"
    return text


def no_issue(kernel) -> str:
    """What a kernel without a costly finding says: 'no issue found' only when nothing was found at all
    (a minor finding below it would make that false) and every rule could be evaluated (an
    unmeasured waste is not an absent one)."""
    minor = len(kernel.minor_findings)
    text = f"no costly issue found ({minor} minor)" if minor else "no issue found"
    if any(n.of_finding for n in kernel.not_evaluated):
        text += " by the rules evaluated"
    return text


_STALLED = "smsp__average_warps_issue_stalled_"


def undecided_line(step) -> str:
    """The next steps the rules could not decide on, grouped by what they lack: 'not decided without
    the warp stall reasons: More bytes in flight; Fewer synchronizations per byte (re-profile with ...)'."""
    groups: dict[tuple, list[str]] = {}
    for u in step.undecided:
        groups.setdefault((u.missing, u.how), []).append(u.title.split(":")[0])
    parts = []
    for (missing, how), titles in groups.items():
        what = ("the warp stall reasons" if all(m.startswith(_STALLED) for m in missing)
                else ", ".join(missing[:2]) + (f" and {len(missing) - 2} more" if len(missing) > 2 else ""))
        # The hint names the metrics and then how to collect them: the list is said above already.
        parts.append(f"without {what}: {'; '.join(titles)} ({how.split('; ', 1)[-1]})")
    return "not decided " + "; ".join(parts)


def not_evaluated_count(kernel) -> str:
    n = len(kernel.not_evaluated)
    return f"{n} rule{'s' if n != 1 else ''} not evaluated"


def reprofile_line(reprofile) -> str:
    """The report's one 'not evaluated' sentence: which rules, on how many launches, what to do."""
    n = reprofile.launches
    missing = len(reprofile.missing)
    return (f"{', '.join(reprofile.rules)} on {n} launch{'es' if n != 1 else ''}: {missing} metric{'s' if missing != 1 else ''} "
            f"missing (listed in --format json); {reprofile.how}.")


def process(kernel) -> str:
    """'pid 2709' or 'pid 2709 (templated)'."""
    if kernel.process_id is None:
        return "n/a"
    return f"pid {kernel.process_id}" + (f" ({kernel.process_name})" if kernel.process_name else "")


# --- timelines ---

def gbps(value) -> str:
    return "n/a" if value is None or value != value else f"{float(value):.1f} GB/s"


def size(nbytes, spec: str = ",.1f", missing: str = "n/a") -> str:
    """'64.0 MiB', '4.0 KiB', '12 B' (``spec``: how the scaled number is written; ``missing``: for None)."""
    if nbytes is None:
        return missing
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if nbytes >= scale:
            return f"{format(nbytes / scale, spec)} {unit}"
    return f"{int(nbytes)} B"


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


def evidence(finding) -> str:
    """'name=value, ...' of a finding's evidence."""
    return ", ".join(f"{name}={number(value)}" for name, value in finding.evidence.items())


def ranks_verdict(diagnosis) -> str:
    """'communication (waiting for rank 1)'."""
    return timeline_verdict(diagnosis)


def rank_cells(diagnosis) -> list[dict]:
    """One row per rank of ``timeline --ranks``, its cells as text (shared by the table, Markdown and HTML)."""
    out = []
    for r in diagnosis.set.ranks:
        row = diagnosis.set.row(r.rank)
        steps = r.steps
        out.append({
            "rank": str(r.rank) + (" *" if r.rank == diagnosis.straggler else ""),
            "host": r.hostname or "?",
            "window": duration(r.window_ns),
            "compute": f"{duration(r.compute_ns)} ({r.share('compute'):.1f}%)",
            "nccl": f"{duration(r.nccl_ns)}" if r.nccl_kernels else "none",
            "exposed": f"{duration(r.breakdown_ns['nccl'])} ({r.share('nccl'):.1f}%)" if r.nccl_kernels else "-",
            "hidden": percent(None if r.nccl_ns == 0 else r.hidden_pct),
            "wait": duration(row.wait_ns),
            "idle": f"{r.share('idle'):.1f}%",
            "steps": f"{steps.count} x {duration(steps.median_ns)}" if steps else "-",
            "file": r.path,
        })
    return out


def collective_cells(diagnosis) -> list[dict]:
    """One row per NCCL collective, summed over the ranks, its cells as text (the table, Markdown and HTML)."""
    return [{"collective": c.name, "kernels": f"{c.kernels:,}", "time": duration(c.ns), "hidden": percent(c.hidden_pct),
             "exposed": duration(c.exposed_ns)} for c in diagnosis.set.collectives()]


COLLECTIVE_COLUMNS = (("collective", "collective"), ("kernels", "kernels"), ("time", "time"), ("hidden", "hidden"), ("exposed", "exposed"))
COLLECTIVE_NOTE = ("summed over the ranks; time: its kernels ran (union, per rank); hidden: the share under a compute kernel; "
                   "exposed: the rest (collectives that overlap each other each count it)")


RANK_COLUMNS = (("rank", "rank"), ("host", "host"), ("window", "window"), ("compute", "compute"), ("nccl", "NCCL"),
                ("exposed", "exposed"), ("hidden", "hidden"), ("wait", "wait"), ("idle", "idle"), ("steps", "steps"))


# ----------------------------------------------------------------------------------------- source lines


def where_note(where) -> str | None:
    """What a reader must know about a finding's lines: why there are none, or that they are SASS
    instructions only (code without line information), or how much of the waste they hold."""
    if where is None:
        return None
    if not hasattr(where, "lines"):
        return f"lines not known: {where.why}"
    if not where.by_line:
        return (f"SASS only (no line information for {where.function}: built without -lineinfo); "
                f"the instructions below hold {100 * where.covered:.0f}% of the waste")
    if where.spread_out:
        return f"spread out: the lines below hold {100 * where.covered:.0f}% of the {where.label}"
    return None


def hot_line(where, hot, first: bool = True, location: bool = True) -> str:
    """'transpose.cu:31  100% of the excess global store sectors  [@!P0 STG.E desc[UR4][R12.64], R7 +3 more]';
    the lines after the ``first`` give the share alone (the same waste); without ``location`` for
    formats that show it apart (a code span, a link)."""
    text = (f"{hot.location}  " if location else "") + f"{100 * hot.share:.0f}%" + (f" of the {where.label}" if first else "")
    if where.waste == "stall_samples" and hot.stalls:
        text += " (" + ", ".join(f"{reason} {100 * share:.0f}%" for reason, share in hot.stalls) + ")"
    sass = [i.sass for i in hot.instructions if i.sass]
    if sass:
        more = hot.contributors - 1
        text += f"  [{sass[0]}{f' +{more} more' if more > 0 else ''}]"
    return text


def hot_lines(where) -> list[tuple[str, str | None]]:
    """Each hot line's head (hot_line) and its source text (None where the report has none)."""
    if where is None or not hasattr(where, "lines"):
        return []
    return [(hot_line(where, hot, i == 0), hot.text) for i, hot in enumerate(where.lines)]


def line_change(change) -> str:
    """'transpose.cu:31: 14,680,064 excess global store sectors -> gone' (a line of a finding, before and after)."""
    after = "the finding no longer fires" if change.after is None else ("gone" if change.gone else number(change.after))
    return f"{change.location}: {number(change.before)} {change.label} ({100 * change.before_share:.0f}% before) -> {after}"


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
