#!/usr/bin/env bash
# Distributed temporal training (link prediction) on a generated evolving graph, both strategies
# (vertex: one partition, halo per snapshot; snapshot: whole snapshots per rank, all-to-all by
# vertex for recurrences) on 1 / 2 / 4 ranks: epoch time, its compute / comm / wait split and
# bytes sent per epoch.
#   bench/bench_temporal.sh [build-dir] [vertices] [snapshots] [epochs] [model] [bptt]
# On one rank the vertex strategy is the plain single-process path (the speedup baseline); the
# snapshot strategy runs its own code path (layer by layer over windows, an all-to-all with
# itself). Ranks share this machine's cores: compare bytes and the split across rank counts,
# times with care (bytes sent are exact; times move with the machine's load).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${1:-$here/build}"
vertices="${2:-100000}"
snapshots="${3:-30}"
epochs="${4:-2}"
model="${5:-gcrn}"
bptt="${6:-5}"
dgnn="$build/dgnn"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
cores=$(nproc)

"$dgnn" generate evolving-sbm --vertices "$vertices" --snapshots "$snapshots" --avg-degree 4 \
  --features 16 --classes 8 --seed 1 --out "$work/g" >/dev/null
for strategy in vertex snapshot; do
  for np in 1 2 4; do
    threads=$(( cores / np )); (( threads < 1 )) && threads=1
    # A run that cannot happen (e.g. EvolveGCN-H under the vertex strategy) shows as n/a.
    mpiexec -n "$np" --oversubscribe --bind-to none -x OMP_NUM_THREADS="$threads" "$dgnn" train \
      --graph "$work/g" --model "$model" --hidden 16 --epochs "$epochs" --bptt "$bptt" \
      --neg-train 1 --neg-eval 5 --strategy "$strategy" --quiet \
      --log-json "$work/log-$strategy-$np.jsonl" >/dev/null 2>"$work/err-$strategy-$np.txt" ||
      rm -f "$work/log-$strategy-$np.jsonl"
  done
done

python3 - "$work" "$vertices" "$snapshots" "$model" "$bptt" <<'PY'
import json, statistics, sys, os
work, vertices, snapshots, model, bptt = sys.argv[1:]
def load(strategy, np):
    path = os.path.join(work, f"log-{strategy}-{np}.jsonl")
    if not os.path.exists(path):
        return None
    rows = [json.loads(l) for l in open(path)]
    ep = [r for r in rows if not r.get("final")]
    med = lambda k: statistics.median(r[k] for r in ep)
    out = {k: med(k) for k in ("time_ms", "compute_ms", "comm_ms", "wait_ms", "bytes_sent",
                               "max_bytes_sent")}
    out["best_ms"] = min(r["time_ms"] for r in ep)  # the least disturbed epoch on a busy machine
    return out
print(f"{model} link prediction, evolving SBM: {vertices} vertices, {snapshots} snapshots, "
      f"16 features, hidden 16, --bptt {bptt}; medians over epochs (training only), best epoch")
print(f"{'strategy':>8} {'ranks':>5} {'epoch ms':>9} {'best ms':>9} {'compute':>8} {'comm':>7} "
      f"{'wait':>7} {'MB sent':>8} {'max MB/rank':>11} {'speedup':>7}")
base = load("vertex", 1)
for strategy in ("vertex", "snapshot"):
    for np in (1, 2, 4):
        r = load(strategy, np)
        if r is None:
            print(f"{strategy:>8} {np:>5} {'n/a':>9}")
            continue
        speedup = f"{base['time_ms'] / r['time_ms']:>6.2f}x" if base else "n/a"
        print(f"{strategy:>8} {np:>5} {r['time_ms']:>9.1f} {r['best_ms']:>9.1f} "
              f"{r['compute_ms']:>8.1f} {r['comm_ms']:>7.1f} {r['wait_ms']:>7.1f} "
              f"{r['bytes_sent']/1e6:>8.2f} "
              f"{r['max_bytes_sent']/1e6:>11.2f} {speedup:>7}")
PY
