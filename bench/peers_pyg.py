"""PyTorch Geometric (Temporal)'s side of bench/peers.sh, on CPU: the same data, model and
hyperparameters as the `dgnn train` run it is compared with. Prints one JSON line at the end
(median training epoch ms, and test accuracy or test AUC).

  python peers_pyg.py gcn|gat DIR EPOCHS HIDDEN DROPOUT LR WD THREADS
      GCNConv x2 (dropout before each layer, input included; ReLU between), Adam with weight
      decay on the weights only (as dgnn), full-graph; DIR is a dataset folder with edges.txt,
      features.npy, labels.txt and train/val/test.txt. Test accuracy at the best validation
      accuracy (dgnn's selection).
  python peers_pyg.py MODEL EDGES TIMECOL SECONDS CUMULATIVE FEATURES EPOCHS HIDDEN BPTT
                      NEG_TRAIN NEG_EVAL THREADS [K]
      MODEL evolvegcn-o: two EvolveGCNO layers (hidden = input width, ReLU between);
      MODEL gcrn: GCNConv(F, hidden) + ReLU, then GConvLSTM(hidden, hidden, K) (K=1: the LSTM is
      per vertex, as in dgnn's gcrn). Link prediction with dgnn's protocol: snapshots are time
      buckets of SECONDS (CUMULATIVE 1: union up to t), step t scores the pairs of bucket t+1
      against NEG per positive corrupted (u, w) pairs, an MLP on [hu, hv, hu*hv], balanced BCE,
      70/10/20 split of steps, truncated BPTT over windows of BPTT steps; FEATURES is a .npy
      (row = vertex id) or 'degree' (one-hot log2 degree bucket per snapshot, 16 columns).
      Test AUC (mean over test steps) at the best validation MAP.
"""
import gzip
import io
import json
import math
import os
import statistics
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F


def opened(path, mode="rt"):
    """path, or path.gz when only that exists (the datasets ship gzipped), as dgnn reads them."""
    if not os.path.exists(path) and os.path.exists(path + ".gz"):
        path += ".gz"
    with open(path, "rb") as f:
        gz = f.read(2) == b"\x1f\x8b"
    return gzip.open(path, mode) if gz else open(path, mode)


def read_edges(path, time_col=None):
    rows = []
    with opened(path) as f:
        first = True
        for line in f:
            s = line.strip()
            if not s or s[0] in "#%":
                continue
            parts = s.replace(",", " ").split()
            if first:
                first = False
                try:
                    int(parts[0])
                except ValueError:
                    continue  # header
            r = [int(parts[0]), int(parts[1])]
            if time_col is not None:
                r.append(int(float(parts[time_col])))
            rows.append(r)
    return np.array(rows, dtype=np.int64)


def undirected(src, dst, n):
    """Symmetrised, self loops removed, duplicates merged: dgnn's default reading."""
    keep = src != dst
    s = np.concatenate([src[keep], dst[keep]])
    d = np.concatenate([dst[keep], src[keep]])
    key = np.unique(s * n + d)
    return torch.from_numpy(np.stack([key // n, key % n]))


def run_gcn(argv, kind="gcn"):
    from torch_geometric.nn import GATConv, GCNConv
    d, epochs, hidden, dropout, lr, wd, threads = argv
    epochs, hidden, threads = int(epochs), int(hidden), int(threads)
    dropout, lr, wd = float(dropout), float(lr), float(wd)
    torch.set_num_threads(threads)
    torch.manual_seed(1)
    with opened(f"{d}/features.npy", "rb") as f:
        x = torch.from_numpy(np.load(io.BytesIO(f.read())).astype(np.float32))
    n = x.size(0)
    e = read_edges(f"{d}/edges.txt")
    edge_index = undirected(e[:, 0], e[:, 1], n)
    with opened(f"{d}/labels.txt") as f:
        lab = np.loadtxt(f, dtype=np.int64, comments="#", ndmin=2)
    y = torch.full((n,), -1, dtype=torch.long)
    y[torch.from_numpy(lab[:, 0])] = torch.from_numpy(lab[:, 1])
    split = {}
    for k in ("train", "val", "test"):
        with opened(f"{d}/{k}.txt") as f:
            split[k] = torch.from_numpy(np.loadtxt(f, dtype=np.int64, comments="#", ndmin=1))
    classes = int(y.max()) + 1

    class GCN(torch.nn.Module):
        def __init__(self):
            super().__init__()
            if kind == "gat":
                # dgnn's built-in GAT: 4 heads of hidden / 4 concatenated, then one head; the
                # attention coefficients dropped with the same probability (GATConv's dropout).
                self.c1 = GATConv(x.size(1), hidden // 4, heads=4, dropout=dropout)
                self.c2 = GATConv(hidden, classes, heads=1, dropout=dropout)
                return
            # cached: the normalised adjacency is computed once (dgnn also builds it once).
            self.c1 = GCNConv(x.size(1), hidden, cached=True)
            self.c2 = GCNConv(hidden, classes, cached=True)

        def forward(self, h):
            h = F.dropout(h, dropout, self.training)
            h = F.relu(self.c1(h, edge_index))
            h = F.dropout(h, dropout, self.training)
            return self.c2(h, edge_index)

    model = GCN()
    weights = [p for name, p in model.named_parameters() if not name.endswith("bias")]
    biases = [p for name, p in model.named_parameters() if name.endswith("bias")]
    opt = torch.optim.Adam([{"params": weights, "weight_decay": wd},
                            {"params": biases, "weight_decay": 0.0}], lr=lr)
    times, best_val, test_at_best = [], -1.0, 0.0
    for epoch in range(epochs):
        model.train()
        t = time.perf_counter()
        opt.zero_grad()
        out = model(x)
        F.cross_entropy(out[split["train"]], y[split["train"]]).backward()
        opt.step()
        times.append((time.perf_counter() - t) * 1e3)
        model.eval()
        with torch.no_grad():
            pred = model(x).argmax(1)
        acc = {k: float((pred[v] == y[v]).float().mean()) for k, v in split.items()}
        if acc["val"] > best_val:
            best_val, test_at_best = acc["val"], acc["test"]
    # The first epoch builds the cached normalisation: left out like a warm-up when there are more.
    med = statistics.median(times[1:] if len(times) > 2 else times)
    return {"epoch_ms": med, "test_acc": test_at_best, "best_val_acc": best_val}


def auc_ap(scores, labels):
    """ROC AUC (ties averaged) and average precision of one step's pairs."""
    s = np.asarray(scores, dtype=np.float64)
    lab = np.asarray(labels, dtype=bool)
    npos, nneg = lab.sum(), (~lab).sum()
    if npos == 0 or nneg == 0:
        return float("nan"), float("nan")
    order = np.argsort(s, kind="mergesort")
    ranks = np.empty(len(s))
    ss = s[order]
    i = 0
    while i < len(ss):
        j = i
        while j + 1 < len(ss) and ss[j + 1] == ss[i]:
            j += 1
        ranks[order[i:j + 1]] = (i + j) / 2 + 1
        i = j + 1
    auc = (ranks[lab].sum() - npos * (npos + 1) / 2) / (npos * nneg)
    desc = np.argsort(-s, kind="mergesort")
    hits = np.cumsum(lab[desc])
    ap = float(np.mean(hits[lab[desc]] / (np.nonzero(lab[desc])[0] + 1)))
    return float(auc), ap


def run_temporal(model_name, argv):
    (path, time_col, seconds, cumulative, features, epochs, hidden, bptt, neg_train, neg_eval,
     threads) = argv[:11]
    k_cheb = int(argv[11]) if len(argv) > 11 else 1
    time_col, seconds, cumulative = int(time_col), float(seconds), cumulative == "1"
    epochs, hidden, bptt, threads = int(epochs), int(hidden), int(bptt), int(threads)
    neg_train, neg_eval = int(neg_train), int(neg_eval)
    torch.set_num_threads(threads)
    torch.manual_seed(1)
    rng = np.random.default_rng(1)

    e = read_edges(path, time_col)
    if features != "degree":
        with opened(features, "rb") as f:
            feat = np.load(io.BytesIO(f.read())).astype(np.float32)
        ids = np.arange(feat.shape[0])
    else:
        ids = np.unique(e[:, :2])  # dense ids, ascending original ids (dgnn's relabelling)
    n = len(ids)
    src = np.searchsorted(ids, e[:, 0])
    dst = np.searchsorted(ids, e[:, 1])
    t = e[:, 2]
    bucket = np.floor((t - t.min()) / seconds).astype(np.int64)
    T = int(bucket.max()) + 1
    # Per-bucket events (targets): (src, dst) as in the file, deduplicated, no self loops.
    events = []
    for b in range(T):
        m = (bucket == b) & (src != dst)
        key = np.unique(src[m] * n + dst[m])
        u, v = key // n, key % n
        # Undirected: (u, v) and (v, u) are one pair, the first in (src, dst) order (dgnn's).
        drop = (u > v) & np.isin(v * n + u, key)
        events.append((u[~drop], v[~drop]))
    graphs = []
    for b in range(T):
        m = bucket <= b if cumulative else bucket == b
        graphs.append(undirected(src[m], dst[m], n))
    if features == "degree":
        xs = []
        for ei in graphs:
            deg = np.bincount(ei[1].numpy(), minlength=n)
            b = np.zeros(n, dtype=np.int64)
            d = deg.copy()
            while (d > 0).any():
                more = (d > 0) & (b < 15)
                b[more] += 1
                d = np.where(more, d >> 1, 0)
            x = torch.zeros(n, 16)
            x[torch.arange(n), torch.from_numpy(b)] = 1.0
            xs.append(x)
    else:
        xs = [torch.from_numpy(feat)] * T
    fdim = xs[0].size(1)

    steps = T - 1
    n_train, n_val = int(math.floor(0.7 * steps)), int(math.floor(0.1 * steps))

    def batch(step, neg):
        u, v = events[step + 1]
        existing = np.unique(np.concatenate([u * n + v, v * n + u]))
        pos = len(u)
        su = np.repeat(u, neg)
        w = rng.integers(0, n, size=len(su))
        for _ in range(16):  # redraw collisions, at most 16 times (as dgnn)
            bad = (w == su) | np.isin(su * n + w, existing)
            if not bad.any():
                break
            w[bad] = rng.integers(0, n, size=int(bad.sum()))
        s_all = np.concatenate([u, su])
        d_all = np.concatenate([v, w])
        target = np.concatenate([np.ones(pos), np.zeros(len(su))]).astype(np.float32)
        weight = np.where(target > 0, 0.5 / max(pos, 1), 0.5 / max(len(su), 1)).astype(np.float32)
        return (torch.from_numpy(s_all), torch.from_numpy(d_all), torch.from_numpy(target),
                torch.from_numpy(weight))

    if model_name == "evolvegcn-o":
        from torch_geometric_temporal.nn.recurrent import EvolveGCNO
        if hidden != fdim:
            raise SystemExit(f"EvolveGCNO keeps its width: hidden {hidden} != features {fdim}")

        class Net(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.l1, self.l2 = EvolveGCNO(fdim), EvolveGCNO(fdim)

            def reset(self):
                self.l1.reinitialize_weight()
                self.l2.reinitialize_weight()

            def detach(self):
                for l in (self.l1, self.l2):
                    if l.weight is not None:
                        l.weight = l.weight.detach()

            def step(self, x, ei):
                return self.l2(F.relu(self.l1(x, ei)), ei)
    else:
        from torch_geometric.nn import GCNConv
        from torch_geometric_temporal.nn.recurrent import GConvLSTM

        class Net(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.gcn = GCNConv(fdim, hidden)
                self.lstm = GConvLSTM(hidden, hidden, K=k_cheb)
                self.h = self.c = None

            def reset(self):
                self.h = self.c = None

            def detach(self):
                if self.h is not None:
                    self.h, self.c = self.h.detach(), self.c.detach()

            def step(self, x, ei):
                g = F.relu(self.gcn(x, ei))
                self.h, self.c = self.lstm(g, ei, H=self.h, C=self.c)
                return self.h

    class Head(torch.nn.Module):
        def __init__(self, emb):
            super().__init__()
            self.l1 = torch.nn.Linear(3 * emb, hidden)
            self.l2 = torch.nn.Linear(hidden, 1)

        def forward(self, h, s, d):
            hu, hv = h[s], h[d]
            return self.l2(F.relu(self.l1(torch.cat([hu, hv, hu * hv], 1)))).view(-1)

    net, head = Net(), Head(hidden)
    params = list(net.parameters()) + list(head.parameters())
    opt = torch.optim.Adam(params, lr=0.01)

    def evaluate(begin, end):
        net.eval()
        aucs, aps = [], []
        with torch.no_grad():
            net.reset()
            for s in range(end):
                h = net.step(xs[s], graphs[s])
                if s < begin or len(events[s + 1][0]) == 0:
                    continue
                bs, bd, tgt, _ = batch(s, neg_eval)
                a, p = auc_ap(head(h, bs, bd).numpy(), tgt.numpy())
                aucs.append(a)
                aps.append(p)
        net.train()
        return float(np.nanmean(aucs)), float(np.nanmean(aps))

    times, best = [], (-1.0, None)
    window = bptt if bptt > 0 else n_train
    for epoch in range(epochs):
        t0 = time.perf_counter()
        net.reset()
        for start in range(0, n_train, window):
            opt.zero_grad()
            loss, count = None, 0
            for s in range(start, min(n_train, start + window)):
                h = net.step(xs[s], graphs[s])
                if len(events[s + 1][0]) == 0:
                    continue
                bs, bd, tgt, w = batch(s, neg_train)
                l = F.binary_cross_entropy_with_logits(head(h, bs, bd), tgt, weight=w,
                                                       reduction="sum")
                loss = l if loss is None else loss + l
                count += 1
            if loss is not None:
                (loss / count).backward()
                opt.step()
            net.detach()
        times.append((time.perf_counter() - t0) * 1e3)
        val_auc, val_ap = evaluate(n_train, n_train + n_val)
        if val_ap > best[0]:
            best = (val_ap, [p.detach().clone() for p in params])
    with torch.no_grad():
        for p, b in zip(params, best[1]):
            p.copy_(b)
    test_auc, test_ap = evaluate(n_train + n_val, steps)
    return {"epoch_ms": statistics.median(times), "test_auc": test_auc, "test_map": test_ap,
            "snapshots": T, "vertices": n, "features": fdim}


def main():
    import torch_geometric
    mode = sys.argv[1]
    out = (run_gcn(sys.argv[2:], mode) if mode in ("gcn", "gat")
           else run_temporal(mode, sys.argv[2:]))
    out.update(pyg=torch_geometric.__version__, torch=torch.__version__,
               threads=torch.get_num_threads())
    print(json.dumps(out))


if __name__ == "__main__":
    main()
