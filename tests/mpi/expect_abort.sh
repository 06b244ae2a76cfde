#!/bin/sh
# Usage: expect_abort.sh MESSAGE COMMAND... — runs COMMAND (an mpiexec line) under a 60 s
# timeout and passes when it fails quickly (non-zero, not the timeout's 124) and its output
# contains MESSAGE: a failing rank must bring the job down, never hang it, and say why.
set -u
message=$1
shift
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1
export OMPI_MCA_rmaps_base_oversubscribe=1
out=$(mktemp)
trap 'rm -f "$out"' EXIT
start=$(date +%s.%N)
timeout 60 "$@" >"$out" 2>&1
rc=$?
elapsed=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }')
cat "$out"
echo "expect_abort: exit code $rc after ${elapsed}s"
if [ "$rc" -eq 124 ]; then
  echo "expect_abort: FAIL: the job hung (killed after 60 s)"
  exit 1
fi
if [ "$rc" -eq 0 ]; then
  echo "expect_abort: FAIL: the job exited 0"
  exit 1
fi
if ! grep -qF -- "$message" "$out"; then
  echo "expect_abort: FAIL: the output lacks: $message"
  exit 1
fi
echo "expect_abort: ok"
