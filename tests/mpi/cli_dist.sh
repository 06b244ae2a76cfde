#!/usr/bin/env bash
# The dgnn executable under mpiexec, as a user runs it:
#  1. `train --parts 2` and `train --partition DIR` on 2 ranks log the 1-rank loss every epoch;
#  2. temporal training, vertex and snapshot strategies, on 2 ranks does too, and with a
#     temporal partition written once by `dgnn partition` on 2 ranks;
#  3. a missing part file on one rank brings the job down with that rank's message, no hang.
set -euo pipefail
dgnn="$1"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
export OMP_NUM_THREADS=1
run() { mpiexec -n 2 --oversubscribe "$@"; }
# The plans below check bytes, which no rate moves: they take fixed rates, timing nothing.
rates="$(cd "$(dirname "$0")/../data" && pwd)/plan_rates.json"

"$dgnn" generate sbm --vertices 800 --classes 4 --seed 2 --out "$work/g" >/dev/null
"$dgnn" train --graph "$work/g" --epochs 15 --seed 1 --quiet --log-json "$work/one.jsonl" >/dev/null
run "$dgnn" train --graph "$work/g" --epochs 15 --seed 1 --parts 2 --quiet \
  --log-json "$work/two.jsonl" --predictions "$work/pred.txt" >/dev/null
"$dgnn" partition --graph "$work/g" --parts 2 --seed 1 --out "$work/parts" >/dev/null
run "$dgnn" train --graph "$work/g" --epochs 15 --seed 1 --partition "$work/parts" --quiet \
  --log-json "$work/dir.jsonl" >/dev/null

# A checkpoint written on 2 ranks resumes on 3 (parameters are replicated; the partition is not
# part of the model): 6 + 9 epochs equal 15 uninterrupted ones.
run "$dgnn" train --graph "$work/g" --epochs 6 --seed 1 --parts 2 --quiet --save "$work/half.ckpt" \
  --log-json "$work/first.jsonl" >/dev/null
mpiexec -n 3 --oversubscribe "$dgnn" train --graph "$work/g" --epochs 15 --seed 1 --parts 3 \
  --quiet --load "$work/half.ckpt" --log-json "$work/rest.jsonl" >/dev/null

python3 - "$work" <<'PY'
import json, sys
work = sys.argv[1]
def losses(name):
    rows = [json.loads(l) for l in open(f"{work}/{name}.jsonl")]
    return [r["loss"] for r in rows if not r.get("final")], rows[-1]
one, _ = losses("one")
for name in ("two", "dir"):
    got, final = losses(name)
    assert len(got) == len(one) == 15, (name, len(got))
    for e, (a, b) in enumerate(zip(got, one), 1):
        assert abs(a - b) <= 1e-4 * abs(b), f"{name}: epoch {e}: {a} vs {b}"
    assert final["settings"]["ranks"] == 2 and final["bytes_sent_per_epoch"] > 0, final
    # Every rank's peak memory (after loading, at the end) and input bytes, one slot per rank:
    # rank 0 read the graph; every rank holds memory; a peak never falls.
    peak, loaded, read = (final[k] for k in ("rank_peak_bytes", "rank_loaded_peak_bytes",
                                              "rank_read_bytes"))
    assert len(peak) == len(loaded) == len(read) == 2, final
    assert read[0] > 0 and all(p >= l > 0 for p, l in zip(peak, loaded)), final
_, final_one = losses("one")
assert len(final_one["rank_peak_bytes"]) == len(final_one["rank_read_bytes"]) == 1, final_one
first, _ = losses("first")
rest, _ = losses("rest")
joined = first + rest
assert len(joined) == 15, len(joined)
for e, (a, b) in enumerate(zip(joined, one), 1):
    assert abs(a - b) <= 1e-4 * abs(b), f"resumed 2 -> 3 ranks: epoch {e}: {a} vs {b}"
preds = open(f"{work}/pred.txt").read().split("\n")
assert len([p for p in preds if p]) == 800, len(preds)
print("distributed CLI runs, and a 2-rank checkpoint resumed on 3 ranks, match one process")
PY

# Temporal link prediction, vertex strategy: 2 ranks log the 1-rank loss every epoch.
"$dgnn" generate evolving-sbm --vertices 300 --snapshots 12 --classes 3 --seed 3 \
  --out "$work/evo" >/dev/null
"$dgnn" train --graph "$work/evo" --model gcrn --hidden 8 --epochs 4 --bptt 3 --quiet \
  --log-json "$work/t1.jsonl" >/dev/null
run "$dgnn" train --graph "$work/evo" --model gcrn --hidden 8 --epochs 4 --bptt 3 --quiet \
  --log-json "$work/t2.jsonl" >/dev/null
python3 - "$work" <<'PY'
import json, sys
work = sys.argv[1]
def losses(name):
    rows = [json.loads(l) for l in open(f"{work}/{name}.jsonl")]
    return [r["loss"] for r in rows if not r.get("final")], rows[-1]
one, _ = losses("t1")
two, final = losses("t2")
assert len(one) == len(two) == 4
assert len(final["rank_peak_bytes"]) == len(final["rank_read_bytes"]) == 2, final
assert min(final["rank_peak_bytes"]) > 0 and final["rank_read_bytes"][0] > 0, final
for e, (a, b) in enumerate(zip(two, one), 1):
    assert abs(a - b) <= 1e-4 * abs(b), f"temporal: epoch {e}: {a} vs {b}"
assert final["settings"]["ranks"] == 2 and "test_auc" in final, final
# The vertex strategy read the edge list in shards: nothing moved from rank 0, and each rank
# parsed part of the file (tests/mpi/test_temporal_load.cpp checks what each rank then holds).
mv = final["snapshot_moves"]
assert mv["snapshots"] == 0 and mv["meta_bytes"] == 0, mv
sr = final["sharded_read"]
assert 0 < sr["text_bytes"] <= sr["max_text_bytes"], sr
print("temporal link prediction on 2 ranks matches one process")
PY

# A temporal partition made once on the ranks of a job (PT-Scotch over the shards) and read by
# training with --partition DIR: the parts that `--parts 2 --partitioner ptscotch` computes when
# it starts (the same loss, bit for bit), the 1-rank loss; the manifest names the graph; a
# partition for another rank count, a damaged parts file and a static partition are one line.
run "$dgnn" partition --graph "$work/evo" --parts 2 --partitioner ptscotch --seed 1 \
  --out "$work/tparts" >"$work/tparts.out"
grep -q "read in shards by 2 ranks" "$work/tparts.out"
run "$dgnn" train --graph "$work/evo" --model gcrn --hidden 8 --epochs 4 --bptt 3 --quiet \
  --seed 1 --partition "$work/tparts" --log-json "$work/tdir.jsonl" >/dev/null
run "$dgnn" train --graph "$work/evo" --model gcrn --hidden 8 --epochs 4 --bptt 3 --quiet \
  --seed 1 --partitioner ptscotch --log-json "$work/tfly.jsonl" >/dev/null
"$dgnn" train --graph "$work/evo" --model gcrn --hidden 8 --epochs 4 --bptt 3 --quiet \
  --seed 1 --log-json "$work/tone.jsonl" >/dev/null
python3 - "$work" <<'PY'
import json, sys
work = sys.argv[1]
def run(name):
    rows = [json.loads(l) for l in open(f"{work}/{name}.jsonl")]
    return [r["loss"] for r in rows if not r.get("final")], rows[-1]
d, fd = run("tdir")
f, ff = run("tfly")
o, _ = run("tone")
assert d == f, (d, f)
assert fd["test_auc"] == ff["test_auc"], (fd["test_auc"], ff["test_auc"])
for e, (a, b) in enumerate(zip(d, o), 1):
    assert abs(a - b) <= 1e-4 * abs(b), f"--partition DIR: epoch {e}: {a} vs {b}"
s = fd["settings"]
assert s["partitioner"] == "dir" and s["partition"].endswith("tparts"), s
m = json.load(open(f"{work}/tparts/manifest.json"))
assert m["format"] == "dgnn-temporal-partition" and m["parts"] == 2, m
assert m["vertices"] == 300 and sum(r["vertices"] for r in m["ranks"]) == 300, m
assert 0 < m["edge_cut"] < m["union_edges"] and m["halo_vertices"] > 0, m
print("a temporal partition directory written on 2 ranks trains as --parts 2 does")
PY
expect_error() {  # expect_error PATTERN COMMAND...: a non-zero exit with PATTERN on one line
  local pattern="$1"; shift
  set +e
  local out
  out=$(timeout 60 "$@" 2>&1)
  local code=$?
  set -e
  [ "$code" -ne 0 ] && [ "$code" -ne 124 ] || { echo "exit code $code: $*"; exit 1; }
  echo "$out" | grep -q -- "$pattern" || { echo "no '$pattern' in: $out"; exit 1; }
}
t=(train --graph "$work/evo" --model gcrn --hidden 8 --epochs 1 --quiet)
expect_error "partitioned for 2 ranks, this job has 3" \
  mpiexec -n 3 --oversubscribe "$dgnn" "${t[@]}" --partition "$work/tparts"
expect_error "partitioned for 2 ranks, this job has 1" "$dgnn" "${t[@]}" --partition "$work/tparts"
expect_error "the parts are read from --partition" \
  mpiexec -n 2 --oversubscribe "$dgnn" "${t[@]}" --partition "$work/tparts" --partitioner metis
expect_error "holds a partition of a static graph" \
  mpiexec -n 2 --oversubscribe "$dgnn" "${t[@]}" --partition "$work/parts"
# Other vertex ids (the same edges, every id + 1000): made for another graph's vertices.
awk '/^#/ { next } { $1 += 1000; $2 += 1000; print }' "$work/evo/edges.txt" >"$work/shifted.txt"
expect_error "run dgnn partition again" mpiexec -n 2 --oversubscribe "$dgnn" train \
  --graph "$work/shifted.txt" --time-col 2 --snapshot-seconds 1 --model gcrn --hidden 8 --epochs 1 \
  --quiet --partition "$work/tparts"
cp -r "$work/tparts" "$work/tbad"
printf 'x' >>"$work/tbad/parts.bin"
expect_error "tbad/parts.bin: .* damaged or truncated" \
  mpiexec -n 2 --oversubscribe "$dgnn" "${t[@]}" --partition "$work/tbad"
echo "temporal --partition errors: one line each"

# Mini-batch training on 2 ranks: neighbours and features of the other rank's vertices come from
# it; prefetch on and off give the same numbers, and it learns.
run "$dgnn" train --graph "$work/g" --model sage --batch-size 32 --fanouts 5,5 --epochs 6 \
  --seed 1 --parts 2 --quiet --log-json "$work/mb.jsonl" >/dev/null
run "$dgnn" train --graph "$work/g" --model sage --batch-size 32 --fanouts 5,5 --epochs 6 \
  --seed 1 --parts 2 --quiet --no-prefetch --log-json "$work/mb_sync.jsonl" >/dev/null
python3 - "$work" <<'PY'
import json, sys
work = sys.argv[1]
rows = [json.loads(l) for l in open(f"{work}/mb.jsonl")]
sync = [json.loads(l) for l in open(f"{work}/mb_sync.jsonl")]
epochs, final = rows[:-1], rows[-1]
assert len(epochs) == 6 and final["settings"]["ranks"] == 2, final
assert [r["loss"] for r in epochs] == [r["loss"] for r in sync[:-1]], "prefetch changed the numbers"
assert all(r["sample_bytes_sent"] > 0 and r["steps"] >= 5 for r in epochs), epochs[0]
assert final["test_acc"] > 0.6, final
print(f"mini-batch on 2 ranks: test accuracy {final['test_acc']:.3f}")
PY
# Temporal link prediction, snapshot strategy: 2 ranks log the 1-rank loss every epoch for a
# per-vertex recurrence (GCRN) and a weight-evolving model whose summary spans all vertices
# (EvolveGCN-H), with the split and bytes filled; more ranks than snapshots is one line.
"$dgnn" train --graph "$work/evo" --model evolvegcn-h --hidden 8 --epochs 4 --bptt 3 --quiet \
  --log-json "$work/h1.jsonl" >/dev/null
for m in gcrn evolvegcn-h; do
  run "$dgnn" train --graph "$work/evo" --model $m --hidden 8 --epochs 4 --bptt 3 \
    --strategy snapshot --quiet --log-json "$work/s-$m.jsonl" >/dev/null
done
# Rank 0's read and moves, asked for: the same numbers.
run -x DGNN_TEMPORAL_READ=rank0 "$dgnn" train --graph "$work/evo" --model gcrn --hidden 8 \
  --epochs 4 --bptt 3 --strategy snapshot --quiet --log-json "$work/s0-gcrn.jsonl" >/dev/null
python3 - "$work" <<'PY'
import json, sys
work = sys.argv[1]
def rows(name):
    r = [json.loads(l) for l in open(f"{work}/{name}.jsonl")]
    return [x for x in r if not x.get("final")], r[-1]
for ref, got in (("t1", "s-gcrn"), ("h1", "s-evolvegcn-h")):
    one, _ = rows(ref)
    two, final = rows(got)
    assert len(one) == len(two) == 4
    for e, (a, b) in enumerate(zip(two, one), 1):
        assert abs(a["loss"] - b["loss"]) <= 1e-4 * abs(b["loss"]), f"{got}: epoch {e}: {a} vs {b}"
        assert a["bytes_sent"] > 0 and a["max_bytes_sent"] > 0, a
        assert a["comm_ms"] > 0 and "wait_ms" in a and a["compute_ms"] > 0, a
    s = final["settings"]
    assert s["ranks"] == 2 and s["strategy"] == "snapshot" and "test_auc" in final, final
    # Read in shards: nothing moved from rank 0, and each rank parsed part of the file
    # (tests/mpi/test_temporal_load.cpp checks the steps each rank then holds).
    mv = final["snapshot_moves"]
    assert mv["snapshots"] == 0 and mv["meta_bytes"] == 0, mv
    sr = final["sharded_read"]
    assert 0 < sr["text_bytes"] <= sr["max_text_bytes"], sr
# Rank 0's read: rank 1 received only its own steps' snapshots, fewer than all of them, and
# trained to the same bits.
shard, _ = rows("s-gcrn")
rank0, final = rows("s0-gcrn")
assert [r["loss"] for r in shard] == [r["loss"] for r in rank0], (shard, rank0)
mv, s = final["snapshot_moves"], final["settings"]
assert 0 < mv["snapshots"] < s["snapshots"] and 0 < mv["bytes"] <= mv["whole_bytes"], mv
assert "sharded_read" not in final, final
print("temporal link prediction, snapshot strategy, on 2 ranks matches one process")
PY
# `dgnn plan` on the same temporal graph predicts the bytes those 2-rank runs sent: the snapshot
# strategy's every epoch, the vertex strategy's first (later epochs draw other negatives).
for m in gcrn evolvegcn-h; do
  "$dgnn" plan --graph "$work/evo" --model $m --hidden 8 --bptt 3 --ranks 2 --network shm \
    --threads-per-rank 1 --rates "$rates" --json > "$work/plan-$m.json"
done
python3 - "$work" <<'PY'
import json, sys
work = sys.argv[1]
def epochs(name):
    return [json.loads(l) for l in open(f"{work}/{name}.jsonl") if not json.loads(l).get("final")]
def predicted(model, strategy):
    rows = json.load(open(f"{work}/plan-{model}.json"))["rows"]
    return next(r for r in rows if r["ranks"] == 2 and r["strategy"] == strategy)
snap = predicted("gcrn", "snapshot")
assert all(e["bytes_sent"] == snap["bytes_per_epoch"] for e in epochs("s-gcrn")), (snap, epochs("s-gcrn"))
vert = predicted("gcrn", "vertex")
assert epochs("t2")[0]["bytes_sent"] == vert["bytes_per_epoch"], (vert, epochs("t2")[0])
h = predicted("evolvegcn-h", "snapshot")
assert all(e["bytes_sent"] == h["bytes_per_epoch"] for e in epochs("s-evolvegcn-h")), h
hv = predicted("evolvegcn-h", "vertex")
assert not hv["feasible"] and "top-k" in hv["why"], hv
print(f"dgnn plan predicts the temporal runs' bytes exactly: vertex {vert['bytes_per_epoch']}, "
      f"snapshot {snap['bytes_per_epoch']} (GCRN), {h['bytes_per_epoch']} (EvolveGCN-H)")
PY
# GAT and GCN on 2 ranks: `dgnn plan` predicts the bytes they send (the halo rows each way, per
# layer, and the gradient all-reduce with its flags and the loss).
run "$dgnn" train --graph "$work/g" --model gat --hidden 16 --epochs 2 --seed 1 --parts 2 \
  --quiet --log-json "$work/gat2.jsonl" >/dev/null
for m in gat gcn; do
  "$dgnn" plan --graph "$work/g" --model $m --hidden 16 --ranks 2 --network shm \
    --threads-per-rank 1 --rates "$rates" --json > "$work/plan-$m.json"
done
python3 - "$work" <<'PY'
import json, sys
work = sys.argv[1]
for model, log in (("gat", "gat2"), ("gcn", "two")):
    runs = [json.loads(l) for l in open(f"{work}/{log}.jsonl")]
    plan = json.load(open(f"{work}/plan-{model}.json"))
    row = next(r for r in plan["rows"] if r["ranks"] == 2)
    for e in (r for r in runs if not r.get("final")):
        assert e["bytes_sent"] == row["bytes_per_epoch"], (model, e["bytes_sent"], row)
    print(f"dgnn plan predicts {model}'s 2-rank bytes exactly: {row['bytes_per_epoch']}")
PY
set +e
out=$(timeout 60 mpiexec -n 4 --oversubscribe "$dgnn" train --graph "$work/evo" --snapshots 4 \
  --strategy snapshot --epochs 1 2>&1)
code=$?
set -e
echo "$out" | grep "^dgnn: error: \[rank 0\] --strategy snapshot: 4 ranks but 3 steps (4 snapshots)" >/dev/null ||
  { echo "no one-line error for 4 ranks on 3 steps: $out"; exit 1; }
[ "$code" -ne 0 ] && [ "$code" -ne 124 ] || { echo "exit code $code"; exit 1; }
echo "snapshot strategy with more ranks than steps: one line, exit $code"

# A diverged model's NaN scores stop the evaluation on every rank with the same line, under both
# strategies (the snapshot strategy's owner finds it alone; the others learn it at the split's
# end): no hang, no rank left waiting.
for s in vertex snapshot; do
  set +e
  out=$(timeout 120 mpiexec -n 2 --oversubscribe "$dgnn" train --graph "$work/evo" --model gcrn \
    --hidden 8 --epochs 2 --bptt 3 --lr 1e30 --strategy $s 2>&1)
  code=$?
  set -e
  for r in 0 1; do
    echo "$out" | grep -E "^dgnn: error: \[rank $r\] link evaluation: a pair scored NaN at step [0-9]+ \(the model diverged\)$" >/dev/null ||
      { echo "$s: rank $r has no NaN error line: $out"; exit 1; }
  done
  [ "$code" -ne 0 ] && [ "$code" -ne 124 ] || { echo "$s: exit code $code"; exit 1; }
done
echo "a diverged model: one line on every rank under both strategies"

# Temporal checkpoints: GCRN written on 2 ranks resumes on 1, written on 1 resumes on 3, under
# both strategies, and equals the uninterrupted run; --predictions and --embeddings of 2 ranks
# equal one process's (scores and rows to float rounding).
tg=(--graph "$work/evo" --model gcrn --hidden 8 --bptt 3 --quiet)
"$dgnn" train "${tg[@]}" --epochs 4 --log-json "$work/tfull.jsonl" \
  --predictions "$work/tpred1.txt" --embeddings "$work/temb1.npy" >/dev/null
for s in vertex snapshot; do
  run "$dgnn" train "${tg[@]}" --strategy $s --epochs 2 --save "$work/t2-$s.ckpt" \
    --predictions "$work/tpred2-$s.txt" --embeddings "$work/temb2-$s.npy" \
    --log-json "$work/t2a-$s.jsonl" >/dev/null
  "$dgnn" train "${tg[@]}" --epochs 4 --load "$work/t2-$s.ckpt" --log-json "$work/t2b-$s.jsonl" \
    >/dev/null
  "$dgnn" train "${tg[@]}" --epochs 2 --save "$work/t1-$s.ckpt" >/dev/null
  mpiexec -n 3 --oversubscribe "$dgnn" train "${tg[@]}" --strategy $s --epochs 4 \
    --load "$work/t1-$s.ckpt" --log-json "$work/t1b-$s.jsonl" >/dev/null
done
"$dgnn" train "${tg[@]}" --epochs 2 --log-json "$work/thalf.jsonl" \
  --predictions "$work/tpred1h.txt" --embeddings "$work/temb1h.npy" >/dev/null
python3 - "$work" <<'PY'
import json, struct, sys
work = sys.argv[1]
def rows(name):
    r = [json.loads(l) for l in open(f"{work}/{name}.jsonl")]
    return [x["loss"] for x in r if not x.get("final")], r[-1]
full, ffin = rows("tfull")
for s in ("vertex", "snapshot"):
    for rest, what in ((f"t2b-{s}", "2 ranks -> 1"), (f"t1b-{s}", "1 -> 3 ranks")):
        got, fin = rows(rest)
        assert len(got) == 2, (rest, got)
        for e, (a, b) in enumerate(zip(got, full[2:]), 3):
            assert abs(a - b) <= 1e-4 * abs(b), f"{s} {what}: epoch {e}: {a} vs {b}"
        for k in ("test_auc", "test_map", "test_mrr"):
            assert abs(fin[k] - ffin[k]) <= 2e-3, (s, what, k, fin[k], ffin[k])
        assert fin["epochs"] == 4 and fin["best_epoch"] == ffin["best_epoch"], (fin, ffin)
def pairs(name):
    lines = [l.split() for l in open(f"{work}/{name}") if not l.startswith("#")]
    return [tuple(int(x) for x in l[:4]) for l in lines], [float(l[4]) for l in lines]
def npy(name):
    b = open(f"{work}/{name}", "rb").read()
    hl = struct.unpack("<H", b[8:10])[0]
    header = b[10:10 + hl].decode()
    shape = eval(header.split("'shape':")[1].split(")")[0] + ")")
    vals = struct.unpack(f"<{shape[0] * shape[1]}f", b[10 + hl:])
    return shape, vals
one_keys, one_scores = pairs("tpred1h.txt")
shape1, emb1 = npy("temb1h.npy")
assert len(one_keys) > 100 and shape1[0] == 300 and shape1[1] == 8, (len(one_keys), shape1)
ids = [int(l) for l in open(f"{work}/temb1h.ids.txt")]
assert ids == sorted(ids) and len(ids) == 300
for s in ("vertex", "snapshot"):
    keys, scores = pairs(f"tpred2-{s}.txt")
    assert keys == one_keys, f"{s}: other test pairs than one process"
    worst = max(abs(a - b) for a, b in zip(scores, one_scores))
    assert worst <= 1e-3, (s, worst)
    shape, emb = npy(f"temb2-{s}.npy")
    assert shape == shape1, (s, shape)
    assert max(abs(a - b) for a, b in zip(emb, emb1)) <= 1e-3, s
print("temporal checkpoints resume across rank counts (2 -> 1, 1 -> 3, both strategies) to the "
      "uninterrupted run; predictions and embeddings of 2 ranks equal one process's")
PY

# A directed chain 0 -> 1 -> ... -> 11 cut into id ranges: rank 0's vertices have no in-edge from
# another rank (no halo rows of its own) but rank 1 needs vertex 5's row. Rank 0 must still send
# it (and take its gradient back): it used to skip the exchange and the job hung. GCN and GAT.
mkdir -p "$work/chain"
for v in $(seq 0 10); do echo "$v $((v + 1))"; done > "$work/chain/edges.txt"
for v in $(seq 0 11); do echo "$v $((v % 3))"; done > "$work/chain/labels.txt"
for m in gcn gat; do
  timeout 60 "$dgnn" train --graph "$work/chain" --directed --model $m --epochs 4 --seed 1 \
    --train-frac 0.5 --val-frac 0.25 --quiet --log-json "$work/chain1-$m.jsonl" >/dev/null
  timeout 60 mpiexec -n 2 --oversubscribe "$dgnn" train --graph "$work/chain" --directed \
    --model $m --epochs 4 --seed 1 --train-frac 0.5 --val-frac 0.25 --partitioner range --quiet \
    --log-json "$work/chain2-$m.jsonl" >/dev/null ||
    { echo "directed chain, $m, 2 ranks: exit $? (124: it hung)"; exit 1; }
done
python3 - "$work" <<'PY'
import json, sys
work = sys.argv[1]
for m in ("gcn", "gat"):
    one = [json.loads(l) for l in open(f"{work}/chain1-{m}.jsonl")][:-1]
    two = [json.loads(l) for l in open(f"{work}/chain2-{m}.jsonl")][:-1]
    assert len(one) == len(two) == 4, (m, len(one), len(two))
    for e, (a, b) in enumerate(zip(two, one), 1):
        assert abs(a["loss"] - b["loss"]) <= 1e-4 * abs(b["loss"]), f"chain {m}: epoch {e}: {a} vs {b}"
print("directed chain on 2 ranks (one rank with no halo rows) matches one process, GCN and GAT")
PY

# --clip-norm acts on the gradients summed over ranks: 2 ranks clip as one process does (a
# static GCN and a temporal GCRN), and the clipped runs differ from the unclipped ones.
"$dgnn" train --graph "$work/g" --epochs 6 --seed 1 --quiet --clip-norm 0.05 \
  --log-json "$work/c1.jsonl" >/dev/null
run "$dgnn" train --graph "$work/g" --epochs 6 --seed 1 --parts 2 --quiet --clip-norm 0.05 \
  --log-json "$work/c2.jsonl" >/dev/null
"$dgnn" train --graph "$work/evo" --model gcrn --hidden 8 --epochs 4 --bptt 3 --quiet \
  --clip-norm 0.001 --log-json "$work/ct1.jsonl" >/dev/null
run "$dgnn" train --graph "$work/evo" --model gcrn --hidden 8 --epochs 4 --bptt 3 --quiet \
  --clip-norm 0.001 --log-json "$work/ct2.jsonl" >/dev/null
python3 - "$work" <<'PY'
import json, sys
work = sys.argv[1]
def losses(name):
    rows = [json.loads(l) for l in open(f"{work}/{name}.jsonl")]
    return [r["loss"] for r in rows if not r.get("final")]
for one, two, plain in (("c1", "c2", "one"), ("ct1", "ct2", "t1")):
    a, b, p = losses(one), losses(two), losses(plain)
    assert len(a) == len(b), (one, len(a), len(b))
    for e, (x, y) in enumerate(zip(b, a), 1):
        assert abs(x - y) <= 1e-4 * abs(y), f"{two}: epoch {e}: {x} vs {y}"
    assert abs(a[-1] - p[len(a) - 1]) > 1e-4, (one, "clipping changed nothing", a, p)
print("--clip-norm on 2 ranks matches one process, static and temporal")
PY

# A rank whose part file is missing: one line naming it, the job exits non-zero in seconds.
rm "$work/parts/part-1.bin"
start=$(date +%s)
set +e
out=$(timeout 60 mpiexec -n 2 --oversubscribe "$dgnn" train --graph "$work/g" --epochs 5 \
  --partition "$work/parts" 2>&1)
code=$?
set -e
echo "$out" | grep "part-1.bin" >/dev/null || { echo "no message naming part-1.bin: $out"; exit 1; }
[ "$code" -ne 0 ] && [ "$code" -ne 124 ] || { echo "exit code $code"; exit 1; }
echo "missing part file: exit $code after $(( $(date +%s) - start )) s"
