"""Check that two source trees write the same ``diagnose`` outputs of every kernel report in tests/data (issue 41).

Each report (.ncu-rep and .ncu-rep.gz, and with ``--kinds rep,csv`` every ncu CSV export: raw and details pages,
plain or gzipped; not tests/data/bad) is diagnosed by both trees with ``-f json`` and ``-f markdown``; the
outputs, the exit code and stderr must be byte-identical. Used for changes to how a report is read that must
change no verdict (reading the file format directly, issue 41 item 1; the raw page without pandas, item 2):

    git -C . archive 21d4e86 | tar -x -C /tmp/before
    python scripts/rep_outputs_same.py --before /tmp/before [--after .] [--kinds rep,csv] [--formats json,markdown,table,html]

Prints one line per difference and a count; exits 1 on any difference.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FORMATS = ("json", "markdown")


def reports(data: Path, kinds: tuple[str, ...] = ("rep",)) -> list[Path]:
    """Every report of ``kinds`` (rep: .ncu-rep, csv: ncu's CSV exports) under ``data`` but its bad/ folder, and the
    bundled sample."""
    found = [*data.rglob("*.ncu-rep"), *data.rglob("*.ncu-rep.gz")] if "rep" in kinds else []
    if "csv" in kinds:
        found += [p for p in [*data.rglob("*.csv"), *data.rglob("*.csv.gz")] if _ncu_export(p)]
    sample = [ROOT / "ncuwrap" / "samples" / "transpose_h200.ncu-rep.gz"] if "rep" in kinds else []
    return [*sorted(p for p in found if "bad" not in p.relative_to(data).parts), *sample]


def _ncu_export(path: Path) -> bool:
    """An Nsight Compute CSV export (its header starts with "ID"), not an nsys or nvidia-smi table or a source page."""
    import gzip

    opener = gzip.open if path.name.endswith(".gz") else open
    with opener(path, "rb") as fh:
        return any(line.lstrip(b"\xef\xbb\xbf").startswith(b'"ID",') for line in fh.read(1 << 16).splitlines())


def diagnose(tree: Path, report: Path, fmt: str, folder: Path) -> tuple[int, bytes, bytes]:
    """One run, from the same folder and to the same file for both trees (outputs name paths as given)."""
    out = folder / f"out.{fmt}"
    out.unlink(missing_ok=True)
    env = {**os.environ, "PYTHONPATH": str(tree)}
    done = subprocess.run([sys.executable, "-m", "ncuwrap", "diagnose", str(report), "-f", fmt, "-o", out.name, "--force"],
                          env=env, cwd=folder, capture_output=True, timeout=600)
    return done.returncode, done.stderr, out.read_bytes() if out.exists() else b""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", type=Path, required=True, help="the source tree to compare with (a git archive)")
    parser.add_argument("--after", type=Path, default=ROOT, help="the source tree under test (default: this checkout)")
    parser.add_argument("--data", type=Path, default=ROOT / "tests" / "data")
    parser.add_argument("--kinds", default="rep", help="which reports, comma-separated: rep (.ncu-rep), csv (ncu's CSV exports); default rep")
    parser.add_argument("--formats", default=",".join(FORMATS), help=f"which outputs, comma-separated; default {','.join(FORMATS)}")
    args = parser.parse_args()
    formats = tuple(args.formats.split(","))
    checked, differ = 0, 0
    with tempfile.TemporaryDirectory() as tmp:
        for report in reports(args.data.resolve(), tuple(args.kinds.split(","))):
            for fmt in formats:
                outs = [diagnose(tree.resolve(), report, fmt, Path(tmp)) for tree in (args.before, args.after)]
                checked += 1
                if outs[0] != outs[1]:
                    differ += 1
                    what = [name for name, a, b in zip(("exit code", "stderr", "output"), *outs) if a != b]
                    print(f"DIFFERENT {report} -f {fmt}: {', '.join(what)}")
    print(f"{checked} outputs compared ({checked // len(formats)} reports x {len(formats)} formats), {differ} different")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
