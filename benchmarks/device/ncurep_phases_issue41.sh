#!/usr/bin/env bash
# Issue 41 on the GPU host: where `ncuwrap diagnose` of the ops group's --set full + SourceCounters report goes,
# phase by phase (benchmarks/ncurep_phases.py), one device call from the repository root with .whl,
# .devicelibs (and .before) carried:   bash benchmarks/device/ncurep_phases_issue41.sh      # prints the phases
set -uo pipefail
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=$PWD:/tmp/site:/opt/nvidia/nsight-compute/2025.3.1/extras/python PYTHONUNBUFFERED=1
export LD_LIBRARY_PATH=$PWD/.devicelibs:${LD_LIBRARY_PATH:-}
NCU=/opt/nvidia/nsight-compute/2025.3.1/ncu
W=/tmp/p41; rm -rf $W; mkdir -p $W
CORPUS_VERIFY=0 timeout 220 $NCU --set full --section SourceCounters --import-source yes --clock-control none --kernel-id :::2 -f \
  -o $W/ops python3 benchmarks/device/realworld_corpus.py --group ops > $W/ncu.log 2>&1
echo "ncu exit $?; $(ls -la $W/ops.ncu-rep)"
python3 -m ncuwrap diagnose $W/ops.ncu-rep -f json -o $W/warm.json --force -q   # bytecode written
for i in 1 2; do timeout 60 python3 benchmarks/ncurep_phases.py $W/ops.ncu-rep; done
# and against ncu --import, this tree and the one before (.before, when carried), whole processes interleaved
timeout 200 python3 benchmarks/ncu_import_vs_diagnose.py $W/ops.ncu-rep --repeat 3 --ncu $NCU $([ -d .before ] && echo --tree .before) 2>&1 | tail -8
