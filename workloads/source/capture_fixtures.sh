#!/usr/bin/env bash
# The committed fixtures of the per-line attribution (tests/data/h200_ncuwrap/source), on the lent H200,
# from the repository root, with ncuwrap itself (SourceCounters is collected by default):
#
#   OUT=/path bash workloads/source/capture_fixtures.sh      # one device call, ~3 minutes
#
# For each bundled case, `ncuwrap profile CASE -f json`: the report (.ncu-rep, gzipped), its raw page (what
# the run folder has), its source page in both forms (sass; cuda,sass) and the commands ncuwrap ran. Then
# the Triton + cuBLAS program of workloads/source/torch_kernels.py (--nth-launch 2): its raw page
# and source pages only (its .ncu-rep, 16 MB with the cuBLAS SASS, is too large to commit). Then the GPU
# tests of the attribution (scripts/test-gpu source).
set -u
START=$(date +%s)
OUT=${OUT:-$PWD/device-out}
W=${WORK:-/tmp/source-fixtures}
rm -rf "$W"; mkdir -p "$W/source" "$OUT"
export PYTHONUNBUFFERED=1 NCUWRAP_CACHE=$W/build-cache
NCUWRAP="python3 -m ncuwrap"
elapsed() { echo $(( $(date +%s) - START )); }
log() { echo "=== [$(elapsed) s] $*" | tee -a "$W/source/summary.txt"; }

keep() {  # name, run folder
  local name=$1 run=$2
  gzip -9 -n -c "$run/report.raw.csv" > "$W/source/$name.raw.csv.gz" 2>/dev/null
  ncu --import "$run/report.ncu-rep" --csv --page source --print-source sass 2>> "$W/source/$name.export.err" | gzip -9 -n > "$W/source/$name.source_sass.csv.gz"
  ncu --import "$run/report.ncu-rep" --csv --page source --print-source cuda,sass 2>> "$W/source/$name.export.err" | gzip -9 -n > "$W/source/$name.source_cuda_sass.csv.gz"
  cp "$run/commands.txt" "$W/source/$name.commands.txt"
  grep -o -- '- [0-9]* passes' "$run/ncu.log" | tr '\n' ' ' >> "$W/source/summary.txt"; echo >> "$W/source/summary.txt"
}

log "build"
$NCUWRAP build --arch sm_90 --all > "$W/build.txt" 2>&1; echo "build exit $?" | tee -a "$W/source/summary.txt"
for case in transpose/naive transpose/shared_tile transpose/padded_tile vecadd/strided smem_banks/strided smem_banks/padded \
            spill/spill divergence/per_lane gather/random; do
  name=${case/\//-}
  t0=$(date +%s%N)
  $NCUWRAP profile "$case" -o "$W/run/$name" --force -f json > "$W/source/$name.verdict.json" 2> "$W/source/$name.profile.err" < /dev/null
  echo "$name: exit $?, $(( ($(date +%s%N) - t0) / 1000000 )) ms" | tee -a "$W/source/summary.txt"
  gzip -9 -n -c "$W/run/$name/report.ncu-rep" > "$W/source/$name.ncu-rep.gz"
  keep "$name" "$W/run/$name"
done

log "torch: plain checked run, then profiled"
timeout 120 python3 workloads/source/torch_kernels.py --check > "$W/source/torch.plain.log" 2>&1; echo "exit $?" >> "$W/source/torch.plain.log"
$NCUWRAP profile -k 'transpose_rows_to_cols|gemm' --nth-launch 2 -o "$W/run/torch" --force -f json \
    -- python3 workloads/source/torch_kernels.py --no-check > "$W/source/torch.verdict.json" 2> "$W/source/torch.profile.err" < /dev/null
echo "torch: exit $?" | tee -a "$W/source/summary.txt"
keep torch "$W/run/torch"

log "gpu tests"
timeout 200 scripts/test-gpu source -q > "$W/source/test_gpu_source.log" 2>&1; echo "exit $?" >> "$W/source/test_gpu_source.log"
tail -5 "$W/source/test_gpu_source.log"

log "packing"
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; ncu --version | tail -1; } > "$W/source/env.txt" 2>&1
tar czf "$OUT/source_fixtures.tgz" -C "$W" source
ls -la "$OUT"
log "done"
