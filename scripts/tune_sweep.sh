#!/usr/bin/env bash
# Build candidate configurations of the transpose, vecadd and gemm benchmarks (nvcc -D
# knobs, see the top of each kernels/*.cu best variant) in parallel, then time each with the binaries'
# own JSON output (verified results, CUDA-event medians) in ONE device call, and print a compact table.
#   usage (repo root, on the GPU machine): bash scripts/tune_sweep.sh [quick]
#   TUNE_ONLY="t0 v4 g2": only these configurations (space-separated names from CONFIGS)
#   TUNE_FINAL=1: afterwards, `ncuwrap bench` (3 process runs, library and copy ceiling) of the three
#                 families as the sources stand (their default knobs), table printed last
# Which configurations were run, which won and what is left to run: docs/benchmarks.md, "After tuning".
# Writes $OUT/sweep.jsonl (one line per measured run) and $OUT/sweep.log; the table goes to stdout last.
set -u
OUT=${OUT:-/tmp/tune_out}; export OUT
W=${TUNE_WORK:-/tmp/tune}
rm -rf "$W"; mkdir -p "$W/bin" "$OUT"
NVCC="nvcc -O3 -std=c++17 -arch=sm_90 -lineinfo -Xptxas -v"
JOBS=${TUNE_JOBS:-14}
ONLY=${TUNE_ONLY:-}

# name | source | nvcc -D flags
CONFIGS=(
  "t0|transpose|-DTP_THREADS=256 -DTP_STREAM=0 -DTP_PERSIST=0"
  "t1|transpose|-DTP_THREADS=256 -DTP_STREAM=1 -DTP_PERSIST=0"
  "t2|transpose|-DTP_THREADS=128 -DTP_STREAM=0 -DTP_PERSIST=0"
  "t3|transpose|-DTP_THREADS=128 -DTP_STREAM=1 -DTP_PERSIST=0"
  "t4|transpose|-DTP_THREADS=512 -DTP_STREAM=0 -DTP_PERSIST=0"
  "t5|transpose|-DTP_THREADS=256 -DTP_STREAM=0 -DTP_PERSIST=1"
  "t6|transpose|-DTP_THREADS=256 -DTP_STREAM=1 -DTP_PERSIST=1"
  "t7|transpose|-DTP_THREADS=128 -DTP_STREAM=0 -DTP_PERSIST=1"
  "t8|transpose|-DTP_THREADS=512 -DTP_STREAM=1 -DTP_PERSIST=0"
  "t9|transpose|-DTP_THREADS=1024 -DTP_STREAM=0 -DTP_PERSIST=0"
  "t10|transpose|-DTP_THREADS=512 -DTP_STREAM=0 -DTP_PERSIST=0 -DTP_ORDER=1"
  "t11|transpose|-DTP_THREADS=1024 -DTP_STREAM=0 -DTP_PERSIST=0 -DTP_ORDER=1"
  "v1|vecadd|-DVA_UNROLL=1 -DVA_THREADS=256 -DVA_STREAM=0"
  "v2|vecadd|-DVA_UNROLL=2 -DVA_THREADS=256 -DVA_STREAM=0"
  "v4|vecadd|-DVA_UNROLL=4 -DVA_THREADS=256 -DVA_STREAM=0"
  "v8|vecadd|-DVA_UNROLL=8 -DVA_THREADS=256 -DVA_STREAM=0"
  "v4s|vecadd|-DVA_UNROLL=4 -DVA_THREADS=256 -DVA_STREAM=1"
  "v8s|vecadd|-DVA_UNROLL=8 -DVA_THREADS=256 -DVA_STREAM=1"
  "v4t512|vecadd|-DVA_UNROLL=4 -DVA_THREADS=512 -DVA_STREAM=0"
  "v4t128|vecadd|-DVA_UNROLL=4 -DVA_THREADS=128 -DVA_STREAM=0"
  "g0|gemm|-DGEMM_BM=128 -DGEMM_BN=256 -DGEMM_BK=32 -DGEMM_WARPS_M=2 -DGEMM_WARPS_N=4 -DGEMM_STAGES=4 -DGEMM_FRAG_DB=0"
  "g1|gemm|-DGEMM_BM=128 -DGEMM_BN=256 -DGEMM_BK=32 -DGEMM_WARPS_M=2 -DGEMM_WARPS_N=4 -DGEMM_STAGES=4 -DGEMM_FRAG_DB=1"
  "g2|gemm|-DGEMM_BM=128 -DGEMM_BN=256 -DGEMM_BK=64 -DGEMM_WARPS_M=2 -DGEMM_WARPS_N=4 -DGEMM_STAGES=3 -DGEMM_FRAG_DB=1"
  "g3|gemm|-DGEMM_BM=128 -DGEMM_BN=256 -DGEMM_BK=64 -DGEMM_WARPS_M=2 -DGEMM_WARPS_N=4 -DGEMM_STAGES=4 -DGEMM_FRAG_DB=1"
  "g4|gemm|-DGEMM_BM=256 -DGEMM_BN=128 -DGEMM_BK=64 -DGEMM_WARPS_M=4 -DGEMM_WARPS_N=2 -DGEMM_STAGES=3 -DGEMM_FRAG_DB=1"
  "g5|gemm|-DGEMM_BM=128 -DGEMM_BN=128 -DGEMM_BK=64 -DGEMM_WARPS_M=2 -DGEMM_WARPS_N=2 -DGEMM_STAGES=3 -DGEMM_MIN_BLOCKS=2 -DGEMM_FRAG_DB=1"
  "g6|gemm|-DGEMM_BM=128 -DGEMM_BN=128 -DGEMM_BK=32 -DGEMM_WARPS_M=2 -DGEMM_WARPS_N=2 -DGEMM_STAGES=4 -DGEMM_MIN_BLOCKS=2 -DGEMM_FRAG_DB=1"
  "g7|gemm|-DGEMM_BM=128 -DGEMM_BN=256 -DGEMM_BK=32 -DGEMM_WARPS_M=2 -DGEMM_WARPS_N=4 -DGEMM_STAGES=6 -DGEMM_FRAG_DB=1"
  "g8|gemm|-DGEMM_BM=128 -DGEMM_BN=256 -DGEMM_BK=64 -DGEMM_WARPS_M=2 -DGEMM_WARPS_N=4 -DGEMM_STAGES=3 -DGEMM_GROUP_M=8 -DGEMM_FRAG_DB=1"
  "g9|gemm|-DGEMM_BM=128 -DGEMM_BN=128 -DGEMM_BK=64 -DGEMM_WARPS_M=2 -DGEMM_WARPS_N=2 -DGEMM_STAGES=3 -DGEMM_MIN_BLOCKS=2 -DGEMM_GROUP_M=8 -DGEMM_FRAG_DB=1"
  "g10|gemm|-DGEMM_BM=128 -DGEMM_BN=256 -DGEMM_BK=64 -DGEMM_WARPS_M=2 -DGEMM_WARPS_N=4 -DGEMM_STAGES=3 -DGEMM_FRAG_DB=0"
  "g11|gemm|-DGEMM_BM=256 -DGEMM_BN=128 -DGEMM_BK=32 -DGEMM_WARPS_M=4 -DGEMM_WARPS_N=2 -DGEMM_STAGES=4 -DGEMM_FRAG_DB=1"
  "g12|gemm|-DGEMM_BM=256 -DGEMM_BN=128 -DGEMM_BK=64 -DGEMM_WARPS_M=4 -DGEMM_WARPS_N=2 -DGEMM_STAGES=4 -DGEMM_FRAG_DB=1"
)
[ -n "${TUNE_CONFIGS_FILE:-}" ] && mapfile -t CONFIGS < "$TUNE_CONFIGS_FILE"  # "name|source|flags" lines

wanted() { [ -z "$ONLY" ] || [[ " $ONLY " == *" $1 "* ]]; }

log() { echo "$*" | tee -a "$OUT/sweep.log" >&2; }

nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,clocks.max.sm,temperature.gpu,power.draw --format=csv >> "$OUT/sweep.log" 2>&1

# ---- 1. build everything in parallel (niced; nothing is timed while nvcc runs)
t0=$(date +%s)
running=0
for c in "${CONFIGS[@]}"; do
  IFS='|' read -r name src flags <<< "$c"
  wanted "$name" || continue
  ( nice -n 10 $NVCC $flags -o "$W/bin/$name" "kernels/$src.cu" > "$W/bin/$name.log" 2>&1 || echo "BUILD FAILED: $name" >> "$W/failed" ) &
  running=$((running + 1))
  if [ "$running" -ge "$JOBS" ]; then wait -n; running=$((running - 1)); fi
done
( nice -n 10 $NVCC -o "$W/bin/copy_ceiling" kernels/copy_ceiling.cu > "$W/bin/copy_ceiling.log" 2>&1 ) &
wait
log "builds: $(( $(date +%s) - t0 )) s"
[ -f "$W/failed" ] && cat "$W/failed" | tee -a "$OUT/sweep.log" >&2

# ---- 2. time them, one process at a time
# record NAME SOURCE EXTRA-ARGS...: run the binary, append {"config", "args", "json"/"error"} to sweep.jsonl
record() {
  local name=$1 bin=$2; shift 2
  [ -x "$W/bin/$bin" ] || { log "skip $name: no binary"; return; }
  local rc
  timeout 90 "$W/bin/$bin" "$@" > "$W/out.json" 2> "$W/err.txt"; rc=$?
  python3 - "$name" "$bin" "$rc" "$W/err.txt" "$W/bin/$bin.log" "$*" "$W/out.json" >> "$OUT/sweep.jsonl" <<'PY'
import json, re, sys
name, binname, rc, errf, logf, args, outf = sys.argv[1:8]
text = open(outf, errors="replace").read()
regs = {}
cur = None
for line in open(logf, errors="replace"):
    m = re.search(r"Compiling entry function '(\w+)'", line)
    if m: cur = m.group(1)
    m = re.search(r"Used (\d+) registers", line)
    if m and cur: regs[cur] = int(m.group(1))
    m = re.search(r"(\d+) bytes spill stores", line)
    if m and cur and int(m.group(1)): regs[cur + ":spill"] = int(m.group(1))
try:
    doc = json.loads(text)
except Exception:
    doc = None
print(json.dumps({"config": name, "binary": binname, "rc": int(rc), "args": args, "doc": doc,
                  "stderr": open(errf, errors="replace").read()[-400:], "regs": regs}))
PY
  log "ran $name ($bin $*): exit $rc"
}

cfg_of() { for c in "${CONFIGS[@]}"; do IFS='|' read -r n s f <<< "$c"; [ "$n" = "$1" ] && { echo "$f"; return; }; done; }

T="--warmup 10 --iters 50"
record copy_ceiling copy_ceiling --variant all --warmup 5 --iters 20
# The same copy at the transpose's size (4096^2 floats each way): the ceiling without 1 GiB of amortization.
record copy_ceiling@16M copy_ceiling --variant all --warmup 10 --iters 50 --size n=16777216
for c in "${CONFIGS[@]}"; do
  IFS='|' read -r name src flags <<< "$c"
  wanted "$name" || continue
  case $src in
    transpose)
      if [ "$name" = t0 ]; then record "$name" "$name" --variant all $T; fi
      record "$name" "$name" --variant swizzled64_float4,swizzled64_float4 $T
      case $name in t0|t1|t2|t4|t5|t6|t9|t10) record "$name@8192" "$name" --variant swizzled64_float4 $T --size rows=8192 --size cols=8192 ;; esac
      ;;
    vecadd)
      if [ "$name" = v1 ]; then record "$name" "$name" --variant all $T; fi
      record "$name" "$name" --variant coalesced,coalesced $T
      ;;
    gemm)
      record "$name" "$name" --variant tensor_core,tensor_core --warmup 5 --iters 20
      ;;
  esac
done

# cuBLAS through CuPy (what `ncuwrap bench` compares gemm/tensor_core with), and the table.
python3 - "$OUT/sweep.jsonl" <<'PY' 2>&1 | tee -a "$OUT/sweep.log"
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
try:
    import cupy as cp
    a = cp.random.default_rng(0).random((4096, 4096), dtype=cp.float32).astype(cp.float16)
    b = cp.random.default_rng(1).random((4096, 4096), dtype=cp.float32).astype(cp.float16)
    for _ in range(5): cp.matmul(a, b)
    cp.cuda.Device().synchronize()
    ts = []
    for _ in range(30):
        s, e = cp.cuda.Event(), cp.cuda.Event(); s.record(); cp.matmul(a, b); e.record(); e.synchronize()
        ts.append(cp.cuda.get_elapsed_time(s, e))
    cublas = 2 * 4096**3 / (statistics.median(ts) * 1e-3) / 1e12
except Exception as exc:  # noqa
    cublas = None
    print("cupy:", exc)
ceiling = None
for r in rows:
    if r["config"].startswith("copy_ceiling") and r["doc"]:
        if r["config"] == "copy_ceiling":
            ceiling = max(2 * x["sizes"]["n"] * 4 / (statistics.median(x["times_ms"]) * 1e-3) / 1e9 for x in r["doc"]["results"])
        for x in r["doc"]["results"]:
            print(f"{r['config']:<16} {x['variant']:<14} {2 * x['sizes']['n'] * 4 / (statistics.median(x['times_ms']) * 1e-3) / 1e9:8.0f} GB/s")
print(f"copy ceiling {ceiling and round(ceiling)} GB/s; cuBLAS fp16 4096^3 {cublas and round(cublas, 1)} TFLOP/s")
print(f"{'config':<12} {'variant':<18} {'ok':<3} {'median_ms':>10} {'rate':>9} {'%ceil':>6} {'regs':>5}  args")
for r in rows:
    if r["config"].startswith("copy_ceiling"):
        continue
    if not r["doc"]:
        print(f"{r['config']:<12} FAILED rc={r['rc']} {r['stderr'][-200:]!r}")
        continue
    bench = r["doc"]["benchmark"]
    for x in r["doc"]["results"]:
        s, med = x["sizes"], statistics.median(x["times_ms"])
        if bench == "transpose":
            rate, unit = 2 * s["rows"] * s["cols"] * 4 / (med * 1e-3) / 1e9, "GB/s"
        elif bench == "vecadd":
            rate, unit = 12 * s["n"] / (med * 1e-3) / 1e9, "GB/s"
        else:
            rate, unit = 2 * s["m"] * s["n"] * s["k"] / (med * 1e-3) / 1e12, "TF/s"
        pct = f"{100 * rate / ceiling:5.1f}" if unit == "GB/s" and ceiling else (f"{100 * rate / cublas:5.1f}" if cublas else "")
        reg = r["regs"].get(next((k for k in r["regs"] if x["kernel"] and x["kernel"] in k and not k.endswith(":spill")), ""), "")
        spill = any(k.endswith(":spill") and x["kernel"] and x["kernel"] in k for k in r["regs"])
        print(f"{r['config']:<12} {x['variant']:<18} {'y' if x['verified'] else 'NO':<3} {med:10.4f} {rate:7.1f}{unit[0]} {pct:>6} {str(reg) + ('S' if spill else ''):>5}  "
              f"p10-p90 {sorted(x['times_ms'])[len(x['times_ms']) // 10]:.4f}-{sorted(x['times_ms'])[len(x['times_ms']) * 9 // 10]:.4f}")
print("(%ceil: of the copy ceiling for GB/s rows, of cuBLAS for gemm rows)")
PY

if [ "${TUNE_FINAL:-0}" = 1 ]; then
  export NCUWRAP_CACHE=$W/ncuwrap-cache
  python3 - <<'PY' 2>&1 | tee "$OUT/final_bench.txt"
import json, os
from ncuwrap.bundled.bench import run_bench
from ncuwrap.render import Format, render
report = run_bench(["transpose", "vecadd", "gemm"], runs=3, progress=lambda m: None)
open(os.path.join(os.environ["OUT"], "final_bench.json"), "w").write(render(report, Format.json))
print(render(report, Format.table), end="")
PY
fi
