#!/usr/bin/env bash
# Installs dgnn from the build tree into a scratch prefix, builds examples/temporal_run against it
# as an out-of-tree project (find_package(dgnn)), and runs it: one process, then (when this build
# has MPI) 2 ranks under each strategy, which must print the one-process losses and test metrics.
set -euo pipefail
build="$1"; src="$2"
work="$build/example-temporal"
. "$src/tests/example_common.sh"
example_build temporal_run "$work"
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
if have_mpi; then
  for s in vertex snapshot; do
    mpiexec -n 2 --oversubscribe "${mpi_root[@]}" "$ex" $s > "$work/two-$s.txt"
    tail -1 "$work/two-$s.txt"
  done
  # The metrics within 2e-3 (a tie among scores may rank differently), the best epoch equal.
  compare_runs "$work" 'test auc ([0-9.]+) map ([0-9.]+) mrr ([0-9.]+) \(best epoch (\d+)\)' 8 \
    2e-3 two-vertex two-snapshot
  echo "the library's temporal run on 2 ranks, vertex and snapshot strategies, equals one process"
fi
