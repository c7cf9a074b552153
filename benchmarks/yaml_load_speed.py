"""How long loading the bundled rules takes, in-process: the YAML alone (ncuwrap.core.safeyaml.load) and the
whole rules file (ncuwrap.ruleset.load: YAML, validation, parsed conditions), best of many loads (and
the first ruleset.load of the process apart: what a command's start-up pays).

``--python`` forces safeyaml's pure-Python path (no libyaml) for comparison.

Usage: python benchmarks/yaml_load_speed.py [--repeat 50] [--python]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from ncuwrap.kernel import metrics  # noqa: E402
from ncuwrap import ruleset  # noqa: E402
from ncuwrap.core import safeyaml  # noqa: E402
from ncuwrap.timeline import metrics as timeline_metrics  # noqa: E402


def timed_ms(call, repeat: int) -> tuple[float, float]:
    """The first call's milliseconds (imports, regexes compiled on first use) and the best of ``repeat`` more."""
    times = []
    for _ in range(repeat + 1):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return times[0] * 1e3, min(times[1:]) * 1e3


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=50)
    parser.add_argument("--python", action="store_true", help="force the pure-Python YAML path")
    args = parser.parse_args()
    if args.python:
        safeyaml.USE_LIBYAML = False
    print(f"YAML path: {'libyaml events, bounded Python composer' if safeyaml.USE_LIBYAML else 'pure Python'}")
    for name, catalogue in [("default.yaml", metrics.KERNEL), ("timeline.yaml", timeline_metrics.TIMELINE)]:
        path = ROOT / "rules" / name
        text = path.read_text(encoding="utf-8")
        first_ms, rules_ms = timed_ms(lambda: ruleset.load(path, catalogue), args.repeat)
        yaml_ms = timed_ms(lambda: safeyaml.load(text), args.repeat)[1]
        print(f"{name:14} safeyaml.load {yaml_ms:6.2f} ms   ruleset.load {rules_ms:6.2f} ms (first {first_ms:6.2f} ms)")


if __name__ == "__main__":
    main()
