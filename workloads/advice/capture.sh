#!/usr/bin/env bash
# Issue 24's evidence on the lent H200, from the repository root; what comes back is under $OUT.
#   1. ncuwrap profile transpose_padded: the stop line from the family timed uninstrumented (3 runs),
#      a whole run folder; transpose_swizzled64_float4 with --bench-json of that run's bench.json
#   2. ncuwrap profile gemm_double_buffered: an FP32 GEMM judged against cuBLAS
#   3. torch.cdist and a matmul in FP32 (cuBLAS SGEMM on the FMA pipe) under ncu --collect full, and
#      both timed in FP32 and TF32 (3 process runs of fp32_matmul.py --time)
#   4. gather_sequential (latency-bound, no costly finding) collected with every metric the rules
#      read except the warp stall reasons: the next step the stall reasons would decide
set -u
OUT=${OUT:-$PWD/device-out}
W=${WORK:-/tmp/advice}
mkdir -p "$OUT" "$W"
export PYTHONUNBUFFERED=1 NCUWRAP_CACHE=$W/build-cache
N="python3 -m ncuwrap"
step() { echo "=== [${SECONDS} s] $*" | tee -a "$OUT/summary.txt"; }
done_() { echo "exit $1" | tee -a "$OUT/summary.txt"; }

step "profile transpose_padded"
$N profile transpose_padded -o "$W/run_padded" > "$OUT/padded.txt" 2> "$OUT/padded.err"; done_ $?
step "profile transpose_swizzled64_float4 --bench-json"
$N profile transpose_swizzled64_float4 -o "$W/run_swizzled" --bench-json "$W/run_padded/bench.json" > "$OUT/swizzled.txt" 2> "$OUT/swizzled.err"; done_ $?
step "profile gemm_double_buffered"
$N profile gemm_double_buffered -o "$W/run_gemm" > "$OUT/gemm.txt" 2> "$OUT/gemm.err"; done_ $?
step "profile torch FP32 matmuls"
$N profile --collect full --no-bench -k 'regex:gemm' -c 2 -o "$W/run_fp32" -- python3 workloads/advice/fp32_matmul.py --profile \
  > "$OUT/fp32.txt" 2> "$OUT/fp32.err"; done_ $?
step "time FP32 vs TF32"
for i in 1 2 3; do python3 workloads/advice/fp32_matmul.py --time >> "$OUT/fp32_tf32_times.jsonl" 2>> "$OUT/fp32_tf32_times.err"; done; done_ $?
step "gather_sequential without the stall reasons"
metrics=$(python3 -c "
from ncuwrap import ruleset
from ncuwrap.kernel import metrics as M
stall = {m for s in M.STALL_REASONS for m in M.raw_inputs(f'stall_{s}')}
print(','.join(m for m in ruleset.load(None, M.KERNEL).raw_metrics() if m not in stall))")
bin=$($N build gather 2>/dev/null | awk '$1 == "gather" {print $4}')
echo "binary: $bin" >> "$OUT/summary.txt"
ncu --clock-control none --metrics "$metrics" -k 'regex:^gather_sequential$' --launch-skip 4 --launch-count 1 -f -o "$W/gather_nostall" \
  "$bin" --variant sequential --warmup 2 --iters 1 > "$OUT/gather_nostall.log" 2>&1; done_ $?
echo "ncu --clock-control none --metrics <the rules' metrics without stall_*> -k regex:^gather_sequential\$ --launch-skip 4 --launch-count 1 $bin --variant sequential --warmup 2 --iters 1" > "$OUT/gather_nostall.command.txt"
ncu --import "$W/gather_nostall.ncu-rep" --csv --page raw | gzip -9 > "$OUT/gather_nostall.raw.csv.gz"

# The run folders without their .ncu-rep (the raw and source pages carry what diagnose reads).
for r in run_padded run_swizzled run_gemm run_fp32; do
  mkdir -p "$OUT/$r"
  for f in "$W/$r"/*; do
    case "$f" in *.ncu-rep) ;; *) cp "$f" "$OUT/$r/";; esac
  done
done
ls -la "$OUT"/run_* >> "$OUT/summary.txt"
