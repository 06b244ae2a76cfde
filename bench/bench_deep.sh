#!/usr/bin/env bash
# Deep GNNs (issue 33): what depth costs, and what graph parallelism sends for a deep model.
#   1. One process, GCNII of each depth in DEPTHS (hidden 64, 3 epochs) on a generated SBM: peak
#      resident memory above the loaded graph, the median epoch, both per graph layer and as a
#      ratio to the shallowest depth measured in this same run.
#   2. The deepest model on 1 and on each of RANKS ranks (graph parallelism, --parts P): median
#      epoch, bytes sent per epoch (every layer exchanges its halo rows, forward and backward),
#      the largest rank's peak memory, each as a ratio to one process.
#   bench/bench_deep.sh [build-dir] [VERTICES] [DEPTHS] [RANKS] [model]
# defaults: build, 200000, 8,16,32, 2,4, gcnii. The generated SBM has average degree 10,
# 64 features and 8 classes. Each rank runs one OpenMP thread under mpirun (--oversubscribe): on
# a machine with fewer cores than ranks compare the epoch times with care; bytes and memory do
# not depend on it.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${1:-$here/build}"
vertices="${2:-200000}"
depths="${3:-8,16,32}"
ranks="${4:-2,4}"
model="${5:-gcnii}"
dgnn="$(cd "$build" && pwd)/dgnn"
[ -x "$dgnn" ] || { echo "bench_deep: no dgnn binary in $build" >&2; exit 1; }
work="$(mktemp -d /tmp/dgnn-bench-deep.XXXXXX)"
trap 'rm -rf "$work"' EXIT
mpi=(mpirun --oversubscribe)
[ "$(id -u)" = 0 ] && mpi+=(--allow-run-as-root)

"$dgnn" generate sbm --vertices "$vertices" --avg-degree 10 --features 64 --classes 8 --seed 1 \
  --out "$work/sbm" > /dev/null
"$dgnn" info --graph "$work/sbm" > /dev/null  # fills the parse cache

DGNN="$dgnn" WORK="$work" DEPTHS="$depths" RANKS="$ranks" MODEL="$model" VERTICES="$vertices" \
  MPI="${mpi[*]}" python3 - <<'EOF'
import json, os, subprocess, statistics
dgnn, work, model = os.environ["DGNN"], os.environ["WORK"], os.environ["MODEL"]
depths = [int(x) for x in os.environ["DEPTHS"].split(",")]
ranks = [int(x) for x in os.environ["RANKS"].split(",")]
mpi = os.environ["MPI"].split()

def run(layers, p):
    log = os.path.join(work, f"L{layers}-p{p}.jsonl")
    args = ["train", "--graph", os.path.join(work, "sbm"), "--model", model, "--layers",
            str(layers), "--hidden", "64", "--dropout", "0.5", "--epochs", "3", "--quiet",
            "--log-json", log]
    env = dict(os.environ, OMP_NUM_THREADS="1" if p > 1 else os.environ.get("OMP_NUM_THREADS", ""))
    if not env["OMP_NUM_THREADS"]:
        del env["OMP_NUM_THREADS"]
    cmd = ([dgnn] + args) if p == 1 else (mpi + ["-np", str(p), "-x", "OMP_NUM_THREADS", dgnn]
                                          + args + ["--parts", str(p)])
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, env=env)
    recs = [json.loads(l) for l in open(log)]
    final = recs[-1]
    return {"epoch_ms": final["median_epoch_ms"],
            "bytes": final.get("bytes_sent_per_epoch", 0),
            "peak": max(final["rank_peak_bytes"]),
            "loaded": max(final["rank_loaded_peak_bytes"])}

mb = lambda b: b / 2**20
n = int(os.environ["VERTICES"])
row = n * 64 * 4  # one n x hidden float matrix
print(f"{model}, SBM {n} vertices (avg degree 10, 64 features), hidden 64, 3 epochs, one process")
# "rows/layer": the peak's growth from the previous depth, per added layer, in n x hidden float
# matrices (what each layer keeps for the backward; the first depth: its whole peak above load).
print(f"{'layers':>7} {'peak MiB':>9} {'above load':>11} {'rows/layer':>11} "
      f"{'epoch ms':>9} {'ms/layer':>9} {'x mem':>6} {'x time':>7}")
base = prev = None
for L in depths:
    r = run(L, 1)
    extra = r["peak"] - r["loaded"]
    grow = (extra - (prev[1] if prev else 0)) / (L - (prev[0] if prev else 0)) / row
    if base is None:
        base = r
    print(f"{L:>7} {mb(r['peak']):>9.0f} {mb(extra):>11.0f} {grow:>11.2f} "
          f"{r['epoch_ms']:>9.0f} {r['epoch_ms'] / L:>9.1f} "
          f"{extra / max(base['peak'] - base['loaded'], 1):>6.2f} "
          f"{r['epoch_ms'] / base['epoch_ms']:>7.2f}")
    prev = (L, extra)
L = depths[-1]
print(f"\n{model} {L} layers, graph parallelism (--parts P), against one process")
print(f"{'ranks':>6} {'epoch ms':>9} {'x':>6} {'MB sent/epoch':>14} {'max peak MiB':>13} {'x':>6}")
one = run(L, 1)
print(f"{1:>6} {one['epoch_ms']:>9.0f} {1:>6.2f} {0:>14.1f} {mb(one['peak']):>13.0f} {1:>6.2f}")
for p in ranks:
    r = run(L, p)
    print(f"{p:>6} {r['epoch_ms']:>9.0f} {r['epoch_ms'] / one['epoch_ms']:>6.2f} "
          f"{r['bytes'] / 1e6:>14.1f} {mb(r['peak']):>13.0f} {r['peak'] / one['peak']:>6.2f}")
EOF
