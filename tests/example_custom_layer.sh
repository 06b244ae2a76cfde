#!/usr/bin/env bash
# Installs dgnn from the build tree into a scratch prefix, builds examples/custom_layer against it
# as an out-of-tree project (find_package(dgnn)), and runs it.
set -euo pipefail
build="$1"; src="$2"
work="$build/example-test"
rm -rf "$work"
cmake --install "$build" --prefix "$work/prefix" >/dev/null
cmake -S "$src/examples/custom_layer" -B "$work/build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$work/prefix" >/dev/null
cmake --build "$work/build" >/dev/null
"$work/build/custom_layer"
