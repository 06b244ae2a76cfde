#!/usr/bin/env bash
# dgnn against PyTorch Geometric / PyTorch Geometric Temporal on this machine's CPU, in one run:
# the same model, data and hyperparameters on both sides, one row per workload with the median
# training epoch of each (ratio PyG / dgnn: how many times faster dgnn is) and test accuracy
# (static) or test AUC (temporal link prediction) side by side.
#   bench/peers.sh [build-dir]
# Rows: GCN on Cora (Planetoid split), GCN on a generated 100k-vertex SBM (128 features, hidden
# 128), EvolveGCN-O on bitcoin-alpha (1,200,000 s cumulative snapshots), GCRN on a generated
# evolving SBM. The PyG side is bench/peers_pyg.py.
# PyG lives in a private venv, BUILD/peers-venv, made on first use with pip (torch from PyPI,
# torch_geometric, torch-geometric-temporal --no-deps, and torch-scatter + torch-sparse built from
# source with --no-build-isolation: EvolveGCNO imports torch_sparse; ~30 min on 2 cores).
# PEERS_VENV=DIR reuses another venv. A side that cannot run prints why and the row goes on.
# THREADS (default: all cores) is both sides' thread count (OMP_NUM_THREADS / torch threads).
# Sizes: EPOCHS_CORA (200), EPOCHS_BIG (5), EPOCHS_TEMPORAL (3), EVO_VERTICES (10000).
# ROWS (default: cora,gat,big,btc,evo) picks the workloads to run, e.g. ROWS=evo for GCRN alone.
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="$(cd "${1:-$here/build}" && pwd)"
dgnn="$build/dgnn"
data="${DGNN_DATASETS:-$here/datasets}"
threads="${THREADS:-$(nproc)}"
export OMP_NUM_THREADS="$threads"
ep_cora="${EPOCHS_CORA:-200}" ep_big="${EPOCHS_BIG:-5}" ep_temp="${EPOCHS_TEMPORAL:-3}"
evo_n="${EVO_VERTICES:-10000}"
rows=",${ROWS:-cora,gat,big,btc,evo},"
want() { [[ "$rows" == *",$1,"* ]]; }
venv="${PEERS_VENV:-$build/peers-venv}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
py="$venv/bin/python"

have_pyg() {
  "$py" -c "import torch_geometric, torch_sparse; \
from torch_geometric_temporal.nn.recurrent import EvolveGCNO, GConvLSTM" 2>/dev/null
}
if ! have_pyg; then
  echo "setting up PyG + PyG-Temporal in $venv (once; torch-sparse compiles for a while)..." >&2
  { [ -x "$py" ] || python3 -m venv "$venv"; } &&
    "$venv/bin/pip" install -q torch torch_geometric numpy &&
    MAX_JOBS="$threads" "$venv/bin/pip" install -q --no-build-isolation torch-scatter torch-sparse &&
    "$venv/bin/pip" install -q --no-deps torch-geometric-temporal &&
    "$venv/bin/pip" install -q decorator networkx ||
    echo "pip could not install PyG / PyG-Temporal: dgnn's side only" >&2
fi
pyg_ok=0; have_pyg && pyg_ok=1

# dgnn NAME ARGS...: a `dgnn train` run whose --log-json final line lands in $work/NAME.dgnn.
run_dgnn() {
  local name="$1"; shift
  echo "[$name] dgnn train $*" >&2
  "$dgnn" train "$@" --threads "$threads" --quiet --log-json "$work/$name.log" \
      >"$work/$name.dgnn.out" 2>&1 &&
    python3 - "$work/$name.log" >"$work/$name.dgnn" <<'PY' ||
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
ep = [r["time_ms"] for r in rows if not r.get("final")]
fin = rows[-1]
# Static runs: the median epoch leaves out the first (as the PyG side does, whose first epoch
# builds GCNConv's cached normalisation); temporal runs: all epochs on both sides.
static = fin.get("test_acc") is not None
med = statistics.median(ep[1:] if static and len(ep) > 2 else ep)
print(json.dumps({"epoch_ms": med, "test_acc": fin.get("test_acc"), "test_auc": fin.get("test_auc")}))
PY
    { echo "dgnn failed: $(grep -m1 -i error "$work/$name.dgnn.out" || tail -1 "$work/$name.dgnn.out")" \
        >"$work/$name.dgnn.err"; rm -f "$work/$name.dgnn"; }
}
run_pyg() {
  local name="$1"; shift
  if [ "$pyg_ok" != 1 ]; then echo "PyG not installed (see above)" >"$work/$name.pyg.err"; return; fi
  echo "[$name] peers_pyg.py $*" >&2
  "$py" -W ignore "$here/bench/peers_pyg.py" "$@" >"$work/$name.pyg.out" 2>&1 &&
    tail -1 "$work/$name.pyg.out" >"$work/$name.pyg" ||
    { echo "PyG failed: $(tail -1 "$work/$name.pyg.out")" >"$work/$name.pyg.err"; rm -f "$work/$name.pyg"; }
}

t0=$(date +%s)
# 1. GCN on Cora, the Planetoid split from the folder.
cora="$data/cora"
want cora && run_dgnn cora --graph "$cora" --model gcn --hidden 16 --dropout 0.5 --lr 0.01 \
  --weight-decay 5e-4 --epochs "$ep_cora"
want cora && run_pyg cora gcn "$cora" "$ep_cora" 16 0.5 0.01 5e-4 "$threads"

# 1b. GAT on Cora: hidden 64 = 4 heads of 16, one output head, dropout 0.6 on features and on
#     attention coefficients, ReLU between the layers on both sides.
want gat && run_dgnn gat --graph "$cora" --model gat --hidden 64 --dropout 0.6 --lr 0.005 \
  --weight-decay 5e-4 --epochs "$ep_cora"
want gat && run_pyg gat gat "$cora" "$ep_cora" 64 0.6 0.005 5e-4 "$threads"

# 2. GCN on a generated 100k-vertex SBM; the split is written into the folder so both sides
#    read the same train / val / test ids.
big="$work/sbm100k"
want big && "$dgnn" generate sbm --vertices 100000 --classes 8 --avg-degree 10 --homophily 0.8 \
  --features 128 --seed 1 --out "$big" >/dev/null
want big && python3 - "$big" <<'PY'
import random, sys
d = sys.argv[1]
ids = list(range(100000))
random.Random(1).shuffle(ids)
for name, part in (("train", ids[:60000]), ("val", ids[60000:80000]), ("test", ids[80000:])):
    open(f"{d}/{name}.txt", "w").write("\n".join(map(str, sorted(part))) + "\n")
PY
want big && run_dgnn big --graph "$big" --model gcn --hidden 128 --dropout 0.5 --lr 0.01 \
  --weight-decay 5e-4 --epochs "$ep_big"
want big && run_pyg big gcn "$big" "$ep_big" 128 0.5 0.01 5e-4 "$threads"

# 3. EvolveGCN-O on bitcoin-alpha: 1,200,000 s buckets, cumulative snapshots, degree-bucket
#    features (16 columns), hidden 16 (PyG-Temporal's EvolveGCNO keeps its input width).
#    Temporal rows: no weight decay on either side (PyG's Adam has none; dgnn's default is 5e-4).
btc="$data/bitcoin-alpha/soc-sign-bitcoinalpha.csv.gz"
want btc && run_dgnn btc --graph "$btc" --time-col 3 --snapshot-seconds 1200000 --cumulative \
  --model evolvegcn-o --hidden 16 --epochs "$ep_temp" --bptt 5 --neg-train 5 --neg-eval 100 \
  --weight-decay 0
want btc && run_pyg btc evolvegcn-o "$btc" 3 1200000 1 degree "$ep_temp" 16 5 5 100 "$threads"

# 4. GCRN on a generated evolving SBM (per-bucket snapshots, 32 static features).
evo="$work/evo"
want evo && "$dgnn" generate evolving-sbm --vertices "$evo_n" --snapshots 20 --classes 8 --avg-degree 8 \
  --homophily 0.8 --drift 0.05 --features 32 --seed 1 --out "$evo" >/dev/null
want evo && run_dgnn evo --graph "$evo" --model gcrn --hidden 32 --epochs "$ep_temp" --bptt 5 \
  --neg-train 5 --neg-eval 20 --weight-decay 0
want evo && run_pyg evo gcrn "$evo/edges.txt" 2 1 0 "$evo/features.npy" "$ep_temp" 32 5 5 20 "$threads" 1

python3 - "$work" "$threads" "$(( $(date +%s) - t0 ))" "$rows" <<'PY'
import json, os, sys
work, threads, secs, wanted = sys.argv[1:]
def get(name, side):
    p = os.path.join(work, f"{name}.{side}")
    if os.path.exists(p):
        return json.load(open(p)), None
    e = os.path.join(work, f"{name}.{side}.err")
    return None, open(e).read().strip() if os.path.exists(e) else "did not run"
rows = [("cora", "GCN, Cora (Planetoid split)", "test_acc"),
        ("gat", "GAT, Cora (4 heads x 16)", "test_acc"),
        ("big", "GCN, SBM 100k x 128, hidden 128", "test_acc"),
        ("btc", "EvolveGCN-O, bitcoin-alpha", "test_auc"),
        ("evo", "GCRN, evolving SBM", "test_auc")]
rows = [r for r in rows if f",{r[0]}," in wanted]
try:
    load = os.getloadavg()[0]
except OSError:
    load = float("nan")
print(f"\n{threads} threads each side; load average {load:.2f} at the end; {secs} s in all")
print(f"{'workload':34} {'dgnn ms':>9} {'PyG ms':>9} {'PyG/dgnn':>8}   {'metric':8} "
      f"{'dgnn':>6} {'PyG':>6}")
notes = []
for name, label, metric in rows:
    d, de = get(name, "dgnn")
    p, pe = get(name, "pyg")
    f = lambda r, k, fmt: format(r[k], fmt) if r and r.get(k) is not None else "-"
    ratio = f"{p['epoch_ms'] / d['epoch_ms']:.2f}x" if d and p else "-"
    print(f"{label:34} {f(d, 'epoch_ms', '9.1f'):>9} {f(p, 'epoch_ms', '9.1f'):>9} {ratio:>8}   "
          f"{metric:8} {f(d, metric, '.3f'):>6} {f(p, metric, '.3f'):>6}")
    notes += [f"  {label}: {e}" for e in (de, pe) if e]
if notes:
    print("not run:\n" + "\n".join(notes))
PY
