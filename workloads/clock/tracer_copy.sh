#!/usr/bin/env bash
# Whether the PyTorch profiler slows a pageable host-to-device copy, and by how much: workloads/clock/pageable_copy.py
# run one process a phase, plain and under the profiler's activities, interleaved, three rounds; then input_loop
# --mode pageable traced by the profiler (as kineto_pairs.sh traces it) and run plain, interleaved, three times each.
# Run from the repository root on the GPU machine:
#
#   bash workloads/clock/tracer_copy.sh OUT_DIR
#
# OUT_DIR gets tracer_copy.tgz: copies.jsonl (pageable_copy.py's lines, in run order), input_loop_pageable_N.pt.trace.json.gz
# and .kineto.log (N = 1..3), kineto.jsonl and plain.jsonl (input_loop's traced and plain lines, in run order), env.txt.
out=${1:?usage: tracer_copy.sh OUT_DIR}
mkdir -p "$out"; out=$(cd "$out" && pwd)
OUT=$out . workloads/common/preamble.sh tracer_copy
C=workloads/clock
unset CLOCK_TRACED
{ date -u; nvidia-smi -q | head -30; python3 -c "import torch; print(torch.__version__)"; } > "$W/keep/env.txt" 2>&1
json_of() { grep -a '^{"program"' "$1" | tail -n 1; }
for round in 1 2 3; do
  for tracer in none cpu_cuda cuda cpu; do
    python3 $C/pageable_copy.py --tracer "$tracer" > "$W/copy.log" 2>&1 || tail -5 "$W/copy.log"
    json_of "$W/copy.log" >> "$W/keep/copies.jsonl"
  done
done
log "pageable copies: $(wc -l < "$W/keep/copies.jsonl") phases"
for n in 1 2 3; do
  name=input_loop_pageable_$n
  echo "# CLOCK_TRACED=kineto-shapes-stack python3 $C/input_loop.py --mode pageable --iters 10 --kineto $name.pt.trace.json.gz" > "$W/keep/$name.kineto.log"
  CLOCK_TRACED=kineto-shapes-stack python3 $C/input_loop.py --mode pageable --iters 10 --kineto "$W/keep/$name.pt.trace.json.gz" >> "$W/keep/$name.kineto.log" 2>&1
  echo "# exit $?" >> "$W/keep/$name.kineto.log"
  json_of "$W/keep/$name.kineto.log" >> "$W/keep/kineto.jsonl"
  python3 $C/input_loop.py --mode pageable > "$W/plain.log" 2>&1 && json_of "$W/plain.log" >> "$W/keep/plain.jsonl"
done
log "input_loop pageable: $(wc -l < "$W/keep/kineto.jsonl") traced, $(wc -l < "$W/keep/plain.jsonl") plain"
