#!/usr/bin/env bash
# The payoff table's evidence (docs/payoff.md), on the lent H200, from the repository root:
#
#   bash workloads/pairs/capture.sh bench      # uninstrumented timings of the pair families
#   bash workloads/pairs/capture.sh profile    # ncu --set full of every variant of a pair
#   bash workloads/pairs/capture.sh bench profile
#
# bench: `ncuwrap bench FAMILY --runs 3` (verified results, CUDA events, median over launches and
#   across 3 process runs) for each family below, no library comparison and no ceiling (a speedup
#   needs neither).
# profile: `ncu --set full --clock-control none` of each variant's first timed launch (the manifest's
#   kernel filter and launch skip, which count only matching launches), exported as raw and details
#   CSV pages (the details page carries Nsight Compute's own rule results and estimated speedups).
# BUDGET_S (default 560) bounds the script; what did not fit is listed in summary.txt. FAMILIES (default:
# every pair family) limits it, e.g. FAMILIES=layout.
set -u
START=$(date +%s)
BUDGET_S=${BUDGET_S:-560}
OUT=${OUT:-$PWD/device-out}
W=${WORK:-/tmp/pairs}
mkdir -p "$W/bench" "$W/full" "$OUT"
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH} NCUWRAP_CACHE=$W/build-cache
NCUWRAP="python3 -m ncuwrap"
FAMILIES=${FAMILIES:-"transpose vecadd reduction spill grid_size divergence smem_banks gather atomics occupancy layout"}
elapsed() { echo $(( $(date +%s) - START )); }
log() { echo "=== [$(elapsed) s] $*" | tee -a "$W/summary.txt"; }

log "build"
$NCUWRAP build --arch sm_90 --all > "$W/build.txt" 2>&1; echo "build exit $?" | tee -a "$W/summary.txt"

for step in "$@"; do
  if [ "$step" = bench ]; then
    for f in $FAMILIES; do
      if [ $(( BUDGET_S - $(elapsed) )) -lt 60 ]; then log "SKIPPED bench $f"; continue; fi
      log "bench $f"
      $NCUWRAP bench "$f" --runs 3 --no-library --no-ceiling --arch sm_90 -f json -o "$W/bench/$f.json" --force > /dev/null 2> "$W/bench/$f.log"
      echo "bench $f exit $?" | tee -a "$W/summary.txt"
    done
  fi
  if [ "$step" = profile ]; then
    # family variant kernel-regex launch-skip profile-args..., from the manifest
    $NCUWRAP list -f json | python3 -c '
import json, sys
fams = set(sys.argv[1].split())
for b in json.load(sys.stdin):
    if b["name"] not in fams:
        continue
    for v in b["variants"]:
        if v["kernel"] and v["profile"]:
            print(b["name"], v["name"], v["kernel"], v["profile"]["launch_skip"], *v["profile"]["args"])
' "$FAMILIES" > "$W/variants.txt"
    while read -r fam var kernel skip args; do
      if [ $(( BUDGET_S - $(elapsed) )) -lt 45 ]; then log "SKIPPED profile $fam/$var"; continue; fi
      bin=$(awk -v f="$fam" '$1 == f {print $4}' "$W/build.txt")
      name="$fam-$var"
      t0=$(date +%s%N)
      ncu --set full --clock-control none -k "regex:$kernel" --launch-skip "$skip" --launch-count 1 -f -o "$W/full/$name" \
          "$bin" --variant "$var" $args > "$W/full/$name.log" 2>&1 < /dev/null
      rc=$?
      echo "profile $name: exit $rc wall $(( ($(date +%s%N) - t0) / 1000000 )) ms" | tee -a "$W/summary.txt"
      ncu --import "$W/full/$name.ncu-rep" --csv --page raw 2>> "$W/full/$name.log" | gzip -9 > "$W/full/$name.raw.csv.gz"
      ncu --import "$W/full/$name.ncu-rep" --csv --page details 2>> "$W/full/$name.log" | gzip -9 > "$W/full/$name.details.csv.gz"
    done < "$W/variants.txt"
  fi
done

log "packing"
cd "$W"
tar czf "$OUT/pairs.tgz" summary.txt build.txt $(ls bench/* 2>/dev/null) $(ls full/*.csv.gz full/*.log 2>/dev/null)
ls -la "$OUT"
log "done"
