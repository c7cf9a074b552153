"""What every part of ncuwrap uses, knowing nothing of reports, rules or verdicts: the error hierarchy
(:mod:`.errors`), files checked and written (:mod:`.fileio`), inputs unpacked (:mod:`.packed`), numbers
cleaned for a document (:mod:`.numbers`), bounded YAML and JSON (:mod:`.safeyaml`, :mod:`.safejson`) and
their checks (:mod:`.schema`), the rules' expressions (:mod:`.expr`), what a kind of rules may read
(:mod:`.catalogue`), the launch filter (:mod:`.kernel_filter`), programs run and stopped
(:mod:`.process`, :mod:`.nvidia_smi`), work forked (:mod:`.forked`), progress (:mod:`.progress`),
the collector's pause (:mod:`.gc_pause`), text for a terminal (:mod:`.terminal`), a result's notebook
form (:mod:`.display`), the data files' place (:mod:`.resources`) and the version (:mod:`.version`).
Nothing here imports from outside core.
"""
