"""Map every kernel of the real-world corpus to the case that launched it.

capture_realworld.sh runs workloads/realworld/realworld_corpus.py under ncu; the script prints
``@@SETUP``/``@@CASE``/``@@VERIFY`` markers and ncu prints one ``==PROF== Profiling "..."`` line per
profiled launch, in launch order, on the same console. The Nth "Profiling" line is the report's Nth
result, so the marker in force when it was printed names its case.

    python3 workloads/realworld/realworld_cases.py tests/data/realworld    # rewrites cases.json there
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

_PROFILING = re.compile(r'==PROF== Profiling "(?:\d*:\d*:)?(?P<name>.+?):(?P<nth>\d+)"')
_MARK = re.compile(r"^@@(?P<kind>SETUP|CASE|VERIFY)(?: (?P<case>\S+))?")


def parse_console(text: str) -> list[dict]:
    """One entry per profiled kernel: its position, name, case and phase (setup, case, verify)."""
    out: list[dict] = []
    case, phase = None, "setup"
    for line in text.splitlines():
        mark = _MARK.match(line)
        if mark:
            phase = mark["kind"].lower()
            if mark["case"]:
                case = mark["case"]
            continue
        prof = _PROFILING.search(line)
        if prof:
            out.append({"index": len(out), "function": prof["name"], "case": case, "phase": phase})
    return out


def main(folder: str) -> int:
    root = Path(folder)
    doc = {}
    for log in sorted(root.glob("ncu_*.log")):
        group = log.stem.removeprefix("ncu_")
        doc[group] = parse_console(log.read_text(encoding="utf-8", errors="replace"))
    (root / "cases.json").write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
    print(f"{sum(len(v) for v in doc.values())} kernels in {len(doc)} groups -> {root / 'cases.json'}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "tests/data/realworld"))
