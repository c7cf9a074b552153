#!/usr/bin/env bash
# The big-capture figures of docs/scale.md on the GPU host, in two parts of one device call each:
#   benchmarks/device/scale.sh reports OUT [OLD_TREE]   a 220-launch .ncu-rep of the torch training step,
#                                                       diagnose against 'ncu --import --page details --csv'
#   benchmarks/device/scale.sh timelines OUT [OLD_TREE] the real step captures against 'nsys stats',
#                                                       and the 1M-launch synthetic capture against pandas
# Expects ncu on PATH and nsys at NSYS (default: the one inside Nsight Compute's install, as on the H200).
set -euo pipefail
part=$1 out=$2 old=${3:-}
NSYS_DIR=${NSYS_DIR:-/opt/nvidia/nsight-compute/2025.3.1/host/target-linux-x64}
export PATH=$NSYS_DIR:$PATH
mkdir -p "$out"
case $part in
  reports)
    ncu --clock-control none -c 220 -f -o /tmp/train220 python3 workloads/steps/train_step.py --steps 2 > "$out/ncu_capture.log" 2>&1
    python3 benchmarks/ncu_import_vs_diagnose.py /tmp/train220.ncu-rep --repeat 7 --csv ${old:+--tree "$old"} --json "$out/ncurep.json"
    ls -la /tmp/train220.ncu-rep > "$out/report_size.txt"
    ;;
  timelines)
    nsys --version > "$out/nsys_version.txt"
    python3 benchmarks/timeline_scale.py --real --repeat 5 --json "$out/real.json"
    python3 benchmarks/timeline_scale.py --launches 1000000 --repeat 3 --keep /tmp/scale --json "$out/scale_1m.json"
    if [ -n "$old" ]; then
      python3 benchmarks/timeline_scale.py --real --repeat 5 --tree "$old" --json "$out/real_before.json"
      python3 benchmarks/timeline_scale.py --launches 1000000 --repeat 1 --keep /tmp/scale --tree "$old" --json "$out/scale_1m_before.json"
    fi
    ;;
  *) echo "usage: $0 reports|timelines OUT [OLD_TREE]" >&2; exit 2 ;;
esac
