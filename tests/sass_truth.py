"""Record what NVIDIA's report reader (``ncu_report``'s ``sass_by_pc``) writes for every instruction of every
launch with SourceCounters in tests/data: the text tests/test_disassembly.py holds nvdisasm's to.

    python -m tests.sass_truth tests/data/h200_ncuwrap/sass/ncu_report_sass.json.gz

Run again when the ncu-report wheel changes how it writes SASS (the file records its version).
"""

from __future__ import annotations

import gzip
import json
import sys
import tempfile
from importlib import metadata
from pathlib import Path

from ncuwrap.kernel.reading import ncu_rep_reader, source_counters
from tests.conftest import plain_report

DATA = Path("tests/data")


def reports() -> list[Path]:
    found = [p for p in DATA.rglob("*") if p.name.endswith((".ncu-rep", ".ncu-rep.gz")) and "bad" not in p.parts]
    return sorted(found) + [Path("ncuwrap/samples/transpose_h200.ncu-rep.gz")]


def record(path: Path, module, answer) -> dict:
    """Launch index -> PC (hex) -> ``answer(attribution, pc)`` for every instruction of every launch of one
    report with SourceCounters (``attribution``: a :class:`source_counters.Attribution` of the launch, which
    asks ncu_report for every PC)."""
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
            attribution = source_counters.Attribution(action)
            out[str(index)] = {f"{pc:#x}": answer(attribution, pc) for pc in sorted(pcs)}
    return out


def main(target: str, answer=lambda attribution, pc: attribution.sass(pc)) -> None:
    """Write every report's answers (:func:`record`) to ``target``, with the ncu-report version that gave them."""
    module = ncu_rep_reader.load_module()
    recorded = {"ncu_report": metadata.version("ncu-report"), "reports": {}}
    with tempfile.TemporaryDirectory() as folder:
        for path in reports():
            launches = record(plain_report(path, Path(folder)), module, answer)
            if launches:
                recorded["reports"][path.as_posix()] = launches
    Path(target).write_bytes(gzip.compress(json.dumps(recorded, sort_keys=True).encode(), mtime=0))


if __name__ == "__main__":
    main(sys.argv[1])
