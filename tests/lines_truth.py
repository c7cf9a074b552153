"""Record where NVIDIA's report reader (``ncu_report``'s ``source_info``) places every instruction of every launch
with SourceCounters in tests/data in its source (file, line): what tests/test_line_table.py holds the cubins'
own line tables (ncuwrap.kernel.reading.line_table) to.

    python -m tests.lines_truth tests/data/h200_ncuwrap/sass/ncu_report_lines.json.gz

Run again when the ncu-report wheel changes how it reads line tables (the file records its version).
"""

from __future__ import annotations

import sys

from tests import sass_truth


def where(attribution, pc: int) -> list:
    """[file, line] of a PC (nulls where ncu_report gives none)."""
    return list(attribution.where(pc))


if __name__ == "__main__":
    sass_truth.main(sys.argv[1], where)
