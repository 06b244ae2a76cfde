#!/usr/bin/env bash
# What temporal link prediction pays besides training (issue 20's ratios), in one run:
#  - eval / train: validation's eval_ms over the training epoch's time_ms, and the same per
#    scored pair (validation scores every edge with --neg-eval non-edges; training with
#    --neg-train), at the default --neg-eval 100; (val+test) / train: validation's and the
#    test's time (test_ms) together over the training epoch's (issue 20's target: <= 1);
#  - stored / whole: the snapshots as the trainer holds them (base + differences, a step whole
#    where that is cheaper) over every snapshot as its own CSR;
#  - peak RSS, and the tape per BPTT step: the rise of peak RSS from --bptt 1 to --bptt B over
#    B - 1 steps, in floats per vertex and hidden unit (what one more step of the window holds).
#   bench/bench_temporal_cost.sh [build-dir] [vertices] [snapshots] [models] [hidden] [bptt]
#                                [repeats]
# Defaults: 50000 vertices, 30 snapshots (issue 20's graph), gcrn,tgcn,evolvegcn-o, hidden 16,
# bptt 5, all cores, 3 repeats. Times move with the machine's load (on a shared 2-core VM one
# run's (val+test)/train moved from 0.64 to 0.91): each model runs `repeats` times and the row
# is the run with the median (val+test)/train, its range beside it.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${1:-$here/build}"
vertices="${2:-50000}"
snapshots="${3:-30}"
models="${4:-gcrn,tgcn,evolvegcn-o}"
hidden="${5:-16}"
bptt="${6:-5}"
repeats="${7:-3}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
"$build/dgnn" generate evolving-sbm --vertices "$vertices" --snapshots "$snapshots" \
  --features 16 --seed 1 --out "$work/g" >/dev/null
python3 - "$build/dgnn" "$work" "$vertices" "$snapshots" "$models" "$hidden" "$bptt" \
  "$repeats" <<'PY'
import json, os, re, sys

dgnn, work, n, t, models, hidden, bptt, repeats = sys.argv[1:]
n, t, hidden, bptt, repeats = int(n), int(t), int(hidden), int(bptt), max(int(repeats), 1)
threads = str(os.cpu_count() or 1)


def run(model, window):
    """One epoch; (log rows, stdout, peak RSS in bytes) of the child alone (wait4's rusage)."""
    log = os.path.join(work, f"{model}-{window}.jsonl")
    out = os.path.join(work, f"{model}-{window}.txt")
    args = [dgnn, "train", "--graph", os.path.join(work, "g"), "--model", model, "--hidden",
            str(hidden), "--epochs", "1", "--bptt", str(window), "--threads", threads,
            "--log-json", log]
    pid = os.fork()
    if pid == 0:
        fd = os.open(out, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
        os.dup2(fd, 1)
        os.dup2(fd, 2)
        os.execv(dgnn, args)
    _, status, usage = os.wait4(pid, 0)
    text = open(out).read()
    if status != 0:
        sys.exit(f"bench_temporal_cost: {' '.join(args)} failed:\n{text}")
    return [json.loads(l) for l in open(log)], text, usage.ru_maxrss * 1024


def both(rows):
    return (rows[0]["eval_ms"] + rows[-1]["test_ms"]) / rows[0]["time_ms"]


print(f"evolving SBM: {n} vertices, {t} snapshots, 16 features; hidden {hidden}, one epoch, "
      f"--bptt {bptt}, {threads} threads, median of {repeats}")
print(f"{'model':<12} {'train ms':>9} {'val ms':>9} {'eval/train':>10} {'per pair':>9} "
      f"{'(val+test)/train':>16} {'range':>11} {'stored/whole':>12} {'peak RSS':>9} "
      f"{'tape/step':>10}")
for model in models.split(","):
    runs = sorted((run(model, bptt) for _ in range(repeats)), key=lambda r: both(r[0]))
    rows, text, rss = runs[len(runs) // 2]
    spread = f"{both(runs[0][0]):.2f}-{both(runs[-1][0]):.2f}"
    _, _, rss1 = run(model, 1)
    epoch, final = rows[0], rows[-1]
    m = re.search(r"base \+ differences.*?: ([\d.]+) MB instead of ([\d.]+) MB", text)
    stored, whole = (float(m.group(1)), float(m.group(2))) if m else (float("nan"),) * 2
    s = final["settings"]
    st = re.search(r"steps train/val/test (\d+)/(\d+)/(\d+)", text)
    train_steps, val_steps = int(st.group(1)), int(st.group(2))
    # Pairs per epoch (edges per step are about equal here): each edge and its negatives.
    train_pairs = (1 + s["neg_train"]) * train_steps
    val_pairs = (1 + s["neg_eval"]) * val_steps
    ratio = epoch["eval_ms"] / epoch["time_ms"]
    per_pair = ratio * train_pairs / val_pairs
    tape = (rss - rss1) / max(bptt - 1, 1) / (n * hidden * 4)
    print(f"{model:<12} {epoch['time_ms']:9.0f} {epoch['eval_ms']:9.0f} {ratio:10.2f} "
          f"{per_pair:9.2f} {both(rows):16.2f} {spread:>11} {stored / whole:12.2f} "
          f"{rss / 1e9:8.2f}G {tape:10.1f}")
print("per pair: eval / train time per scored pair (edges per step cancel); tape/step: floats "
      "per vertex and hidden unit")
PY
