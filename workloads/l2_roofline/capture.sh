#!/usr/bin/env bash
# Issue 38 on the GPU (nvidia-h200), through ncuwrap itself: targeted profiles (which now collect
# lts__t_sectors.sum for the L2 roofline point) of bundled kernels that read and write in different
# proportions, and what the added counter costs in replay passes. Run from the repository root there with
# .whl carried (no ncu-report wheel: ncu's own extras/python is used through --ncu):
#   bash workloads/l2_roofline/capture.sh       # writes $OUT/l2_roofline.tgz
. workloads/common/preamble.sh l2_roofline
for t in transpose/naive transpose/padded_tile vecadd/coalesced gemm_hopper/pipelined reduction/warp_shuffle gather/random; do
  n=${t//\//_}
  s=$(date +%s.%N)
  timeout 150 python3 -m ncuwrap profile "$t" --no-bench --clock-control none --ncu $NCU -o $W/$n > $W/keep/$n.txt 2> $W/keep/$n.err
  echo "$t rc=$? wall=$(python3 -c "import time;print(round(time.time()-$s,1))")s" | tee -a $W/keep/summary.txt
  for f in report.raw.csv verdict.json commands.txt; do [[ -f $W/$n/$f ]] && cp $W/$n/$f $W/keep/$n.$f; done
  gzip -9 -n $W/keep/$n.report.raw.csv 2>/dev/null
done
timeout 200 python3 workloads/l2_roofline/pass_cost.py --out $W/pc --variant transpose/naive --deadline 170 > $W/keep/pass_cost.log 2>&1
cp $W/pc/pass_cost.json $W/keep/ 2>/dev/null
log done; ls -la $OUT; tail -5 $W/keep/pass_cost.log
