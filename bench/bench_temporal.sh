#!/usr/bin/env bash
# Distributed temporal training (link prediction) on a generated evolving graph, 1 / 2 / 4 ranks,
# vertex strategy: epoch time, its compute / comm / wait split and bytes sent per epoch.
#   bench/bench_temporal.sh [build-dir] [vertices] [snapshots] [epochs] [model]
# (The snapshot strategy is not built yet; this prints the vertex strategy only.) Ranks share
# this machine's cores: compare bytes and the split across rank counts, times with care.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${1:-$here/build}"
vertices="${2:-100000}"
snapshots="${3:-30}"
epochs="${4:-3}"
model="${5:-gcrn}"
dgnn="$build/dgnn"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
cores=$(nproc)

"$dgnn" generate evolving-sbm --vertices "$vertices" --snapshots "$snapshots" --avg-degree 4 \
  --features 16 --classes 8 --seed 1 --out "$work/g" >/dev/null
for np in 1 2 4; do
  threads=$(( cores / np )); (( threads < 1 )) && threads=1
  mpiexec -n "$np" --oversubscribe --bind-to none -x OMP_NUM_THREADS="$threads" "$dgnn" train \
    --graph "$work/g" --model "$model" --hidden 16 --epochs "$epochs" --bptt 5 --neg-train 1 \
    --neg-eval 5 --quiet --log-json "$work/log-$np.jsonl" >/dev/null
done

python3 - "$work" "$vertices" "$snapshots" "$model" <<'PY'
import json, statistics, sys, os
work, vertices, snapshots, model = sys.argv[1:]
def load(np):
    rows = [json.loads(l) for l in open(os.path.join(work, f"log-{np}.jsonl"))]
    ep = [r for r in rows if not r.get("final")]
    med = lambda k: statistics.median(r[k] for r in ep)
    return {k: med(k) for k in ("time_ms", "compute_ms", "comm_ms", "wait_ms", "bytes_sent",
                                "max_bytes_sent")}
print(f"{model} link prediction, vertex strategy, evolving SBM: {vertices} vertices, "
      f"{snapshots} snapshots, 16 features, hidden 16; medians over epochs")
print(f"{'ranks':>5} {'epoch ms':>9} {'compute':>8} {'comm':>7} {'wait':>7} {'MB sent':>8} "
      f"{'max MB/rank':>11} {'speedup':>7}")
base = load(1)["time_ms"]
for np in (1, 2, 4):
    r = load(np)
    print(f"{np:>5} {r['time_ms']:>9.1f} {r['compute_ms']:>8.1f} {r['comm_ms']:>7.1f} "
          f"{r['wait_ms']:>7.1f} {r['bytes_sent']/1e6:>8.2f} {r['max_bytes_sent']/1e6:>11.2f} "
          f"{base / r['time_ms']:>6.2f}x")
PY
