#!/usr/bin/env bash
# After the rules read more metrics (estimates, pipes, L2 data paths): re-capture on the lent H200,
# from the repository root, what was taken with the old targeted set:
#   1. the bundled sample (ncuwrap/samples/transpose_h200.ncu-rep) and its run folder: every transpose
#      variant's timed launch, `ncuwrap profile --nth-launch 4` with --collect targeted;
#   2. targeted against full (passes, wall time, verdicts) on representative variants, with the
#      calibration of what each part of targeted costs (benchmarks/targeted_vs_full.py);
#   3. the same variants profiled 3 times each: verdicts that flip (scripts/verdict_stability.py);
#   4. the GPU tests, part `bench` (scripts/test-gpu bench).
# BUDGET_S bounds steps 2 and 3 (they start nothing new past their deadline).
set -u
START=$(date +%s)
BUDGET_S=${BUDGET_S:-480}
OUT=${OUT:-$PWD/device-out}
W=${WORK:-/tmp/recap}
rm -rf "$W"; mkdir -p "$W" "$OUT"
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 NCUWRAP_CACHE=$W/build-cache
NCUWRAP="python3 -m ncuwrap"
elapsed() { echo $(( $(date +%s) - START )); }
log() { echo "=== [$(elapsed) s] $*"; }
VARIANTS=transpose/naive,transpose/shared_tile,transpose/padded_tile,divergence/per_lane,reduction/atomic_per_element,gemm/tensor_core,vecadd/coalesced,gather/random

log "build"
$NCUWRAP build --all --arch sm_90 > "$W/build.txt" 2>&1; echo "build exit $?"
TBIN=$(awk '$1 == "transpose" {print $4}' "$W/build.txt")

log "1. the bundled sample"
$NCUWRAP profile -o "$W/sample_run" -k '^transpose_' --nth-launch 4 -- "$TBIN" --variant all --warmup 2 --iters 1; echo "exit $?"

log "2. targeted vs full"
python3 benchmarks/targeted_vs_full.py --out "$W/tvf" --summary-to "$W" --only "$VARIANTS" --calibrate \
    --deadline $(( BUDGET_S / 2 - $(elapsed) )); echo "targeted_vs_full exit $?"

log "3. verdict stability"
python3 scripts/verdict_stability.py --out "$W/stab" --runs 3 --only "$VARIANTS" \
    --deadline $(( BUDGET_S * 3 / 4 - $(elapsed) )); echo "verdict_stability exit $?"

log "4. GPU tests, part bench"
timeout $(( BUDGET_S + 60 - $(elapsed) )) scripts/test-gpu bench -q 2>&1 | tail -15; echo "test-gpu bench exit ${PIPESTATUS[0]}"

log "packing"
cd "$W"
tar czf "$OUT/sample_run.tgz" sample_run
tar czf "$OUT/tvf.tgz" targeted_vs_full.json targeted_vs_full.md $(find tvf -name '*.ncu-rep' -path '*transpose-naive*' -o -name '*.ncu-rep' -path '*transpose-shared_tile*' -o -name '*.ncu-rep' -path '*divergence-per_lane*') 2>/dev/null
tar czf "$OUT/stab.tgz" stab/verdict_stability.json build.txt
ls -la "$OUT"
log "done"
