#!/usr/bin/env bash
# Installs dgnn from the build tree into a scratch prefix, builds examples/temporal_run against it
# as an out-of-tree project (find_package(dgnn)), and runs it: one process, then (when this build
# has MPI) 2 ranks under each strategy, which must print the one-process losses and test metrics.
set -euo pipefail
build="$1"; src="$2"
work="$build/example-temporal"
rm -rf "$work"
cmake --install "$build" --prefix "$work/prefix" >/dev/null
cmake -S "$src/examples/temporal_run" -B "$work/build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$work/prefix" >/dev/null
cmake --build "$work/build" >/dev/null
ex="$work/build/temporal_run"
export OMP_NUM_THREADS=1
"$ex" vertex > "$work/one.txt"
cat "$work/one.txt"
grep -q "temporal run on 1 rank(s), strategy vertex: 600 vertices, 12 snapshots" "$work/one.txt"
grep -q "embeddings 600 x 16" "$work/one.txt"
# It learns: test AUC well above chance on the generated graph.
auc=$(sed -n 's/.*test auc \([0-9.]*\).*/\1/p' "$work/one.txt")
awk -v a="$auc" 'BEGIN { exit !(a > 0.6) }' || { echo "test auc $auc: nothing learnt"; exit 1; }
# A real file: the shipped CollegeMsg, at the EvolveGCN paper's buckets.
"$ex" vertex "$src/datasets/collegemsg/CollegeMsg.txt.gz" 2 190080 | tail -1 |
  grep "1899 vertices, 89 snapshots" >/dev/null
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
    final = re.search(r"test auc ([0-9.]+) map ([0-9.]+) mrr ([0-9.]+) \(best epoch (\d+)\)", text)
    return losses, [float(x) for x in final.groups()]
one, f1 = parse("one.txt")
assert len(one) == 8, one
for s in ("vertex", "snapshot"):
    two, f2 = parse(f"two-{s}.txt")
    assert len(two) == 8, (s, two)
    for e, (a, b) in enumerate(zip(two, one), 1):
        assert abs(a - b) <= 1e-4 * b, f"{s}: epoch {e}: {a} vs {b}"
    assert f2[3] == f1[3] and all(abs(a - b) <= 2e-3 for a, b in zip(f2[:3], f1[:3])), (s, f2, f1)
print("the library's temporal run on 2 ranks, vertex and snapshot strategies, equals one process")
PY
fi
