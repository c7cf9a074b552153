"""When, in a whole ``ncuwrap diagnose REPORT.ncu-rep -f json`` process, the reading child is forked, when the
parent asks for its result (its own imports done), how long it then waits, and when the process ends (issue 41:
what lies on the critical path before and after the read).

    python scripts/probes/ncurep_fork_time.py REPORT.ncu-rep
"""

from __future__ import annotations

import sys
import tempfile
import time

T0 = time.perf_counter()


def main(report: str) -> None:
    import ncuwrap.kernel.reading.ncu_rep_reader as ncu_rep_reader

    started, result = ncu_rep_reader.Reading.__init__, ncu_rep_reader.Reading.result

    def init(self, *args, **kwargs):
        print(f"forked at {time.perf_counter() - T0:.3f} s (CPU {time.process_time():.3f} s)", file=sys.stderr)
        started(self, *args, **kwargs)

    def asked(self):
        t = time.perf_counter()
        print(f"result asked at {t - T0:.3f} s", file=sys.stderr)
        out = result(self)
        print(f"result had after {time.perf_counter() - t:.3f} s more", file=sys.stderr)
        return out

    ncu_rep_reader.Reading.__init__, ncu_rep_reader.Reading.result = init, asked
    from ncuwrap.cli import main as cli

    with tempfile.TemporaryDirectory() as folder:
        sys.argv = ["ncuwrap", "diagnose", report, "-f", "json", "-o", f"{folder}/out.json", "--force", "-q"]
        try:
            cli()
        except SystemExit:
            pass
    print(f"end at {time.perf_counter() - T0:.3f} s", file=sys.stderr)


if __name__ == "__main__":
    main(sys.argv[1])
