#!/usr/bin/env bash
# Issue 41 on the GPU host (nvidia-h200): where the read of a real --set full report with SourceCounters goes
# (benchmarks/ncurep_sass_cost.py: per launch, the first SASS of its function against the next ones) and what
# the reading children cost (benchmarks/ncurep_children_memory.py: 1, 2 and 4 children, cold and set up in the
# parent first). One device call from the repository root, .whl carried:
#   bash benchmarks/device/ncurep_cost_issue41.sh      # writes $OUT/ncurep41.tgz
set -uo pipefail
START=$(date +%s)
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=$PWD:/tmp/site:/opt/nvidia/nsight-compute/2025.3.1/extras/python PYTHONUNBUFFERED=1
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
log done
