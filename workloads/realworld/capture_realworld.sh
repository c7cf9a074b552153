#!/usr/bin/env bash
# Capture the real-world corpus (tests/data/realworld) on the lent H200, from the repository root:
#
#   bash workloads/realworld/capture_realworld.sh blas dnn ops      # one device call
#   bash workloads/realworld/capture_realworld.sh triton            # another
#
# 1. One plain run of the given groups with every result checked against a reference (correctness
#    first; nothing is profiled);
# 2. per group, `ncu --set full --clock-control none --kernel-id :::2` (the second launch of every
#    distinct kernel and launch configuration) with the checks off, so reference kernels cost no
#    replay passes; ncu's console (with the script's @@CASE markers) is kept, it maps kernels to cases;
# 3. per group, the raw and details CSV pages, gzipped (a full report of ~50 library kernels is far
#    over the 16 MiB a file the device tool brings back); the .ncu-rep itself only when small.
# BUDGET_S (default 560) bounds the whole script: a group that would not finish is not started.
set -u
START=$(date +%s)
BUDGET_S=${BUDGET_S:-560}
OUT=${OUT:-$PWD/device-out}
W=${WORK:-/tmp/realworld}
rm -rf "$W"; mkdir -p "$W" "$OUT"
export PYTHONUNBUFFERED=1
elapsed() { echo $(( $(date +%s) - START )); }
log() { echo "=== [$(elapsed) s] $*" | tee -a "$W/summary.txt"; }

nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem --format=csv > "$W/nvidia-smi.txt" 2>&1
ncu --version > "$W/ncu-version.txt" 2>&1
python3 -c "import torch, triton; print('torch', torch.__version__, 'cuda', torch.version.cuda, 'cudnn', torch.backends.cudnn.version(), 'triton', triton.__version__)" > "$W/versions.txt" 2>&1
cat "$W/nvidia-smi.txt" "$W/ncu-version.txt" "$W/versions.txt"

for g in "$@"; do
  log "plain, checked run: $g"
  CORPUS_VERIFY=1 timeout 150 python3 workloads/realworld/realworld_corpus.py --group "$g" > "$W/plain_$g.log" 2>&1
  echo "exit $?" >> "$W/plain_$g.log"
  grep -E "@@(CHECK|ERROR|SKIP|DONE)" "$W/plain_$g.log" | tee -a "$W/summary.txt"
done

for g in "$@"; do
  left=$(( BUDGET_S - $(elapsed) - 40 ))
  if [ "$left" -lt 60 ]; then log "SKIPPED ncu of $g: ${left} s left"; continue; fi
  log "ncu --set full of $g (at most ${left} s)"
  CORPUS_VERIFY=0 timeout "$left" ncu --set full --clock-control none --kernel-id :::2 -f -o "$W/rw_$g" \
      python3 workloads/realworld/realworld_corpus.py --group "$g" > "$W/ncu_$g.log" 2>&1
  echo "ncu exit $?" | tee -a "$W/ncu_$g.log" "$W/summary.txt"
  grep -c "==PROF== Profiling" "$W/ncu_$g.log" | sed 's/^/profiled kernels: /' | tee -a "$W/summary.txt"
  if [ -f "$W/rw_$g.ncu-rep" ]; then
    ncu --import "$W/rw_$g.ncu-rep" --csv --page raw 2>> "$W/ncu_$g.log" | gzip -9 > "$W/rw_$g.raw.csv.gz"
    ncu --import "$W/rw_$g.ncu-rep" --csv --page details 2>> "$W/ncu_$g.log" | gzip -9 > "$W/rw_$g.details.csv.gz"
    ls -la "$W/rw_$g".* | tee -a "$W/summary.txt"
  fi
done

log "packing"
cd "$W"
tar czf "$OUT/realworld_csv_$(echo "$@" | tr ' ' '_').tgz" ./*.csv.gz ./*.log ./*.txt
for r in rw_*.ncu-rep; do
  [ -f "$r" ] || continue
  size=$(stat -c %s "$r")
  if [ "$size" -lt 15000000 ]; then cp "$r" "$OUT/"; else echo "$r: $size bytes, not brought back" | tee -a "$OUT/left_out.txt"; fi
done
ls -la "$OUT"
log "done"
