# The set-up every device script of workloads/ and benchmarks/device/ shares, sourced from the repository root
# on the lent GPU machine:
#
#   . workloads/common/preamble.sh TAG
#
# - no `set -e` (a step that fails is logged and the next one still runs), an unset variable is an error, and a
#   pipeline fails as its first failing command does;
# - START: the seconds since the epoch when it was sourced (log's elapsed time);
# - the carried wheels (.whl/*.whl, where carried, unless NO_WHEELS is set) installed into /tmp/site, no index, no dependencies;
# - PYTHONPATH: this tree, /tmp/site and Nsight Compute's extras/python (its report reader, ncu_report);
#   PYTHONUNBUFFERED; COLUMNS=100 (ncuwrap's terminal output at the width the fixtures were taken at);
# - LD_LIBRARY_PATH: .devicelibs first (nsys there needs its libdw/libelf: /work/shared/device/README.md);
# - NCU and NSYS: the lent machine's Nsight Compute 2025.3.1 install, unless already set;
# - OUT (default ./device-out: what comes back) and W=/tmp/TAG, with W/keep for what is to be packed (WORK_ROOT: another
#   folder than /tmp, for a test's run here);
# - log LINE...: the line with the seconds since START, appended to W/keep/summary.txt, then W/keep packed into
#   OUT/TAG.tgz, so that a run cut short by its time limit still brings back what it had;
# - elapsed SINCE: the seconds from SINCE (date +%s.%N) to now, to 0.1 s; before_deadline SINCE DEADLINE_S: whether
#   fewer than DEADLINE_S seconds have passed since SINCE;
# - run_jobs SINCE DEADLINE_S LISTING JOB...: the job loop of a script of several jobs (workloads/clock/capture.sh,
#   workloads/op_limits/capture.sh), each with its own log LINE (which replaces the one above) and pack (which
#   packs W/keep as its fixtures' READMEs say): each JOB, run by the script's run_job JOB, is started only before
#   the deadline (else logged as skipped), logged as it starts and ends, and followed by pack; then 'all done', and
#   the listing of OUT and of each folder of W/keep appended to LISTING, packed with the rest.
set -uo pipefail
START=$(date +%s)
TAG=${1:?usage: . workloads/common/preamble.sh TAG}
if [ -z "${NO_WHEELS:-}" ] && compgen -G ".whl/*.whl" > /dev/null; then  # NO_WHEELS=1: a test's run here, with this Python's packages
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
fi
NCU_HOME=${NCU_HOME:-/opt/nvidia/nsight-compute/2025.3.1}
export PYTHONPATH=$PWD:/tmp/site:$NCU_HOME/extras/python PYTHONUNBUFFERED=1 COLUMNS=100
export LD_LIBRARY_PATH=$PWD/.devicelibs:${LD_LIBRARY_PATH:-}
NCU=${NCU:-$NCU_HOME/ncu}
NSYS=${NSYS:-$NCU_HOME/host/target-linux-x64/nsys}
OUT=${OUT:-$PWD/device-out}
W=${WORK_ROOT:-/tmp}/$TAG; rm -rf "$W"; mkdir -p "$W/keep" "$OUT"
log() { echo "=== [$(( $(date +%s) - START )) s] $*" | tee -a "$W/keep/summary.txt"; (cd "$W/keep" && tar -czf "$OUT/$TAG.tgz" .); }
elapsed() { python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.1f}')" "$1" "$(date +%s.%N)"; }
before_deadline() { python3 -c "import sys; sys.exit(0 if float(sys.argv[1]) < float(sys.argv[2]) else 1)" "$(elapsed "$1")" "$2"; }
run_jobs() {
  local since=$1 limit=$2 listing=$3 job
  shift 3
  for job in "$@"; do
    if before_deadline "$since" "$limit"; then
      log "job $job start"
      run_job "$job"
      log "job $job done"
    else
      log "job $job SKIPPED (past ${limit}s)"
    fi
    pack
  done
  log "all done"
  pack
  ls -la "$OUT" "$W/keep"/* | tee -a "$listing"
  pack
}
