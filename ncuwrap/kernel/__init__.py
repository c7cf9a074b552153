"""The kernel half: Nsight Compute reports, shaped as :mod:`ncuwrap.timeline` is.

:mod:`.reading` (a report or CSV export into a ``Profile``), :mod:`.metrics` (the kernel catalogue and
its derived metrics), :mod:`.estimate` (what fixing a waste buys), :mod:`.attribution` (a waste by source
line), :mod:`.diagnosis` (the rules applied: a verdict per launch), :mod:`.verdict` (the typed results),
:mod:`.shown` (what a report shows of them), :mod:`.document` and :mod:`.json_delta` (the JSON document,
written and read back), :mod:`.compare` (two reports or documents).
"""
