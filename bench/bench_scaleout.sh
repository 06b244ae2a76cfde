#!/usr/bin/env bash
# Does per-rank memory fall with the rank count (issue 32)? Two workloads at 1, 2, 4 and 8 ranks:
#   temporal  evolving SBM, VERTICES x SNAPSHOTS, avg degree 4 per snapshot (100k x 30 = 6M
#             events), 16 features; GCRN, --bptt 5, 1 epoch, vertex strategy (--parts P)
#   static    SBM, VERTICES vertices, EDGES undirected edges (avg degree 2E/V), FEATURES features;
#             GCN --hidden 128, 3 epochs (the median epoch is steady), --parts P
# For each run: every rank's peak resident memory and the input bytes it read, the largest rank
# and the sum over ranks, their ratios to one process (measured in this same run), and the median
# epoch time. One process runs without mpirun; P > 1 under mpirun --oversubscribe.
#   bench/bench_scaleout.sh [build-dir] [ranks] [temporal VxT] [static VxExF] [workloads] [args]
# defaults: build, 1,2,4,8, 100000x30, 1000000x10000000x128, temporal,static; `args` go to the
# runs on more than one rank (e.g. "--partitioner ptscotch", "--halo-memory whole").
# Workload temporal-dir: the temporal runs with the parts made once beforehand by
# `dgnn partition --out DIR` on P ranks (`args` go to it), then `train --partition DIR`; a
# second table gives the partition job's own peaks (against the one-process training run).
# Workload temporal-snapshot: the temporal runs under --strategy snapshot (each rank owns whole
# steps; the edge list read in shards, each rank building its own steps' snapshots and holding
# the events of the steps it scores). `args` are not passed (no partitioner).
# Quick run: bench/bench_scaleout.sh build 1,2,4 10000x30 50000x500000x32
#
# Peak memory: the `rank_peak_bytes` of the --log-json final record where the binary writes it,
# else ru_maxrss of each rank (wait4 on the rank's own process). Bytes read: `rank_read_bytes`
# where written, else rchar of /proc/PID/io, the last value sampled every 20 ms (it counts every
# read(), also Open MPI's and hwloc's small ones, so it is an upper bound). Each rank runs with one
# OpenMP thread (the machines this was written on have 2 cores; 8 ranks oversubscribe them), so
# compare epoch times across rank counts with care; memory and bytes do not depend on it.
# The binary parse cache goes to a fresh folder, filled before the first measured run, so every
# run reads the same files.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${1:-$here/build}"
ranks="${2:-1,2,4,8}"
tsize="${3:-100000x30}"
ssize="${4:-1000000x10000000x128}"
workloads="${5:-temporal,static}"
extra="${6:-}"
dgnn="$(cd "$build" && pwd)/dgnn"
[ -x "$dgnn" ] || { echo "bench_scaleout: no dgnn binary in $build" >&2; exit 1; }
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
export DGNN_CACHE_DIR="$work/cache"

python3 - "$dgnn" "$work" "$ranks" "$tsize" "$ssize" "$workloads" "$extra" <<'PY'
import json, os, shlex, subprocess, sys

dgnn, work, ranks, tsize, ssize, workloads, extra = sys.argv[1:]
extra = shlex.split(extra)
ranks = [int(r) for r in ranks.split(",")]
root = os.geteuid() == 0

# Runs one rank: the command as a child, its rchar sampled until it exits, its peak RSS from
# wait4. Written next to the logs as rank-R.json (R from Open MPI's environment, 0 without mpirun).
WRAP = r'''
import json, os, sys, time
out, args = sys.argv[1], sys.argv[2:]
rank = int(os.environ.get("OMPI_COMM_WORLD_RANK", "0"))
pid = os.fork()
if pid == 0:
    os.execv(args[0], args)
rchar = pss = 0
while True:
    done, status, usage = os.wait4(pid, os.WNOHANG)
    if done:
        break
    try:
        for line in open(f"/proc/{pid}/io"):
            if line.startswith("rchar:"):
                rchar = int(line.split()[1])
        for line in open(f"/proc/{pid}/smaps_rollup"):
            if line.startswith("Pss:"):
                pss = max(pss, int(line.split()[1]) * 1024)
    except OSError:
        pass
    time.sleep(0.02)
json.dump({"rank": rank, "maxrss": usage.ru_maxrss * 1024, "rchar": rchar, "pss": pss,
           "status": status}, open(os.path.join(out, f"rank-{rank}.json"), "w"))
sys.exit(os.waitstatus_to_exitcode(status) if status else 0)
'''
wrap = os.path.join(work, "wrap.py")
open(wrap, "w").write(WRAP)


def gb(b):
    return f"{b / 1e9:.2f} GB"


def mb(b):
    return f"{b / 1e6:.0f} MB"


def run(name, p, args, sub="train", parts_args=True):
    out = os.path.join(work, f"{name}-{p}")
    os.makedirs(out)
    log = os.path.join(out, "log.jsonl")
    cmd = [dgnn, sub] + args + ["--threads", "1", "--quiet", "--log-json", log]
    if sub == "partition":
        cmd = [dgnn, sub] + args + ["--parts", str(p)] + extra
    elif p > 1 and parts_args:
        cmd += ["--parts", str(p)] + extra
    if p > 1:
        mpi = ["mpirun", "--oversubscribe", "--bind-to", "none", "-np", str(p),
               "-x", "OMP_NUM_THREADS=1", "-x", "DGNN_CACHE_DIR"]
        if root:
            mpi.insert(1, "--allow-run-as-root")
        full = mpi + [sys.executable, wrap, out] + cmd
    else:
        full = [sys.executable, wrap, out] + cmd
    print("$ " + ("OMP_NUM_THREADS=1 " if p == 1 else "") + " ".join(
        a for a in (full[:full.index(sys.executable)] + cmd)), flush=True)
    env = dict(os.environ, OMP_NUM_THREADS="1")
    r = subprocess.run(full, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if r.returncode != 0:
        sys.exit(f"bench_scaleout: {name} on {p} ranks failed:\n{r.stderr[-2000:]}")
    per = sorted((json.load(open(os.path.join(out, f))) for f in os.listdir(out)
                  if f.startswith("rank-")), key=lambda d: d["rank"])
    final = [json.loads(l) for l in open(log) if l.strip()] if os.path.exists(log) else []
    final = ([x for x in final if x.get("final")] or [{}])[-1]
    peak = final.get("rank_peak_bytes")
    read = final.get("rank_read_bytes")
    src = "json" if peak is not None else "wait4/rchar"
    if peak is None:
        peak = [d["maxrss"] for d in per]
    if read is None:
        read = [d["rchar"] for d in per]
    return {"p": p, "peak": peak, "read": read, "src": src, "pss": [d.get("pss", 0) for d in per],
            "epoch_ms": final.get("median_epoch_ms", float("nan"))}


def table(title, rows):
    print(f"\n{title}")
    base = rows[0] if rows and rows[0]["p"] == 1 else None
    print(f"{'ranks':>5} {'peak max':>9} {'sum':>9} {'max/1':>6} {'sum/1':>6} {'read max':>9} "
          f"{'sum':>9} {'max/1':>6} {'sum/1':>6} {'pss sum':>9} {'sum/1':>6} {'epoch ms':>9}  "
          f"per-rank peak | read  ({rows[0]['src']})")
    for r in rows:
        pm, ps, rm, rs = max(r["peak"]), sum(r["peak"]), max(r["read"]), sum(r["read"])
        qs = sum(r["pss"])
        ratio = lambda a, b: f"{a / b:6.2f}" if base and b else f"{'-':>6}"
        print(f"{r['p']:5d} {gb(pm):>9} {gb(ps):>9} {ratio(pm, max(base['peak']) if base else 0)} "
              f"{ratio(ps, sum(base['peak']) if base else 0)} {mb(rm):>9} {mb(rs):>9} "
              f"{ratio(rm, max(base['read']) if base else 0)} {ratio(rs, sum(base['read']) if base else 0)} "
              f"{gb(qs):>9} {ratio(qs, sum(base['pss']) if base else 0)} "
              f"{r['epoch_ms']:9.0f}  "
              + " ".join(f"{x / 1e9:.2f}" for x in r["peak"]) + " GB | "
              + " ".join(f"{x / 1e6:.1f}" for x in r["read"]) + " MB")


def evolving_size():
    return tuple(int(x) for x in tsize.lower().split("x"))


def evolving_graph():
    """The temporal workloads' graph, generated once."""
    n, t = evolving_size()
    g = os.path.join(work, "evolving")
    if not os.path.exists(g):
        subprocess.run([dgnn, "generate", "evolving-sbm", "--vertices", str(n), "--snapshots",
                        str(t), "--features", "16", "--seed", "1", "--out", g], check=True,
                       stdout=subprocess.DEVNULL)
    return g


results = []
if "temporal" in workloads.split(","):
    n, t = evolving_size()
    g = evolving_graph()
    args = ["--graph", g, "--model", "gcrn", "--bptt", "5", "--epochs", "1",
            "--strategy", "vertex"]
    rows = [run("temporal", p, args) for p in ranks]
    results.append((f"temporal: evolving SBM {n} vertices x {t} snapshots ({2 * n * t} events), "
                    f"16 features, GCRN --bptt 5, 1 epoch, vertex strategy", rows))
if "temporal-dir" in workloads.split(","):
    # The same temporal runs, the partition made once beforehand: `dgnn partition --out DIR` on
    # P ranks (its peak is the partitioner's), then `train --partition DIR` (no partitioner).
    n, t = evolving_size()
    g = evolving_graph()
    base = ["--graph", g, "--model", "gcrn", "--bptt", "5", "--epochs", "1", "--strategy", "vertex"]
    parts_rows, train_rows = [], []
    for p in ranks:
        if p == 1:
            train_rows.append(run("temporal-dir", p, base))
            continue
        d = os.path.join(work, f"tparts-{p}")
        parts_rows.append(run("tpartition", p, ["--graph", g, "--out", d], sub="partition"))
        train_rows.append(run("temporal-dir", p, base + ["--partition", d], parts_args=False))
    results.append((f"temporal, parts read from a folder: `dgnn partition --out DIR` on P ranks "
                    f"({' '.join(extra) or 'METIS'}), then `train --partition DIR`: the training run",
                    train_rows))
    if parts_rows:
        results.append(("temporal: the `dgnn partition` job itself (peak: wait4 of each rank)",
                        [train_rows[0]] + parts_rows if train_rows[0]["p"] == 1 else parts_rows))
if "temporal-snapshot" in workloads.split(","):
    n, t = evolving_size()
    g = evolving_graph()
    base = ["--graph", g, "--model", "gcrn", "--bptt", "5", "--epochs", "1", "--strategy", "snapshot"]
    results.append((f"temporal, snapshot strategy: evolving SBM {n} vertices x {t} snapshots, "
                    f"GCRN --bptt 5, 1 epoch, each rank owning whole steps",
                    [run("temporal-snapshot", p, base, parts_args=False) for p in ranks]))
if "static" in workloads.split(","):
    n, e, f = (int(x) for x in ssize.lower().split("x"))
    g = os.path.join(work, "sbm")
    subprocess.run([dgnn, "generate", "sbm", "--vertices", str(n), "--avg-degree", str(2 * e / n),
                    "--features", str(f), "--seed", "1", "--out", g], check=True,
                   stdout=subprocess.DEVNULL)
    subprocess.run([dgnn, "info", "--graph", g], check=True, stdout=subprocess.DEVNULL)  # fills the cache
    args = ["--graph", g, "--model", "gcn", "--hidden", "128", "--epochs", "3"]
    rows = [run("static", p, args) for p in ranks]
    results.append((f"static: SBM {n} vertices, {e} edges, {f} features, GCN --hidden 128, "
                    f"3 epochs, --parts P", rows))
for title, rows in results:
    table(title, rows)
print("\npeak: resident memory of each rank; read: input bytes each rank read; max/1, sum/1: the "
      "largest rank and the sum over ranks against one process in this run (ideal at P ranks: "
      "1/P plus the model, and 1)")
print("pss sum: the ranks' proportional set sizes (the largest of samples every 20 ms), summed: "
      "pages shared between the ranks of one machine (the libraries' code above all, about 17 MB "
      "of every rank's resident memory under Open MPI) counted once, not once a rank as the "
      "resident sum counts them; sampled, so it can miss a short peak")
PY
