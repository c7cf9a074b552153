"""HolisticTraceAnalysis's temporal breakdown of the real H200 torch.profiler traces, recorded as a yardstick (issue 37).

Runs, for each scheduled trace in tests/data/h200_ncuwrap/kineto (gpu_train, small_launch, host_prep), in a
folder holding only that trace (HTA reads it as rank 0: the traces carry no ``distributedInfo``):

    TraceAnalysis(trace_dir=DIR).get_temporal_breakdown(visualize=False)

twice: as HTA runs by default, and with ``HTA_DISABLE_NS_ROUNDING=1``. By default HTA 0.5.0 rounds every event
of a nanosecond-resolution trace inward to whole microseconds (start up, end down: trace_parser.round_down_time_stamps),
so a kernel under a microsecond lasts 0 or -1 us: small_launch's 2,080 GPU events then hold 826 us instead of
about 2,900, and the breakdown stops on its own ``assert non_compute_time >= 0``. Busy is
``100 * (compute + non-compute) / kernel_time``. HTA's window: from the first to the last GPU event launched by a
CPU op that starts before the last ProfilerStep (``include_last_profiler_step=False``, its default): the
whole trace but the last step, idle gaps between steps included.

Writes tests/data/h200_ncuwrap/kineto/hta_temporal_breakdown.json, read by tests/test_kineto_yardsticks.py (which
never imports HTA). Run it with a Python that has HolisticTraceAnalysis, outside the project's environment:

    /work/hta-venv/bin/python benchmarks/hta_temporal_breakdown.py
"""

from __future__ import annotations

import datetime
import importlib.metadata
import json
import os
import platform
import shutil
import sys
import tempfile
from pathlib import Path

from hta.trace_analysis import TraceAnalysis

ROOT = Path(__file__).resolve().parent.parent
KINETO = ROOT / "tests/data/h200_ncuwrap/kineto"
TRACES = ("gpu_train", "small_launch", "host_prep")
OUT = KINETO / "hta_temporal_breakdown.json"
CALL = "TraceAnalysis(trace_dir=DIR).get_temporal_breakdown(visualize=False)"
MODES = {"default": "0", "ns_rounding_disabled": "1"}


def breakdown(trace: Path, rounding_disabled: str) -> dict:
    os.environ["HTA_DISABLE_NS_ROUNDING"] = rounding_disabled  # read by HTA when it parses
    with tempfile.TemporaryDirectory(prefix="hta-") as folder:
        shutil.copy(trace, folder)
        analysis = TraceAnalysis(trace_dir=folder)
        steps = [int(i) for i in analysis.t.get_iterations()]
        try:
            table = analysis.get_temporal_breakdown(visualize=False)
        except AssertionError as error:  # HTA's own check of its sums
            return {"error": f"AssertionError in get_temporal_breakdown: {str(error) or 'assert non_compute_time >= 0'}", "profiler_steps": steps}
    row = {k: (v.item() if hasattr(v, "item") else v) for k, v in table.iloc[0].to_dict().items()}
    row["rank"] = int(row["rank"])
    busy = row["compute_time(us)"] + row["non_compute_time(us)"]
    return {**row, "profiler_steps": steps, "busy_us": busy, "busy_pct": round(100 * busy / row["kernel_time(us)"], 3)}


def main() -> None:
    record = {
        "what": "HolisticTraceAnalysis's temporal breakdown (GPU idle / compute / non-compute) of the real H200 torch.profiler traces",
        "call": CALL,
        "modes": {"default": "HTA as it runs by default (ns timestamps rounded inward to whole us)",
                  "ns_rounding_disabled": "the same call with HTA_DISABLE_NS_ROUNDING=1 (times kept to the ns)"},
        "busy_pct": "100 * (compute_time + non_compute_time) / kernel_time",
        "window": "first to last GPU event launched before the last ProfilerStep (include_last_profiler_step=False)",
        "hta_version": importlib.metadata.version("HolisticTraceAnalysis"),
        "pandas_version": importlib.metadata.version("pandas"),
        "python": platform.python_version(),
        "date": datetime.date.today().isoformat(),
        "script": "benchmarks/hta_temporal_breakdown.py",
        "traces": {},
    }
    for name in TRACES:
        trace = KINETO / f"{name}.pt.trace.json.gz"
        record["traces"][name] = {"file": str(trace.relative_to(ROOT)), **{mode: breakdown(trace, flag) for mode, flag in MODES.items()}}
        print(name, json.dumps(record["traces"][name]), file=sys.stderr)
    OUT.write_text(json.dumps(record, indent=2) + "\n")
    print(f"wrote {OUT.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
