#!/usr/bin/env bash
# Fuzzes dgnn's readers of untrusted files with libFuzzer (clang, AddressSanitizer and
# UndefinedBehaviorSanitizer): the edge-list reader (text and .gz, static and snapshots), the
# .npy reader, the checkpoint reader and partition part files (tests/fuzz/).
#
#   scripts/fuzz.sh [SECONDS] [HARNESS...]     # default: 60 s each, all four, in parallel
#
# Each harness starts from tests/fuzz/seeds/<harness> and keeps its corpus in
# ${DGNN_FUZZ_DIR:-build-fuzz}/corpus/<harness>; a finding (crash, sanitizer report, leak,
# std::bad_alloc, an exception that is not dgnn's) lands in .../findings/<harness>/ and makes
# the script exit 1. Copy it to tests/fuzz/regressions/<harness>/ once fixed: the ordinary
# test suite replays that folder ("fuzz: seeds and past findings ...").
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
seconds="${1:-60}"
shift || true
harnesses=("$@")
((${#harnesses[@]})) || harnesses=(edge_list npy checkpoint part)
build="${DGNN_FUZZ_DIR:-$here/build-fuzz}"

# The ordinary dependencies (setup.sh's list), plus clang and its libFuzzer runtime.
DGNN_SETUP_ONLY=1 "$here/scripts/setup.sh"
need=()
for p in clang libclang-rt-dev; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || need+=("$p")
done
if ((${#need[@]})); then
  echo "fuzz: installing ${need[*]}"
  sudo=""; [ "$(id -u)" -eq 0 ] || sudo=sudo
  $sudo apt-get update -qq
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi

flags="-O1 -g -fno-omit-frame-pointer -fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined"
cmake -S "$here" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_C_COMPILER=clang \
  -DCMAKE_CXX_FLAGS="$flags" -DCMAKE_C_FLAGS="$flags" \
  -DDGNN_CUDA=OFF -DDGNN_MPI=OFF -DDGNN_BUILD_TESTS=OFF -DDGNN_BUILD_BENCH=OFF -DDGNN_FUZZ=ON >/dev/null
targets=()
for h in "${harnesses[@]}"; do targets+=("fuzz_$h"); done
cmake --build "$build" -j "$(nproc)" --target "${targets[@]}"

export ASAN_OPTIONS="detect_leaks=1:allocator_may_return_null=0:abort_on_error=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
export OMP_NUM_THREADS=1
slots=$(nproc)
pids=()
for h in "${harnesses[@]}"; do
  # No more harnesses at once than cores: each is one process.
  while ((${#pids[@]} >= slots)); do
    wait -n || status_early=1
    alive=()
    for p in "${pids[@]}"; do kill -0 "$p" 2>/dev/null && alive+=("$p"); done
    pids=("${alive[@]}")
  done
  mkdir -p "$build/corpus/$h" "$build/findings/$h"
  # -rss_limit_mb: a reader must not take gigabytes for a file of kilobytes; -max_len: inputs
  # up to 64 KiB (longer ones test the same paths, more slowly).
  ( cd "$build/findings/$h" &&
    "$build/tests/fuzz/fuzz_$h" -max_total_time="$seconds" -rss_limit_mb=2048 -max_len=65536 \
      -timeout=20 -print_final_stats=1 -artifact_prefix="$build/findings/$h/" \
      "$build/corpus/$h" "$here/tests/fuzz/seeds/$h" > "$build/findings/$h.log" 2>&1 ) &
  pids+=($!)
done
status=${status_early:-0}
for p in "${pids[@]}"; do wait "$p" || status=1; done

printf "%-12s %14s %10s %9s %9s\n" harness executions "exec/s" corpus findings
for h in "${harnesses[@]}"; do
  log="$build/findings/$h.log"
  execs=$(grep -o 'stat::number_of_executed_units: [0-9]*' "$log" | awk '{print $2}' | tail -1)
  rate=$([ -n "$execs" ] && echo $((execs / seconds)))
  found=$(find "$build/findings/$h" -type f | wc -l)
  corpus=$(find "$build/corpus/$h" -type f | wc -l)
  printf "%-12s %14s %10s %9s %9s\n" "$h" "${execs:-?}" "${rate:-?}" "$corpus" "$found"
  if [ "$found" -gt 0 ]; then
    status=1
    echo "  findings in $build/findings/$h (log: $log):"
    grep -m3 -E "ERROR|runtime error|finding:|deadly signal" "$log" | sed 's/^/    /'
  fi
done
exit $status
