#!/usr/bin/env bash
# Issue 38 on the GPU (nvidia-h200), through ncuwrap itself: targeted profiles (which now collect
# lts__t_sectors.sum for the L2 roofline point) of bundled kernels that read and write in different
# proportions, and what the added counter costs in replay passes. Run from the repository root there with
# .whl carried (no ncu-report wheel: ncu's own extras/python is used through --ncu):
#   bash benchmarks/device/capture_issue38.sh       # writes $OUT/issue38.tgz
set -uo pipefail
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=$PWD:/tmp/site:/opt/nvidia/nsight-compute/2025.3.1/extras/python
export COLUMNS=100 PYTHONUNBUFFERED=1
NCU=/opt/nvidia/nsight-compute/2025.3.1/ncu
W=/tmp/i38; rm -rf $W; mkdir -p $W/keep
for t in transpose/naive transpose/padded_tile vecadd/coalesced gemm_hopper/pipelined reduction/warp_shuffle gather/random; do
  n=${t//\//_}
  s=$(date +%s.%N)
  timeout 150 python3 -m ncuwrap profile "$t" --no-bench --clock-control none --ncu $NCU -o $W/$n > $W/keep/$n.txt 2> $W/keep/$n.err
  echo "$t rc=$? wall=$(python3 -c "import time;print(round(time.time()-$s,1))")s" | tee -a $W/keep/summary.txt
  for f in report.raw.csv verdict.json commands.txt; do [[ -f $W/$n/$f ]] && cp $W/$n/$f $W/keep/$n.$f; done
  gzip -9 -n $W/keep/$n.report.raw.csv 2>/dev/null
done
timeout 200 python3 benchmarks/device/pass_cost.py --out $W/pc --variant transpose/naive --deadline 170 > $W/keep/pass_cost.log 2>&1
cp $W/pc/pass_cost.json $W/keep/ 2>/dev/null
cd $W/keep && tar -czf $OUT/issue38.tgz . && ls -la $OUT && cat summary.txt && tail -5 pass_cost.log
