"""What fixing a finding would buy: the estimated share of a kernel's time it costs.

The model is the roofline's own: a kernel's time follows its busiest unit. Each unit ``u`` (the SMs,
L1/TEX, L2, DRAM, the hottest L2 slice's atomic unit, as the rules file lists them) runs at a
utilization ``util_u`` (% of its peak). A finding says how much of each unit's work its fix removes
(``removes``: a share per unit) or how much more of the GPU the fix would put to work (``fills``: the
share of the machine the launch keeps busy now). After the fix

    U = util_b = max_u(util_u), U_b' = util_b * (1 - removes_b), w = min(1, U / busy)
    r = max(fills * max(U_b' / U, 1 - w),      # the work left on the busiest unit b at its pace, or the latency-bound part
            max_u(util_u' / reach_u),          # no unit runs past what the fixed kernel can reach on it
            floor_ns / duration)               # no launch is shorter than the floor

The busiest unit keeps the pace it runs at now; a unit that takes over after the fix is not held to
that pace (it was not what held the kernel back) but to what the fixed kernel can reach on it, where
``reach_u`` is the unit's roof (``roof`` % of its peak) or, where the rules say so (``reach``),
less: what the fixed kernel can reach there (a stream's DRAM bandwidth follows the bytes each thread
keeps in flight: one 4-byte load a thread reaches 54% of an H200's DRAM, not 90%).

``r`` of the time is left, and the estimated speedup is ``100 * (1 - r)`` percent of the kernel's time (the
way Nsight Compute states its own estimates). A waste on a unit that does not limit the kernel removes
work nobody waits for: the busiest unit stays where it is and the estimate is close to 0. In a
latency-bound kernel (U under ``busy``) time is not proportional to any unit's work: the share ``1 - w``
of its time stays whatever the waste, so a few wasted sectors of a one-block kernel at 0.5% of every
peak buy nothing, while a kernel at 53% keeps most of the effect.

Several findings combine by adding the shares of a unit's work each removes (each is a share of the
work as measured) and taking the smallest ``fills``: the estimate for fixing them together, which is
what ``compare`` checks against a measured before/after speedup.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


@dataclass(frozen=True)
class Effect:
    """What a fix changes, per launch: the share of each unit's work it leaves, and the share of the
    machine in use (1: the launch already fills it)."""

    keep: dict[str, np.ndarray]
    fill: np.ndarray

    def combine(self, other: "Effect") -> "Effect":
        # Each finding's share is of the unit's work as measured, so fixing both removes the sum of
        # their shares (not a share of what the other leaves): 58% and 29% of L1's work leave 13%.
        units = set(self.keep) | set(other.keep)
        keep = {u: np.clip(np.asarray(self.keep.get(u, 1.0)) + np.asarray(other.keep.get(u, 1.0)) - 1.0, 0.0, 1.0) for u in units}
        return Effect(keep=keep, fill=np.fmin(self.fill, other.fill))


@dataclass(frozen=True)
class Estimate:
    """Per launch: the share of the time left after the fix, the gain in % and what limits then."""

    remaining: np.ndarray  # r in (0, 1]; NaN where unknown
    gain_pct: np.ndarray  # 100 * (1 - r)
    limited_by: np.ndarray  # object: a unit name, "parallelism", "launch floor", or None


def no_effect(n: int) -> Effect:
    return Effect(keep={}, fill=np.ones(n))


def effect(n: int, removes: dict[str, np.ndarray], fills: np.ndarray | None) -> Effect:
    """An Effect from a finding's evaluated ``removes`` (shares, clipped to [0, 1]) and ``fills``.
    An unknown share stays unknown (NaN) and makes the estimate unknown."""
    keep = {u: 1.0 - np.clip(np.asarray(v, dtype=float) * np.ones(n), 0.0, 1.0) for u, v in removes.items()}
    fill = np.ones(n) if fills is None else np.clip(np.asarray(fills, dtype=float) * np.ones(n), 1e-6, 1.0)
    return Effect(keep=keep, fill=fill)


def estimate(util: dict[str, np.ndarray], fx: Effect, duration_ns: np.ndarray, *, roof: float, floor_ns: float, busy: float,
             reach: dict[str, np.ndarray] | None = None) -> Estimate:
    """Apply ``fx`` to the units' utilizations ``util`` (% of peak per launch). ``reach``: what the fixed
    kernel can reach on a unit (% of peak) where less than ``roof`` (NaN: not known, ``roof``)."""
    names = list(util)
    n = len(duration_ns)
    now = np.vstack([np.asarray(util[u], dtype=float) * np.ones(n) for u in names]) if names else np.full((1, n), np.nan)
    keep = np.vstack([np.asarray(fx.keep.get(u, 1.0), dtype=float) * np.ones(n) for u in names]) if names else np.ones((1, n))
    after = now * keep
    known = ~np.isnan(now)
    # A unit that was not measured neither limits nor gains; an unknown share on a measured unit
    # makes the whole estimate unknown.
    unknown = (known & np.isnan(keep)).any(axis=0) | np.isnan(fx.fill) | ~known.any(axis=0)
    busiest_now = np.where(known, now, -np.inf).max(axis=0)
    after_filled = np.where(known, np.nan_to_num(after, nan=0.0), -np.inf)
    busiest_after = after_filled.max(axis=0)
    which = np.argmax(after_filled, axis=0)
    with np.errstate(divide="ignore", invalid="ignore"):
        weight = np.clip(busiest_now / busy, 0.0, 1.0)
        # The latency-bound part (1 - w) and the work left overlap in time: the longer of the two remains.
        # The busiest unit now keeps its pace; any other is held only by what it can reach (below).
        lead = np.argmax(np.where(known, now, -np.inf), axis=0)
        lead_after = np.take_along_axis(after_filled, lead[None, :], axis=0)[0]
        work = fx.fill * np.where(busiest_now > 0, np.fmax(lead_after / busiest_now, 1.0 - weight), 1.0)
        # No unit runs past what the fixed kernel can reach on it (its roof, or less: 'reach').
        reachable = np.vstack([np.fmin(roof, np.nan_to_num(np.asarray((reach or {}).get(u, roof), dtype=float) * np.ones(n), nan=roof))
                               for u in names]) if names else np.full((1, n), roof)
        ratio = np.where(known, after_filled / np.maximum(reachable, 1e-3), -np.inf)
        roofed = np.where(np.isfinite(busiest_after), ratio.max(axis=0), busiest_after / roof)
        which = np.where((roofed > work) & np.isfinite(busiest_after), np.argmax(ratio, axis=0), which)
        floor = np.where(duration_ns > 0, floor_ns / duration_ns, 0.0)
    stacked = np.vstack([work, roofed, floor])
    remaining = np.clip(stacked.max(axis=0), 0.0, 1.0)
    limit = np.argmax(stacked, axis=0)
    labels = np.array(names + [None], dtype=object) if names else np.array([None], dtype=object)
    unit_after = labels[np.where(np.isfinite(busiest_after), which, len(names))]
    limited = np.where(limit == 2, "launch floor", np.where((limit == 0) & (fx.fill < 1.0) & (work > roofed), "parallelism", unit_after)).astype(object)
    remaining = np.where(unknown, np.nan, remaining)
    limited[unknown] = None
    return Estimate(remaining=remaining, gain_pct=100.0 * (1.0 - remaining), limited_by=limited)


class ColumnLists:
    """The whole report's arrays as Python lists, each converted once however many launches' documents
    read it (a float taken from an array for each launch costs, over many launches: docs/scale.md, figures behind the code)."""

    def __init__(self) -> None:
        self._lists: dict[int, tuple] = {}
        self._mappings: dict[int, tuple] = {}

    def listed(self, values) -> list:
        """``values`` (an array of every launch, or one value for all) as the list :meth:`at` reads (NaN as None)."""
        return self._list(values)

    def _list(self, values) -> list:
        hit = self._lists.get(id(values))
        if hit is None or hit[0] is not values:  # holding the array keeps its id from being reused
            hit = self._lists[id(values)] = (values, [None if v != v else v for v in np.asarray(values, dtype=float).reshape(-1).tolist()])
        return hit[1]

    def at(self, values, row: int) -> float | None:
        """``values``' entry of ``row`` (its only one when it has one) as a float; NaN as None."""
        flat = self._list(values)
        return flat[row if len(flat) > 1 else 0]

    def mapping_at(self, arrays: dict, row: int) -> dict:
        """``{key: self.at(values, row)}`` of a mapping of arrays, each read as a list once for all launches
        (the launches share their report's mappings: a launch's effects document reads seven of them)."""
        hit = self._mappings.get(id(arrays))
        if hit is None or hit[0] is not arrays:
            hit = self._mappings[id(arrays)] = (arrays, [(key, self._list(values)) for key, values in arrays.items()])
        return {key: flat[row if len(flat) > 1 else 0] for key, flat in hit[1]}


@dataclass(frozen=True, slots=True)
class KernelEffects:
    """One launch's unit utilizations and the effect of each of its estimated findings: enough to
    estimate any subset of them fixed together (what 'compare' checks against a measured speedup).
    The arrays are the whole report's (shared by its launches, not copied for each); ``row`` is
    this launch's place in them."""

    util: dict[str, np.ndarray]
    duration_ns: float | None  # this launch's, as reported
    findings: dict[str, Effect]
    roof: float
    floor_ns: float
    busy: float
    row: int = 0
    # What the fixed kernel can reach on a unit (% of peak), the whole report's arrays; empty: roof.
    reach: dict = field(default_factory=dict)
    # The arrays above as lists, shared by the report's launches (one conversion for all their documents).
    lists: ColumnLists = field(default_factory=ColumnLists, repr=False, compare=False)

    def to_json(self) -> dict:
        """This launch's part (the diagnosis document v3 carries it, so that 'compare' of two documents
        estimates a fix as it does for two reports); NaN as null."""
        lists, row = self.lists, self.row
        return {"util": lists.mapping_at(self.util, row), "duration_ns": self.duration_ns,
                "findings": {i: {"keep": lists.mapping_at(fx.keep, row), "fill": lists.at(fx.fill, row)} for i, fx in self.findings.items()},
                "roof": self.roof, "floor_ns": self.floor_ns, "busy": self.busy, "reach": lists.mapping_at(self.reach, row)}

    @classmethod
    def from_json(cls, doc: dict) -> "KernelEffects":
        def one(value) -> np.ndarray:
            return np.array([np.nan if value is None else float(value)])

        return cls(util={u: one(v) for u, v in doc["util"].items()}, duration_ns=doc["duration_ns"],
                   findings={i: Effect(keep={u: one(k) for u, k in fx["keep"].items()}, fill=one(fx["fill"])) for i, fx in doc["findings"].items()},
                   roof=doc["roof"], floor_ns=doc["floor_ns"], busy=doc["busy"], reach={u: one(v) for u, v in doc["reach"].items()})

    def gain_pct(self, ids) -> float | None:
        """Estimated % of the launch's time saved by fixing the findings ``ids`` together."""
        chosen = [self.findings[i] for i in ids if i in self.findings]
        if not chosen:
            return None
        at = slice(self.row, self.row + 1)
        together = no_effect(1)
        for fx in chosen:
            together = together.combine(Effect(keep={u: k[at] for u, k in fx.keep.items()}, fill=fx.fill[at]))
        util = {u: v[at] for u, v in self.util.items()}
        duration = np.array([float(self.duration_ns) if self.duration_ns is not None else np.nan])
        reach = {u: v[at] for u, v in self.reach.items()}
        value = estimate(util, together, duration, roof=self.roof, floor_ns=self.floor_ns, busy=self.busy, reach=reach).gain_pct[0]
        return None if np.isnan(value) else float(value)
