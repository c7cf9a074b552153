# Sourced by the .ncu-rep yardsticks on the GPU host (benchmarks/device/ncu_rep.sh, h200_figures.sh), from the
# repository root with .whl and .devicelibs carried (.before too where a script compares trees):
#   . benchmarks/device/ops_report.sh TAG
# The shared preamble (workloads/common/preamble.sh: the environment, /tmp/TAG/keep packed into $OUT/TAG.tgz by
# each `log` line), and `capture_ops [GROUPS]`: the real-world corpus' groups (workloads/realworld; default ops,
# its 44 library kernels; `ops,triton` adds 23 Triton, Inductor and transformer-block kernels, C linkage among
# them) under ncu with --set full, SourceCounters and imported sources, into /tmp/TAG/ops.ncu-rep.
. workloads/common/preamble.sh "$1"
capture_ops() {
  local groups=${1:-ops}
  log "capture: groups $groups"
  CORPUS_VERIFY=0 TORCHINDUCTOR_CACHE_DIR=$W/inductor timeout 330 $NCU --set full --section SourceCounters --import-source yes \
    --clock-control none --kernel-id :::2 -f -o $W/ops python3 workloads/realworld/realworld_corpus.py --group "$groups" > $W/keep/ncu_ops.log 2>&1
  log "ncu exit $?; $(grep -c '==PROF== Profiling' $W/keep/ncu_ops.log) kernels; $(ls -la $W/ops.ncu-rep 2>&1)"
}
