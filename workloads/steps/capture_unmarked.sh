#!/usr/bin/env bash
# The fixtures of programs without step markers (tests/data/h200_ncuwrap/unmarked/) and of PyTorch profiler
# traces (tests/data/h200_ncuwrap/kineto/), on one GPU (nvidia-h200). Run from the repository root there:
#
#   bash workloads/steps/capture_unmarked.sh pairs OUT_DIR    # each program with and without NVTX steps
#   bash workloads/steps/capture_unmarked.sh kineto OUT_DIR   # torch.profiler traces, nsys attribution options
#
# pairs: six programs of this folder, each captured twice by ncuwrap's own nsys command (plus graph tracing),
#   nsys profile --trace=cuda,nvtx,osrt --sample=none --cpuctxsw=none --cuda-graph-trace=node -o NAME ...
# once as written (--marks nvtx: each iteration an NVTX range named `step`) and once with --marks none (no
# range at all), then nsys export --type sqlite, gzip -9 -n; and gpu_train with a second, evaluation loop,
# unmarked (two loops). OUT_DIR/pairs.tar holds NAME.sqlite.gz and NAME.log (the command, what nsys and the
# program printed; the last line is the program's JSON summary).
# kineto: torch.profiler Chrome traces (with_stack, record_shapes) of three programs with a schedule
# (ProfilerStep#N) and of one without (no steps); then what nsys's PyTorch options cost on two loops (each
# program's own steady step time, plain and under nsys with and without --pytorch=autograd-nvtx and
# --python-backtrace=cuda), keeping run 1 with both options. OUT_DIR/NAME.pt.trace.json.gz, kineto.tar (logs),
# attrib.tar.
# No `set -e`: a capture that fails is logged and the others still run. nsys there needs the libdw/libelf of
# /work/shared/device/lib (carry .devicelibs; see /work/shared/device/README.md).
set -uo pipefail
part=${1:?usage: capture_unmarked.sh pairs|kineto OUT_DIR}
out=${2:?usage: capture_unmarked.sh pairs|kineto OUT_DIR}
mkdir -p "$out"
out=$(cd "$out" && pwd)
nsys=${NSYS:-/opt/nvidia/nsight-compute/2025.3.1/host/target-linux-x64/nsys}
export LD_LIBRARY_PATH=$PWD/.devicelibs:${LD_LIBRARY_PATH:-}
export PYTHONUNBUFFERED=1
work=${WORK:-/tmp/unmarked_work}/$part
steps=workloads/steps
rm -rf "$work" && mkdir -p "$work/keep"
t0=$(date +%s.%N)
since() { python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.2f}')" "$1" "$(date +%s.%N)"; }
log() { echo "[$(since "$t0")s] $*" | tee -a "$work/keep/capture_$part.log"; }
summary() {  # the program's steady medians from its log's JSON line
  python3 - "$1" <<'PY'
import json, sys
rows = [l for l in open(sys.argv[1], errors="replace") if l.startswith('{"program"')]
print("no-summary" if not rows else f'wall {json.loads(rows[-1])["steady_wall_ms_median"]} ms, gpu {json.loads(rows[-1])["steady_gpu_ms_median"]} ms')
PY
}
{
  echo "date: $(date -u)"
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv
  "$nsys" --version
  python3 -c 'import torch;print(torch.__version__, torch.version.cuda)'
  python3 --version
  echo "cpus: $(nproc); $(grep -m1 'model name' /proc/cpuinfo)"
} > "$work/keep/env_$part.txt" 2>&1

capture() {  # capture NAME "NSYS EXTRA ARGS" PROGRAM [ARGS...]
  local name=$1 extra=$2; shift 2
  local d=$work/$name
  mkdir -p "$d"
  # shellcheck disable=SC2206
  local cmd=("$nsys" profile --trace=cuda,nvtx,osrt --sample=none --cpuctxsw=none --cuda-graph-trace=node $extra
             -o "$d/$name" --force-overwrite true -- python3 "$@")
  echo "# ${cmd[*]}" > "$work/keep/$name.log"
  local s rc
  s=$(date +%s.%N)
  timeout 150 "${cmd[@]}" >> "$work/keep/$name.log" 2>&1
  rc=$?
  log "profile $name rc=$rc wall=$(since "$s")s; $(summary "$work/keep/$name.log")"
  [[ -f $d/$name.nsys-rep ]] || { log "no $name.nsys-rep"; tail -5 "$work/keep/$name.log"; return; }
  timeout 150 "$nsys" export --type sqlite --force-overwrite true --output "$d/$name.sqlite" "$d/$name.nsys-rep" > "$d/export.log" 2>&1 \
    || { log "export $name failed"; tail -5 "$d/export.log"; return; }
  gzip -9 -n -c "$d/$name.sqlite" > "$work/keep/$name.sqlite.gz"
  log "exported $name: sqlite $(stat -c %s "$d/$name.sqlite") B, gz $(stat -c %s "$work/keep/$name.sqlite.gz") B"
  rm -f "$d/$name.sqlite" "$d/$name.nsys-rep"
}

plain() {  # plain NAME PROGRAM [ARGS...]: the program alone, no profiler
  local name=$1; shift
  echo "# python3 $*" > "$work/keep/$name.log"
  local s
  s=$(date +%s.%N)
  timeout 150 python3 "$@" >> "$work/keep/$name.log" 2>&1
  log "plain $name rc=$? wall=$(since "$s")s; $(summary "$work/keep/$name.log")"
}

pack() {  # pack TAR 'GLOB'...: the globs, quoted, are expanded in the keep folder
  local tarname=$1; shift
  # shellcheck disable=SC2068
  (cd "$work/keep" && tar -cf "$out/$tarname" $@)
  log "packed $tarname ($(stat -c %s "$out/$tarname") B)"
}

if [[ $part == pairs ]]; then
  for marks in nvtx none; do
    sfx=$([[ $marks == nvtx ]] && echo marked || echo unmarked)
    capture gpu_train_$sfx "" $steps/gpu_train.py --steps 8 --marks $marks
    capture small_launch_$sfx "" $steps/small_launch.py --steps 30 --marks $marks
    capture decode_eager_$sfx "" $steps/graph_decode.py --mode eager --steps 64 --marks $marks
    capture graph_decode_$sfx "" $steps/graph_decode.py --mode graph --steps 64 --marks $marks
    capture input_bound_$sfx "" $steps/input_bound.py --steps 20 --marks $marks
    capture host_prep_$sfx "" $steps/host_prep.py --steps 20 --marks $marks
  done
  capture two_loops_unmarked "" $steps/gpu_train.py --steps 8 --eval-steps 12 --marks none
  pack pairs.tar '*.sqlite.gz' '*.log' env_pairs.txt
else
  k=$work/keep
  for spec in "gpu_train:$steps/gpu_train.py --steps 8 --kineto-active 4" \
              "small_launch:$steps/small_launch.py --steps 30 --kineto-active 10" \
              "host_prep:$steps/host_prep.py --steps 20 --kineto-active 8"; do
    name=${spec%%:*}; args=${spec#*:}
    # shellcheck disable=SC2086
    plain kineto_$name $args --marks none --kineto "$k/$name.pt.trace.json.gz"
  done
  plain kineto_small_launch_nosched $steps/small_launch.py --steps 30 --marks none --kineto "$k/small_launch_nosched.pt.trace.json.gz" \
    --kineto-schedule none
  ls -la "$k"
  cp "$k"/*.pt.trace.json.gz "$out"/  # each its own file: a tar of them could pass the 16 MiB a file
  pack kineto.tar 'kineto_*.log' env_kineto.txt
  # What nsys's PyTorch options cost, on a GPU-bound and a launch-bound loop (the programs' own steady medians).
  for spec in "gpu_train:$steps/gpu_train.py --steps 12" "small_launch:$steps/small_launch.py --steps 60"; do
    name=${spec%%:*}; args=${spec#*:}
    for run in 1 2; do
      # shellcheck disable=SC2086
      plain cost_${name}_plain$run $args --marks none
      # shellcheck disable=SC2086
      capture cost_${name}_nsys$run "" $args --marks none
      # shellcheck disable=SC2086
      capture cost_${name}_autograd$run "--pytorch=autograd-nvtx" $args --marks none
      # shellcheck disable=SC2086
      capture cost_${name}_backtrace$run "--pytorch=autograd-nvtx --python-backtrace=cuda" $args --marks none
      # Kept: run 1 with both options (the nsys attribution fixture); the others are only timed.
      rm -f "$k"/cost_${name}_nsys$run.sqlite.gz "$k"/cost_${name}_autograd$run.sqlite.gz
      [[ $run == 2 ]] && rm -f "$k"/cost_${name}_backtrace2.sqlite.gz
    done
  done
  pack attrib.tar 'cost_*.sqlite.gz' 'cost_*.log' capture_kineto.log
fi
log done
ls -la "$out"
