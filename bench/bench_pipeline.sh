#!/usr/bin/env bash
# The pipeline strategy against graph parallelism (issue 33), for a deep model on a generated SBM:
# per rank count, the median epoch, bytes sent per epoch (the loop's count: activations and
# gradients between stages, or halo rows at every layer, plus the gradient all-reduce), the
# pipeline's bubble (time a stage waited on its neighbours), the largest rank's peak memory and
# the test accuracy after EPOCHS epochs; ratios against graph parallelism measured in this run.
# From 4 ranks (even) also the hybrid: P/2 stages x 2 graph parts.
#   bench/bench_pipeline.sh [build-dir] [VERTICES] [LAYERS] [RANKS] [EPOCHS] [model]
# defaults: build, 200000, 32, 2,4, 3, gcnii. The SBM has average degree 10, 64 features and 8
# classes; hidden 64, dropout 0.5, the pipeline's default chunks (4 per stage). Each rank runs one
# OpenMP thread under mpirun (--oversubscribe): with fewer cores than ranks compare the times with
# care; bytes and memory do not depend on it.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${1:-$here/build}"
vertices="${2:-200000}"
layers="${3:-32}"
ranks="${4:-2,4}"
epochs="${5:-3}"
model="${6:-gcnii}"
dgnn="$(cd "$build" && pwd)/dgnn"
[ -x "$dgnn" ] || { echo "bench_pipeline: no dgnn binary in $build" >&2; exit 1; }
work="$(mktemp -d /tmp/dgnn-bench-pipeline.XXXXXX)"
trap 'rm -rf "$work"' EXIT
mpi=(mpirun --oversubscribe)
[ "$(id -u)" = 0 ] && mpi+=(--allow-run-as-root)

"$dgnn" generate sbm --vertices "$vertices" --avg-degree 10 --features 64 --classes 8 --seed 1 \
  --out "$work/sbm" > /dev/null
"$dgnn" info --graph "$work/sbm" > /dev/null  # fills the parse cache

DGNN="$dgnn" WORK="$work" LAYERS="$layers" RANKS="$ranks" MODEL="$model" EPOCHS="$epochs" \
  MPI="${mpi[*]}" python3 - <<'EOF'
import json, os, subprocess
dgnn, work, model = os.environ["DGNN"], os.environ["WORK"], os.environ["MODEL"]
layers, epochs = int(os.environ["LAYERS"]), int(os.environ["EPOCHS"])
ranks = [int(x) for x in os.environ["RANKS"].split(",")]
mpi = os.environ["MPI"].split()

def run(p, strategy):
    log = os.path.join(work, f"{strategy}-p{p}.jsonl")
    args = ["train", "--graph", os.path.join(work, "sbm"), "--model", model, "--layers",
            str(layers), "--hidden", "64", "--dropout", "0.5", "--epochs", str(epochs),
            "--quiet", "--log-json", log, "--threads", "1"]
    if strategy == "pipeline":
        args += ["--strategy", "pipeline"]
    if strategy == "hybrid":  # p / 2 stages x 2 graph parts
        args += ["--strategy", "pipeline", "--stages", str(p // 2)]
    cmd = [dgnn] + args if p == 1 else mpi + ["-np", str(p), dgnn] + args
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
    recs = [json.loads(l) for l in open(log)]
    final = recs[-1]
    epochs_ = [r for r in recs if "epoch" in r and not r.get("final")]
    return {"epoch_ms": final["median_epoch_ms"], "bytes": final.get("bytes_sent_per_epoch", 0),
            "peak": max(final["rank_peak_bytes"]), "acc": final.get("test_acc") or 0,
            "bubble": sorted(r.get("bubble_ms", 0) for r in epochs_)[len(epochs_) // 2]}

print(f"{model} {layers} layers, hidden 64, SBM {os.environ.get('VERTICES', '')} vertices, "
      f"{epochs} epochs, one thread per rank")
print(f"{'ranks':>5} {'strategy':>9} {'epoch ms':>9} {'x':>6} {'MB sent/epoch':>14} {'x':>7} "
      f"{'bubble ms':>10} {'max peak MiB':>13} {'test acc':>9}")
one = run(1, "graph")
print(f"{1:>5} {'-':>9} {one['epoch_ms']:>9.0f} {'':>6} {0:>14.1f} {'':>7} {'':>10} "
      f"{one['peak'] / 2**20:>13.0f} {one['acc']:>9.4f}")
for p in ranks:
    g = run(p, "graph")
    rows = [("graph", g), ("pipeline", run(p, "pipeline"))]
    if p >= 4 and p % 2 == 0:
        rows.append(("hybrid", run(p, "hybrid")))
    for name, r in rows:
        print(f"{p:>5} {name:>9} {r['epoch_ms']:>9.0f} {r['epoch_ms'] / g['epoch_ms']:>6.2f} "
              f"{r['bytes'] / 1e6:>14.1f} {r['bytes'] / max(g['bytes'], 1):>7.3f} "
              f"{r['bubble'] if name != 'graph' else 0:>10.0f} {r['peak'] / 2**20:>13.0f} "
              f"{r['acc']:>9.4f}")
EOF
