#!/usr/bin/env bash
# Capture workloads/ranks/ddp_step.py on a 2-GPU machine (nvidia-h200-x2), one nsys report per rank,
# exported to SQLite: the real data issue 13 is waiting for. Run from the repository root there:
#
#   bash workloads/ranks/capture_ranks.sh OUT_DIR [SLOW_MS]
#
# Writes OUT_DIR/balanced/rank{0,1}.sqlite (no slow rank) and OUT_DIR/slow1/rank{0,1}.sqlite (rank 1
# computes SLOW_MS more per step, default 20), then runs 'ncuwrap timeline --ranks' on both.
# nsys inside each rank: torchrun --no-python starts nsys, which starts python; %q{RANK} is the rank
# torchrun gives each process. nsys there needs the libdw/libelf of /work/shared/device/lib
# (carry .devicelibs; see /work/shared/device/README.md).
set -euo pipefail
out=${1:?usage: capture_ranks.sh OUT_DIR [SLOW_MS]}
slow_ms=${2:-20}
nsys=${NSYS:-/opt/nvidia/nsight-compute/2025.3.1/host/target-linux-x64/nsys}
export LD_LIBRARY_PATH=$PWD/.devicelibs:${LD_LIBRARY_PATH:-}
python=$(command -v python3)

capture() {  # capture NAME [ddp_step.py options...]
  local dir=$out/$1; shift
  mkdir -p "$dir"
  torchrun --standalone --nproc-per-node 2 --no-python \
    "$nsys" profile --trace=cuda,nvtx,osrt --sample=none --cpuctxsw=none -o "$dir/rank%q{RANK}" --force-overwrite true -- \
    "$python" workloads/ranks/ddp_step.py --steps 8 "$@" 2>&1 | tee "$dir/capture.log"
  for rep in "$dir"/rank*.nsys-rep; do
    "$nsys" export --type sqlite --force-overwrite true --output "${rep%.nsys-rep}.sqlite" "$rep"
  done
  ls -la "$dir"
}

capture balanced
capture slow1 --slow-rank 1 --slow-ms "$slow_ms"
for d in balanced slow1; do
  PYTHONPATH=$PWD python3 -m ncuwrap timeline --ranks "$out/$d" --workers 0 | tee "$out/$d/verdict.txt"
  PYTHONPATH=$PWD python3 -m ncuwrap timeline --ranks "$out/$d" --workers 0 -f json > "$out/$d/verdict.json"
done
