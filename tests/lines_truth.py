"""Record where NVIDIA's report reader (``ncu_report``'s ``source_info``) places every instruction of every launch
with SourceCounters in tests/data in its source (file, line): what tests/test_line_table.py holds the cubins'
own line tables (ncuwrap.kernel.reading.line_table) to.

    python -m tests.lines_truth tests/data/h200_ncuwrap/sass/ncu_report_lines.json.gz

Run again when the ncu-report wheel changes how it reads line tables (the file records its version).
"""

from __future__ import annotations

import gzip
import json
import sys
import tempfile
from importlib import metadata
from pathlib import Path

from ncuwrap.kernel.reading import ncu_rep, source_counters
from tests.sass_truth import plain, reports


def record(path: Path, module) -> dict:
    """Launch index -> PC (hex) -> [file, line] (nulls where ncu_report gives none) of one report."""
    context = module.load_report(str(path))
    out, index = {}, -1
    for r in range(context.num_ranges()):
        for a in range(context.range_by_idx(r).num_actions()):
            index += 1
            action = context.range_by_idx(r).action_by_idx(a)
            names = set(action.metric_names())
            if not any(m in names for m in source_counters.MARKERS):
                continue
            pcs = set()
            for name in source_counters.INSTANCED & names:
                pcs |= set(source_counters._instances(action.metric_by_name(name)))
            attribution = source_counters.Attribution(action)  # lines=None: ncu_report is asked for every PC
            out[str(index)] = {f"{pc:#x}": list(attribution.where(pc)) for pc in sorted(pcs)}
    return out


def main(target: str) -> None:
    module = ncu_rep.load_module()
    recorded = {"ncu_report": metadata.version("ncu-report"), "reports": {}}
    with tempfile.TemporaryDirectory() as folder:
        for path in reports():
            launches = record(plain(path, Path(folder)), module)
            if launches:
                recorded["reports"][path.as_posix()] = launches
    Path(target).write_bytes(gzip.compress(json.dumps(recorded, sort_keys=True).encode(), mtime=0))


if __name__ == "__main__":
    main(sys.argv[1])
