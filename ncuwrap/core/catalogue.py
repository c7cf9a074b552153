"""What one kind of rules may read and do: its names (with their unit variants), the bundled rules
file, the roles its findings may hold. Each kind hands its catalogue to the rules loader
(``ncuwrap.ruleset.load(path, catalogue)``): kernel rules (:data:`ncuwrap.kernel.metrics.KERNEL`), timeline
rules (:data:`ncuwrap.timeline.metrics.TIMELINE`), rank rules (:data:`ncuwrap.timeline.ranks.metrics.RANKS`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Entry:
    """One quantity a rule may read (timeline and rank rules: one value per capture or set of ranks)."""

    name: str
    unit: str
    needs: str | None  # what must have been captured: "api" (CUDA API trace), "host_memory", "steps", "nccl"
    description: str
    text: bool = False  # a word ("launch", a kernel's name), compared with == and != only


def variants(names: Iterable[str]) -> dict[str, tuple[str, float]]:
    """Unit variants of ``names``: every ``*_ns`` read as ``*_us`` / ``*_ms``, every ``*_bytes`` as
    ``*_mib``; name -> (base name, divisor)."""
    out: dict[str, tuple[str, float]] = {}
    for name in names:
        if name.endswith("_ns"):
            out[name[:-3] + "_us"] = (name, 1e3)
            out[name[:-3] + "_ms"] = (name, 1e6)
        elif name.endswith("_bytes"):
            out[name[:-6] + "_mib"] = (name, 1024.0 * 1024.0)
    return out


def _itself(name: str) -> list[str]:
    return [name]


@dataclass(frozen=True)
class Catalogue:
    """Everything the rules engine knows about one domain: the rules engine itself (ncuwrap.ruleset,
    ncuwrap.ruleset.evaluate) knows none, and checks and reads rules only through this."""

    kind: str  # the rules file's `kind:` (kernel, timeline, ranks)
    rules_file: str  # the bundled rules of this kind (rules/<file>)
    names: frozenset[str]  # every name a rule may read, unit variants included
    listing: str  # where a user finds the names, for messages
    raw_allowed: bool = False  # raw ncu metric names (with "__") may be read through metric("...")
    entries: Mapping[str, Entry] = field(default_factory=dict)  # the quantities themselves, where catalogued one by one
    unit_variants: Mapping[str, tuple[str, float]] = field(default_factory=dict)
    roles: Mapping[str, str] = field(default_factory=dict)  # role -> what ncuwrap does with the finding holding it
    text_names: frozenset[str] = frozenset()  # names whose values are text: compared, never computed with
    wastes: tuple[str, ...] = ()  # what a rule's `where:` may name (per-instruction wastes of kernel rules)
    # The time of one row that estimates scale (kernel rules: a launch's duration_ns); None: no estimates.
    time_metric: str | None = None
    # What must be measured for a name: the raw counters behind a kernel metric; a capture's value itself.
    inputs: Callable[[str], list[str]] = _itself

    @classmethod
    def of_entries(cls, kind: str, rules_file: str, entries: Mapping[str, Entry], listing: str, roles: Mapping[str, str] | None = None):
        """A catalogue of one value per capture: ``entries`` and their unit variants."""
        extra = variants(entries)
        return cls(kind=kind, rules_file=rules_file, names=frozenset(entries) | frozenset(extra), listing=listing, entries=entries,
                   unit_variants=extra, roles=roles or {}, text_names=frozenset(n for n, e in entries.items() if e.text))

    def base_of(self, name: str) -> str:
        """The catalogued quantity behind ``name`` (itself, or the ns/bytes one of a unit variant)."""
        return self.unit_variants[name][0] if name in self.unit_variants else name

    def value(self, name: str, values: Mapping[str, object]):
        """``name``'s value among ``values`` (keyed by base names), a unit variant scaled."""
        value = values.get(self.base_of(name))
        if name in self.unit_variants and value is not None:
            value = float(value) / self.unit_variants[name][1]
        return value

    def __contains__(self, name: str) -> bool:
        return name in self.names
