#!/usr/bin/env bash
# Runs the examples of README.md so that they cannot rot: every fenced ```sh block, in order, in
# one scratch folder where `datasets` is the repository's (a symbolic link), as a user would run
# them from a clone. Rewrites: `build/dgnn` -> the binary given, `--epochs N` -> `--epochs 2`
# (and `--epochs 2` added to a `dgnn train` / `dgnn scale` line that has none), `mpirun` /
# `mpiexec` get `--oversubscribe` (and may run as root). A block that cannot run here (it
# installs, builds, needs a GPU, ...) is preceded by the line
#   <!-- not run by tests/readme_examples.sh: REASON -->
# (blank lines may come between); it is listed as skipped with its reason. mpirun blocks are
# skipped when there is no mpirun / mpiexec or the build has no MPI.
#   tests/readme_examples.sh DGNN_BINARY REPO_ROOT
set -euo pipefail
[ $# -eq 2 ] || { echo "usage: $0 DGNN_BINARY REPO_ROOT" >&2; exit 2; }
dgnn="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
root="$(cd "$2" && pwd)"
readme="$root/README.md"
[ -x "$dgnn" ] || { echo "not an executable: $dgnn" >&2; exit 2; }
[ -f "$readme" ] || { echo "no README.md in $root" >&2; exit 2; }
[ -d "$root/datasets" ] || { echo "no datasets/ in $root" >&2; exit 2; }

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/blocks" "$work/run" "$work/cache"
ln -s "$root/datasets" "$work/run/datasets"

# The blocks' environment: the binary, a private cache (parse cache, plan calibration), MPI as
# root and oversubscribed; nothing written outside the scratch folder.
export DGNN="$dgnn" DGNN_CACHE_DIR="$work/cache" XDG_CACHE_HOME="$work/cache"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_rmaps_base_oversubscribe=1

# Extract: blocks/NNN.sh (rewritten, continuation lines joined) and blocks/NNN.skip (the
# reason) per ```sh block; blocks/NNN.line holds its line in the README.
awk -v out="$work/blocks" '
  function fail(msg) { print "README.md:" NR ": " msg > "/dev/stderr"; bad = 1; exit 1 }
  /^[ \t]*<!-- not run by tests\/readme_examples\.sh:/ {
    if (inblock) fail("skip marker inside a code block")
    reason = $0
    sub(/^[ \t]*<!-- not run by tests\/readme_examples\.sh:[ \t]*/, "", reason)
    sub(/[ \t]*-->[ \t]*$/, "", reason)
    if (reason == "") fail("skip marker without a reason")
    pending = reason; next
  }
  /^[ \t]*```/ {
    if (!inblock) {
      lang = $0; sub(/^[ \t]*```[ \t]*/, "", lang); sub(/[ \t].*$/, "", lang)
      inblock = 1; issh = (lang == "sh"); if (!issh) { pending = ""; next }
      n++; name = sprintf("%s/%03d", out, n)
      print NR > (name ".line"); close(name ".line")
      if (pending != "") { print pending > (name ".skip"); close(name ".skip") }
      pending = ""; logical = ""; next
    }
    inblock = 0
    if (issh) { if (logical != "") emit(logical); close(name ".sh") }
    next
  }
  function emit(l,   has_epochs) {
    gsub(/build\/dgnn/, "\"$DGNN\"", l)
    gsub(/--epochs[ =][0-9]+/, "--epochs 2", l)
    has_epochs = (l ~ /--epochs/)
    if (!has_epochs) sub(/"\$DGNN" (train|scale)( |$)/, "& --epochs 2 ", l)
    if (l !~ /--oversubscribe/) gsub(/(^|[ \t;&|(])(mpirun|mpiexec)( |$)/, "& --oversubscribe ", l)
    print l > (name ".sh")
  }
  inblock && issh {
    line = $0
    if (line ~ /\\$/) { sub(/\\$/, "", line); logical = logical line; next }
    logical = logical line; emit(logical); logical = ""; next
  }
  !inblock && NF > 0 && pending != "" { fail("skip marker not followed by a code block") }
  END {
    if (bad) exit 1
    if (inblock) { print "README.md: unclosed code block" > "/dev/stderr"; exit 1 }
    if (pending != "") { print "README.md: skip marker at the end" > "/dev/stderr"; exit 1 }
  }
' "$readme"

# mpirun blocks need mpirun and a build with MPI: DGNN_README_MPI=0|1 says which (tests/docs.cmake
# sets it), else the build's dgnn_config.hpp beside the binary, when there is one.
have_mpi=0
if command -v mpirun >/dev/null || command -v mpiexec >/dev/null; then have_mpi=1; fi
cfg="$(dirname "$dgnn")/generated/dgnn/dgnn_config.hpp"
if [ -n "${DGNN_README_MPI:-}" ]; then
  [ "$DGNN_README_MPI" = 1 ] || have_mpi=0
elif [ -f "$cfg" ] && ! grep -q "define DGNN_HAVE_MPI 1" "$cfg"; then
  have_mpi=0
fi

shopt -s nullglob
ran=0 skipped=0 failed=0
start=$(date +%s)
for f in "$work"/blocks/*.line; do
  b="${f%.line}"; id="$(basename "$b")"; at="README.md:$(cat "$f")"
  if [ -f "$b.skip" ]; then
    echo "skip  $at: $(cat "$b.skip")"; skipped=$((skipped + 1)); continue
  fi
  [ -f "$b.sh" ] || { echo "skip  $at: empty block"; skipped=$((skipped + 1)); continue; }
  if [ "$have_mpi" -eq 0 ] && grep -qE '(^|[ ;&|(])(mpirun|mpiexec) ' "$b.sh"; then
    echo "skip  $at: no mpirun / mpiexec, or a build without MPI"; skipped=$((skipped + 1)); continue
  fi
  t0=$(date +%s)
  if (cd "$work/run" && bash -euo pipefail "$b.sh") > "$work/$id.log" 2>&1; then
    echo "ok    $at ($(( $(date +%s) - t0 )) s)"; ran=$((ran + 1))
  else
    code=$?
    echo "FAIL  $at (exit $code, $(( $(date +%s) - t0 )) s); the block as run:"
    sed 's/^/        /' "$b.sh"
    echo "      its output (last 30 lines):"
    tail -n 30 "$work/$id.log" | sed 's/^/        /'
    failed=$((failed + 1))
  fi
done
echo "README examples: $ran ran, $failed failed, $skipped skipped ($(( $(date +%s) - start )) s)"
[ "$failed" -eq 0 ] || exit 1
[ "$ran" -gt 0 ] || { echo "no example ran: are the README's examples still \`\`\`sh blocks?"; exit 1; }
