#!/usr/bin/env bash
# Installs dgnn from the build tree into a scratch prefix, builds examples/custom_layer against it
# as an out-of-tree project (find_package(dgnn)), and runs it: on one process, then (when this
# build has MPI and mpiexec is there) on 2 ranks, whose full-batch part trains one part per rank.
set -euo pipefail
build="$1"; src="$2"
work="$build/example-test"
rm -rf "$work"
cmake --install "$build" --prefix "$work/prefix" >/dev/null
cmake -S "$src/examples/custom_layer" -B "$work/build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$work/prefix" >/dev/null
cmake --build "$work/build" >/dev/null
"$work/build/custom_layer"
if grep -q "define DGNN_HAVE_MPI 1" "$build/generated/dgnn_config.hpp" 2>/dev/null &&
   command -v mpiexec >/dev/null; then
  root=()
  [ "$(id -u)" -eq 0 ] && root=(--allow-run-as-root)
  out=$(OMP_NUM_THREADS=1 mpiexec -n 2 --oversubscribe "${root[@]}" "$work/build/custom_layer")
  echo "$out"
  echo "$out" | grep -q "custom layer on 2 rank(s)"
fi
