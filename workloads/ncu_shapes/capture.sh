#!/usr/bin/env bash
# Small real .ncu-rep reports of every shape issue 52 lists, captured on the lent H200 (ncu 2025.3.1 on PATH,
# nvcc 13.0, python3 with torch, triton and cupy), from the repository root:
#
#   bash workloads/ncu_shapes/capture.sh OUT_DIR
#
# Shapes (each kept small: a -k filter and --launch-count 1-4; --clock-control none always):
#   compile    Triton kernels written by torch.compile (triton_compile.py)      --set full --import-source yes
#   triton     hand-written Triton kernels (triton_kernel.py)                    --set full --import-source yes
#   externc    extern "C" CUDA kernels beside a C++ one (shapes.cu)              --set full --import-source yes
#   cupy       a CuPy RawKernel (cupy_raw.py)                                    --set full --import-source yes
#   multi      two processes (--target-processes all, sh -c "shapes && shapes")  --set full --import-source yes
#   appreplay  --replay-mode application                                         --set full --import-source yes
#   graph      --graph-profiling graph (a CUDA graph of three kernels)           --set full --import-source yes
#   cluster    a thread-block-cluster kernel (__cluster_dims__(2, 1, 1))         --set full --import-source yes
#   basic      --set basic
#   nvtx       NVTX-filtered launches (--nvtx --nvtx-include measured/)         --set full --import-source yes
#
# For each report R: R.ncu-rep.gz (gzip -9 -n), what NVIDIA's reader gives for it (R.raw.csv.gz: 'ncu --import R
# --csv --page raw'; R.ncu_report.json.gz: dump_ncu_report.py with ncu's own extras/python) and R.log (the
# program's and ncu's output). Then ncuwrap's file reader against ncu's own reader on all of them
# (compare.json: tests/ncu_rep_compare.py). Everything goes into OUT_DIR/ncu_shapes.tar (split into 15 MiB
# pieces ncu_shapes.tar.part0, .part1, ... when larger: 'cat ncu_shapes.tar.part* > ncu_shapes.tar'), and
# OUT_DIR/summary.txt: every command, its exit code and time. No 'set -e': a shape that fails is logged and
# the next one runs; whatever exists at the end is packed. BUDGET_S (default 400) bounds the whole script: a
# step gets at most what is left of it, less the packing's reserve, and a step with too little left is skipped.
#
# Stand-ins: NCU, NVCC, PYTHON (default ncu, nvcc, python3) and NCU_PY (ncu's extras/python) name the tools.
set -u
START=$(date +%s)
BUDGET_S=${BUDGET_S:-400}
RESERVE_S=25
OUT_DIR=${1:?usage: capture.sh OUT_DIR}
HERE=$(cd "$(dirname "$0")" && pwd)
REPO=$(cd "$HERE/../.." && pwd)
NCU=${NCU:-ncu}
NVCC=${NVCC:-nvcc}
PY=${PYTHON:-python3}
NCU_PY=${NCU_PY:-/opt/nvidia/nsight-compute/2025.3.1/extras/python}
W=${WORK:-/tmp/ncu_shapes}
K=$W/keep
rm -rf "$W"; mkdir -p "$K" "$OUT_DIR"
export PYTHONUNBUFFERED=1 TORCHINDUCTOR_COMPILE_THREADS=1
FULL=(--set full --import-source yes --clock-control none)

elapsed() { echo $(( $(date +%s) - START )); }
left() { echo $(( BUDGET_S - $(elapsed) - RESERVE_S )); }
log() { echo "=== [$(elapsed) s] $*" | tee -a "$K/summary.txt"; }

# step NAME CAP_S COMMAND...: run COMMAND (output in NAME.log) for at most CAP_S seconds and what is left of the budget.
step() {
  local name=$1 cap=$2; shift 2
  local t; t=$(left)
  [ "$t" -gt "$cap" ] && t=$cap
  if [ "$t" -lt 15 ]; then log "SKIPPED $name: $(left) s left"; return 0; fi
  log "$name (at most $t s): $*"
  local begin; begin=$(date +%s)
  timeout -k 5 "$t" "$@" >> "$K/$name.log" 2>&1
  local rc=$?
  log "$name: exit $rc after $(( $(date +%s) - begin )) s"
  if [ "$rc" -ne 0 ]; then tail -n 5 "$K/$name.log" | sed 's/^/    | /' | tee -a "$K/summary.txt"; fi
  return 0
}

# keep NAME: the report's gzipped copy, its raw page and what ncu_report gives for it.
keep() {
  local name=$1 report=$W/$1.ncu-rep
  if [ ! -f "$report" ]; then log "$name: no report written"; return 0; fi
  log "$name: $(stat -c %s "$report") bytes, $(grep -c '==PROF== Profiling' "$K/$name.log" 2>/dev/null) launches profiled"
  gzip -9 -n -c "$report" > "$K/$name.ncu-rep.gz"; log "$name: gzip exit $?"
  step "$name.export" 60 sh -c "\"\$0\" --import \"\$1\" --csv --page raw | gzip -9 -n > \"\$2\"" "$NCU" "$report" "$K/$name.raw.csv.gz"
  step "$name.dump" 60 env PYTHONPATH="$NCU_PY" "$PY" "$HERE/dump_ncu_report.py" "$report" "$K/$name.ncu_report.json.gz"
}

log "start: budget $BUDGET_S s; ncu=$NCU nvcc=$NVCC python=$PY NCU_PY=$NCU_PY; repo $REPO"
{ timeout 20 nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv; timeout 20 "$NCU" --version
  timeout 20 "$NVCC" --version
  timeout 60 "$PY" -c "import sys, torch, triton, cupy; print(sys.version); print('torch', torch.__version__, 'triton', triton.__version__, 'cupy', cupy.__version__)"
} > "$K/versions.txt" 2>&1
log "versions: exit $?"; sed 's/^/    | /' "$K/versions.txt" | tee -a "$K/summary.txt"

step build 90 "$NVCC" -O3 -arch=sm_90 -lineinfo -o "$W/shapes" "$HERE/shapes.cu"
SHAPES=$W/shapes
step externc.plain 30 "$SHAPES" externc

# The CUDA program's shapes first (each a few seconds), then CuPy, Triton and torch.compile (Python's start-up and
# compilation under ncu). Each: ncu's options, then the program.
step externc 60 "$NCU" "${FULL[@]}" -k 'regex:saxpy_c|block_sum_c|scale' --launch-count 3 -f -o "$W/externc" "$SHAPES" externc
keep externc
step cluster 60 "$NCU" "${FULL[@]}" -k regex:cluster_swap --launch-count 1 -f -o "$W/cluster" "$SHAPES" cluster
keep cluster
step graph 60 "$NCU" --graph-profiling graph "${FULL[@]}" --launch-count 1 -f -o "$W/graph" "$SHAPES" graph
keep graph
step basic 60 "$NCU" --set basic --clock-control none -k 'regex:saxpy_c|block_sum_c|scale' --launch-count 3 -f -o "$W/basic" "$SHAPES" externc
keep basic
step nvtx 60 "$NCU" --nvtx --nvtx-include measured/ "${FULL[@]}" --launch-count 3 -f -o "$W/nvtx" "$SHAPES" nvtx
# 'measured/' names a push/pop range; where this ncu matched none, the form without the slash once more.
[ -f "$W/nvtx.ncu-rep" ] || step nvtx 60 "$NCU" --nvtx --nvtx-include measured "${FULL[@]}" --launch-count 3 -f -o "$W/nvtx" "$SHAPES" nvtx
keep nvtx
step multi 90 "$NCU" --target-processes all "${FULL[@]}" -k 'regex:saxpy_c|scale' --launch-count 4 -f -o "$W/multi" \
  sh -c "\"\$0\" externc && \"\$0\" externc" "$SHAPES"
keep multi
step appreplay 90 "$NCU" --replay-mode application "${FULL[@]}" -k regex:saxpy_c --launch-count 1 -f -o "$W/appreplay" "$SHAPES" externc
keep appreplay
step cupy 90 "$NCU" "${FULL[@]}" -k regex:cupy_axpy --launch-count 2 -f -o "$W/cupy" "$PY" "$HERE/cupy_raw.py"
keep cupy
step triton 120 "$NCU" "${FULL[@]}" -k 'regex:add_kernel|softmax_kernel' --launch-count 2 -f -o "$W/triton" "$PY" "$HERE/triton_kernel.py"
keep triton
step compile 150 "$NCU" "${FULL[@]}" -k regex:^triton_ --launch-count 3 -f -o "$W/compile" "$PY" "$HERE/triton_compile.py"
keep compile

# ncuwrap's file reader against ncu's own reader, launch by launch (its metrics, names, rules, per-instruction
# values, source files; a launch or report it leaves to NVIDIA's reader is a mismatch).
reports=("$W"/*.ncu-rep)
if [ -e "${reports[0]}" ]; then
  step compare 60 sh -c 'out=$0 repo=$1 extras=$2 py=$3; shift 3; cd "$repo" && PYTHONPATH="$repo:$extras" "$py" -m tests.ncu_rep_compare "$@" > "$out"' \
    "$K/compare.json" "$REPO" "$NCU_PY" "$PY" "${reports[@]}"
fi

log "packing ($(du -sk "$K" | cut -f1) KiB)"
# At most 7 pieces of 15 MiB come back beside summary.txt: the largest reports are left out past 100 MiB.
while [ "$(du -sk "$K" | cut -f1)" -gt 100000 ]; do
  largest=$(ls -S "$K"/*.ncu-rep.gz 2>/dev/null | head -1)
  [ -n "$largest" ] || break
  log "left out (too large to bring back): $(basename "$largest") $(stat -c %s "$largest") bytes"; rm -f "$largest"
done
ls -la "$K" >> "$K/summary.txt"
cp "$K/summary.txt" "$OUT_DIR/summary.txt"
tar -cf "$OUT_DIR/ncu_shapes.tar" -C "$K" .
if [ "$(stat -c %s "$OUT_DIR/ncu_shapes.tar")" -gt 15728640 ]; then
  split -b 15m -d -a 1 "$OUT_DIR/ncu_shapes.tar" "$OUT_DIR/ncu_shapes.tar.part" && rm -f "$OUT_DIR/ncu_shapes.tar"
fi
log "done: $(ls "$OUT_DIR" | tr '\n' ' ')"
cp "$K/summary.txt" "$OUT_DIR/summary.txt"
