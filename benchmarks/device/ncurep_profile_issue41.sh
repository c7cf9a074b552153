#!/usr/bin/env bash
# Issue 41 on the GPU host: where the .ncu-rep diagnosis of the corpus' ops group (44 library kernels, --set full,
# SourceCounters, imported sources) now spends its time, and the whole process against `ncu --import`, one device
# call from the repository root with .whl, .devicelibs and .before carried:
#   bash benchmarks/device/ncurep_profile_issue41.sh [REPEAT]
. benchmarks/device/ops_report41.sh p41
capture_ops
python3 -m ncuwrap diagnose $W/ops.ncu-rep -f json -o $W/main.json --force -q
(cd .before && PYTHONPATH=$PWD:/tmp/site:/opt/nvidia/nsight-compute/2025.3.1/extras/python python3 -m ncuwrap diagnose $W/ops.ncu-rep -f json -o $W/before.json --force -q)
diff $W/before.json $W/main.json > $W/keep/json_diff.txt; log "json diff lines: $(wc -l < $W/keep/json_diff.txt)"; head -8 $W/keep/json_diff.txt
for i in 1 2 3; do python3 benchmarks/ncurep_fork_time.py $W/ops.ncu-rep; done > $W/keep/fork_time.txt 2>&1; cat $W/keep/fork_time.txt
timeout 100 python3 benchmarks/ncurep_phases.py $W/ops.ncu-rep --profile > $W/keep/phases.txt 2>&1; log "phases $?"; head -60 $W/keep/phases.txt
timeout 300 python3 benchmarks/ncu_import_vs_diagnose.py $W/ops.ncu-rep --repeat ${1:-7} --ncu $NCU --tree .before \
  --json $W/keep/ncu_import.json > $W/keep/ncu_import.txt 2>&1; log "exit $?"; tail -8 $W/keep/ncu_import.txt
log done
