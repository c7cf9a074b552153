"""The sentences and cells of a set of ranks' diagnosis (``ncuwrap timeline --ranks``): one row per rank, one per
collective."""

from __future__ import annotations

from ncuwrap.render.phrasing import duration, percent
from ncuwrap.render.phrasing.timeline import timeline_verdict


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
