#!/usr/bin/env bash
# Issue 41 on the GPU host (nvidia-h200): which thread pool makes the whole `ncuwrap timeline` process spend
# 3.2 s of CPU in 0.8 s of wall on 16 cores: the small captures' timeline (benchmarks/timeline_scale.py --real)
# with none, then each one of OPENBLAS_NUM_THREADS, OMP_NUM_THREADS, ARROW_NUM_THREADS set to 1, then ncuwrap's own
# choice (NCUWRAP_THREADS unset). From the repository root, .whl and .devicelibs carried:
#   bash benchmarks/device/threads_issue41.sh
set -uo pipefail
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=$PWD:/tmp/site PYTHONUNBUFFERED=1
export LD_LIBRARY_PATH=$PWD/.devicelibs:${LD_LIBRARY_PATH:-}
NSYS=/opt/nvidia/nsight-compute/2025.3.1/host/target-linux-x64/nsys
for setting in "" OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 ARROW_NUM_THREADS=1; do
  env $setting timeout 50 python3 benchmarks/timeline_scale.py --real --repeat 3 --nsys $NSYS > /tmp/t.txt 2>&1
  python3 - "${setting:-none}" /tmp/t.txt <<'PY'
import json, sys
for line in open(sys.argv[2]):
    if line.startswith("{"):
        r = json.loads(line)
        print(f"{sys.argv[1]:24s} {r['capture']:26s} wall {r['ncuwrap_process_s']:.3f} s  cpu {r['ncuwrap_process_cpu_s']:.2f} s  nsys stats {r.get('nsys_stats_s', 0):.3f} s")
PY
done
