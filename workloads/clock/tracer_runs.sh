#!/usr/bin/env bash
# tracer_cost.py in its five configurations, one process each, in a short device call of its own (the tracer
# job of capture.sh ran out of time before its results were packed): plain, nsys (CUDA trace, no --pytorch),
# nsys + --pytorch=autograd-nvtx, torch.profiler, torch.profiler with shapes and stacks. Run from the
# repository root on the GPU machine, .devicelibs carried:
#
#   bash workloads/clock/tracer_runs.sh OUT_DIR [TRACER_COST ARGS...]     # default: --k 5000 --reps 2 --warmup 1000
#
# OUT_DIR gets each run's log (the command, then what it printed), tracer_cost.jsonl (the JSON lines, in run
# order) and runs.txt (exit code and wall seconds of each run), written as each run ends.
set -uo pipefail
out=${1:?usage: tracer_runs.sh OUT_DIR [TRACER_COST ARGS...]}
shift
args=("$@")
[[ ${#args[@]} -eq 0 ]] && args=(--k 5000 --reps 2 --warmup 1000)
mkdir -p "$out"
nsys=${NSYS:-/opt/nvidia/nsight-compute/2025.3.1/host/target-linux-x64/nsys}
export LD_LIBRARY_PATH=$PWD/.devicelibs:${LD_LIBRARY_PATH:-}
export PYTHONUNBUFFERED=1
tc=${CLOCK_PROGRAMS:-workloads/clock}/tracer_cost.py
nsys_cmd=("$nsys" profile --trace=cuda,nvtx,osrt --sample=none --cpuctxsw=none)

one() {  # one NAME CLOCK_TRACED COMMAND...
  local name=$1 traced=$2; shift 2
  local s rc
  s=$(date +%s.%N)
  { echo "# CLOCK_TRACED=$traced $*"; CLOCK_TRACED=$traced timeout 40 "$@"; } > "$out/$name.log" 2>&1
  rc=$?
  grep -a '^{"program"' "$out/$name.log" >> "$out/tracer_cost.jsonl"
  echo "$name rc=$rc wall_s=$(python3 -c 'import sys, time; print(round(time.time() - float(sys.argv[1]), 1))' "$s")" \
    | tee -a "$out/runs.txt"
  rm -f "/tmp/tracer_$name".nsys-rep "/tmp/tracer_$name".qdstrm
}

one plain "" python3 "$tc" "${args[@]}"
one nsys nsys "${nsys_cmd[@]}" -o /tmp/tracer_nsys --force-overwrite true -- python3 "$tc" "${args[@]}"
one nsys_autograd nsys-autograd-nvtx "${nsys_cmd[@]}" --pytorch=autograd-nvtx -o /tmp/tracer_nsys_autograd \
  --force-overwrite true -- python3 "$tc" "${args[@]}"
one kineto kineto python3 "$tc" "${args[@]}" --profiler kineto
one kineto_full kineto-shapes-stack python3 "$tc" "${args[@]}" --profiler kineto_full
