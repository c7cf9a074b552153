#!/usr/bin/env bash
# The figures ".ncu-rep against ncu --import" of docs/scale.md on the GPU host, one device call (~6-8 minutes)
# from the repository root with .whl and .devicelibs carried (and .before, a git archive of the tree before, to
# compare trees):
#   bash benchmarks/device/ncu_rep.sh [GROUPS]       # GROUPS: ops (default) or ops,triton; writes $OUT/ncu_rep.tgz
# the corpus' groups captured (--set full, SourceCounters, imported sources: benchmarks/device/ops_report.sh); the
# launches NVIDIA's reader had to read (the JSON's notes; --debug says why); with .before, both trees' JSON compared
# and timed; the whole process against `ncu --import --page details`, interleaved (benchmarks/ncu_import_vs_diagnose.py).
. benchmarks/device/ops_report.sh ncu_rep
{ nproc; free -g; python3 --version; nvidia-smi -L 2>&1; $NCU --version; } > $W/keep/machine.txt 2>&1
capture_ops "${1:-ops}"
grep -E "@@(DONE|ERROR)" $W/keep/ncu_ops.log > $W/keep/cases.txt
timeout 120 python3 -m ncuwrap --debug diagnose $W/ops.ncu-rep -f json -o $W/main.json --force -q 2> $W/keep/debug.txt
log "diagnose exit $?; notes: $(python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(d.get('notes', 'none'))" $W/main.json)"
python3 - $W/main.json > $W/keep/kernels.txt <<'P'
import json, sys
d = json.load(open(sys.argv[1]))
for k in d["kernels"]:
    print(k["id"], k["name"][:100])
P
log "kernels in the JSON: $(wc -l < $W/keep/kernels.txt); named without a parameter list (C linkage among them: Triton, Inductor): $(grep -vc '(' $W/keep/kernels.txt)"
tree=()
if [ -d .before ]; then
  (cd .before && PYTHONPATH=$PWD:/tmp/site:$NCU_HOME/extras/python python3 -m ncuwrap diagnose $W/ops.ncu-rep -f json -o $W/before.json --force -q)
  diff $W/before.json $W/main.json > $W/keep/json_diff.txt; log "json diff lines: $(wc -l < $W/keep/json_diff.txt)"
  tree=(--tree .before)
fi
timeout 300 python3 benchmarks/ncu_import_vs_diagnose.py $W/ops.ncu-rep --repeat 5 --ncu $NCU "${tree[@]}" \
  --json $W/keep/ncu_import.json > $W/keep/ncu_import.txt 2>&1; log "exit $?"; tail -12 $W/keep/ncu_import.txt
log done
