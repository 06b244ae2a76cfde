#!/usr/bin/env bash
# dgnn under valgrind's memcheck, on the CPU: no invalid read or write, no use of uninitialised
# memory, no definite leak, in a CUDA build as in a CPU one (the CUDA libraries' one known
# loader report is suppressed, with its reason, by valgrind-cuda.supp).
set -euo pipefail
dgnn="$1"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cd "$work"
vg=(valgrind -q --error-exitcode=97 --num-callers=40 --leak-check=full --errors-for-leak-kinds=definite
    --suppressions="$here/valgrind-cuda.supp")
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1
"$dgnn" generate sbm --vertices 120 --features 4 --classes 2 --seed 3 --out g > /dev/null
"${vg[@]}" "$dgnn" info --graph g --no-cache > /dev/null
"${vg[@]}" "$dgnn" train --graph g --epochs 2 --hidden 4 --device cpu --quiet --no-cache > /dev/null
echo "valgrind: clean"
