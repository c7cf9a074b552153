"""Multi-kernel test inputs built from real reports.

``four_transposes()``: the four real single-kernel H200 transpose reports (copy, naive, shared,
padded) shown together as one Diagnosis. It is labelled as such in its source path, and the launches
are renumbered 0-3 in that order. It is the real multi-kernel fixture of the HTML/Markdown tests: every
verdict path the rules take on these reports (uncoalesced stores, bank conflicts, at the roofline,
no issue) appears in one page.

``scaled(n)``: synthetic scale data: the four real verdicts repeated to ``n`` launches, for the size
bound of the HTML report. Only the count is synthetic; each launch's numbers are real.
"""

from __future__ import annotations

import dataclasses
from functools import lru_cache

from ncuwrap.kernel.diagnosis import diagnose
from tests.conftest import H200

TRANSPOSE = ("copyKernel", "transposeNaive", "transposeShared", "transposePadded")
FOUR_LABEL = "four real single-kernel reports shown together: tests/data/h200/transpose/{" + ",".join(TRANSPOSE) + "}.ncu-rep.gz"


@lru_cache(maxsize=None)
def single(name: str):
    return diagnose(H200 / "transpose" / f"{name}.ncu-rep.gz")


@lru_cache(maxsize=1)
def four_transposes():
    parts = [single(name) for name in TRANSPOSE]
    kernels = tuple(dataclasses.replace(d.kernels[0], id=i) for i, d in enumerate(parts))
    first = parts[0]
    # The four captures' facts joined; their SM clocks differ, so none is said.
    source = dataclasses.replace(first.source, path=FOUR_LABEL, sm_clock_mhz=None,
                                 sha256="; ".join(f"{name}: {d.source.sha256}" for name, d in zip(TRANSPOSE, parts)),
                                 command_line="\n".join(d.source.command_line or "" for d in parts))
    return dataclasses.replace(first, source=source, kernels=kernels)


def scaled(n: int):
    """Synthetic scale data: the four real transpose verdicts repeated to ``n`` launches."""
    base = four_transposes()
    kernels = tuple(dataclasses.replace(base.kernels[i % 4], id=i) for i in range(n))
    source = dataclasses.replace(base.source, path=f"synthetic scale data: the four real transpose verdicts repeated to {n} launches")
    return dataclasses.replace(base, source=source, kernels=kernels)


def hostile(name: str = '<script>alert("x")</script>ns::k<float, 4>(T&, a|b) &amp; `tick`'):
    """A real report's Diagnosis (transposeShared) with a hostile kernel name put in by dataclasses.replace."""
    d = single("transposeShared")
    kernel = dataclasses.replace(d.kernels[0], name=name, display_name=f"void {name}(float *, const float *)")
    return dataclasses.replace(d, kernels=(kernel,))
