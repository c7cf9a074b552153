#!/usr/bin/env bash
# Issue 26's captures on a machine of 4 or 8 GPUs (nvidia-h200-x4 / -x8), one nsys report per rank through
# ncuwrap's own --per-rank capture. Run from the repository root there, ncuwrap installed:
#
#   bash workloads/ranks/capture_parallel.sh GPUS OUT_DIR [SLOW_MS] [INPUT_MS]
#
# For each mode of workloads/ranks/parallel_step.py (ddp, fsdp, tp): OUT_DIR/MODE-balanced (no slow rank),
# OUT_DIR/MODE-slow (the last rank computes SLOW_MS more per step, default 20) and, for ddp,
# OUT_DIR/ddp-input (the last rank sleeps INPUT_MS in its input pipeline, default 20); each run folder holds
# rank0..rankN-1 (.nsys-rep, .sqlite); beside it NAME.json (the diagnosis), NAME.md (the same as Markdown)
# and NAME.log (what ncuwrap and the ranks printed).
# PRINT=1 prints the ncuwrap command lines instead of running them (tests/test_ranks_capture.py checks them).
# nsys there needs the libdw/libelf of /work/shared/device/lib (carry .devicelibs; /work/shared/device/README.md).
# NVLink multicast stays off (the machine's own setting, kept here for a program started with its own environment).
set -euo pipefail
gpus=${1:?usage: capture_parallel.sh GPUS OUT_DIR [SLOW_MS] [INPUT_MS]}
out=${2:?usage: capture_parallel.sh GPUS OUT_DIR [SLOW_MS] [INPUT_MS]}
slow_ms=${3:-20}
input_ms=${4:-20}
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export LD_LIBRARY_PATH=$PWD/.devicelibs:${LD_LIBRARY_PATH:-}
nsys=${NSYS:-/opt/nvidia/nsight-compute/2025.3.1/host/target-linux-x64/nsys}
last=$((gpus - 1))

capture() {  # capture NAME MODE [parallel_step.py options...]
  local dir=$out/$1 mode=$2; shift 2
  local argv=(ncuwrap timeline --per-rank --nsys-path "$nsys" --workers 0 -f json -o "$dir" --
              torchrun --standalone --nproc-per-node "$gpus" workloads/ranks/parallel_step.py --mode "$mode" --steps 10 "$@")
  if [ "${PRINT:-0}" = 1 ]; then
    printf '%s\n' "${argv[*]}"
    return
  fi
  mkdir -p "$out"
  "${argv[@]}" > "$out/$1.json" 2> >(tee "$out/$1.log" >&2)
  ncuwrap timeline --ranks "$dir" --workers 0 -f markdown > "$out/$1.md"
}

for mode in ddp fsdp tp; do
  capture "$mode-balanced" "$mode"
  capture "$mode-slow" "$mode" --slow-rank "$last" --slow-ms "$slow_ms"
done
capture ddp-input ddp --slow-rank "$last" --input-ms "$input_ms"
