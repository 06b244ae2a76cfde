"""PyTorch Geometric's side of bench_sampling.sh: NeighborLoader + SAGEConv on CPU, on the same
graph, training vertices, fanouts and widths as build/bench/bench_sampling.

  python bench_sampling_pyg.py GRAPH MODE BATCH FANOUTS FEATURES HIDDEN EPOCHS THREADS

MODE sample: sampled edges per second (the sampler alone, and the loader with feature rows);
MODE train: a training epoch (sampling inline, num_workers=0, as PyG's examples run on CPU).
FANOUTS are in dgnn's order (input layer first); PyG's num_neighbors is the reverse.
Prints one JSON line at the end.
"""
import gzip
import json
import statistics
import sys
import time

import torch
import torch.nn.functional as F
import torch_geometric
from torch_geometric.data import Data
from torch_geometric.loader import NeighborLoader
from torch_geometric.nn import SAGEConv
from torch_geometric.sampler import NodeSamplerInput
from torch_geometric.utils import coalesce, remove_self_loops, to_undirected


def load_edges(path):
    opener = gzip.open if path.endswith(".gz") else open
    src, dst = [], []
    with opener(path, "rt") as f:
        for line in f:
            if line.startswith("#") or line.startswith("%") or not line.strip():
                continue
            a, b = line.split()[:2]
            src.append(int(a))
            dst.append(int(b))
    return torch.tensor([src, dst], dtype=torch.long)


def main():
    path, mode, batch, fanouts, feat, hidden, epochs, threads = sys.argv[1:9]
    batch, feat, hidden, epochs, threads = int(batch), int(feat), int(hidden), int(epochs), int(threads)
    fanouts = [int(f) for f in fanouts.split(",")]
    torch.set_num_threads(threads)
    torch.manual_seed(1)

    raw = load_edges(path)
    ids, ei = torch.unique(raw, return_inverse=True)  # dense ids in ascending original order, as dgnn
    n = ids.numel()
    ei, _ = remove_self_loops(ei)
    ei = coalesce(to_undirected(ei, num_nodes=n), num_nodes=n)
    classes = 8
    data = Data(x=torch.rand(n, feat) * 2 - 1, y=torch.randint(0, classes, (n,)), edge_index=ei,
                num_nodes=n)
    train = torch.nonzero(ids % 10 < 6).view(-1)
    num_neighbors = list(reversed(fanouts))
    loader = NeighborLoader(data, num_neighbors=num_neighbors, batch_size=batch,
                            input_nodes=train, shuffle=True)
    print(f"pyg {torch_geometric.__version__}, torch {torch.__version__}, {threads} threads: "
          f"{n} vertices, {ei.size(1)} stored edges, {train.numel()} training vertices",
          file=sys.stderr)
    out = {"mode": mode, "threads": threads}

    if mode == "sample":
        sampler = loader.node_sampler
        perm = train[torch.randperm(train.numel())]
        seeds = list(perm.split(batch))

        def sample_epoch():
            edges = 0
            for s in seeds:
                o = sampler.sample_from_nodes(NodeSamplerInput(input_id=None, node=s))
                edges += o.row.numel()
            return edges

        sample_epoch()
        best, edges = 1e30, 0
        for _ in range(3):
            t = time.perf_counter()
            edges = sample_epoch()
            best = min(best, (time.perf_counter() - t) * 1e3)
        out.update(sample_epoch_ms=best, sampled_edges_per_epoch=edges,
                   sampled_edges_per_s=edges / best * 1e3)
        for _ in loader:  # warm-up
            pass
        t = time.perf_counter()
        edges, inputs = 0, 0
        for b in loader:
            edges += b.edge_index.size(1)
            inputs += b.num_nodes
        ms = (time.perf_counter() - t) * 1e3
        out.update(batch_epoch_ms=ms, batch_edges_per_s=edges / ms * 1e3, input_rows_per_epoch=inputs)
    else:
        class Sage(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.c1 = SAGEConv(feat, hidden)
                self.c2 = SAGEConv(hidden, classes)

            def forward(self, x, edge_index):
                return self.c2(F.relu(self.c1(x, edge_index)), edge_index)

        model = Sage()
        opt = torch.optim.Adam(model.parameters(), lr=0.01)
        times = []
        for epoch in range(epochs + 1):  # the first epoch warms up
            t = time.perf_counter()
            for b in loader:
                opt.zero_grad()
                logits = model(b.x, b.edge_index)[: b.batch_size]
                F.cross_entropy(logits, b.y[: b.batch_size]).backward()
                opt.step()
            if epoch > 0:
                times.append((time.perf_counter() - t) * 1e3)
        out.update(epoch_ms=statistics.median(times), steps=len(loader))
    print(json.dumps(out))


if __name__ == "__main__":
    main()
