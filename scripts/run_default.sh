#!/usr/bin/env bash
# Quick start 1: set up, build, and run the main job: link prediction with GCRN on a generated
# dynamic graph (an evolving planted partition, 20 snapshots, made once under the build folder),
# trained on 2 MPI ranks with the vertex strategy (1 rank when this build has no MPI).
# Arguments go to `dgnn train` and win over the defaults here (e.g. --model evolvegcn-o,
# --strategy snapshot, --epochs 50, --device cuda with DGNN_RANKS=1).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
"$here/scripts/setup.sh"
build="${DGNN_BUILD_DIR:-$here/build}"
dgnn="$build/dgnn"
data="$build/default-evolving"
given() { case " $ARGS " in *" $1 "* | *" $1="*) return 0 ;; esac; return 1; }
ARGS="$*"
if ! given --graph && [ ! -f "$data/snapshots.txt" ]; then
  "$dgnn" generate evolving-sbm --vertices 3000 --snapshots 20 --classes 6 --avg-degree 8 \
    --homophily 0.9 --drift 0.02 --features 16 --seed 1 --out "$data" >/dev/null
fi
defaults=()
given --graph || defaults+=(--graph "$data")
given --model || defaults+=(--model gcrn)
given --epochs || defaults+=(--epochs 20)
given --neg-eval || defaults+=(--neg-eval 20)
ranks="${DGNN_RANKS:-2}"
launcher=()
if [ "$ranks" -gt 1 ] && grep -q "define DGNN_HAVE_MPI 1" "$build/generated/dgnn/dgnn_config.hpp" 2>/dev/null &&
   command -v mpiexec >/dev/null; then
  launcher=(mpiexec -n "$ranks" --oversubscribe)
  [ "$(id -u)" -eq 0 ] && launcher+=(--allow-run-as-root)
fi
exec "${launcher[@]}" "$dgnn" train "${defaults[@]}" "$@"
