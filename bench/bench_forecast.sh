#!/usr/bin/env bash
# Forecasting against PyTorch Geometric Temporal on this machine's CPU, in one run: T-GCN with
# the same lags, width, split, optimiser and epochs on both sides; one row per dataset with the
# median training epoch of each (ratio PyG-T / dgnn: how many times faster dgnn is) and the test
# MSE side by side (difference in percent of PyG-T's), beside the predict-0 MSE of the same test.
#   bench/bench_forecast.sh [build-dir]
# Rows: chickenpox (PyG-Temporal's file, 4 lags, 80/20 split as its examples, EPOCHS_SMALL = 50
# epochs), and a generated 10k-vertex diffusion signal (dgnn generate diffusion, 200 steps,
# EPOCHS_BIG = 5). Hidden 32, Adam lr 0.01, no weight decay, the whole training span per
# optimiser step (PyG-T's examples' loop; dgnn's --bptt 0), the state carried across steps.
# The models differ in one place: PyG-T's TGCN convolves the input alone (GCNConv on x, a Linear
# on [conv(x), h]); dgnn's tgcn convolves the state too (the T-GCN authors' code), so dgnn does
# more aggregation per step.
# The PyG side (bench/forecast_pyg.py) lives in a private venv, BUILD/peers-venv (PEERS_VENV=DIR
# to reuse another), made on first use with pip: torch, torch_geometric, numpy, and
# torch-geometric-temporal without its dependencies (TGCN needs none of torch-sparse's).
# THREADS (default: all cores) is both sides' thread count.
set -uo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="$(cd "${1:-$here/build}" && pwd)"
dgnn="$build/dgnn"
threads="${THREADS:-$(nproc)}"
export OMP_NUM_THREADS="$threads"
ep_small="${EPOCHS_SMALL:-50}" ep_big="${EPOCHS_BIG:-5}"
venv="${PEERS_VENV:-$build/peers-venv}"
py="$venv/bin/python"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

have_pygt() {
  "$py" -c "import importlib.util, torch, torch_geometric; \
assert importlib.util.find_spec('torch_geometric_temporal')" 2>/dev/null
}
if ! have_pygt; then
  echo "setting up PyG + PyG-Temporal in $venv (once)..." >&2
  { [ -x "$py" ] || python3 -m venv "$venv"; } &&
    "$venv/bin/pip" install -q torch torch_geometric numpy &&
    "$venv/bin/pip" install -q --no-deps torch-geometric-temporal ||
    echo "pip could not install PyG-Temporal: dgnn's side only" >&2
fi
pyg_ok=0; have_pygt && pyg_ok=1

# run NAME SOURCE EPOCHS: both sides on one dataset; results in $work/NAME.{dgnn,pyg}.
run() {
  local name="$1" source="$2" epochs="$3"
  echo "[$name] dgnn train --graph $source --task forecast --model tgcn ..." >&2
  "$dgnn" train --graph "$source" --task forecast --model tgcn --lags 4 --hidden 32 --lr 0.01 \
      --weight-decay 0 --epochs "$epochs" --train-frac 0.8 --val-frac 0 --threads "$threads" \
      --quiet --log-json "$work/$name.log" >"$work/$name.dgnn.out" 2>&1 &&
    python3 - "$work/$name.log" >"$work/$name.dgnn" <<'PY' ||
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
fin = rows[-1]
print(json.dumps({"epoch_ms": fin["median_epoch_ms"], "test_mse": fin["test_mse"],
                  "zero_mse": fin["naive_zero"]["mse"], "last_mse": fin["naive_last"]["mse"]}))
PY
    { echo "dgnn failed: $(tail -1 "$work/$name.dgnn.out")" >"$work/$name.dgnn.err"; rm -f "$work/$name.dgnn"; }
  if [ "$pyg_ok" != 1 ]; then echo "PyG-Temporal not installed" >"$work/$name.pyg.err"; return; fi
  echo "[$name] forecast_pyg.py $source" >&2
  "$py" -W ignore "$here/bench/forecast_pyg.py" "$source" 4 32 "$epochs" 0.01 0.8 "$threads" \
      >"$work/$name.pyg.out" 2>&1 && tail -1 "$work/$name.pyg.out" >"$work/$name.pyg" ||
    { echo "PyG-T failed: $(tail -1 "$work/$name.pyg.out")" >"$work/$name.pyg.err"; rm -f "$work/$name.pyg"; }
}

t0=$(date +%s)
run chickenpox "$here/datasets/chickenpox/chickenpox.json.gz" "$ep_small"
"$dgnn" generate diffusion --vertices 10000 --steps 200 --seed 1 --out "$work/diffusion" >/dev/null
run diffusion "$work/diffusion" "$ep_big"

python3 - "$work" "$threads" "$(( $(date +%s) - t0 ))" <<'PY'
import json, os, sys
work, threads, secs = sys.argv[1:]
def get(name, side):
    p = os.path.join(work, f"{name}.{side}")
    if os.path.exists(p):
        return json.load(open(p)), None
    e = os.path.join(work, f"{name}.{side}.err")
    return None, open(e).read().strip() if os.path.exists(e) else "did not run"
print(f"\nT-GCN forecasting, PyG-Temporal vs dgnn, {threads} threads, median training epoch "
      f"(the whole training span), test MSE ({secs} s)")
print(f"{'dataset':<34} {'PyG-T ms':>10} {'dgnn ms':>10} {'PyG-T/dgnn':>11} "
      f"{'PyG-T mse':>10} {'dgnn mse':>9} {'diff':>7} {'predict-0':>10} {'last value':>10}")
names = {"chickenpox": "chickenpox (20 x 521, lags 4)",
         "diffusion": "diffusion 10k x 200 (generated)"}
for name, label in names.items():
    d, de = get(name, "dgnn")
    p, pe = get(name, "pyg")
    f = lambda x, w, fmt: format(x, fmt).rjust(w) if x is not None else "-".rjust(w)
    ratio = p["epoch_ms"] / d["epoch_ms"] if d and p else None
    diff = 100 * (d["test_mse"] - p["test_mse"]) / p["test_mse"] if d and p else None
    print(f"{label:<34} {f(p and p['epoch_ms'], 10, '.1f')} {f(d and d['epoch_ms'], 10, '.1f')} "
          f"{f(ratio, 10, '.2f')}x {f(p and p['test_mse'], 10, '.4f')} "
          f"{f(d and d['test_mse'], 9, '.4f')} {f(diff, 6, '+.1f')}% "
          f"{f(d and d['zero_mse'], 10, '.4f')} {f(d and d['last_mse'], 10, '.4f')}")
    for side, err in (("dgnn", de), ("PyG-T", pe)):
        if err:
            print(f"  {side}: {err}")
PY
