#!/usr/bin/env python3
"""The GCN training step of bench_gpu in PyTorch Geometric, on the graph bench_gpu exported:
two GCNConv layers (features -> hidden -> classes), dropout 0.5 before each, ReLU between,
cross-entropy on a 60% training split, Adam. Times forward + backward + step (synchronised),
median over the epochs after 3 warm-ups, in three ways PyG offers: edge_index with the
normalisation recomputed each call (GCNConv's default), edge_index cached, and a cached sparse
CSR adjacency (torch.sparse). Prints one JSON line per way, then the fastest.

    pyg_gcn.py EXPORT_DIR
"""
import json
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F


def main():
    d = sys.argv[1]
    meta = json.load(open(f"{d}/meta.json"))
    n, f, h, c, epochs = (meta[k] for k in ("vertices", "features", "hidden", "classes", "epochs"))
    from torch_geometric.nn import GCNConv
    import torch_geometric

    dev = torch.device("cuda")
    src = torch.from_numpy(np.fromfile(f"{d}/src.i32", dtype=np.int32).astype(np.int64))
    dst = torch.from_numpy(np.fromfile(f"{d}/dst.i32", dtype=np.int32).astype(np.int64))
    edge_index = torch.stack([src, dst]).to(dev)
    g = torch.Generator().manual_seed(1)
    x = torch.randn(n, f, generator=g).to(dev)
    y = torch.randint(0, c, (n,), generator=g).to(dev)
    train = torch.randperm(n, generator=g)[: int(0.6 * n)].to(dev)

    class GCN(torch.nn.Module):
        def __init__(self, cached):
            super().__init__()
            self.c1 = GCNConv(f, h, cached=cached)
            self.c2 = GCNConv(h, c, cached=cached)

        def forward(self, x, adj):
            x = F.dropout(x, 0.5, self.training)
            x = F.relu(self.c1(x, adj))
            x = F.dropout(x, 0.5, self.training)
            return self.c2(x, adj)

    def run(name, cached, adj):
        torch.manual_seed(0)
        model = GCN(cached).to(dev)
        opt = torch.optim.Adam(model.parameters(), lr=0.01)
        model.train()
        times = []
        for e in range(epochs + 3):
            torch.cuda.synchronize()
            t = time.perf_counter()
            opt.zero_grad()
            out = model(x, adj)
            loss = F.cross_entropy(out[train], y[train])
            loss.backward()
            opt.step()
            torch.cuda.synchronize()
            if e >= 3:
                times.append((time.perf_counter() - t) * 1e3)
        ms = float(np.median(times))
        print(json.dumps({"bench": "pyg_gcn", "variant": name, "epoch_ms": round(ms, 3),
                          "pyg": torch_geometric.__version__, "torch": torch.__version__}),
              flush=True)
        return ms

    results = {}
    for name, cached, adj in (("edge_index", False, edge_index),
                              ("edge_index_cached", True, edge_index)):
        try:
            results[name] = run(name, cached, adj)
        except Exception as e:  # a variant this PyG cannot run is reported, not fatal
            print(json.dumps({"bench": "pyg_gcn", "variant": name, "error": str(e)[:200]}))
    try:
        # Row = target, so adj_t @ x aggregates in-neighbours (PyG's adj_t convention).
        adj_t = torch.sparse_coo_tensor(torch.stack([edge_index[1], edge_index[0]]),
                                        torch.ones(edge_index.shape[1], device=dev),
                                        (n, n)).coalesce().to_sparse_csr()
        results["sparse_csr_cached"] = run("sparse_csr_cached", True, adj_t)
    except Exception as e:
        print(json.dumps({"bench": "pyg_gcn", "variant": "sparse_csr_cached",
                          "error": str(e)[:200]}))
    if results:
        best = min(results, key=results.get)
        print(json.dumps({"bench": "pyg_gcn", "best_variant": best,
                          "best_epoch_ms": round(results[best], 3)}))


if __name__ == "__main__":
    main()
