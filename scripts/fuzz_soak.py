"""Soak run of the fuzz tests (tests/test_fuzz.py): many more examples than CI's, random ones.

    python scripts/fuzz_soak.py              # 20x CI's examples, fresh random inputs each run
    python scripts/fuzz_soak.py --scale 100  # longer

Any failure is printed by hypothesis with the drawn inputs (add it to the tests as a fixed case).

The surfaces: .ncu-rep, raw CSV, nsys SQLite, rules YAML and expressions, bench JSON, source pages,
gzip streams, option values, names in every format, PyTorch profiler traces, and (issue 42) capture
text and file names of any bytes, diagnosis documents handed to compare (any field replaced by any JSON
value, nested 300 deep at times), and NVTX names matched in bulk against one RE2 call per name.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=int, default=20, help="multiple of CI's example counts")
    args = parser.parse_args()
    env = {**os.environ, "NCUWRAP_FUZZ_SCALE": str(args.scale), "NCUWRAP_FUZZ_RANDOM": "1"}
    started = time.perf_counter()
    code = subprocess.call([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/test_fuzz.py", "tests/test_fuzz_whatif.py",
                            "tests/test_fuzz_op_shapes.py"],
                           cwd=ROOT, env=env)
    print(f"fuzz soak: scale {args.scale}, {time.perf_counter() - started:.0f} s, exit {code}")
    return code


if __name__ == "__main__":
    sys.exit(main())
