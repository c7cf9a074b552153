"""The verdict on a multi-GPU run, the type: the rank set and the rank rules' decision on it, with its JSON form (schema
``ncuwrap.ranks/v1``). The process that makes it is :mod:`ncuwrap.timeline.ranks.diagnosis`, as for one timeline
(``timeline/verdict.py``, ``timeline/diagnosis.py``) and a kernel report (``kernel/verdict.py``, ``kernel/diagnosis.py``)."""

from __future__ import annotations

from dataclasses import dataclass, field

from ncuwrap.core.display import Displayed, plural, short_path
from ncuwrap.core.numbers import clean
from ncuwrap.core.version import __version__
from ncuwrap.ruleset.evaluate import Decided, Decision
from ncuwrap.timeline.ranks.model import RANK_CATEGORIES, RankSet

SCHEMA = "ncuwrap.ranks/v1"


@dataclass(frozen=True)
class RanksDiagnosis(Decided, Displayed):
    """The verdict on a folder of ranks' captures: the rank set and the rules' decision on it; made by :func:`diagnose_ranks`, drawn by the renderers."""
    folder: str
    naming: str
    rules_path: str
    rules_version: int
    rules_name: str
    set: RankSet
    decision: Decision  # the rules' answer: bound, limiter, why, findings, not evaluated, path (Decided)
    workers: str = ""  # how the captures were analysed (serial, local cluster of N, the scheduler's address)
    notes: tuple[str, ...] = field(default=())

    @property
    def ranks(self):
        return self.set.ranks

    @property
    def straggler(self) -> int | None:
        """The rank the rules name as the straggler (their 'straggler' finding), else None."""
        return self.set.metrics["straggler_rank"] if any(f.role == "straggler" for f in self.findings) else None

    def to_json(self) -> dict:
        s = self.set
        return {
            "schema": SCHEMA,
            "tool": {"name": "ncuwrap", "version": __version__},
            "source": {"folder": self.folder, "naming": self.naming, "ranks": len(s.ranks), "analysed_on": self.workers},
            "rules": {"path": self.rules_path, "version": self.rules_version, "name": self.rules_name},
            "bound": self.bound,
            "limiter": self.limiter,
            "why": self.why,
            "straggler": self.straggler,
            "imbalance": clean(s.metrics["imbalance"]),
            "decision_path": [step.to_json() for step in self.path],
            "findings": [f.to_json(estimates=False) for f in self.findings],
            "not_evaluated": [n.to_json() for n in self.not_evaluated],
            "ranks": [self._rank_json(r) for r in s.ranks],
            "collectives": [c.to_json() for c in s.collectives()],
            "metrics": {name: clean(value) for name, value in s.metrics.items()},
            "notes": list(self.notes),
        }

    def __repr__(self) -> str:
        bound = f"{self.bound} ({self.limiter})" if self.limiter else self.bound
        straggler = f"; straggler: rank {self.straggler}" if self.straggler is not None else ""
        return f"<RanksDiagnosis {short_path(self.folder)}: {plural(len(self.ranks), 'rank')}, {bound}{straggler}>"

    def to_frame(self):
        """One row per rank (pandas): its window, the breakdown by category, compute and NCCL time, how
        much of NCCL was hidden, its wait for the others, whether it is the straggler."""
        import pandas as pd

        rows = []
        for r in self.set.ranks:
            j = self._rank_json(r)
            rows.append({"rank": r.rank, "path": r.path, "hostname": r.hostname, "device": r.device, "window_ns": r.window_ns,
                         "window_scope": r.window_scope, **{f"{c}_ns": v for c, v in j["breakdown_ns"].items()},
                         "compute_ns": r.compute_ns, "nccl_ns": r.nccl_ns, "nccl_hidden_pct": j["nccl_hidden_pct"], "nccl_wait_ns": j["nccl_wait_ns"],
                         "nccl_kernels": r.nccl_kernels, "kernel_count": j["kernel_count"], "straggler": j["straggler"],
                         "step_median_ns": r.steps.median_ns if r.steps else None})
        return pd.DataFrame(rows)

    def _rank_json(self, r) -> dict:
        row = self.set.row(r.rank)
        return {
            "rank": r.rank, "path": r.path, "kind": r.kind, "hostname": r.hostname, "command": r.command,
            "start_utc_ns": r.start_utc_ns, "device": r.device, "nsys_version": r.nsys_version, "window_ns": r.window_ns,
            "window_scope": r.window_scope, "capture_ns": r.capture_ns,
            "breakdown_ns": {c: r.breakdown_ns[c] for c in RANK_CATEGORIES},
            "breakdown_pct": {c: clean(r.share(c)) for c in RANK_CATEGORIES},
            "compute_ns": r.compute_ns, "nccl_ns": r.nccl_ns, "nccl_hidden_ns": r.nccl_hidden_ns, "nccl_hidden_pct": clean(r.hidden_pct),
            "nccl_kernels": r.nccl_kernels, "nccl_wait_ns": row.wait_ns, "straggler": r.rank == self.straggler,
            "collectives": [c.to_json() for c in r.collectives],
            "top_compute_kernel": r.top_compute_kernel, "kernel_count": r.timeline.metrics["kernel_count"],
            "steps": r.steps.to_json() if r.steps else None, "nvtx_ranges": r.nvtx_ranges,
        }
