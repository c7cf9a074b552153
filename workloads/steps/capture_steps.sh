#!/usr/bin/env bash
# Capture the step programs of workloads/steps/ under Nsight Systems on one GPU (nvidia-h200) and
# export each report to SQLite: the fixtures of tests/data/h200_ncuwrap/steps/. Run from the repository
# root there:
#
#   bash workloads/steps/capture_steps.sh OUT_DIR
#
# Each capture NAME is ncuwrap's own nsys command plus graph tracing,
#   nsys profile --trace=cuda,nvtx,osrt --sample=none --cpuctxsw=none --cuda-graph-trace=node
#        -o NAME --force-overwrite true -- python3 PROGRAM ARGS
# (graph_decode_pergraph: --cuda-graph-trace=graph), then nsys export --type sqlite. OUT_DIR/NAME.tar holds
# NAME.sqlite.gz (gzip -9 -n), NAME.log (the command, then what nsys and the program printed: the
# program's last line is its JSON summary) and NAME.nsys-rep when that is under 2 MB. OUT_DIR/meta.tar
# holds env.txt, graph_trace_cost.txt (what node-level graph tracing costs graph_decode --mode graph:
# no nsys, nsys --cuda-graph-trace=graph, nsys --cuda-graph-trace=node; process wall time and the
# program's own per-token median) and this script's log. At most 8 files come back from the device
# machine, hence the tars; the work is done in WORK (default /tmp/steps_work).
# No `set -e`: a capture that fails is logged and the others still run. nsys there needs the
# libdw/libelf of /work/shared/device/lib (carry .devicelibs; see /work/shared/device/README.md).
set -uo pipefail
out=${1:?usage: capture_steps.sh OUT_DIR}
mkdir -p "$out"
out=$(cd "$out" && pwd)
nsys=${NSYS:-/opt/nvidia/nsight-compute/2025.3.1/host/target-linux-x64/nsys}
export LD_LIBRARY_PATH=$PWD/.devicelibs:${LD_LIBRARY_PATH:-}
export PYTHONUNBUFFERED=1
work=${WORK:-/tmp/steps_work}
round2_before_s=${ROUND2_BEFORE_S:-240}   # a second run of each cost configuration only if started by then
steps=workloads/steps
rm -rf "$work" && mkdir -p "$work/cost"
t0=$(date +%s.%N)
since() { python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.2f}')" "$1" "$(date +%s.%N)"; }
log() { echo "[$(since "$t0")s] $*" | tee -a "$work/capture_steps.log"; }

pack_meta() {
  local files=() f
  for f in env.txt graph_trace_cost.txt capture_steps.log; do [[ -f $work/$f ]] && files+=("$f"); done
  tar -C "$work" -cf "$out/meta.tar" "${files[@]}" cost
}

summary() {  # the JSON summary line of a log: steady_wall_ms_median steady_gpu_ms_median
  python3 - "$1" <<'PY'
import json, sys
rows = [l for l in open(sys.argv[1], errors="replace") if l.startswith('{"program"')]
if not rows:
    print("no-summary no-summary")
else:
    s = json.loads(rows[-1])
    print(s["steady_wall_ms_median"], s["steady_gpu_ms_median"])
PY
}

{
  echo "date: $(date -u)"
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem --format=csv
  nvidia-smi -L
  "$nsys" --version
  python3 -c 'import torch;print(torch.__version__, torch.version.cuda)'
  python3 --version
  echo "cpus: $(nproc); $(grep -m1 'model name' /proc/cpuinfo)"
  uname -sr
} > "$work/env.txt" 2>&1
cat "$work/env.txt"
pack_meta

capture() {  # capture NAME GRAPH_TRACE PROGRAM [ARGS...]
  local name=$1 gt=$2; shift 2
  local d=$work/$name
  mkdir -p "$d"
  local cmd=("$nsys" profile --trace=cuda,nvtx,osrt --sample=none --cpuctxsw=none --cuda-graph-trace="$gt"
             -o "$d/$name" --force-overwrite true -- python3 "$@")
  log "profile $name: ${cmd[*]}"
  echo "# ${cmd[*]}" > "$d/$name.log"
  local s rc wall
  s=$(date +%s.%N)
  timeout 150 "${cmd[@]}" >> "$d/$name.log" 2>&1
  rc=$?
  wall=$(since "$s")
  log "profile $name rc=$rc wall=${wall}s; summary (steady wall ms, gpu ms): $(summary "$d/$name.log")"
  echo "$name $gt $rc $wall" >> "$work/cost/profile_walls.txt"
  if [[ ! -f $d/$name.nsys-rep ]]; then
    log "no $name.nsys-rep: $(ls "$d")"; tail -20 "$d/$name.log"; pack_meta; return
  fi
  s=$(date +%s.%N)
  timeout 150 "$nsys" export --type sqlite --force-overwrite true --output "$d/$name.sqlite" "$d/$name.nsys-rep" \
    > "$d/export.log" 2>&1
  rc=$?
  log "export $name rc=$rc wall=$(since "$s")s sqlite=$(stat -c %s "$d/$name.sqlite" 2>/dev/null) rep=$(stat -c %s "$d/$name.nsys-rep")"
  [[ $rc -ne 0 ]] && tail -5 "$d/export.log"
  gzip -9 -n -f "$d/$name.sqlite"
  local files=("$name.log")
  [[ -f $d/$name.sqlite.gz ]] && files+=("$name.sqlite.gz")
  [[ $(stat -c %s "$d/$name.nsys-rep") -lt 2000000 ]] && files+=("$name.nsys-rep")
  tar -C "$d" -cf "$out/$name.tar" "${files[@]}"
  log "packed $name.tar ($(stat -c %s "$out/$name.tar") bytes): ${files[*]}; sqlite.gz=$(stat -c %s "$d/$name.sqlite.gz" 2>/dev/null)"
  [[ $(stat -c %s "$out/$name.tar") -gt 16000000 ]] && log "WARNING: $name.tar is over 16 MB and will not come back"
  tail -1 "$d/$name.log" | cut -c1-300
  pack_meta
}

capture gpu_train node $steps/gpu_train.py --steps 8
capture small_launch node $steps/small_launch.py --steps 30
capture decode_eager node $steps/graph_decode.py --mode eager --steps 64
capture graph_decode node $steps/graph_decode.py --mode graph --steps 64
capture graph_decode_pergraph graph $steps/graph_decode.py --mode graph --steps 64
capture input_bound node $steps/input_bound.py --steps 20
capture small_launch_200 node $steps/small_launch.py --steps 200

# What node-level graph tracing costs: graph_decode --mode graph with no nsys, with --cuda-graph-trace=graph
# and with --cuda-graph-trace=node (nsys profile only; the process's wall time covers nsys's start and its
# report's writing). Run 1 of the two nsys configurations is the captures above.
plain() {  # plain RUN
  local s rc
  s=$(date +%s.%N)
  python3 $steps/graph_decode.py --mode graph --steps 64 > "$work/cost/plain$1.log" 2>&1
  rc=$?
  echo "plain $1 $rc $(since "$s")" >> "$work/cost/walls.txt"
  log "plain run $1 rc=$rc; summary: $(summary "$work/cost/plain$1.log")"
}
profile_only() {  # profile_only RUN GRAPH_TRACE
  local s rc
  s=$(date +%s.%N)
  timeout 150 "$nsys" profile --trace=cuda,nvtx,osrt --sample=none --cpuctxsw=none --cuda-graph-trace="$2" \
    -o "$work/cost/$2$1" --force-overwrite true -- python3 $steps/graph_decode.py --mode graph --steps 64 \
    > "$work/cost/$2$1.log" 2>&1
  rc=$?
  echo "$2 $1 $rc $(since "$s")" >> "$work/cost/walls.txt"
  log "nsys $2 run $1 rc=$rc; summary: $(summary "$work/cost/$2$1.log")"
  rm -f "$work/cost/$2$1".nsys-rep "$work/cost/$2$1".qdstrm
}
cp "$work/graph_decode/graph_decode.log" "$work/cost/node1.log" 2>/dev/null
cp "$work/graph_decode_pergraph/graph_decode_pergraph.log" "$work/cost/graph1.log" 2>/dev/null
awk '$1=="graph_decode"{print "node 1 "$3" "$4} $1=="graph_decode_pergraph"{print "graph 1 "$3" "$4}' \
  "$work/cost/profile_walls.txt" >> "$work/cost/walls.txt"
plain 1
if (( $(python3 -c "print(int(float('$(since "$t0")') < $round2_before_s))") )); then
  plain 2; profile_only 2 graph; profile_only 2 node
else
  log "no second cost round: past ${round2_before_s}s"
fi
{
  echo "# graph_decode.py --mode graph --steps 64 (64 tokens, one CUDA graph replay each), $(date -u)"
  echo "# config run rc process_wall_s steady_token_wall_ms_median steady_token_gpu_ms_median"
  while read -r cfg run rc wall; do
    echo "$cfg $run $rc $wall $(summary "$work/cost/$cfg$run.log")"
  done < "$work/cost/walls.txt"
} > "$work/graph_trace_cost.txt"
cat "$work/graph_trace_cost.txt"
log "done"
pack_meta
ls -la "$out"
