#!/usr/bin/env bash
# Installs dgnn from the build tree into a scratch prefix, builds examples/forecast_run against it
# as an out-of-tree project (find_package(dgnn)), and runs it: one process on the generated
# signal and on the shipped chickenpox file, then (when this build has MPI) 2 ranks under each
# strategy, which must print the one-process losses and test metrics.
set -euo pipefail
build="$1"; src="$2"
work="$build/example-forecast"
. "$src/tests/example_common.sh"
example_build forecast_run "$work"
ex="$work/build/forecast_run"
export OMP_NUM_THREADS=1
"$ex" vertex > "$work/one.txt"
cat "$work/one.txt"
grep -q "forecast run on 1 rank(s), strategy vertex: 400 vertices, 120 steps" "$work/one.txt"
# It learns: on the generated signal the test MSE is below both naive forecasts' (0, and the
# last value seen).
python3 - "$work/one.txt" <<'PY'
import re, sys
m = re.search(r"test mse ([0-9.]+) mae [0-9.]+ \(predict 0: mse ([0-9.]+); last value: mse ([0-9.]+)",
              open(sys.argv[1]).read())
mse, zero, last = (float(x) for x in m.groups())
assert mse < zero and mse < last, f"test mse {mse} against the naive {zero} and {last}: nothing learnt"
PY
# A real file: the shipped chickenpox signal (20 counties, 521 weeks).
"$ex" vertex "$src/datasets/chickenpox/chickenpox.json.gz" | tail -1 |
  grep "20 vertices, 521 steps, 105 test samples" >/dev/null
if have_mpi; then
  for s in vertex snapshot; do
    mpiexec -n 2 --oversubscribe "${mpi_root[@]}" "$ex" $s > "$work/two-$s.txt"
    tail -1 "$work/two-$s.txt"
  done
  compare_runs "$work" 'test mse ([0-9.]+) mae ([0-9.]+) .*\(best epoch (\d+)\)' 10 1e-4 \
    two-vertex two-snapshot
  echo "the library's forecast run on 2 ranks, vertex and snapshot strategies, equals one process"
fi
