#!/usr/bin/env bash
# Run the workload programs of workloads/clock/ on the GPU machine (nvidia-h200): each program-variant once
# under ncuwrap's exact nsys command (exported to SQLite, gzipped) and three times plain, and the extra runs
# (nsys without --pytorch, tracer calibration, Kineto traces). Run from the repository root there, with
# .devicelibs carried (nsys needs its libdw/libelf: see shared/device/README.md):
#
#   bash workloads/clock/capture.sh OUT_DIR [JOB...]
#
# JOBs, in the default order (the most important first): smoke mlp decode input elementwise varlen periodic
# requests item numpy noranges tracer kineto; and recapture, only when named.
#   smoke       tiny runs of the programs that come late (item, numpy, tracer counting, a Kineto export), so
#               that a bug in them shows up even if the call ends before their turn; its count_run (nsys +
#               autograd-nvtx, exported, nsys_counts.py) and --count-events runs count tracer_cost's ops and
#               kernels per iteration
#   a pair      capture A, capture B, then plain A B A B A B (a variant that fails under nsys is not run plain)
#   a single    capture, then plain x3
#   recapture   elementwise --mode compiled again after one plain run (Inductor's caches warm), and decode
#               --mode graph again (its shorter post-clock check): smaller exports
#   noranges    decode --mode eager and item_sync --item under nsys WITHOUT --pytorch (clock only)
#   tracer      tracer_cost.py plain, under nsys, nsys + --pytorch=autograd-nvtx, torch.profiler without and
#               with shapes+stack, plain again (TRACER_COUNTS=1: the counting runs too, with --k 200)
#   kineto      mlp_train fp32, decode eager, elementwise eager under torch.profiler (--kineto)
# A capture NAME is exactly
#   CLOCK_TRACED=nsys nsys profile --trace=cuda,nvtx,osrt --sample=none --cpuctxsw=none --cuda-graph-trace=node
#        --pytorch=autograd-nvtx -o NAME --force-overwrite true -- python3 PROGRAM ARGS
#   nsys export --type sqlite --force-overwrite true --output NAME.sqlite NAME.nsys-rep; gzip -9 -n NAME.sqlite
# and NAME.log holds both commands and everything they printed (the program's JSON line among it).
# A job is started only while the script has run less than DEADLINE_S seconds (default 400); skipped jobs are
# logged. No `set -e`: every exit code is logged and the rest goes on. What comes back (at most 8 files):
# OUT_DIR/{pairs1,pairs2,singles,pairs3,extra,smoke,recapture}.tar (each job's folder) and OUT_DIR/meta.tar
# (env.txt, clock.log, plain.jsonl, captured.jsonl, nsys_noranges.jsonl, tracer_cost.jsonl, kineto.jsonl,
# smoke.jsonl, warm.jsonl), re-packed after every job.
#
# The fixtures of tests/data/h200_ncuwrap/clock/ came from these calls of it (see its README):
#   DEADLINE_S=360 bash workloads/clock/capture.sh OUT                  # reached smoke .. elementwise
#   DEADLINE_S=460 bash workloads/clock/capture.sh OUT varlen periodic requests item numpy recapture noranges tracer kineto
#   DEADLINE_S=240 bash workloads/clock/capture.sh OUT varlen requests item   # again: these captures replace the line above's
out=${1:?usage: capture.sh OUT_DIR [JOB...]}
shift
jobs=("$@")
[[ ${#jobs[@]} -eq 0 ]] && jobs=(smoke mlp decode input elementwise varlen periodic requests item numpy noranges tracer kineto)
mkdir -p "$out"
out=$(cd "$out" && pwd)
# The shared set-up (set -uo pipefail, the carried wheels, PYTHONPATH, PYTHONUNBUFFERED, LD_LIBRARY_PATH, NSYS, the
# work folder W=/tmp/clock_work, made empty) and job loop (run_jobs: a deadline per job, each logged and packed);
# this script keeps its own log lines and packing (the fixture's README quotes them).
OUT=$out
. workloads/common/preamble.sh clock_work
nsys=$NSYS
unset CLOCK_TRACED
deadline=${DEADLINE_S:-400}
work=$W
C=${CLOCK_PROGRAMS:-workloads/clock}   # the programs (overridable only to test this script with stubs)
mkdir -p "$work/keep/meta" "$work/raw"
meta=$work/keep/meta
t_start=$(date +%s.%N)
log() { echo "[$(elapsed "$t_start")s $(date -u +%T)] $*" | tee -a "$meta/clock.log"; }
json_of() { grep -a '^{"program"' "$1" | tail -n 1; }   # the program's JSON line in a log

{
  echo "date: $(date -u)"
  nvidia-smi -q | head -40
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,clocks.max.sm,power.draw,temperature.gpu --format=csv
  "$nsys" --version
  python3 -c 'import torch, numpy, sys; print("torch", torch.__version__, "cuda", torch.version.cuda, "cudnn", torch.backends.cudnn.version(), "numpy", numpy.__version__, "python", sys.version.split()[0])'
  python3 -c 'import triton; print("triton", triton.__version__)'
  echo "nproc: $(nproc); $(grep -m1 'model name' /proc/cpuinfo)"
  free -g | head -2
  uname -sr
} > "$meta/env.txt" 2>&1
cat "$meta/env.txt"

group_of() {
  case $1 in
    mlp|decode) echo pairs1 ;;
    input|elementwise) echo pairs2 ;;
    varlen|periodic|requests) echo singles ;;
    item|numpy) echo pairs3 ;;
    noranges|tracer|kineto) echo extra ;;
    recapture) echo recapture ;;
    smoke) echo smoke ;;
    *) echo other ;;
  esac
}

pack() {
  local g dirs j
  for g in pairs1 pairs2 singles pairs3 extra smoke recapture; do
    dirs=()
    for j in "$work"/keep/*/; do
      j=$(basename "$j")
      [[ $j != meta && $(group_of "$j") == "$g" ]] && dirs+=("$j")
    done
    [[ ${#dirs[@]} -gt 0 ]] && tar -C "$work/keep" -cf "$out/$g.tar" "${dirs[@]}"
  done
  tar -C "$work/keep" -cf "$out/meta.tar" meta
}

capture() {  # capture JOB NAME PROGRAM [ARGS...]; fails (returns 1) when the program printed no JSON line
  local job=$1 name=$2; shift 2
  local d=$work/keep/$job rep=$work/raw/$name
  mkdir -p "$d"
  local cmd=("$nsys" profile --trace=cuda,nvtx,osrt --sample=none --cpuctxsw=none --cuda-graph-trace=node
             --pytorch=autograd-nvtx -o "$rep" --force-overwrite true -- python3 "$@")
  echo "# CLOCK_TRACED=nsys ${cmd[*]}" > "$d/$name.log"
  local s rc
  s=$(date +%s.%N)
  CLOCK_TRACED=nsys timeout 240 "${cmd[@]}" >> "$d/$name.log" 2>&1
  rc=$?
  local line; line=$(json_of "$d/$name.log")
  log "capture $name rc=$rc wall=$(elapsed "$s")s step_ms_mean=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["step_ms_mean"] if sys.argv[1] else "none")' "$line")"
  [[ -n $line ]] && echo "$line" >> "$meta/captured.jsonl"
  [[ $rc -ne 0 ]] && tail -n 15 "$d/$name.log"
  if [[ ! -f $rep.nsys-rep ]]; then log "no $name.nsys-rep: $(ls "$work/raw" | tr '\n' ' ')"; [[ -n $line ]]; return; fi
  local ecmd=("$nsys" export --type sqlite --force-overwrite true --output "$rep.sqlite" "$rep.nsys-rep")
  echo "# ${ecmd[*]}" >> "$d/$name.log"
  s=$(date +%s.%N)
  timeout 180 "${ecmd[@]}" >> "$d/$name.log" 2>&1
  rc=$?
  echo "# export exit $rc" >> "$d/$name.log"
  local sq; sq=$(stat -c %s "$rep.sqlite" 2>/dev/null)
  gzip -9 -n -c "$rep.sqlite" > "$d/$name.sqlite.gz" 2>/dev/null || rm -f "$d/$name.sqlite.gz"
  log "export $name rc=$rc wall=$(elapsed "$s")s rep=$(stat -c %s "$rep.nsys-rep") sqlite=$sq gz=$(stat -c %s "$d/$name.sqlite.gz" 2>/dev/null)"
  rm -f "$rep.nsys-rep" "$rep.sqlite" "$rep.qdstrm"
  [[ -n $line ]]
}

plain() {  # plain JOB NAME RUN PROGRAM [ARGS...]
  local job=$1 name=$2 run=$3; shift 3
  local d=$work/keep/$job/plain
  mkdir -p "$d"
  local s rc
  s=$(date +%s.%N)
  { echo "# python3 $*"; timeout 240 python3 "$@"; } > "$d/$name.$run.log" 2>&1
  rc=$?
  local line; line=$(json_of "$d/$name.$run.log")
  [[ -n $line ]] && echo "$line" >> "$meta/plain.jsonl"
  log "plain $name run $run rc=$rc wall=$(elapsed "$s")s step_ms_mean=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["step_ms_mean"] if sys.argv[1] else "none")' "$line")"
  [[ $rc -ne 0 ]] && tail -n 15 "$d/$name.$run.log"
  pack
}

traced_run() {  # traced_run JOB NAME TRACED_LABEL JSONL [nsys profile ARGS... --] PROGRAM [ARGS...]: one run, clock only
  local job=$1 name=$2 label=$3 jsonl=$4; shift 4
  local d=$work/keep/$job
  mkdir -p "$d"
  echo "# CLOCK_TRACED=$label $*" > "$d/$name.log"
  local s rc
  s=$(date +%s.%N)
  CLOCK_TRACED=$label timeout 240 "$@" >> "$d/$name.log" 2>&1
  rc=$?
  local line; line=$(json_of "$d/$name.log")
  [[ -n $line ]] && echo "$line" >> "$meta/$jsonl"
  log "run $name ($label) rc=$rc wall=$(elapsed "$s")s"
  [[ $rc -ne 0 ]] && tail -n 15 "$d/$name.log"
  rm -f "$work/raw/$name".nsys-rep "$work/raw/$name".qdstrm
  pack   # at once: in call 2 the tracer job's results were lost when the call's time ran out before its end
}

pair() {  # pair JOB PROGRAM NAME_A "ARGS_A" NAME_B "ARGS_B"
  local job=$1 prog=$2 na=$3 aa=$4 nb=$5 ab=$6 r oka=1 okb=1
  capture "$job" "$na" "$prog" $aa || { oka=0; log "$na failed under nsys: no plain runs of it"; }
  capture "$job" "$nb" "$prog" $ab || { okb=0; log "$nb failed under nsys: no plain runs of it"; }
  pack
  for r in 1 2 3; do
    (( oka )) && plain "$job" "$na" "$r" "$prog" $aa
    (( okb )) && plain "$job" "$nb" "$r" "$prog" $ab
  done
}

single() {  # single JOB PROGRAM NAME "ARGS"
  local job=$1 prog=$2 n=$3 a=$4 r
  capture "$job" "$n" "$prog" $a || { log "$n failed under nsys: no plain runs of it"; return; }
  pack
  for r in 1 2 3; do plain "$job" "$n" "$r" "$prog" $a; done
}

nsys_plain=("$nsys" profile --trace=cuda,nvtx,osrt --sample=none --cpuctxsw=none)

count_run() {  # count_run JOB NAME JSONL TRACER_COST_ARGS...: tracer_cost.py under nsys + autograd-nvtx, exported, counted
  local job=$1 name=$2 jsonl=$3; shift 3
  local d=$work/keep/$job rep=$work/raw/$name
  mkdir -p "$d"
  local ccmd=("${nsys_plain[@]}" --pytorch=autograd-nvtx -o "$rep" --force-overwrite true -- python3 $C/tracer_cost.py "$@")
  echo "# CLOCK_TRACED=nsys-autograd-nvtx ${ccmd[*]}" > "$d/$name.log"
  CLOCK_TRACED=nsys-autograd-nvtx timeout 120 "${ccmd[@]}" >> "$d/$name.log" 2>&1
  log "$name profile rc=$?"
  local line; line=$(json_of "$d/$name.log")
  [[ -n $line ]] && echo "$line" >> "$meta/$jsonl"
  timeout 120 "$nsys" export --type sqlite --force-overwrite true --output "$rep.sqlite" "$rep.nsys-rep" >> "$d/$name.log" 2>&1
  log "$name export rc=$?"
  python3 $C/nsys_counts.py "$rep.sqlite" --prefix tracer_cost: > "$d/$name.counts.json" 2>> "$d/$name.log"
  log "$name nsys_counts rc=$? $(head -c 400 "$d/$name.counts.json")"
  cat "$d/$name.counts.json" >> "$meta/$jsonl"
  rm -f "$rep".*
}

run_job() {
  case $1 in
    smoke)
      local d=$work/keep/smoke; mkdir -p "$d"
      traced_run smoke item_smoke smoke smoke.jsonl python3 $C/item_sync.py --item --iters 3 --warmup 1
      traced_run smoke numpy_smoke smoke smoke.jsonl python3 $C/numpy_prep.py --workers 6 --iters 3 --warmup 1
      traced_run smoke kineto_smoke smoke smoke.jsonl python3 $C/mlp_train.py --dtype bf16 --iters 2 --warmup 1 \
        --kineto "$d/smoke.pt.trace.json.gz"
      ls -la "$d" | tee -a "$meta/clock.log"
      rm -f "$d/smoke.pt.trace.json.gz"
      traced_run smoke tracer_smoke_kineto smoke smoke.jsonl python3 $C/tracer_cost.py --k 50 --reps 1 --warmup 10 \
        --profiler kineto_full --count-events
      count_run smoke tracer_smoke_counts smoke.jsonl --k 50 --reps 1 --warmup 10
      ;;
    mlp) pair mlp $C/mlp_train.py mlp_train_fp32 "--dtype fp32" mlp_train_bf16 "--dtype bf16" ;;
    decode) pair decode $C/decode.py decode_eager "--mode eager" decode_graph "--mode graph" ;;
    input) pair input $C/input_loop.py input_loop_pageable "--mode pageable" input_loop_pinned "--mode pinned" ;;
    elementwise) pair elementwise $C/elementwise.py elementwise_eager "--mode eager" elementwise_compiled "--mode compiled" ;;
    varlen) single varlen $C/varlen_train.py varlen_train "" ;;
    periodic) single periodic $C/periodic_train.py periodic_train "" ;;
    requests) single requests $C/serve_requests.py requests "" ;;
    item) pair item $C/item_sync.py item_sync_item "--item" item_sync_noitem "--noitem" ;;
    numpy) pair numpy $C/numpy_prep.py numpy_prep_workers0 "--workers 0" numpy_prep_workers6 "--workers 6" ;;
    recapture)
      # again, smaller: elementwise --mode compiled with Inductor's caches warm (one plain run first, its JSON line
      # in warm.jsonl: a cold compile under nsys made a 1.9 MB export of file-system calls), decode --mode graph
      # with its short post-clock check (--check-tokens)
      traced_run recapture elementwise_compiled_warmcache "" warm.jsonl python3 $C/elementwise.py --mode compiled
      capture recapture elementwise_compiled $C/elementwise.py --mode compiled
      capture recapture decode_graph $C/decode.py --mode graph
      ;;
    noranges)
      traced_run noranges decode_eager_noranges nsys-noranges nsys_noranges.jsonl "${nsys_plain[@]}" \
        --cuda-graph-trace=node -o "$work/raw/decode_eager_noranges" --force-overwrite true -- python3 $C/decode.py --mode eager
      traced_run noranges item_sync_item_noranges nsys-noranges nsys_noranges.jsonl "${nsys_plain[@]}" \
        --cuda-graph-trace=node -o "$work/raw/item_sync_item_noranges" --force-overwrite true -- python3 $C/item_sync.py --item
      ;;
    tracer)
      local tc=$C/tracer_cost.py
      traced_run tracer tracer_plain1 "" tracer_cost.jsonl python3 $tc
      traced_run tracer tracer_nsys nsys tracer_cost.jsonl "${nsys_plain[@]}" \
        -o "$work/raw/tracer_nsys" --force-overwrite true -- python3 $tc
      traced_run tracer tracer_nsys_autograd nsys-autograd-nvtx tracer_cost.jsonl "${nsys_plain[@]}" --pytorch=autograd-nvtx \
        -o "$work/raw/tracer_nsys_autograd" --force-overwrite true -- python3 $tc
      traced_run tracer tracer_kineto kineto tracer_cost.jsonl python3 $tc --profiler kineto
      traced_run tracer tracer_kineto_full kineto-shapes-stack tracer_cost.jsonl python3 $tc --profiler kineto_full
      traced_run tracer tracer_plain2 "" tracer_cost.jsonl python3 $tc
      # the ops and kernels per iteration: count_run (nsys + autograd-nvtx, exported, nsys_counts.py) and
      # --count-events under Kineto; call 1's smoke job made both (--k 50), so they are optional here
      if [[ ${TRACER_COUNTS:-0} == 1 ]]; then
        count_run tracer tracer_counts tracer_cost.jsonl --k 200 --reps 1 --warmup 100
        traced_run tracer tracer_kineto_counts kineto-shapes-stack tracer_cost.jsonl python3 $tc --k 200 --reps 1 \
          --warmup 100 --profiler kineto_full --count-events
      fi
      ;;
    kineto)
      local d=$work/keep/kineto; mkdir -p "$d"
      traced_run kineto kineto_mlp_train_fp32 kineto kineto.jsonl python3 $C/mlp_train.py --dtype fp32 --iters 5 \
        --kineto "$d/mlp_train_fp32.pt.trace.json.gz"
      traced_run kineto kineto_decode_eager kineto kineto.jsonl python3 $C/decode.py --mode eager --iters 16 \
        --kineto "$d/decode_eager.pt.trace.json.gz"
      traced_run kineto kineto_elementwise_eager kineto kineto.jsonl python3 $C/elementwise.py --mode eager --iters 5 \
        --kineto "$d/elementwise_eager.pt.trace.json.gz"
      ls -la "$d" | tee -a "$meta/clock.log"
      ;;
    *) log "unknown job $1" ;;
  esac
}

run_jobs "$t_start" "$deadline" "$meta/clock.log" "${jobs[@]}"
