#!/usr/bin/env bash
# The measured pair of the what-if's faster_kernel (issue 50), on the GPU machine (nvidia-h200), in one device call
# of at most 8 minutes. Run from the repository root there, with .devicelibs carried (nsys needs its libdw/libelf)
# and ncuwrap's dependencies as wheels in .whl/ (workloads/common/preamble.sh installs them into /tmp/site):
#
#   bash workloads/whatif_faster_kernel/capture.sh
#
# 1. env: the GPU, driver, torch, CuPy, nsys and ncu versions (env.txt)
# 2. plain: workloads/whatif_faster_kernel/prog.py --variant slow, fixed, slow, fixed, slow, fixed, each in its own
#    process, no tracer (plain.jsonl: each run's JSON line, step_ms_mean among it; plain/*.log)
# 3. profile: python3 -m ncuwrap profile --top 3 -o $W/run -- python3 prog.py --variant slow (nsys ranks the
#    kernels, ncu profiles the top 3: the SGEMM, the naive transpose, the add); what it printed in
#    profile.stdout.txt / profile.stderr.txt
# 4. predict: python3 -m ncuwrap timeline run/timeline.sqlite --kernels run, in table and JSON form
#    (timeline_kernels.txt, timeline_kernels.json): the prediction made from the BEFORE capture alone
# 5. pack: the run folder's small files (report.raw.csv, report.mangled.csv, verdict.json, profile.json,
#    commands.txt, ncu.log, timeline.log, timeline.json) and its timeline.sqlite gzipped (gzip -9 -n) into run/
#
# Every step has its own timeout and is logged with its exit code (summary.txt); no `set -e`: a failed step is
# logged and the next one runs. A step is started only while the script has run less than DEADLINE_S seconds
# (default 430); the profile step's timeout is cut to what is left. Everything kept is packed after each step
# into $OUT/whatif_faster_kernel.tgz: the one file that comes back (a few MB: the gzipped SQLite export is most of
# it), so a call cut short still brings back what it had.
TAG=whatif_faster_kernel
. workloads/common/preamble.sh "$TAG"
export PYTHONUNBUFFERED=1
unset CLOCK_TRACED
P=${FK_PROGRAM:-workloads/whatif_faster_kernel/prog.py}   # the program (overridable only to test this script with a stub)
K=$W/keep
DEADLINE_S=${DEADLINE_S:-430}
mkdir -p "$K/plain" "$K/run"
left() { echo $(( DEADLINE_S - ($(date +%s) - START) )); }
json_of() { grep -a '^{"program"' "$1" | tail -n 1; }

{
  echo "date: $(date -u)"
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,clocks.max.sm,power.draw,temperature.gpu --format=csv
  timeout 60 python3 -c 'import torch, cupy, numpy, sys; print("torch", torch.__version__, "cuda", torch.version.cuda, "cupy", cupy.__version__, "numpy", numpy.__version__, "python", sys.version.split()[0])'
  timeout 60 "$NSYS" --version
  timeout 60 "$NCU" --version | tail -n 1
  timeout 60 python3 -m ncuwrap --version
  echo "nproc: $(nproc); $(grep -m1 'model name' /proc/cpuinfo)"
} > "$K/env.txt" 2>&1
log "env: $(tr '\n' ' ' < "$K/env.txt" | head -c 600)"

# 2. plain runs, interleaved
for r in 1 2 3; do
  for v in slow fixed; do
    if (( $(left) < 150 )); then log "plain $v run $r SKIPPED ($(left) s left)"; continue; fi
    f=$K/plain/$v.$r.log
    s=$(date +%s.%N)
    { echo "# python3 $P --variant $v"; timeout 60 python3 "$P" --variant "$v"; } > "$f" 2>&1
    rc=$?
    line=$(json_of "$f")
    [[ -n $line ]] && echo "$line" >> "$K/plain.jsonl"
    log "plain $v run $r rc=$rc wall=$(python3 -c "import sys,time; print(f'{time.time()-float(sys.argv[1]):.1f}')" "$s")s $(echo "$line" | grep -o '"step_ms_mean": [0-9.]*')"
    [[ $rc -ne 0 ]] && tail -n 15 "$f"
  done
done

# 3. profile --top 3 of the slow variant
t=$(( $(left) - 40 )); (( t > 330 )) && t=330
if (( t < 60 )); then
  log "profile SKIPPED ($(left) s left)"
else
  log "profile start (timeout ${t}s)"
  timeout "$t" python3 -m ncuwrap profile --top 3 --ncu "$NCU" --nsys-path "$NSYS" -o "$W/run" --force \
    -- python3 "$P" --variant slow > "$K/profile.stdout.txt" 2> "$K/profile.stderr.txt"
  log "profile rc=$? $(ls "$W/run" 2>/dev/null | tr '\n' ' ')"
  tail -n 5 "$K/profile.stderr.txt"
fi

# 4. the prediction from the BEFORE capture alone, with the verdicts of the run folder joined
if [[ -f $W/run/timeline.sqlite ]] && (( $(left) > 15 )); then
  timeout 60 python3 -m ncuwrap timeline "$W/run/timeline.sqlite" --kernels "$W/run" > "$K/timeline_kernels.txt" 2>&1
  log "timeline --kernels rc=$? $(grep -A1 'faster_kernel:' "$K/timeline_kernels.txt" | tr -s ' \n' ' ' | head -c 300)"
  timeout 60 python3 -m ncuwrap timeline "$W/run/timeline.sqlite" --kernels "$W/run" -f json > "$K/timeline_kernels.json" 2> "$K/timeline_kernels.json.err"
  log "timeline --kernels -f json rc=$?"
fi

# 5. the run folder's small files, the SQLite export gzipped
for f in report.raw.csv report.mangled.csv verdict.json profile.json commands.txt ncu.log timeline.log timeline.json stdout.txt stderr.txt; do
  [[ -f $W/run/$f ]] && cp "$W/run/$f" "$K/run/"
done
if [[ -f $W/run/timeline.sqlite ]]; then
  timeout 60 gzip -9 -n -c "$W/run/timeline.sqlite" > "$K/run/timeline.sqlite.gz"
  log "gzip timeline.sqlite rc=$? $(stat -c %s "$W/run/timeline.sqlite") -> $(stat -c %s "$K/run/timeline.sqlite.gz") bytes"
fi
rep=$W/run/report.ncu-rep
if [[ -f $rep ]] && (( $(stat -c %s "$rep") < 4000000 )); then
  cp "$rep" "$K/run/"
fi
log "all done: $(du -sh "$K" | cut -f1) kept"
