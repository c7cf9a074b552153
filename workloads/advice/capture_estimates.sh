#!/usr/bin/env bash
# Issue 24's estimate evidence on the lent H200, from the repository root (what comes back: $OUT):
#   the bytes-in-flight ladder (kernels/bytes_in_flight.cu) and the vecadd family (with its
#   one_per_thread variant: the strided kernel's mapping fixed and nothing else), each timed with
#   `ncuwrap bench --runs 3` and profiled with ncu --set full (capture_pairs.sh), packed in one file.
set -u
OUT=${OUT:-$PWD/device-out}
export WORK=${WORK:-/tmp/est}
mkdir -p "$OUT" "$WORK"
FAMILIES="bytes_in_flight vecadd" OUT="$WORK/out" BUDGET_S=${BUDGET_S:-400} bash workloads/pairs/capture.sh bench profile > "$WORK/pairs_console.txt" 2>&1
# The ladder with its copy ceilings (the same-bytes ceiling judges each rung).
python3 -m ncuwrap bench bytes_in_flight --runs 3 --no-library -f json -o "$WORK/ladder.json" --force > /dev/null 2> "$WORK/ladder.log"
echo "ladder exit $?" >> "$WORK/summary.txt"
cd "$WORK" && tar czf "$OUT/estimates.tgz" summary.txt pairs_console.txt ladder.json ladder.log $(ls bench/* full/*.csv.gz full/*.log 2>/dev/null)
ls -la "$OUT"
