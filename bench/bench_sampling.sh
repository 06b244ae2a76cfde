#!/usr/bin/env bash
# Neighbour sampling and mini-batch GraphSAGE, dgnn against PyTorch Geometric (NeighborLoader +
# SAGEConv, CPU) in the same run: sampled edges per second, batches with their feature rows, and
# the training epoch (dgnn with and without its prefetch thread). Prints the ratios.
#   bench/bench_sampling.sh [build-dir] [graph] [batch] [fanouts] [features] [hidden] [epochs]
# Defaults: soc-slashdot from ../shared/datasets, batch 1024, fanouts 10,25 (input layer first;
# PyG's num_neighbors [25, 10]), 64 generated features, hidden 64, 2 timed epochs.
# PyG lives in a private venv, BUILD/pyg-venv: created on first use with pip (torch from PyPI,
# torch_geometric, and torch-scatter + torch-sparse built from source: PyPI has no wheel of them
# nor of pyg-lib, and NeighborLoader samples with one of the two; ~30 min on 2 cores). Without
# it, only dgnn's side runs.
# Every measurement is its own process; each side uses THREADS threads (OpenMP / torch; default
# all cores). On a machine other jobs share, THREADS=1 (or OMP_WAIT_POLICY=passive) keeps
# OpenMP's spinning threads from waiting on descheduled peers, which makes dgnn's times erratic.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${1:-$here/build}"
graph="${2:-$here/../shared/datasets/soc-slashdot0902/soc-Slashdot0902.txt.gz}"
batch="${3:-1024}"
fanouts="${4:-10,25}"
feat="${5:-64}"
hidden="${6:-64}"
epochs="${7:-2}"
threads="${THREADS:-$(nproc)}"
export OMP_NUM_THREADS="$threads"
venv="$build/pyg-venv"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

have_pyg() {
  "$venv/bin/python" -c "import torch_geometric.typing as t, sys; \
sys.exit(0 if (t.WITH_PYG_LIB or t.WITH_TORCH_SPARSE) else 1)" 2>/dev/null
}
if ! have_pyg; then
  echo "setting up PyG in $venv (once; torch-sparse compiles for a while)..." >&2
  { [ -x "$venv/bin/python" ] || python3 -m venv "$venv"; } &&
    "$venv/bin/pip" install -q torch torch_geometric &&
    MAX_JOBS="$threads" "$venv/bin/pip" install -q --no-build-isolation torch-scatter &&
    MAX_JOBS="$threads" "$venv/bin/pip" install -q --no-build-isolation torch-sparse ||
    echo "pip could not install PyG's sampler: dgnn's numbers only" >&2
fi

for mode in sample prefetch inline; do
  "$build/bench/bench_sampling" "$graph" "$mode" "$batch" "$fanouts" "$feat" "$hidden" "$epochs" \
    | tee /dev/stderr | tail -1 > "$work/dgnn-$mode.json"
done
if have_pyg; then
  for mode in sample train; do
    "$venv/bin/python" "$here/bench/bench_sampling_pyg.py" "$graph" "$mode" "$batch" "$fanouts" \
      "$feat" "$hidden" "$epochs" "$threads" | tail -1 > "$work/pyg-$mode.json"
  done
fi

python3 - "$work" "$batch" "$fanouts" "$feat" "$hidden" "$threads" <<'PY'
import json, os, sys
work, batch, fanouts, feat, hidden, threads = sys.argv[1:]
load = lambda n: json.load(open(os.path.join(work, n))) if os.path.exists(os.path.join(work, n)) else None
ds, dp, di = load("dgnn-sample.json"), load("dgnn-prefetch.json"), load("dgnn-inline.json")
ps, pt = load("pyg-sample.json"), load("pyg-train.json")
print(f"\nbatch {batch}, fanouts {fanouts} (input layer first), {feat} features, hidden {hidden}, "
      f"{threads} threads")
print(f"{'':38} {'dgnn':>12} {'PyG':>12} {'dgnn/PyG':>9}")
def row(name, a, b, unit, higher_better=True):
    if b is None:
        print(f"{name:38} {a:>12.2f} {'-':>12} {'-':>9}  {unit}")
        return
    r = a / b if higher_better else b / a
    print(f"{name:38} {a:>12.2f} {b:>12.2f} {r:>8.2f}x  {unit}")
row("sampled edges/s (sampler alone)", ds["sampled_edges_per_s"] / 1e6,
    ps and ps["sampled_edges_per_s"] / 1e6, "M edges/s")
row("edges/s, batches with feature rows", ds["batch_edges_per_s"] / 1e6,
    ps and ps["batch_edges_per_s"] / 1e6, "M edges/s")
row("sampled edges per epoch", ds["sampled_edges_per_epoch"] / 1e6,
    ps and ps["sampled_edges_per_epoch"] / 1e6, "M (dgnn re-draws the seeds per layer, as DGL)")
row("train epoch, dgnn prefetching", dp["epoch_ms"], pt and pt["epoch_ms"], "ms (ratio: speedup)",
    higher_better=False)
row("train epoch, dgnn sampling inline", di["epoch_ms"], pt and pt["epoch_ms"],
    "ms (ratio: speedup)", higher_better=False)
hidden_ms = dp["sample_ms"] - dp["sample_wait_ms"]
print(f"prefetch: {dp['sample_ms']:.1f} ms of sampling per epoch, {hidden_ms:.1f} ms hidden "
      f"({100 * hidden_ms / max(dp['sample_ms'], 1e-9):.0f}%); epoch {di['epoch_ms']:.1f} -> "
      f"{dp['epoch_ms']:.1f} ms ({di['epoch_ms'] / dp['epoch_ms']:.2f}x)")
if ps is None:
    print("PyG: not installed (see above); no ratios")
PY
