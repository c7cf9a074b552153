#!/usr/bin/env bash
# Capture, on the lent H200, the real reports behind tests/data/h200_ncuwrap/ (run from the repo root):
# every bundled benchmark built and run once, ncu --set full reports of the diagnosis cases,
# a multi-process report with templated kernel names, and nsys timelines.
# ncu always runs with --clock-control none (the card's clock settings are left alone).
set -u
OUT=${OUT:-/tmp/out}
W=/tmp/cap
rm -rf "$W"; mkdir -p "$W"/{bench/bin,diag,multi,nsys}
export LD_LIBRARY_PATH=$PWD/.devicelibs:${LD_LIBRARY_PATH:-}
NSYS=$(command -v nsys || echo /opt/nvidia/nsight-compute/2025.3.1/host/target-linux-x64/nsys)
nvidia-smi > "$W/nvidia-smi.txt" 2>&1
ncu --version > "$W/ncu-version.txt" 2>&1
B=$W/bench/bin

# 1. Build every benchmark in parallel, then run all variants once (correctness + first numbers).
for src in kernels/*.cu; do
  n=$(basename "$src" .cu)
  nvcc -O3 -std=c++17 -arch=sm_90 -lineinfo -Xptxas -v -o "$B/$n" "$src" > "$W/bench/$n.build.log" 2>&1 &
done
nvcc -O3 -arch=sm_90 -lineinfo -o "$B/templated" tests/programs/templated.cu > "$W/bench/templated.build.log" 2>&1 &
wait
for b in "$B"/*; do
  n=$(basename "$b"); [ "$n" = templated ] && continue
  /usr/bin/time -f "%e s" -o "$W/bench/$n.time" "$b" --variant all > "$W/bench/$n.json" 2> "$W/bench/$n.err"
  echo "$n: exit $? $(cat "$W/bench/$n.time")" | tee -a "$W/bench/summary.txt"
done

# 2. ncu --set full of each diagnosis case: name binary variant kernel-regex launch-skip [args...]
prof() {
  local name=$1 bin=$2 variant=$3 kernel=$4 skip=$5; shift 5
  local t0=$(date +%s%N)
  ncu --set full --clock-control none -k "regex:$kernel" --launch-skip "$skip" --launch-count 1 -f -o "$W/diag/$name" \
      "$B/$bin" --variant "$variant" "$@" > "$W/diag/$name.log" 2>&1
  local rc=$?
  echo "$name: exit $rc wall $(( ($(date +%s%N) - t0) / 1000000 )) ms" | tee -a "$W/diag/summary.txt"
  ncu --import "$W/diag/$name.ncu-rep" --csv --page raw > "$W/diag/$name.raw.csv" 2>> "$W/diag/$name.log"
}
P="--warmup 2 --iters 1"
prof fma_many_accumulators fma many_accumulators '^fma_many_accumulators$' 4 $P
prof grid_few_blocks grid_size few_blocks '^grid_few_blocks$' 4 $P
prof divergence_per_lane divergence per_lane '^divergence_per_lane$' 4 $P
prof divergence_per_warp divergence per_warp '^divergence_per_warp$' 4 $P
prof spill_local spill spill '^spill_local$' 4 $P
prof spill_none spill no_spill '^spill_none$' 4 $P
prof gather_strided gather strided '^gather_strided$' 4 $P
prof gather_random gather random '^gather_random$' 4 $P
prof atomics_global_hotspot atomics global_hotspot '^atomics_global_hotspot$' 4 $P
prof atomics_shared_privatized atomics shared_privatized '^atomics_shared_privatized$' 4 $P
prof reduce_atomic_per_element reduction atomic_per_element '^reduce_atomic_per_element$' 4 $P
prof vecadd_strided vecadd strided '^vecadd_strided$' 4 $P
prof smem_strided smem_banks strided '^smem_strided$' 4 $P
prof occupancy_regs_heavy occupancy regs_heavy '^occupancy_regs_heavy$' 4 $P
prof transpose_swizzled64 transpose swizzled64_float4 '^transpose_swizzled64$' 4 $P

# 3. Several processes and templated kernel names in one report (and its CSV pages).
ncu --section SpeedOfLight --section LaunchStats --section Occupancy --clock-control none -f -o "$W/multi/two_processes" \
    sh -c "$B/templated && $B/templated" > "$W/multi/two_processes.log" 2>&1
ncu --import "$W/multi/two_processes.ncu-rep" --csv --page raw > "$W/multi/two_processes.raw.csv" 2>> "$W/multi/two_processes.log"
ncu --import "$W/multi/two_processes.ncu-rep" --csv --page raw --print-units base > "$W/multi/two_processes.raw_base.csv" 2>> "$W/multi/two_processes.log"
ncu --import "$W/multi/two_processes.ncu-rep" --csv --page details > "$W/multi/two_processes.details.csv" 2>> "$W/multi/two_processes.log"

# 4. Timelines: thousands of tiny kernels with a sync after each, and the end-to-end program.
for v in sync_each graph; do
  "$NSYS" profile --trace=cuda,nvtx,osrt --sample=none --cpuctxsw=none -o "$W/nsys/launch_$v" --force-overwrite true \
      "$B/launch_overhead" --variant $v --warmup 1 --iters 2 > "$W/nsys/launch_$v.log" 2>&1
  "$NSYS" export --type sqlite --force-overwrite true -o "$W/nsys/launch_$v.sqlite" "$W/nsys/launch_$v.nsys-rep" >> "$W/nsys/launch_$v.log" 2>&1
done
"$NSYS" profile --trace=cuda,nvtx,osrt --sample=none --cpuctxsw=none -o "$W/nsys/e2e" --force-overwrite true \
    "$B/e2e" --variant all --warmup 1 --iters 3 > "$W/nsys/e2e.log" 2>&1
"$NSYS" export --type sqlite --force-overwrite true -o "$W/nsys/e2e.sqlite" "$W/nsys/e2e.nsys-rep" >> "$W/nsys/e2e.log" 2>&1

# Bring back: at most 8 files of 16 MiB.
cd "$W"
tar czf "$OUT/bench.tgz" bench/*.json bench/*.err bench/*.log bench/*.time bench/summary.txt nvidia-smi.txt ncu-version.txt
tar czf "$OUT/diag1.tgz" diag/summary.txt diag/*.log $(ls diag/*.ncu-rep | head -8) $(ls diag/*.raw.csv | head -8)
tar czf "$OUT/diag2.tgz" $(ls diag/*.ncu-rep | tail -n +9) $(ls diag/*.raw.csv | tail -n +9)
tar czf "$OUT/multi_nsys.tgz" multi nsys/*.sqlite nsys/*.nsys-rep nsys/*.log
ls -la "$OUT"
