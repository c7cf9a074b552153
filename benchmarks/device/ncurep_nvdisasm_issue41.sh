#!/usr/bin/env bash
# Issue 41 on the GPU host, after the shown SASS moved to nvdisasm and the per-instruction values to arrays: one
# device call from the repository root with .whl (the nvidia-cuda-nvdisasm wheel among them), .devicelibs and
# .before (a git archive of the tree before) carried:   bash benchmarks/device/ncurep_nvdisasm_issue41.sh
# 1. the corpus' ops group (44 library kernels) captured with --set full, SourceCounters and imported sources;
# 2. `diagnose -f json` and `-f markdown` of it by both trees, compared byte for byte;
# 3. where the read goes (benchmarks/ncurep_phases.py), then the whole process against `ncu --import --page
#    details`, both trees, interleaved (benchmarks/ncu_import_vs_diagnose.py);
# 4. the GPU tests of the source lines (scripts/test-gpu source): fresh reports, their lines and SASS.
. benchmarks/device/ops_report41.sh n41
{ nproc; free -g; python3 --version; nvidia-smi -L 2>&1; python3 -c "from ncuwrap.kernel.reading import disassembly; print('nvdisasm', disassembly.nvdisasm())"; } > $W/keep/machine.txt 2>&1
capture_ops
if [ -f $W/ops.ncu-rep ]; then
  for fmt in json markdown; do
    for tree in . .before; do
      name=$(basename $(realpath $tree))
      (cd $tree && PYTHONPATH=$PWD:/tmp/site:/opt/nvidia/nsight-compute/2025.3.1/extras/python python3 -m ncuwrap diagnose $W/ops.ncu-rep \
        -f $fmt -o $W/out_${name}.$fmt --force -q > /dev/null 2>$W/keep/diag_err_${name}_$fmt.txt)
    done
    if cmp $W/out_*.$fmt > $W/keep/same_$fmt.txt 2>&1; then echo identical >> $W/keep/same_$fmt.txt; else diff $W/out_*.$fmt | head -40 >> $W/keep/same_$fmt.txt; fi
    log "$fmt: $(head -3 $W/keep/same_$fmt.txt)"
  done
  cp $W/out_*.json $W/keep/ 2>/dev/null
  log "3. phases"
  for i in 1 2; do timeout 60 python3 benchmarks/ncurep_phases.py $W/ops.ncu-rep; done > $W/keep/phases.txt 2>&1; cat $W/keep/phases.txt
  log "whole processes"
  timeout 240 python3 benchmarks/ncu_import_vs_diagnose.py $W/ops.ncu-rep --repeat 5 --ncu $NCU --tree .before \
    --json $W/keep/ncu_import.json > $W/keep/ncu_import.txt 2>&1; log "exit $?"; tail -12 $W/keep/ncu_import.txt
fi
log "4. scripts/test-gpu source"
PATH=$(dirname $NCU):$PATH timeout 150 scripts/test-gpu source -q > $W/keep/gpu_source.txt 2>&1; log "exit $?"; tail -5 $W/keep/gpu_source.txt
log done
