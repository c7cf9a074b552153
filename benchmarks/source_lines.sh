#!/usr/bin/env bash
# What reading the per-instruction counters costs `ncuwrap diagnose` (issue 20): the real H200 reports of
# tests/data/h200_ncuwrap/source with this tree against an older tree (a commit before source counters
# were read, default e9eea38), in fresh processes, A B A B, by farm-bench (the workplace's timer;
# elsewhere, time both commands as you like).
#   1. a .ncu-rep with SourceCounters (transpose-naive: 73 instructions, source text imported);
#   2. the raw page with its cuda,sass source page beside it (--source-page), against the raw page alone;
#   3. the Triton + cuBLAS raw page with the SASS page (7,784 instructions), against the raw page alone.
#
#   bash benchmarks/source_lines.sh [OLD_COMMIT]
set -euo pipefail
cd "$(dirname "$0")/.."
old=${1:-e9eea38}
work=$(mktemp -d)
trap 'git worktree remove --force "$work/old" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
git worktree add -q "$work/old" "$old"
D=tests/data/h200_ncuwrap/source
gunzip -c $D/transpose-naive.ncu-rep.gz > "$work/naive.ncu-rep"
py=$(command -v python3)
new="env PYTHONPATH=$PWD $py -m ncuwrap diagnose"
before="env PYTHONPATH=$work/old $py -m ncuwrap diagnose"
echo "== 1. .ncu-rep with SourceCounters: new against old"
farm-bench --timeout 300 --vs "$before $work/naive.ncu-rep -f json" -- $new "$work/naive.ncu-rep" -f json
echo "== 2. raw page + cuda,sass page (new) against the raw page (old)"
farm-bench --timeout 300 --vs "$before $D/transpose-naive.raw.csv.gz -f json" \
  -- $new $D/transpose-naive.raw.csv.gz --source-page $D/transpose-naive.source_cuda_sass.csv.gz -f json
echo "== 3. Triton + cuBLAS: raw page + SASS page (new) against the raw page (old)"
farm-bench --timeout 300 --vs "$before $D/torch.raw.csv.gz -f json" \
  -- $new $D/torch.raw.csv.gz --source-page $D/torch.source_sass.csv.gz -f json
