"""The outputs of a 100,000-launch diagnosis (issue 23): JSON bytes a launch, HTML and Markdown size, and
how long headless Chromium takes to draw the HTML.

SYNTHETIC SCALE DATA: the four real H200 transpose diagnoses (tests/data/h200/transpose/*.ncu-rep.gz,
ncu --set full: copy, naive, shared, padded) repeated to N launches in the proportions 1:2:3:4 (so the
kernels differ in total time), launch IDs renumbered, and every 1,000th launch's ncu time tripled (an
outlier its kernel's listing should show). Only the count and those times are synthetic.

Chromium: ``chromium --headless --screenshot`` of the file, whole process, median of --repeat, against an
empty page's time on the same machine (Chromium's own start).

    python benchmarks/report_scale.py [--launches 100000] [--repeat 3] [--json out.json]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

TRANSPOSE = ("copyKernel", "transposeNaive", "transposeShared", "transposePadded")


def scaled(n: int):
    from ncuwrap.kernel.diagnosis import diagnose

    parts = [diagnose(ROOT / "tests/data/h200/transpose" / f"{name}.ncu-rep.gz") for name in TRANSPOSE]
    weights = [i + 1 for i in range(len(parts))]
    cycle = [p.kernels[0] for p, w in zip(parts, weights) for _ in range(w)]
    kernels = []
    for i in range(n):
        k = cycle[i % len(cycle)]
        slow = i % 1000 == 999 and k.duration_ns is not None
        kernels.append(dataclasses.replace(k, id=i, duration_ns=k.duration_ns * 3 if slow else k.duration_ns))
    base = parts[0]
    source = dataclasses.replace(base.source, path=f"synthetic scale data: four real transpose verdicts repeated to {n} launches")
    return dataclasses.replace(base, source=source, kernels=tuple(kernels))


def real_repeated_launches() -> dict:
    """What a launch that repeats a kernel costs in the JSON document when its numbers are its own (not
    synthetic): the real H200 report of three kernels launched by two processes
    (tests/data/h200_ncuwrap/multi/two_processes.ncu-rep), launches 3-5 repeating 0-2. Bytes of each
    later launch's record as the document writes it (indented), against the whole v2 record."""
    from ncuwrap.kernel.diagnosis import diagnose
    from ncuwrap.render.jsonfmt import dumps

    d = diagnose(ROOT / "tests/data/h200_ncuwrap/multi/two_processes.ncu-rep")
    doc = d.to_json()
    later = [k for k in doc["kernels"] if "like" in k]
    own = [len(dumps(k).encode()) for k in later]
    whole = [len(dumps(d.kernels[k["id"]].to_json()).encode()) for k in later]
    return {"real_repeat_bytes_per_launch": statistics.median(own), "real_repeat_v2_bytes_per_launch": statistics.median(whole)}


def chromium_s(browser: str, page: Path, folder: Path) -> float:
    argv = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
            "--disable-sync", "--no-first-run", "--disable-extensions", f"--user-data-dir={folder / 'profile'}",
            f"--screenshot={folder / 'shot.png'}", "--window-size=1280,1600", page.as_uri()]
    t = time.perf_counter()
    subprocess.run(argv, capture_output=True, timeout=600, check=True)
    return time.perf_counter() - t


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--launches", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    from ncuwrap.render import Format, render

    t = time.perf_counter()
    diagnosis = scaled(args.launches)
    built = time.perf_counter() - t
    out: dict = {"launches": args.launches, "synthetic": True, "kernels": len(diagnosis.groups())}
    with tempfile.TemporaryDirectory(prefix="ncuwrap-reports-") as tmp:
        folder = Path(tmp)
        for name, fmt in (("json", Format.json), ("html", Format.html), ("markdown", Format.markdown)):
            t = time.perf_counter()
            text = render(diagnosis, fmt)
            out[f"{name}_render_s"] = time.perf_counter() - t
            data = text.encode("utf-8")
            out[f"{name}_bytes"] = len(data)
            (folder / f"report.{name}").write_bytes(data)
        out["json_bytes_per_launch"] = out["json_bytes"] / args.launches
        page = (folder / "report.html").read_text(encoding="utf-8")
        out["html_kernel_sections"] = page.count('<details class="kernel"')
        out["html_table_rows"] = page.count("<tr>")
        browser = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
        if browser:
            empty = folder / "empty.html"
            empty.write_text("<!doctype html><title>empty</title>", encoding="utf-8")
            report = folder / "report.html"
            samples, idle = [], []
            for _ in range(args.repeat):
                idle.append(chromium_s(browser, empty, folder))
                samples.append(chromium_s(browser, report, folder))
            out.update(chromium_s=statistics.median(samples), chromium_samples=samples, chromium_empty_s=statistics.median(idle))
    out["built_s"] = built
    out.update(real_repeated_launches())
    print(json.dumps(out, indent=2))
    if args.json:
        args.json.write_text(json.dumps(out, indent=2) + "\n")


if __name__ == "__main__":
    main()
