# Sourced by the .ncu-rep yardsticks on the GPU host (benchmarks/device/ncu_rep.sh, h200_figures.sh), from the
# repository root with .whl, .devicelibs and .before carried:   . benchmarks/device/ops_report.sh TAG
# The shared preamble (workloads/common/preamble.sh: the environment, /tmp/TAG/keep packed into $OUT/TAG.tgz by
# each `log` line), and `capture_ops`: the real-world corpus' ops group (workloads/realworld, 44 library kernels)
# under ncu with --set full, SourceCounters and imported sources, into /tmp/TAG/ops.ncu-rep.
. workloads/common/preamble.sh "$1"
capture_ops() {
  log "capture"
  CORPUS_VERIFY=0 timeout 220 $NCU --set full --section SourceCounters --import-source yes --clock-control none --kernel-id :::2 -f \
    -o $W/ops python3 workloads/realworld/realworld_corpus.py --group ops > $W/keep/ncu_ops.log 2>&1
  log "ncu exit $?; $(grep -c '==PROF== Profiling' $W/keep/ncu_ops.log) kernels; $(ls -la $W/ops.ncu-rep 2>&1)"
}
