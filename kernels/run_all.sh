#!/usr/bin/env bash
# Build every bundled benchmark with nvcc and run all variants, one JSON file per binary.
# Usage: kernels/run_all.sh [OUT_DIR] [ARCH]     (defaults: ./bench-out, sm_90)
# This is the no-Python path; `ncuwrap build --all && ncuwrap bench --all` is the full one.
set -u
here="$(cd "$(dirname "$0")" && pwd)"
out="${1:-bench-out}"
arch="${2:-sm_90}"
mkdir -p "$out/bin"
status=0
for src in "$here"/*.cu; do
  name="$(basename "$src" .cu)"
  target="$arch"
  # Families with `arch_specific: sm_90a` in manifest.yaml (wgmma) get the architecture-specific target.
  if [ "$name" = gemm_hopper ] && [ "$arch" = sm_90 ]; then target=sm_90a; fi
  if ! nvcc -O3 -std=c++17 -arch="$target" -lineinfo -o "$out/bin/$name" "$src" 2> "$out/$name.build.log"; then
    echo "BUILD FAILED: $name (see $out/$name.build.log)"; status=1; continue
  fi
done
for bin in "$out"/bin/*; do
  name="$(basename "$bin")"
  "$bin" --variant all > "$out/$name.json" 2> "$out/$name.err"
  rc=$?
  echo "$name: exit $rc"
  [ $rc -eq 0 ] || status=1
done
exit $status
