"""How far each op is from its limit, from a trace alone (issue 51): each PyTorch op's FLOPs and minimal bytes
from its recorded shapes (:mod:`.inputs`, :mod:`.counts`), its kernels' time over the steady steps, its
achieved rate against the peak of the unit its dtype runs on and HBM bandwidth (:mod:`.analysis`, the model in
:mod:`.model`), and what lower precision or fusion would make of the step (:mod:`.remedies`).
docs/op-limits.md gives the formulas, the peaks and the checks against ncu and measured runs.
"""
