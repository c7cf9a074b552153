#!/usr/bin/env bash
# Issue 50's pairs as PyTorch profiler traces, with each program's plain runs on the same machine in the same call:
# for each pair, the two Kineto traces (workloads/clock/clock.py --kineto: torch.profiler around the timed loop,
# record_shapes and with_stack), then three plain runs of each, interleaved A B A B A B. Run from the repository
# root on the GPU machine:
#
#   bash workloads/clock/kineto_pairs.sh OUT_DIR
#
# OUT_DIR gets kineto_pairs.tar: NAME.pt.trace.json.gz, NAME.kineto.log (the command and all it printed),
# plain.jsonl (the plain runs' JSON lines, in run order), kineto.jsonl (the traced runs'), env.txt.
out=${1:?usage: kineto_pairs.sh OUT_DIR}
mkdir -p "$out"; out=$(cd "$out" && pwd)
# The shared set-up (set -uo pipefail, PYTHONUNBUFFERED, the work folder W=/tmp/kineto_pairs, made empty); this
# script packs the whole of W into OUT_DIR/kineto_pairs.tar itself, as the fixture's logs show (no W/keep).
OUT=$out . workloads/common/preamble.sh kineto_pairs
work=$W; rmdir "$work/keep"
C=workloads/clock
unset CLOCK_TRACED
{ date -u; nvidia-smi -q | head -30; python3 -c "import torch; print(torch.__version__)"; } > "$work/env.txt" 2>&1
json_of() { grep -a '^{"program"' "$1" | tail -n 1; }
pair() {  # NAME_A "ARGS_A" NAME_B "ARGS_B" PROGRAM ITERS
  local a=$1 aa=$2 b=$3 ba=$4 prog=$5 iters=$6 name args
  for name in "$a" "$b"; do
    [[ $name == "$a" ]] && args=$aa || args=$ba
    echo "# CLOCK_TRACED=kineto-shapes-stack python3 $C/$prog $args --iters $iters --kineto $work/$name.pt.trace.json.gz" > "$work/$name.kineto.log"
    CLOCK_TRACED=kineto-shapes-stack python3 $C/$prog $args --iters "$iters" --kineto "$work/$name.pt.trace.json.gz" >> "$work/$name.kineto.log" 2>&1
    echo "# exit $?" >> "$work/$name.kineto.log"
    json_of "$work/$name.kineto.log" >> "$work/kineto.jsonl"
  done
  for _ in 1 2 3; do
    for name in "$a" "$b"; do
      [[ $name == "$a" ]] && args=$aa || args=$ba
      python3 $C/$prog $args > "$work/plain.log" 2>&1 && json_of "$work/plain.log" >> "$work/plain.jsonl"
    done
  done
  tar -C "$work" -cf "$out/kineto_pairs.tar" .
}
pair decode_eager "--mode eager" decode_graph "--mode graph" decode.py 16
pair item_sync_item "--item" item_sync_noitem "--noitem" item_sync.py 10
pair input_loop_pageable "--mode pageable" input_loop_pinned "--mode pinned" input_loop.py 10
pair numpy_prep_workers0 "--workers 0" numpy_prep_workers6 "--workers 6" numpy_prep.py 10
ls -la "$work"
