#!/usr/bin/env bash
# The figure ".ncu-rep against ncu --import" of docs/scale.md on the GPU host, one device call (~5 minutes) from the
# repository root with .whl, .devicelibs and .before (a git archive of the tree before) carried:
#   bash benchmarks/device/ncu_rep.sh        # writes $OUT/ncu_rep.tgz
# the corpus' ops group (44 library kernels, --set full, SourceCounters, imported sources) captured; both trees'
# JSON compared; when the reading child is forked and waited for (scripts/probes/ncurep_fork_time.py); the whole
# process against `ncu --import`, both trees, interleaved (benchmarks/ncu_import_vs_diagnose.py); the GPU tests
# of the source lines.
. benchmarks/device/ops_report.sh ncu_rep
capture_ops
python3 -m ncuwrap diagnose $W/ops.ncu-rep -f json -o $W/main.json --force -q
(cd .before && PYTHONPATH=$PWD:/tmp/site:/opt/nvidia/nsight-compute/2025.3.1/extras/python python3 -m ncuwrap diagnose $W/ops.ncu-rep -f json -o $W/before.json --force -q)
diff $W/before.json $W/main.json > $W/keep/json_diff.txt; log "json diff lines: $(wc -l < $W/keep/json_diff.txt)"; cat $W/keep/json_diff.txt | head -8
for i in 1 2; do timeout 60 python3 scripts/probes/ncurep_fork_time.py $W/ops.ncu-rep >> $W/keep/fork_time.txt 2>&1; done; cat $W/keep/fork_time.txt
timeout 300 python3 benchmarks/ncu_import_vs_diagnose.py $W/ops.ncu-rep --repeat 7 --ncu $NCU --tree .before \
  --json $W/keep/ncu_import.json > $W/keep/ncu_import.txt 2>&1; log "exit $?"; tail -7 $W/keep/ncu_import.txt
PATH=$(dirname $NCU):$PATH timeout 120 scripts/test-gpu source -q > $W/keep/gpu_source.txt 2>&1; log "test-gpu source exit $?"; tail -3 $W/keep/gpu_source.txt
log done
