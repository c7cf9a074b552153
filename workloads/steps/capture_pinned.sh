#!/usr/bin/env bash
# A before/after pair of whole-program captures for `ncuwrap compare A.sqlite B.sqlite`: input_bound.py
# with its batch in pageable memory (the fixture steps/input_bound) and with --pinned (one reused pinned
# buffer, non_blocking copies), each captured as capture_steps.sh captures, and each run 3 times without
# nsys for the uninstrumented yardstick. Run from the repository root on the GPU machine:
#
#   bash workloads/steps/capture_pinned.sh OUT_DIR     # carry .devicelibs (nsys, ../shared/device/README.md)
#
# OUT_DIR/pinned.tar: input_bound_pageable.{sqlite.gz,log}, input_bound_pinned.{sqlite.gz,log},
# uninstrumented.jsonl (one program summary a line: 3 pageable, 3 pinned) and capture_pinned.log.
set -uo pipefail
out=${1:?usage: capture_pinned.sh OUT_DIR}
mkdir -p "$out"
out=$(cd "$out" && pwd)
nsys=${NSYS:-/opt/nvidia/nsight-compute/2025.3.1/host/target-linux-x64/nsys}
export LD_LIBRARY_PATH=$PWD/.devicelibs:${LD_LIBRARY_PATH:-}
export PYTHONUNBUFFERED=1
work=${WORK:-/tmp/pinned_work}
prog=workloads/steps/input_bound.py
rm -rf "$work" && mkdir -p "$work"
log() { echo "[$(date -u +%T)] $*" | tee -a "$work/capture_pinned.log"; }

for mode in pageable pinned; do
  flag=$([[ $mode == pinned ]] && echo --pinned || true)
  name=input_bound_$mode
  cmd=("$nsys" profile --trace=cuda,nvtx,osrt --sample=none --cpuctxsw=none --cuda-graph-trace=node
       -o "$work/$name" --force-overwrite true -- python3 "$prog" --steps 20 $flag)
  log "capture $name: ${cmd[*]}"
  { echo "# ${cmd[*]}"; "${cmd[@]}"; } > "$work/$name.log" 2>&1
  log "  exit $?"
  "$nsys" export --type sqlite --force-overwrite true --output "$work/$name.sqlite" "$work/$name.nsys-rep" >> "$work/$name.log" 2>&1
  log "  export exit $?"
  gzip -9 -n -f "$work/$name.sqlite"
done
for run in 1 2 3; do
  for mode in pageable pinned; do
    flag=$([[ $mode == pinned ]] && echo --pinned || true)
    python3 "$prog" --steps 20 $flag | tail -n 1 >> "$work/uninstrumented.jsonl"
    log "uninstrumented $mode run $run: exit $?"
  done
done
tar -C "$work" -cf "$out/pinned.tar" input_bound_pageable.sqlite.gz input_bound_pageable.log input_bound_pinned.sqlite.gz \
    input_bound_pinned.log uninstrumented.jsonl capture_pinned.log
