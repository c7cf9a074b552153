#!/usr/bin/env bash
# The figures of docs/scale.md's table measured on the GPU host (nvidia-h200), one device call of about 8 minutes,
# from the repository root with .whl, .devicelibs and .before (a git archive of the tree before the change) carried:
#   bash benchmarks/device/h200_figures.sh      # writes $OUT/h200_figures.tgz (and $OUT/timeline_startup.tgz)
# 1. a real --set full report with SourceCounters and imported sources of the corpus' ops group (44 library
#    kernels), `ncuwrap diagnose -f json` of it against `ncu --import --page details`, whole processes
#    interleaved, this tree and .before (benchmarks/ncu_import_vs_diagnose.py), and their JSON compared;
# 2. the small captures' whole timeline against nsys stats (benchmarks/device/timeline_startup.sh);
# 3. the 10,000-launch CSV against pandas.read_csv (benchmarks/diagnose_scale.py --cli);
# 4. the GPU tests of the profile workflow (tests/test_profile_gpu.py), after the modules' moves.
. benchmarks/device/ops_report.sh h200_figures
{ nproc; free -g; python3 --version; nvidia-smi -L 2>&1; } > $W/keep/machine.txt
log "1. capture: ncu --set full --section SourceCounters --import-source yes, ops group"
capture_ops
if [ -f $W/ops.ncu-rep ]; then
  for tree in . .before; do
    (cd $tree && PYTHONPATH=$PWD:/tmp/site:/opt/nvidia/nsight-compute/2025.3.1/extras/python python3 -m ncuwrap diagnose $W/ops.ncu-rep \
      -f json -o $W/out_$(basename $(realpath $tree)).json --force -q > /dev/null 2>$W/keep/diag_err_$(basename $(realpath $tree)).txt)
  done
  cmp $W/out_*.json > $W/keep/same_json.txt 2>&1 && echo "identical" >> $W/keep/same_json.txt
  log "outputs: $(cat $W/keep/same_json.txt | head -2)"
  timeout 200 python3 benchmarks/ncu_import_vs_diagnose.py $W/ops.ncu-rep --repeat 3 --ncu $NCU --tree .before \
    --json $W/keep/ncu_import.json > $W/keep/ncu_import.txt 2>&1; log "exit $?"
  cat $W/keep/ncu_import.txt | tail -30
fi
log "2. timeline start-up"
timeout 200 bash benchmarks/device/timeline_startup.sh > $W/keep/startup.txt 2>&1; log "exit $?"; grep -v "^$" $W/keep/startup.txt | tail -25
log "3. CSV vs pandas"
timeout 100 python3 benchmarks/diagnose_scale.py --csv basic --repeat 3 --cli --baseline-tree .before --no-floor --json $W/keep/csv.json \
  > $W/keep/csv.txt 2>&1; log "exit $?"; tail -12 $W/keep/csv.txt
log "4. GPU test: profile workflow"
timeout 100 python3 -m pytest -q -p no:cacheprovider -m gpu tests/test_profile_gpu.py > $W/keep/gpu_test.txt 2>&1
log "exit $?"; tail -5 $W/keep/gpu_test.txt
log done
