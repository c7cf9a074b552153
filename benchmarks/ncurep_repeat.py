"""Build a SYNTHETIC many-launch .ncu-rep from a real one: its launches repeated (issue 41's local stand-in).

No report here holds more than 6 launches (the H200 corpus report of 44 is not in the repository), so the
cost per launch read (NVIDIA's reader grows ~14 MiB a launch) is measured on a real launch written N times:
the file keeps the report's header, its session and source blocks, and its launch blocks follow N times, the
repeats without the string table (ids index the one table, as in a real report's later blocks). ncu_report
and ncuwrap read it as N launches of the same kernel. SYNTHETIC: one function, so NVIDIA's reader answers
each PC's line once for all N (ncuwrap caches by PC); a real report of N functions asks N times.

    python benchmarks/ncurep_repeat.py tests/data/h200/transpose/transposeNaive.ncu-rep.gz 44 /tmp/naive44.ncu-rep
"""

from __future__ import annotations

import gzip
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from ncuwrap.kernel.reading.ncu_rep_format import write_repeated_copy  # noqa: E402


def repeat(source: Path, times: int, target: Path) -> None:
    """Write ``source`` (a .ncu-rep, or one kept gzipped) to ``target`` with its launch blocks ``times`` times."""
    if source.name.endswith(".gz"):
        with tempfile.TemporaryDirectory() as folder:
            plain = Path(folder) / source.stem
            plain.write_bytes(gzip.decompress(source.read_bytes()))
            write_repeated_copy(plain, times, target)
        return
    write_repeated_copy(source, times, target)


if __name__ == "__main__":
    repeat(Path(sys.argv[1]), int(sys.argv[2]), Path(sys.argv[3]))
