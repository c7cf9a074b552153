#!/usr/bin/env bash
# The figure "a small capture's whole process against nsys stats" of docs/scale.md on the GPU host (nvidia-h200), one
# device call of about 2 minutes, from the repository root with .whl carried, .devicelibs and .before (a git archive
# of the commit before the change) where present:
#   bash benchmarks/device/timeline_startup.sh      # writes $OUT/timeline_startup.tgz
# The small real captures' whole `ncuwrap timeline CAPTURE -f json` process against `nsys stats` with the same three
# reports (benchmarks/timeline_scale.py --real: interleaved whole processes from fresh launchers, wall, CPU and
# peak memory; this tree and .before in the same interleave, their JSON compared byte for byte), with the
# floor of a Python process on the host (`python -c pass`, `python -c "import numpy"`), twice:
# 1. bytecode written, as after a pip install: every module's cache goes to /tmp/pyc_startup (PYTHONPYCACHEPREFIX;
#    the image's own packages are left as they are), written by one warm-up run of each tree;
# 2. the image as it stands (PYTHONDONTWRITEBYTECODE, its packages shipped without caches: every import
#    compiles its source), 3 samples.
# Then the forked reader against the read in process (the same tree, caches written), 5 pairs a capture.
. workloads/common/preamble.sh timeline_startup
BASE=(); [ -d .before/ncuwrap ] && BASE=(--baseline-tree .before)
{ nproc; free -g; python3 --version; nvidia-smi -L 2>&1; git log --oneline -1 2>/dev/null; echo "baseline: ${BASE[*]:-none}"; } > $W/keep/machine.txt
python3 - <<'PY' >> $W/keep/machine.txt 2>&1
import importlib.metadata as m
for name in ("numpy", "pyarrow", "adbc-driver-sqlite", "typer", "pydantic", "PyYAML"):
    try:
        print(name, m.version(name))
    except m.PackageNotFoundError:
        print(name, "not installed")
PY
summary() {  # the rows of a timeline_scale.py --real JSON, one line each
  python3 - "$1" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
f = r["floor"]
print("floor: " + "; ".join(f"{k} wall {v['wall_s']:.3f} s cpu {v['cpu_s']:.3f} s" for k, v in f.items()))
for x in r["rows"]:
    before = f" | before {x['before_process_s']:.3f} s cpu {x['before_process_cpu_s']:.2f} s (x{x.get('before_ratio', 0):.2f}), identical {x['outputs_identical']}" if "before_process_s" in x else ""
    print(f"{x['capture']:24s} ncuwrap {x['ncuwrap_process_s']:.3f} s cpu {x['ncuwrap_process_cpu_s']:.2f} s peak {x['ncuwrap_process_peak_mib']:.0f} MiB"
          f" | nsys stats {x.get('nsys_stats_s', 0):.3f} s cpu {x.get('nsys_stats_cpu_s', 0):.2f} s | ratio {x.get('ratio', 0):.2f}{before}"
          f" | in process {x['ncuwrap_s']:.3f} s")
PY
}
log "1. bytecode written (PYTHONPYCACHEPREFIX=/tmp/pyc_startup): warm-up, then --repeat 7"
(
  unset PYTHONDONTWRITEBYTECODE; export PYTHONPYCACHEPREFIX=/tmp/pyc_startup
  zcat tests/data/h200_ncuwrap/steps/input_bound.sqlite.gz > $W/warm.sqlite
  for tree in . ${BASE[1]:-}; do (cd $tree && PYTHONPATH=$PWD:/tmp/site python3 -m ncuwrap timeline $W/warm.sqlite -f json > /dev/null); done
  python3 -c "import numpy, pyarrow, adbc_driver_manager, adbc_driver_sqlite, pandas" 2>/dev/null
  timeout 120 python3 benchmarks/timeline_scale.py --real --repeat 7 --nsys $NSYS "${BASE[@]}" --json $W/keep/cached.json \
    > $W/keep/cached.txt 2>&1
)
log "exit $?"; summary $W/keep/cached.json | tee -a $W/keep/summary.txt
log "2. the image as it stands (no bytecode caches): --repeat 3"
PYTHONDONTWRITEBYTECODE=1 timeout 75 python3 benchmarks/timeline_scale.py --real --repeat 3 --nsys $NSYS "${BASE[@]}" --json $W/keep/image.json > $W/keep/image.txt 2>&1
log "exit $?"; summary $W/keep/image.json | tee -a $W/keep/summary.txt
log "3. forked reader against the read in process (caches written), 5 interleaved pairs"
(
  unset PYTHONDONTWRITEBYTECODE; export PYTHONPYCACHEPREFIX=/tmp/pyc_startup
  timeout 40 python3 - $W <<'PY'
import os, statistics, subprocess, sys, time
w = sys.argv[1]
entry = "import sys{}; from ncuwrap.cli import main; sys.exit(main())"
ways = {"forked": entry.format(""), "in process": entry.format("; import ncuwrap.core.forked as f; f.can_fork = lambda: False")}
for name in ("gpu_train", "input_bound"):
    subprocess.run(f"zcat tests/data/h200_ncuwrap/steps/{name}.sqlite.gz > {w}/{name}.sqlite", shell=True, check=True)
    times = {k: [] for k in ways}
    for _ in range(5):
        for way, code in ways.items():
            t = time.perf_counter()
            p = subprocess.Popen([sys.executable, "-c", code, "timeline", f"{w}/{name}.sqlite", "-f", "json"], stdout=subprocess.DEVNULL)
            _, status, usage = os.wait4(p.pid, 0)
            times[way].append((time.perf_counter() - t, usage.ru_utime + usage.ru_stime))
    print(name, "; ".join(f"{way} wall {statistics.median(x[0] for x in v):.3f} s cpu {statistics.median(x[1] for x in v):.3f} s" for way, v in times.items()))
PY
) > $W/keep/forked.txt 2>&1
log "exit $?"; cat $W/keep/forked.txt | tee -a $W/keep/summary.txt
log done; ls -la $OUT
