#!/usr/bin/env bash
# Issue 41 on the GPU host (nvidia-h200): where the read of a real --set full report with SourceCounters goes
# (benchmarks/ncurep_sass_cost.py: per launch, the first SASS of its function against the next ones) and what
# the reading children cost (benchmarks/ncurep_children_memory.py: 1, 2 and 4 children, cold and set up in the
# parent first), and the timeline process with its thread pools held to one thread. One device call from the
# repository root, .whl and .devicelibs carried:
#   bash benchmarks/device/ncurep_cost_issue41.sh      # writes $OUT/ncurep41.tgz
set -uo pipefail
START=$(date +%s)
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=$PWD:/tmp/site:/opt/nvidia/nsight-compute/2025.3.1/extras/python PYTHONUNBUFFERED=1
export LD_LIBRARY_PATH=$PWD/.devicelibs:${LD_LIBRARY_PATH:-}
NCU=/opt/nvidia/nsight-compute/2025.3.1/ncu
W=/tmp/c41; rm -rf $W; mkdir -p $W/keep
log() { echo "=== [$(( $(date +%s) - START )) s] $*" | tee -a $W/keep/summary.txt; (cd $W/keep && tar -czf $OUT/ncurep41.tgz .); }
log "capture: ncu --set full --section SourceCounters --import-source yes, ops group"
CORPUS_VERIFY=0 timeout 220 $NCU --set full --section SourceCounters --import-source yes --clock-control none --kernel-id :::2 -f \
  -o $W/ops python3 benchmarks/device/realworld_corpus.py --group ops > $W/keep/ncu_ops.log 2>&1
log "ncu exit $?; $(ls -la $W/ops.ncu-rep 2>&1)"
timeout 120 python3 benchmarks/ncurep_sass_cost.py $W/ops.ncu-rep --launches 44 > $W/keep/sass_cost.txt 2>&1
log "sass_cost exit $?"; cat $W/keep/sass_cost.txt | tail -50
timeout 200 python3 benchmarks/ncurep_children_memory.py $W/ops.ncu-rep --parts 1 2 4 --repeat 1 > $W/keep/children.txt 2>&1
log "children exit $?"; tail -20 $W/keep/children.txt
# The whole timeline process spent 3.2 s of CPU in 0.8 s of wall here (0.8 s on a 2-core box): is it the
# thread pools started at import? The same runs with numpy's OpenBLAS and Arrow held to one thread.
NSYS=/opt/nvidia/nsight-compute/2025.3.1/host/target-linux-x64/nsys
timeout 60 python3 benchmarks/timeline_scale.py --real --repeat 3 --nsys $NSYS > $W/keep/timeline_default.txt 2>&1
log "timeline default exit $?"
OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 ARROW_NUM_THREADS=1 timeout 60 python3 benchmarks/timeline_scale.py --real --repeat 3 --nsys $NSYS \
  > $W/keep/timeline_one_thread.txt 2>&1
log "timeline one thread exit $?"
python3 - $W/keep <<'PY'
import json, sys, pathlib
for name in ("timeline_default.txt", "timeline_one_thread.txt"):
    for line in (pathlib.Path(sys.argv[1]) / name).read_text().splitlines():
        if line.startswith("{"):
            r = json.loads(line)
            print(name, r["capture"], "wall", round(r["ncuwrap_process_s"], 3), "cpu", round(r["ncuwrap_process_cpu_s"], 2), "nsys", round(r.get("nsys_stats_s", 0), 3))
PY
log done
