"""The machine figures the replay needs where a capture does not show them (rules/whatif.yaml)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from ncuwrap.core import safeyaml
from ncuwrap.core.resources import data_dir

CALIBRATION_FILE = "whatif.yaml"


@dataclass(frozen=True)
class ReplayCalibration:
    """The machine's figures the remedies use where the capture does not show them (rules/whatif.yaml)."""

    machine: str
    source: str
    graph_launch_ns: float
    graph_launch_per_node_ns: float
    graph_node_gap_ns: float
    pinned_h2d_gbps: float
    async_call_ns: float

    def graph_launch_cost_ns(self, nodes):
        """What launching a graph of ``nodes`` nodes (an int or an array) costs the host, untraced."""
        return self.graph_launch_ns + self.graph_launch_per_node_ns * nodes


@lru_cache(maxsize=1)
def calibration() -> ReplayCalibration:
    doc = safeyaml.load((data_dir("rules") / CALIBRATION_FILE).read_text(encoding="utf-8"))
    return ReplayCalibration(machine=str(doc["machine"]), source=str(doc["source"]),
                       **{k: float(doc[k]) for k in ("graph_launch_ns", "graph_launch_per_node_ns",
                                                      "graph_node_gap_ns", "pinned_h2d_gbps", "async_call_ns")})
