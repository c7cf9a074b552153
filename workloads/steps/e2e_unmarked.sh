#!/usr/bin/env bash
# End to end on the GPU (nvidia-h200), through ncuwrap itself: `ncuwrap timeline -- python3 PROGRAM --marks none` of
# four step programs written without step ranges (their steps must be found by repetition; a Python program is
# captured with PyTorch's op ranges), and `ncuwrap profile --top 2` of the GPU-bound one. Run from the repository root
# there, with .whl (orjson, google-re2, adbc, hatchling... wheels) and .devicelibs carried (../shared/device/README.md):
#   bash workloads/steps/e2e_unmarked.sh      # writes $OUT/e2e.tgz: each run's terminal output, JSON, stderr
. workloads/common/preamble.sh e2e
export PATH=$(dirname $NSYS):$PATH
S=workloads/steps
for spec in "host_prep:$S/host_prep.py --steps 20 --marks none" "gpu_train:$S/gpu_train.py --steps 10 --marks none" "small_launch:$S/small_launch.py --steps 30 --marks none" "graph_decode:$S/graph_decode.py --mode graph --steps 64 --marks none"; do
  n=${spec%%:*}; a=${spec#*:}
  s=$(date +%s.%N)
  timeout 200 python3 -m ncuwrap timeline -o $W/$n -- python3 $a > $W/keep/$n.txt 2> $W/keep/$n.err
  echo "$n rc=$? wall=$(python3 -c "import time;print(round(time.time()-$s,1))")s" | tee -a $W/keep/summary.txt
  cp $W/$n/timeline.json $W/keep/$n.json 2>/dev/null; head -2 $W/$n/timeline.log >> $W/keep/$n.err 2>/dev/null
  tail -1 $W/$n/timeline.log | cut -c1-400 >> $W/keep/summary.txt 2>/dev/null
done
s=$(date +%s.%N)
timeout 280 python3 -m ncuwrap profile --top 2 --clock-control none --ncu $NCU -o $W/top -- python3 $S/gpu_train.py --steps 6 --marks none > $W/keep/top.txt 2> $W/keep/top.err
echo "top rc=$? wall=$(python3 -c "import time;print(round(time.time()-$s,1))")s" | tee -a $W/keep/summary.txt
log done; ls -la $OUT
head -40 $W/keep/host_prep.txt; tail -5 $W/keep/top.err
