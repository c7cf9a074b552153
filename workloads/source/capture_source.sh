#!/usr/bin/env bash
# Capture what the per-line attribution (issue 20) is tested on, on the lent H200, from the repository root:
#
#   OUT=/path bash workloads/source/capture_source.sh        # one device call, ~6 minutes
#
# 1. lineinfo: transpose, vecadd and smem_banks built with and without -lineinfo, each binary run
#    twice alternately (A B A B, uninstrumented CUDA-event timings: its JSON), to show -lineinfo does not
#    change the timings.
# 2. For each bundled case: `ncuwrap profile CASE` (targeted collection, the baseline) and the same with
#    the SourceCounters section and --import-source yes; ncu's passes and wall time of both; the source
#    page of the second exported as CSV (--print-source sass, and cuda,sass).
# 3. A Triton kernel and a cuBLAS SGEMM from PyTorch (workloads/source/torch_kernels.py): one
#    checked plain run, then the same two profiles (--nth-launch 2) and exports.
# 4. The cost on a real PyTorch training program (workloads/steps/gpu_train.py): 12 kernels past
#    the first 400 launches, targeted against targeted + SourceCounters.
# PARTS (default "lineinfo bundled torch train") picks the parts to run.
# BUDGET_S (default 540) bounds the whole script: a part that would not finish is not started.
set -u
START=$(date +%s)
BUDGET_S=${BUDGET_S:-540}
PARTS=" ${PARTS:-lineinfo bundled torch train} "
part() { case "$PARTS" in *" $1 "*) return 0;; esac; return 1; }
OUT=${OUT:-$PWD/device-out}
W=${WORK:-/tmp/source}
rm -rf "$W"; mkdir -p "$W/prof" "$W/lineinfo" "$OUT"
export PYTHONUNBUFFERED=1 NCUWRAP_CACHE=$W/build-cache
NCUWRAP="python3 -m ncuwrap"
SRC_ARGS=(--ncu-arg=--section --ncu-arg=SourceCounters --ncu-arg=--import-source --ncu-arg=yes)
elapsed() { echo $(( $(date +%s) - START )); }
log() { echo "=== [$(elapsed) s] $*" | tee -a "$W/summary.txt"; }
passes() { grep -o -- '- [0-9]* passes' "$1" | awk '{s+=$2; n++} END {print n " kernels, " s " passes"}'; }

{ nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv; ncu --version | tail -1; nvcc --version | tail -2;
  python3 -c "import torch, triton; print('torch', torch.__version__, 'triton', triton.__version__)"; } > "$W/env.txt" 2>&1
ncu --help > "$W/ncu_help.txt" 2>&1

# 1. -lineinfo against none, A B A B
if part lineinfo; then
log "lineinfo builds"
for fam in transpose vecadd smem_banks; do
  nvcc -O3 -std=c++17 -arch=sm_90 -lineinfo -o "$W/lineinfo/$fam.li" "kernels/$fam.cu" 2>> "$W/lineinfo/build.log" &
  nvcc -O3 -std=c++17 -arch=sm_90 -o "$W/lineinfo/$fam.plain" "kernels/$fam.cu" 2>> "$W/lineinfo/build.log" &
done
wait
for round in 1 2; do
  for fam in transpose vecadd smem_banks; do
    for kind in plain li; do
      "$W/lineinfo/$fam.$kind" --variant all > "$W/lineinfo/$fam.$kind.$round.json" 2>> "$W/lineinfo/run.log"
    done
  done
done
log "lineinfo done"
fi

profile_pair() {  # name, then the ncuwrap profile arguments
  local name=$1; shift
  if [ $(( BUDGET_S - $(elapsed) )) -lt 60 ]; then log "SKIPPED $name"; return; fi
  local t0=$(date +%s%N)
  $NCUWRAP profile -o "$W/prof/$name.targeted" --force -f json "$@" > "$W/prof/$name.targeted.json" 2> "$W/prof/$name.targeted.err" < /dev/null
  local rc1=$? t1=$(date +%s%N)
  $NCUWRAP profile "${SRC_ARGS[@]}" -o "$W/prof/$name.source" --force -f json "$@" > "$W/prof/$name.source.json" 2> "$W/prof/$name.source.err" < /dev/null
  local rc2=$? t2=$(date +%s%N)
  echo "$name targeted: exit $rc1, $(( (t1 - t0) / 1000000 )) ms, $(passes "$W/prof/$name.targeted/ncu.log")" | tee -a "$W/summary.txt"
  echo "$name source:   exit $rc2, $(( (t2 - t1) / 1000000 )) ms, $(passes "$W/prof/$name.source/ncu.log")" | tee -a "$W/summary.txt"
  local rep="$W/prof/$name.source/report.ncu-rep"
  if [ -f "$rep" ]; then
    cp "$rep" "$W/prof/$name.ncu-rep"
    ncu --import "$rep" --csv --page source --print-source sass > "$W/prof/$name.source_sass.csv" 2>> "$W/prof/$name.export.err"
    ncu --import "$rep" --csv --page source --print-source cuda,sass > "$W/prof/$name.source_cuda_sass.csv" 2>> "$W/prof/$name.export.err"
    ncu --import "$rep" --csv --page source --print-source cuda > "$W/prof/$name.source_cuda.csv" 2>> "$W/prof/$name.export.err"
  fi
  cp "$W/prof/$name.source/commands.txt" "$W/prof/$name.commands.txt" 2>/dev/null
}

# 2. the bundled cases
if part bundled; then
log "build"
$NCUWRAP build --arch sm_90 --all > "$W/build.txt" 2>&1; echo "build exit $?" | tee -a "$W/summary.txt"
for case in transpose/naive transpose/shared_tile transpose/padded_tile vecadd/strided smem_banks/strided smem_banks/padded \
            spill/spill divergence/per_lane gather/random; do
  profile_pair "${case/\//-}" "$case"
done
fi

# 3. Triton and cuBLAS from PyTorch
if part torch; then
log "torch plain, checked"
timeout 120 python3 workloads/source/torch_kernels.py --check > "$W/torch_plain.log" 2>&1; echo "exit $?" >> "$W/torch_plain.log"
cat "$W/torch_plain.log" | tee -a "$W/summary.txt"
profile_pair torch -k 'transpose_rows_to_cols|gemm' --nth-launch 2 -- python3 workloads/source/torch_kernels.py --no-check
fi

# 4. cost on a training program: the 12 launches after the first 400
log "gpu_train cost"
if part train && [ $(( BUDGET_S - $(elapsed) )) -gt 150 ]; then
  profile_pair train --launch-skip 400 --launch-count 12 -- python3 workloads/steps/gpu_train.py --steps 3
  rm -f "$W/prof/train.ncu-rep"  # large; the cost figures are what is kept
fi

log "packing"
cd "$W"
rm -rf prof/*.targeted prof/*.source build-cache lineinfo/*.li lineinfo/*.plain
tar czf "$OUT/source.tgz" $(ls summary.txt env.txt ncu_help.txt build.txt torch_plain.log 2>/dev/null) lineinfo prof
ls -la "$OUT"
log "done"
