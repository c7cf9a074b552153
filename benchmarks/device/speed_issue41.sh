#!/usr/bin/env bash
# Issue 41 on the GPU host (nvidia-h200), one device call, from the repository root with .whl, .devicelibs and
# .before (a git archive of the commit before the change: ncuwrap, rules, templates, kernels) carried:
#   bash benchmarks/device/speed_issue41.sh      # writes $OUT/speed41.tgz
# 1. a real --set full report with SourceCounters and imported sources of the corpus' ops group (44 library
#    kernels: CUB sorts and scans, torch elementwise, reductions, softmax, layer norm, embedding...);
# 2. `ncuwrap diagnose -f json` of it against `ncu --import --page details`, whole processes interleaved,
#    before (.before) and after (this tree): benchmarks/ncu_import_vs_diagnose.py;
# 3. the small captures' whole `ncuwrap timeline` against `nsys stats` with three reports
#    (benchmarks/timeline_scale.py --real) and the 10,000-launch CSV against pandas (benchmarks/diagnose_scale.py);
# 4. the GPU test of ncuwrap.profile_program (tests/test_profile_gpu.py).
set -uo pipefail
START=$(date +%s)
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=$PWD:/tmp/site:/opt/nvidia/nsight-compute/2025.3.1/extras/python
export LD_LIBRARY_PATH=$PWD/.devicelibs:${LD_LIBRARY_PATH:-}
export PYTHONUNBUFFERED=1 COLUMNS=100
NCU=/opt/nvidia/nsight-compute/2025.3.1/ncu
NSYS=/opt/nvidia/nsight-compute/2025.3.1/host/target-linux-x64/nsys
W=/tmp/s41; rm -rf $W; mkdir -p $W/keep
log() { echo "=== [$(( $(date +%s) - START )) s] $*" | tee -a $W/keep/summary.txt; (cd $W/keep && tar -czf $OUT/speed41.tgz .); }
nproc > $W/keep/machine.txt; free -g >> $W/keep/machine.txt; nvidia-smi -L >> $W/keep/machine.txt 2>&1
log "capture: ncu --set full --section SourceCounters --import-source yes, ops group"
CORPUS_VERIFY=0 timeout 220 $NCU --set full --section SourceCounters --import-source yes --clock-control none --kernel-id :::2 -f \
  -o $W/ops python3 benchmarks/device/realworld_corpus.py --group ops > $W/keep/ncu_ops.log 2>&1
log "ncu exit $?; $(grep -c '==PROF== Profiling' $W/keep/ncu_ops.log) kernels; $(ls -la $W/ops.ncu-rep 2>&1)"
if [ -f $W/ops.ncu-rep ]; then
  log "diagnose vs ncu --import"
  timeout 150 python3 benchmarks/ncu_import_vs_diagnose.py $W/ops.ncu-rep --repeat 3 --ncu $NCU --tree .before \
    --json $W/keep/ncu_import.json > $W/keep/ncu_import.txt 2>&1; log "exit $?"
  cat $W/keep/ncu_import.txt
fi
log "timeline vs nsys stats"
timeout 60 python3 benchmarks/timeline_scale.py --real --repeat 5 --nsys $NSYS --json $W/keep/timeline_real.json > $W/keep/timeline_real.txt 2>&1
log "exit $?"; tail -20 $W/keep/timeline_real.txt
log "CSV vs pandas"
timeout 60 python3 benchmarks/diagnose_scale.py --csv basic --repeat 3 --cli --baseline-tree .before --json $W/keep/csv.json > $W/keep/csv.txt 2>&1
log "exit $?"; tail -20 $W/keep/csv.txt
log "GPU test: profile_program"
timeout 80 python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_profile_gpu.py -k "profile_program or not_bundled" > $W/keep/gpu_test.txt 2>&1
log "exit $?"; tail -5 $W/keep/gpu_test.txt
log done; ls -la $OUT
