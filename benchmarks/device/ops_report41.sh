# Sourced by issue 41's .ncu-rep scripts on the GPU host (ncurep_*_issue41.sh), from the repository root with .whl,
# .devicelibs and .before carried:   . benchmarks/device/ops_report41.sh TAG
# Installs the carried wheels, sets the environment, keeps what the run writes in /tmp/TAG/keep (packed into
# $OUT/TAG.tgz by each `log` line), and defines `capture_ops`: the corpus' ops group (44 library kernels) under
# ncu with --set full, SourceCounters and imported sources, into /tmp/TAG/ops.ncu-rep.
set -uo pipefail
START=$(date +%s)
TAG=$1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=$PWD:/tmp/site:/opt/nvidia/nsight-compute/2025.3.1/extras/python PYTHONUNBUFFERED=1 COLUMNS=100
export LD_LIBRARY_PATH=$PWD/.devicelibs:${LD_LIBRARY_PATH:-}
NCU=/opt/nvidia/nsight-compute/2025.3.1/ncu
W=/tmp/$TAG; rm -rf $W; mkdir -p $W/keep
log() { echo "=== [$(( $(date +%s) - START )) s] $*" | tee -a $W/keep/summary.txt; (cd $W/keep && tar -czf $OUT/$TAG.tgz .); }
capture_ops() {
  log "capture"
  CORPUS_VERIFY=0 timeout 220 $NCU --set full --section SourceCounters --import-source yes --clock-control none --kernel-id :::2 -f \
    -o $W/ops python3 benchmarks/device/realworld_corpus.py --group ops > $W/keep/ncu_ops.log 2>&1
  log "ncu exit $?; $(grep -c '==PROF== Profiling' $W/keep/ncu_ops.log) kernels; $(ls -la $W/ops.ncu-rep 2>&1)"
}
