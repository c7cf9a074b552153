#!/usr/bin/env bash
# The bundled sample (ncuwrap/samples/transpose_h200.ncu-rep.gz) with per-instruction counters, on the
# lent H200, from the repository root (.whl and .devicelibs carried): every transpose variant's timed launch
# in one report, profiled by ncuwrap with its default collection (targeted + SourceCounters + --import-source yes):
#
#   bash workloads/source/capture_sample.sh        # one device call, ~1 minute; $OUT/sample.tgz
#
# What it wrote last (2026-12-05) is in tests/data/h200_ncuwrap/profile/sample_source/ (README there).
. workloads/common/preamble.sh sample
export PATH=$(dirname "$NCU"):$PATH NCUWRAP_CACHE=$W/build-cache
$NCU --version > "$W/keep/ncu-version.txt" 2>&1
timeout 120 python3 -m ncuwrap build --arch sm_90 transpose > "$W/build.txt" 2>&1; log "build exit $?"
TBIN=$(awk '$1 == "transpose" {print $4}' "$W/build.txt")
timeout 240 python3 -m ncuwrap profile -o "$W/run" -k '^transpose_' --nth-launch 4 -- "$TBIN" --variant all --warmup 2 --iters 1 \
    > "$W/keep/stdout.txt" 2> "$W/keep/stderr.txt"; log "profile exit $?"
gzip -9 -n -c "$W/run/report.ncu-rep" > "$W/keep/transpose_h200.ncu-rep.gz"
for f in report.raw.csv report.source.csv; do gzip -9 -n -c "$W/run/$f" > "$W/keep/$f.gz"; done
cp "$W/run/commands.txt" "$W/run/profile.json" "$W/run/ncu.log" "$W/keep/"
timeout 60 python3 -m ncuwrap diagnose "$W/keep/transpose_h200.ncu-rep.gz" -f json -o "$W/keep/sample.json" -q; log "diagnose exit $?"
ls -la "$W/keep"; log done
