"""Convert ncu's displayed units to base units.

ncu's CSV export shows values in scaled units ("us", "Mbyte", "Gbyte/s", "Ghz") unless
``--print-units base`` is given. Everything ncuwrap computes uses base units: time in ns (ncu's own
base for durations), rates per second, bytes, hertz. A test checks that a scaled and a base export
of the same report agree.
"""

from __future__ import annotations

import re

_SI = {"": 1.0, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15}
_BINARY = {"Ki": 2.0**10, "Mi": 2.0**20, "Gi": 2.0**30, "Ti": 2.0**40}
# Durations standing alone are expressed in ns (ncu's base); in a rate's denominator, per second.
_TIME_TO_NS = {"ns": 1.0, "nsecond": 1.0, "us": 1e3, "usecond": 1e3, "ms": 1e6, "msecond": 1e6, "s": 1e9, "second": 1e9}
_PER_TIME_TO_PER_S = {"ns": 1e9, "nsecond": 1e9, "us": 1e6, "usecond": 1e6, "ms": 1e3, "msecond": 1e3, "s": 1.0, "second": 1.0}
_PREFIXED = re.compile(r"^(Ki|Mi|Gi|Ti|K|M|G|T|P)?(byte|B|hz|Hz)$")


def _token_scale(token: str) -> float:
    if token in _TIME_TO_NS:
        return _TIME_TO_NS[token]
    match = _PREFIXED.match(token)
    if match:
        prefix = match.group(1) or ""
        return _BINARY.get(prefix) or _SI[prefix]
    return 1.0


def scale_to_base(unit: str) -> float:
    """Factor that turns a value shown in ``unit`` into base units (1.0 for unknown or unitless)."""
    unit = (unit or "").strip()
    if not unit or unit == "%":
        return 1.0
    numerator, _, denominator = unit.partition("/")
    factor = _token_scale(numerator)
    if denominator in _PER_TIME_TO_PER_S:
        factor *= _PER_TIME_TO_PER_S[denominator]  # rates are per second, durations alone in ns
    elif denominator:
        factor /= _token_scale(denominator)
    return factor


def base_unit(unit: str) -> str:
    """Name of the base unit that :func:`scale_to_base` converts ``unit`` into."""
    unit = (unit or "").strip()
    numerator, sep, denominator = unit.partition("/")

    def strip(token: str, denominator: bool) -> str:
        if token in _TIME_TO_NS:
            return "s" if denominator else "ns"
        match = _PREFIXED.match(token)
        if match:
            return "byte" if match.group(2) in ("byte", "B") else "hz"
        return token

    return strip(numerator, False) + (sep + strip(denominator, True) if sep else "")
