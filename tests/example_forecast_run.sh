#!/usr/bin/env bash
# Installs dgnn from the build tree into a scratch prefix, builds examples/forecast_run against it
# as an out-of-tree project (find_package(dgnn)), and runs it: one process on the generated
# signal and on the shipped chickenpox file, then (when this build has MPI) 2 ranks under each
# strategy, which must print the one-process losses and test metrics.
set -euo pipefail
build="$1"; src="$2"
work="$build/example-forecast"
rm -rf "$work"
cmake --install "$build" --prefix "$work/prefix" >/dev/null
cmake -S "$src/examples/forecast_run" -B "$work/build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$work/prefix" >/dev/null
cmake --build "$work/build" >/dev/null
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
if grep -q "define DGNN_HAVE_MPI 1" "$build/generated/dgnn/dgnn_config.hpp" 2>/dev/null &&
   command -v mpiexec >/dev/null; then
  root=()
  [ "$(id -u)" -eq 0 ] && root=(--allow-run-as-root)
  for s in vertex snapshot; do
    mpiexec -n 2 --oversubscribe "${root[@]}" "$ex" $s > "$work/two-$s.txt"
    tail -1 "$work/two-$s.txt"
  done
  python3 - "$work" <<'PY'
import re, sys
work = sys.argv[1]
def parse(name):
    text = open(f"{work}/{name}").read()
    losses = [float(x) for x in re.findall(r"^epoch \d+ loss ([0-9.]+)", text, re.M)]
    final = re.search(r"test mse ([0-9.]+) mae ([0-9.]+) .*\(best epoch (\d+)\)", text)
    return losses, [float(x) for x in final.groups()]
one, f1 = parse("one.txt")
assert len(one) == 10, one
for s in ("vertex", "snapshot"):
    two, f2 = parse(f"two-{s}.txt")
    assert len(two) == 10, (s, two)
    for e, (a, b) in enumerate(zip(two, one), 1):
        assert abs(a - b) <= 1e-4 * b, f"{s}: epoch {e}: {a} vs {b}"
    assert f2[2] == f1[2] and all(abs(a - b) <= 1e-4 * b for a, b in zip(f2[:2], f1[:2])), (s, f2, f1)
print("the library's forecast run on 2 ranks, vertex and snapshot strategies, equals one process")
PY
fi
