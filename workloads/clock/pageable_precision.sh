#!/usr/bin/env bash
# A precision pair whose steps block on a pageable copy: input_loop --mode pageable in fp32 and under bf16 autocast
# (the same 64 MiB float32 copy a step; the products on the BF16 tensor cores). It checks what lower_precision predicts
# for a step whose host waits in a pageable copy, where the copy can start only when the products before it end.
# Run from the repository root on the GPU machine:
#
#   bash workloads/clock/pageable_precision.sh OUT_DIR
#
# OUT_DIR gets pageable_precision.tgz:
# - NAME.pt.trace.json.gz and NAME.kineto.log (NAME = input_loop_pageable, input_loop_pageable_bf16): torch.profiler
#   around the timed loop, record_shapes and with_stack (clock.py --kineto), 10 iterations;
# - input_loop_pageable.sqlite.gz and .log: the fp32 variant under nsys with op ranges and their shapes
#   (--pytorch=autograd-shapes-nvtx), exported to SQLite;
# - plain.jsonl: three plain runs of each variant (20 iterations), interleaved A B A B A B; kineto.jsonl, env.txt.
# NO_NSYS=1 leaves the nsys capture out (a short call).
out=${1:?usage: pageable_precision.sh OUT_DIR}
mkdir -p "$out"; out=$(cd "$out" && pwd)
OUT=$out . workloads/common/preamble.sh pageable_precision
C=workloads/clock
unset CLOCK_TRACED
{ date -u; nvidia-smi -q | head -30; python3 -c "import torch; print(torch.__version__)"; } > "$W/keep/env.txt" 2>&1
json_of() { grep -a '^{"program"' "$1" | tail -n 1; }
for v in none bf16; do
  name=input_loop_pageable; [[ $v == bf16 ]] && name=input_loop_pageable_bf16
  echo "# CLOCK_TRACED=kineto-shapes-stack python3 $C/input_loop.py --mode pageable --autocast $v --iters 10 --kineto $name.pt.trace.json.gz" > "$W/keep/$name.kineto.log"
  CLOCK_TRACED=kineto-shapes-stack python3 $C/input_loop.py --mode pageable --autocast $v --iters 10 --kineto "$W/keep/$name.pt.trace.json.gz" >> "$W/keep/$name.kineto.log" 2>&1
  echo "# exit $?" >> "$W/keep/$name.kineto.log"
  json_of "$W/keep/$name.kineto.log" >> "$W/keep/kineto.jsonl"
done
log "traced: $(wc -l < "$W/keep/kineto.jsonl")"
n=input_loop_pageable
if [ -z "${NO_NSYS:-}" ]; then
  { echo "# CLOCK_TRACED=nsys $NSYS profile --trace=cuda,nvtx,osrt --sample=none --cpuctxsw=none --cuda-graph-trace=node --pytorch=autograd-shapes-nvtx -o $n --force-overwrite true -- python3 $C/input_loop.py --mode pageable"
    CLOCK_TRACED=nsys "$NSYS" profile --trace=cuda,nvtx,osrt --sample=none --cpuctxsw=none --cuda-graph-trace=node --pytorch=autograd-shapes-nvtx \
      -o "$W/$n" --force-overwrite true -- python3 $C/input_loop.py --mode pageable
    echo "# exit $?"
    "$NSYS" export --type sqlite --force-overwrite true --output "$W/$n.sqlite" "$W/$n.nsys-rep"
    echo "# export exit $?"; } > "$W/keep/$n.log" 2>&1
  [ -f "$W/$n.sqlite" ] && gzip -9 -n -c "$W/$n.sqlite" > "$W/keep/$n.sqlite.gz"
  log "nsys: $(ls -la "$W/keep/$n.sqlite.gz" 2>&1)"
fi
for _ in 1 2 3; do
  for v in none bf16; do
    python3 $C/input_loop.py --mode pageable --autocast $v > "$W/plain.log" 2>&1 && json_of "$W/plain.log" >> "$W/keep/plain.jsonl"
  done
done
log "plain: $(wc -l < "$W/keep/plain.jsonl")"
