#!/usr/bin/env bash
# What reading the steps costs: `ncuwrap timeline -f json` of the real 200-step capture
# (tests/data/h200_ncuwrap/steps/small_launch_200.sqlite.gz, 44,846 kernels) with this tree against
# an older tree (a commit before steps existed, default 87bf75f), in fresh processes, A B A B, by
# farm-bench (the workplace's timer; elsewhere, time both commands as you like).
#
#   bash benchmarks/timeline_steps.sh [OLD_COMMIT]
set -euo pipefail
cd "$(dirname "$0")/.."
old=${1:-87bf75f}
work=$(mktemp -d)
trap 'git worktree remove --force "$work/old" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
git worktree add -q "$work/old" "$old"
gunzip -c tests/data/h200_ncuwrap/steps/small_launch_200.sqlite.gz > "$work/capture.sqlite"
py=$(command -v python3)
farm-bench --timeout 300 --vs "env PYTHONPATH=$work/old $py -m ncuwrap timeline $work/capture.sqlite -f json" \
  -- env PYTHONPATH="$PWD" "$py" -m ncuwrap timeline "$work/capture.sqlite" -f json
