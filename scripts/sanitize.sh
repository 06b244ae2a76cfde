#!/usr/bin/env bash
# Builds the CPU library, the CLI and the test suite with AddressSanitizer and
# UndefinedBehaviorSanitizer (GCC) and runs the tests, MPI ones included.
#
#   scripts/sanitize.sh [CTEST ARGS...]     # e.g. -L graph, or -E "temporal matrix"
#   DGNN_SANITIZE_TARGETS="test_graph test_partition" scripts/sanitize.sh -L "graph|partition"
#
# Any sanitizer report fails the test that triggered it (halt_on_error). Leaks are checked,
# except inside Open MPI's own libraries, which keep their start-up allocations until exit
# (tests/sanitizers/lsan.supp says which). Build folder: ${DGNN_SANITIZE_DIR:-build-asan}.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${DGNN_SANITIZE_DIR:-$here/build-asan}"
DGNN_SETUP_ONLY=1 "$here/scripts/setup.sh"

flags="-O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=undefined"
cmake -S "$here" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_FLAGS="$flags" -DCMAKE_C_FLAGS="$flags" \
  -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined" \
  -DDGNN_CUDA=OFF -DDGNN_BUILD_BENCH=OFF >/dev/null
# DGNN_SANITIZE_TARGETS: build only these (e.g. "test_graph test_partition"), with ctest -L for
# their labels; the whole tree under ASan takes about an hour on 2 cores.
# shellcheck disable=SC2086
cmake --build "$build" -j "$(nproc)" ${DGNN_SANITIZE_TARGETS:+--target $DGNN_SANITIZE_TARGETS}

supp="$here/tests/sanitizers"
# fast_unwind_on_malloc=0: whole stacks through libraries built without frame pointers (Open
# MPI's), so that lsan.supp can recognise their allocations; their plugins stay loaded
# (disable_dlclose) so that those frames have names.
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1:detect_stack_use_after_return=0:fast_unwind_on_malloc=0"
export LSAN_OPTIONS="suppressions=$supp/lsan.supp:print_suppressions=0:fast_unwind_on_malloc=0"
export OMPI_MCA_mca_base_component_disable_dlclose=1
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:suppressions=$supp/ubsan.supp"
# Open MPI under ASan: its shared-memory transport maps memory ASan cannot see into; TCP and
# self are what the tests need on one machine.
export OMPI_MCA_btl="self,tcp"
export OMPI_MCA_rmaps_base_oversubscribe=1
if [ "$(id -u)" -eq 0 ]; then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
cd "$build"
ctest --output-on-failure -j "$(nproc)" "$@"
