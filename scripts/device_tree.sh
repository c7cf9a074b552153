#!/usr/bin/env bash
# The lent GPU machine takes at most 64 MiB of working tree a call (tracked files, untracked ones git does not
# ignore, carried paths), and tests/data's captures alone come close to it. A device call needs none of them:
#
#   scripts/device_tree.sh slim      # these fixture folders out of this checkout's index (the files stay), ignored
#   ... device calls ...
#   scripts/device_tree.sh restore   # back in the index, the ignore lines removed
#
# Commit nothing between the two: the folders would be committed as deleted. `slim` refuses while changes are
# staged, and `restore` is safe to run twice. The folders: FOLDERS below (about 37 MB of the tree).
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
FOLDERS=(tests/data/h200_ncuwrap/clock tests/data/h200_ncuwrap/unmarked tests/data/h200_ncuwrap/steps
         tests/data/h200_ncuwrap/ranks tests/data/h200_ncuwrap/kineto)
EXCLUDE=$(git rev-parse --git-path info/exclude)
MARK="# scripts/device_tree.sh slim"
size() { git ls-files -z | xargs -0 stat -c %s | awk '{s += $1} END {printf "%.1f MB", s / 1e6}'; }
case "${1:-}" in
  slim)
    if ! git diff --cached --quiet; then echo "device_tree.sh: changes are staged; commit or unstage them first" >&2; exit 2; fi
    if grep -qF "$MARK" "$EXCLUDE" 2>/dev/null; then echo "already slim: tracked $(size)"; exit 0; fi
    git rm -r -q --cached -- "${FOLDERS[@]}"
    # gitignore has no trailing comments: the mark is a line of its own, and the patterns are known by their text
    { echo "$MARK"; for f in "${FOLDERS[@]}"; do echo "/$f/"; done; } >> "$EXCLUDE"
    echo "slim: tracked $(size); run 'scripts/device_tree.sh restore' after the device calls" ;;
  restore)
    git reset -q -- "${FOLDERS[@]}"
    if [ -f "$EXCLUDE" ]; then
      pats=("$MARK"); for f in "${FOLDERS[@]}"; do pats+=("/$f/"); done
      grep -vxF "${pats[@]/#/-e}" "$EXCLUDE" > "$EXCLUDE.tmp" || true; mv "$EXCLUDE.tmp" "$EXCLUDE"
    fi
    echo "restored: tracked $(size)" ;;
  *) echo "usage: scripts/device_tree.sh slim|restore" >&2; exit 2 ;;
esac
