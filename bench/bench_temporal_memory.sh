#!/usr/bin/env bash
# Memory of temporal training against its size (issue 20, item 3), in one run: for each model
# and each vertices x snapshots x hidden width, one epoch's peak RSS at --bptt B, and the tape
# one more BPTT step holds: the rise of peak RSS from --bptt 1 to --bptt B over B - 1 steps, in
# floats per vertex and hidden unit, beside the floor, the values the model's backward reads per
# step (16 input features, --layers 2, so dims {16, H, H}):
#   gcrn         (H < 16 ? H : 16 + H) for the GCN layer (its aggregate when it multiplies
#                after, its ReLU output), 4H LSTM gates, H state h, H cell c
#   tgcn         3H input gates, 3H state gates, H state
#   evolvegcn-o  H for the first layer's ReLU output, H for the output the link head reads
#   bench/bench_temporal_memory.sh [build-dir] [sizes] [models] [bptt]
# sizes: comma-separated VERTICESxSNAPSHOTSxHIDDEN (default 20000x30x16,50000x30x16,50000x30x32,
# 50000x60x16); models: default gcrn,tgcn,evolvegcn-o; bptt: default 5. Peak RSS is of the
# child alone (wait4); the whole run takes a few minutes on 2 cores.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${1:-$here/build}"
sizes="${2:-20000x30x16,50000x30x16,50000x30x32,50000x60x16}"
models="${3:-gcrn,tgcn,evolvegcn-o}"
bptt="${4:-5}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
python3 - "$build/dgnn" "$work" "$sizes" "$models" "$bptt" <<'PY'
import os, subprocess, sys

dgnn, work, sizes, models, bptt = sys.argv[1:]
bptt = int(bptt)
threads = str(os.cpu_count() or 1)
features = 16


def floor(model, h):
    f = features
    if model == "gcrn":
        return ((h if h < f else f + h) + 6 * h) / h
    if model == "tgcn":
        return 7.0
    if model.startswith("evolvegcn"):
        return 2.0
    return float("nan")


def peak(graph, model, hidden, window):
    args = [dgnn, "train", "--graph", graph, "--model", model, "--hidden", str(hidden),
            "--epochs", "1", "--bptt", str(window), "--threads", threads]
    pid = os.fork()
    if pid == 0:
        fd = os.open(os.devnull, os.O_WRONLY)
        os.dup2(fd, 1)
        os.dup2(fd, 2)
        os.execv(dgnn, args)
    _, status, usage = os.wait4(pid, 0)
    if status != 0:
        sys.exit(f"bench_temporal_memory: {' '.join(args)} failed")
    return usage.ru_maxrss * 1024


print(f"one epoch, --bptt {bptt} (tape from --bptt 1), {features} features, {threads} threads")
print(f"{'model':<12} {'vertices':>8} {'snaps':>5} {'hidden':>6} {'peak RSS':>9} "
      f"{'tape/step':>9} {'floor':>6} {'tape/floor':>10}")
graphs = {}
for size in sizes.split(","):
    n, t, h = (int(x) for x in size.split("x"))
    graph = graphs.get((n, t))
    if graph is None:
        graph = os.path.join(work, f"g{n}x{t}")
        subprocess.run([dgnn, "generate", "evolving-sbm", "--vertices", str(n), "--snapshots",
                        str(t), "--features", str(features), "--seed", "1", "--out", graph],
                       check=True, stdout=subprocess.DEVNULL)
        graphs[(n, t)] = graph
    for model in models.split(","):
        rss = peak(graph, model, h, bptt)
        rss1 = peak(graph, model, h, 1)
        tape = (rss - rss1) / max(bptt - 1, 1) / (n * h * 4)
        fl = floor(model, h)
        print(f"{model:<12} {n:8d} {t:5d} {h:6d} {rss / 1e9:8.2f}G {tape:9.1f} {fl:6.1f} "
              f"{tape / fl:10.2f}")
print("tape/step and floor: floats per vertex and hidden unit held per BPTT step")
PY
