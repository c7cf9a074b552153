#!/usr/bin/env bash
# Everything `ncuwrap profile` has to show on a GPU, in ONE command (run from the repository root):
#
#   bash workloads/profile/capture.sh                     # every bundled benchmark
#   bash workloads/profile/capture.sh transpose,vecadd    # only these families (or family/variant)
#
# 1. PATH gets CUDA and ncu, PYTHONPATH the source tree and ncu's python module (nothing is installed);
# 2. the non-bundled tests/data/programs/own_program.cu is built and profiled with
#    `ncuwrap profile -- ./own_program` (default, -k/--launch-skip, --nth-launch, a filter matching nothing,
#    a failing program, --nsys when an nsys is there), and the CLI is shown on transpose_naive with
#    --collect targeted and full;
# 3. ncu's own console is captured for those cases (stdout and stderr apart: fixtures for the CPU tests),
#    and whether section-only metrics can be asked for by name;
# 4. benchmarks/targeted_vs_full.py builds every bundled benchmark and compares --collect targeted with
#    --collect full on each variant (passes, wall time, verdicts), then calibrates the parts of targeted;
#    it starts no new variant once the time budget is spent and says which ones are left;
# 5. at most 8 files land in $OUT: device.log, targeted_vs_full.{json,md}, and tarballs (each < 15 MiB).
#
# BUDGET_S (default 540): seconds the whole script may take (the device tool allows 600 per command).
set -u
START=$(date +%s)
BUDGET_S=${BUDGET_S:-540}
ONLY=${1:-}
OUT=${OUT:-$PWD/device-out}
W=${WORK:-/tmp/ncuwrap-device}
mkdir -p "$OUT"
rm -rf "$W" && mkdir -p "$W"/{own/consoles,cli}
exec > >(tee -a "$OUT/device.log") 2>&1

NCU_DIR=$(ls -d /opt/nvidia/nsight-compute/*/ 2>/dev/null | sort -V | tail -1)
for d in /usr/local/cuda/bin "${NCU_DIR%/}"; do [ -d "$d" ] && export PATH="$PATH:$d"; done
export PYTHONPATH="$PWD${NCU_DIR:+:${NCU_DIR%/}/extras/python}${PYTHONPATH:+:$PYTHONPATH}"
export PYTHONUNBUFFERED=1
export NCUWRAP_CACHE=$W/build-cache
export PYTHONFAULTHANDLER=1
NCUWRAP="python3 -m ncuwrap"
elapsed() { echo $(( $(date +%s) - START )); }
step() { echo; echo "=== [$(elapsed) s] $*"; }

step "can this python read a .ncu-rep through ncu's extras/python ncu_report? (with and without .devicelibs)"
python3 -c "from ncuwrap.kernel.reading import load; print(load('tests/data/h200/transpose/copyKernel.ncu-rep.gz').frame.shape)"; echo "plain: exit $?"
LD_LIBRARY_PATH="$PWD/.devicelibs" python3 -c "from ncuwrap.kernel.reading import load; print(load('tests/data/h200/transpose/copyKernel.ncu-rep.gz').frame.shape)"; echo "with .devicelibs: exit $?"

step "environment"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,persistence_mode --format=csv
ncu --version | tail -1
nvcc --version | tail -1
python3 --version

step "own program (not bundled): build"
nvcc -O3 -arch=sm_90 -lineinfo -o "$W/own/own_program" tests/data/programs/own_program.cu || echo "BUILD FAILED"
cd "$W/own"
step "ncuwrap profile -- ./own_program   (no filter: a program's first 10 launches)"
$NCUWRAP profile -o run-default -- ./own_program; echo "exit $?"
step "ncuwrap profile -k scale_columns --launch-skip 1 -- ./own_program   (the 2nd scale_columns launch)"
$NCUWRAP profile -o run-k-skip -k scale_columns --launch-skip 1 -- ./own_program; echo "exit $?"
step "ncuwrap profile --nth-launch 2 -- ./own_program   (the 2nd launch of every kernel)"
$NCUWRAP profile -o run-nth --nth-launch 2 -f json -- ./own_program > run-nth.verdict.json; echo "exit $?"
step "expected failures: a filter matching nothing, a failing program (exit 2, one line each)"
$NCUWRAP profile -o run-nomatch -k no_such_kernel -- ./own_program; echo "exit $?"
$NCUWRAP profile -o run-fail -- ./own_program --fail; echo "exit $?"
step "ncu's own console (stdout and stderr apart)"
C=consoles
ncu --version > $C/version.txt 2>&1
ncu --clock-control none --metrics gpu__time_duration.sum -k regex:scale_rows -c 1 ./own_program > $C/ok.stdout 2> $C/ok.stderr; echo "ok: exit $?"
ncu --clock-control none --metrics gpu__time_duration.sum -k regex:no_such_kernel ./own_program > $C/nomatch.stdout 2> $C/nomatch.stderr; echo "nomatch: exit $?"
ncu --clock-control none --metrics gpu__time_duration.sum -c 1 ./own_program --fail > $C/appfail.stdout 2> $C/appfail.stderr; echo "appfail: exit $?"
ncu --clock-control none --kernel-id ::regex:scale_:2 --metrics gpu__time_duration.sum ./own_program > $C/kernel_id.stdout 2> $C/kernel_id.stderr; echo "kernel-id: exit $?"
# Can section-only metrics be asked for by name? (targeted takes them from LaunchStats/Occupancy/MWA)
for m in launch__grid_size sm__maximum_warps_per_active_cycle_pct launch__occupancy_limit_registers derived__local_spilling_requests sass__inst_executed_register_spilling; do
  ncu --clock-control none --metrics "$m" -k regex:scale_rows -c 1 -o "$C/byname_$m" ./own_program > "$C/byname_$m.log" 2>&1
  echo "--metrics $m: exit $? $(ncu --import "$C/byname_$m.ncu-rep" --csv --page raw 2>/dev/null | head -1 | tr ',' '\n' | grep -c "\"$m\"") column(s)"
done
cd - > /dev/null

step "the CLI on a bundled benchmark: transpose_naive, --collect targeted then full"
$NCUWRAP profile transpose_naive -o "$W/cli/naive-targeted"; echo "exit $?"
$NCUWRAP profile transpose_naive --collect full -o "$W/cli/naive-full"; echo "exit $?"

step "the bundled sample: every transpose variant's timed launch in one report (--nth-launch 4)"
TBIN=$($NCUWRAP build transpose --arch sm_90 | awk '{print $NF}')
$NCUWRAP profile -o "$W/cli/sample" -k '^transpose_' --nth-launch 4 -- "$TBIN" --variant all --warmup 2 --iters 1; echo "exit $?"

NSYS=$(command -v nsys || ls /opt/nvidia/nsight-compute/*/host/target-linux-x64/nsys 2>/dev/null | tail -1)
if [ -n "$NSYS" ] && [ -d .devicelibs ]; then
  # The lent box's nsys importer needs two carried libraries; give them to nsys alone (not to Python).
  printf '#!/bin/sh\nLD_LIBRARY_PATH="%s/.devicelibs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" exec "%s" "$@"\n' "$PWD" "$NSYS" > "$W/nsys"
  chmod +x "$W/nsys"; NSYS="$W/nsys"
fi
if [ -n "$NSYS" ]; then
  step "--nsys: ncu and an Nsight Systems timeline of the same program ($NSYS; needs .devicelibs carried on the lent box)"
  $NCUWRAP profile --nsys --nsys-path "$NSYS" -o "$W/cli/own-nsys" -- "$W/own/own_program"; echo "exit $?"
fi

REMAIN=$(( BUDGET_S - $(elapsed) - 75 ))
step "targeted vs full on every bundled variant (new variants start for ${REMAIN} s)"
python3 benchmarks/targeted_vs_full.py --out "$W/tvf" --summary-to "$OUT" --deadline "$REMAIN" --calibrate ${ONLY:+--only "$ONLY"}
echo "targeted_vs_full: exit $? (0: target met)"

step "packing (each tarball under 15 MiB)"
python3 - "$W" "$OUT" <<'EOF'
import sys, tarfile
from pathlib import Path
work, out = Path(sys.argv[1]), Path(sys.argv[2])
LIMIT = 15 << 20

def pack(name, files):
    kept, skipped, size = [], [], 0
    for f in files:
        if size + f.stat().st_size <= LIMIT - (1 << 20):
            kept.append(f); size += f.stat().st_size
        else:
            skipped.append(f)
    with tarfile.open(out / name, "w:gz") as tar:
        for f in kept:
            tar.add(f, arcname=str(f.relative_to(work)))
    print(f"{name}: {len(kept)} files, {size >> 10} KiB before compression; left out: {[str(f.relative_to(work)) for f in skipped]}")

files = sorted(p for p in work.rglob("*") if p.is_file() and "build-cache" not in p.parts)
small = [p for p in files if not p.name.endswith(".ncu-rep") and p.name != "own_program"]
reports = [p for p in files if p.name.endswith(".ncu-rep") and not {"calibration", "warmup"} & set(p.parts)]  # those only counted passes
pack("runs.tar.gz", small)                                                     # verdicts, profile.json, logs, consoles
pack("reports-own-cli.tar.gz", [p for p in reports if "tvf" not in p.parts])  # own program, CLI, byname probes
pack("reports-targeted.tar.gz", [p for p in reports if "tvf" in p.parts and p.parent.name != "full"])
first = [p for p in reports if p.parent.name == "full" and "transpose" in str(p)]
pack("reports-full.tar.gz", first + [p for p in reports if p.parent.name == "full" and p not in first])
EOF
ls -la "$OUT"
step "done in $(elapsed) s"
sleep 1  # let tee finish device.log
