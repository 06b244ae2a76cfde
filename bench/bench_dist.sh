#!/usr/bin/env bash
# Distributed full-graph training on a generated graph, 1 / 2 / 4 ranks (METIS parts):
# epoch time, its compute / comm / wait split, bytes sent per epoch, and what overlapping the
# halo exchange with interior aggregation saves (the same run with --no-overlap).
#   bench/bench_dist.sh [build-dir] [vertices] [epochs] [model]
# Ranks share this machine's cores (OMP threads = cores / ranks, at least 1): on a 2-core machine
# 4 ranks are oversubscribed, so compare bytes and splits across rank counts, times with care.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${1:-$here/build}"
vertices="${2:-200000}"
epochs="${3:-10}"
model="${4:-gcn}"
dgnn="$build/dgnn"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
cores=$(nproc)

"$dgnn" generate sbm --vertices "$vertices" --avg-degree 10 --features 64 --classes 8 --seed 1 \
  --out "$work/g" >/dev/null
for np in 1 2 4; do
  threads=$(( cores / np )); (( threads < 1 )) && threads=1
  for mode in overlap no-overlap; do
    flag=""; [ "$mode" = no-overlap ] && flag="--no-overlap"
    [ "$np" = 1 ] && [ "$mode" = no-overlap ] && continue
    mpiexec -n "$np" --oversubscribe --bind-to none -x OMP_NUM_THREADS="$threads" "$dgnn" train --graph "$work/g" \
      --model "$model" --hidden 64 --epochs "$epochs" --parts "$np" --partitioner metis --quiet \
      $flag --log-json "$work/log-$np-$mode.jsonl" >/dev/null
  done
done

python3 - "$work" "$vertices" "$epochs" "$model" <<'PY'
import json, statistics, sys, os
work, vertices, epochs, model = sys.argv[1:]
def load(np, mode):
    p = os.path.join(work, f"log-{np}-{mode}.jsonl")
    rows = [json.loads(l) for l in open(p)]
    ep = [r for r in rows if not r.get("final")][1:]  # first epoch builds adjacencies
    med = lambda k: statistics.median(r[k] for r in ep)
    return {k: med(k) for k in ("time_ms", "compute_ms", "comm_ms", "wait_ms", "bytes_sent",
                                "max_bytes_sent")}
print(f"{model} on a generated SBM, {vertices} vertices, avg degree 10, 64 features, hidden 64; "
      f"medians over epochs 2..{epochs}")
print(f"{'ranks':>5} {'epoch ms':>9} {'compute':>8} {'comm':>7} {'wait':>7} {'MB sent':>8} "
      f"{'max MB/rank':>11} {'no-overlap ms':>13} {'overlap saves':>13} {'speedup':>7}")
base = load(1, "overlap")["time_ms"]
for np in (1, 2, 4):
    r = load(np, "overlap")
    if np > 1:
        n = load(np, "no-overlap")
        no, saves = f"{n['time_ms']:.1f}", f"{(n['time_ms'] - r['time_ms']) / n['time_ms'] * 100:+.1f}%"
    else:
        no, saves = "-", "-"
    print(f"{np:>5} {r['time_ms']:>9.1f} {r['compute_ms']:>8.1f} {r['comm_ms']:>7.1f} "
          f"{r['wait_ms']:>7.1f} {r['bytes_sent']/1e6:>8.2f} {r['max_bytes_sent']/1e6:>11.2f} "
          f"{no:>13} {saves:>13} {base / r['time_ms']:>6.2f}x")
PY
