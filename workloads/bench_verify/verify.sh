#!/usr/bin/env bash
# The first GPU run of what issue 12 added without a GPU - ONE command for one H200,
# from the repository root, within 10 minutes:
#   OUT=/path/to/out bash workloads/bench_verify/verify.sh
# Needs python3 with ncuwrap's dependencies (PYTHONPATH=$PWD is set here), CuPy for the cuBLAS
# baselines, nvcc (13.0: gemm_hopper builds for sm_90a) and ncu on PATH.
#
# Steps (each bounded by `timeout`; a step that fails is reported and the next one still runs):
#   0. the GPU and clocks (nvidia-smi)
#   1. ncuwrap build --all (gemm_hopper for sm_90a, every other family for sm_90; ptxas resources kept)
#   2. smoke: the gemm_hopper binary once, 60 s cap - a wrong mbarrier phase hangs rather than fails, so
#      this runs before anything that would wait on it; if it fails, step 3 leaves gemm_hopper out
#   3. ncuwrap bench --all --runs 3 (JSON + table): the docs table, with both copy ceilings
#   4. at 8192: transpose (8192^2, the ceiling at the same bytes) and gemm_hopper (8192^3, cuBLAS beside it)
#   5. the GPU tests: every family runs and verifies, plus the new variants' odd-size and constraint tests
#   6. ncuwrap profile (targeted) of each new variant: transpose/swizzled128x64, gemm_hopper/pipelined,
#      gemm_hopper/single_stage, and gemm/tensor_core for comparison
# Writes into $OUT: gpu.txt, build.txt, build_records.tgz, smoke_gemm_hopper.json/.err,
# bench_all_runs3.json/.txt, bench_transpose_8192.json/.txt, bench_gemm_hopper_8192.json/.txt,
# gpu_tests.txt, profile_<variant>.txt/.json, profiles.tgz (the ncu reports), summary.txt (exit codes).
set -u
START=$(date +%s)
OUT=${OUT:-$PWD/device-out}
W=${WORK:-/tmp/verify12}
rm -rf "$W"; mkdir -p "$W" "$OUT"
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 NCUWRAP_CACHE=$W/build-cache
NCUWRAP="python3 -m ncuwrap"
elapsed() { echo $(( $(date +%s) - START )); }
log() { echo "=== [$(elapsed) s] $*" | tee -a "$OUT/summary.txt"; }
result() { echo "    $1: exit $2" | tee -a "$OUT/summary.txt"; }

log "0. GPU"
nvidia-smi --query-gpu=name,compute_cap,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.limit,temperature.gpu --format=csv > "$OUT/gpu.txt" 2>&1
cat "$OUT/gpu.txt"

log "1. build --all"
timeout 240 $NCUWRAP build --all --arch sm_90 > "$OUT/build.txt" 2>&1; result build $?
cat "$OUT/build.txt"
(cd "$NCUWRAP_CACHE" && tar czf "$OUT/build_records.tgz" */build.json */build.log 2>/dev/null)
GH=$(find "$NCUWRAP_CACHE" -maxdepth 2 -type f -name gemm_hopper -perm -u+x | head -1)

log "2. smoke: gemm_hopper once"
GH_OK=0
if [ -n "$GH" ]; then
  timeout 60 "$GH" --warmup 1 --iters 3 > "$OUT/smoke_gemm_hopper.json" 2> "$OUT/smoke_gemm_hopper.err"; rc=$?
  result smoke_gemm_hopper $rc; [ $rc -eq 0 ] && GH_OK=1
  head -c 3000 "$OUT/smoke_gemm_hopper.json"; echo; cat "$OUT/smoke_gemm_hopper.err"
else
  result smoke_gemm_hopper "no binary"
fi

log "3. bench --all --runs 3"
if [ $GH_OK -eq 1 ]; then
  timeout 300 $NCUWRAP bench --all --runs 3 -o "$OUT/bench_all_runs3.json" --force > "$OUT/bench_all_runs3.txt" 2>&1; result bench_all $?
else  # every family but gemm_hopper, one report each (bench takes one name or --all)
  for fam in $(python3 -c "from ncuwrap.bundled.manifest import load_manifest; print(' '.join(n for n in load_manifest().names() if n != 'gemm_hopper'))"); do
    timeout 60 $NCUWRAP bench "$fam" --runs 3 -o "$OUT/bench_${fam}_runs3.json" --force >> "$OUT/bench_all_runs3.txt" 2>&1; result "bench $fam" $?
  done
fi
cat "$OUT/bench_all_runs3.txt"

log "4. at 8192"
timeout 90 $NCUWRAP bench transpose --size rows=8192 --size cols=8192 --runs 3 -o "$OUT/bench_transpose_8192.json" --force \
  > "$OUT/bench_transpose_8192.txt" 2>&1; result bench_transpose_8192 $?
cat "$OUT/bench_transpose_8192.txt"
if [ $GH_OK -eq 1 ]; then
  timeout 120 $NCUWRAP bench gemm_hopper --size m=8192 --size n=8192 --size k=8192 --runs 3 -o "$OUT/bench_gemm_hopper_8192.json" --force \
    > "$OUT/bench_gemm_hopper_8192.txt" 2>&1; result bench_gemm_hopper_8192 $?
  cat "$OUT/bench_gemm_hopper_8192.txt"
fi

log "5. GPU tests (bench part)"
timeout $(( 480 - $(elapsed) > 60 ? 480 - $(elapsed) : 60 )) python3 -m pytest -m gpu -p no:cacheprovider -q tests/test_benchmarks_gpu.py \
  > "$OUT/gpu_tests.txt" 2>&1; result gpu_tests $?
tail -15 "$OUT/gpu_tests.txt"

log "6. profile the new variants"
for target in transpose/swizzled128x64 gemm_hopper/pipelined gemm_hopper/single_stage gemm/tensor_core; do
  left=$(( 590 - $(elapsed) ))
  if [ $left -lt 20 ]; then result "profile $target" "skipped (out of time)"; continue; fi
  case $target in gemm_hopper/*) [ $GH_OK -eq 1 ] || { result "profile $target" "skipped (smoke failed)"; continue; } ;; esac
  name=${target//\//-}
  timeout $left $NCUWRAP profile "$target" -o "$W/prof-$name" > "$OUT/profile_$name.txt" 2>&1; result "profile $target" $?
  find "$W/prof-$name" -name '*.json' -exec cp {} "$OUT/profile_$name.json" \; -quit 2>/dev/null
  cat "$OUT/profile_$name.txt" | head -40
done
(cd "$W" && tar czf "$OUT/profiles.tgz" prof-* 2>/dev/null)

log "done"
ls -la "$OUT"
