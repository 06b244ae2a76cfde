"""PyTorch Geometric Temporal's side of bench/bench_forecast.sh, on CPU: the same data, lags,
split and training as the `dgnn train --task forecast` run it is compared with. Prints one JSON
line at the end (median training epoch ms, test MSE / MAE, and the predict-0 MSE).

  python forecast_pyg.py SOURCE LAGS HIDDEN EPOCHS LR TRAIN_FRAC THREADS [SEED]
      SOURCE: a PyG-Temporal .json(.gz) (edges, FX) or a dataset folder with edges.txt and
      signals.npy [T, N]. Sample t (t = LAGS-1 .. T-2): features x_{t-LAGS+1..t} (oldest first),
      target x_{t+1}; the first int(TRAIN_FRAC * samples) train, the rest test.
      Model: PyG-Temporal's TGCN(LAGS, HIDDEN), ReLU, Linear(HIDDEN, 1), as its chickenpox
      example; the hidden state is carried from sample to sample; one Adam step per epoch on
      the mean of the samples' MSE (PyG-Temporal's examples' loop); the test continues the
      state from the end of training.
TGCN is loaded from its module file: the package's __init__ imports every model, EvolveGCNO's
torch_sparse too, which this benchmark does not need.
"""
import gzip
import importlib.util
import json
import os
import statistics
import sys
import time

import numpy as np
import torch


def load_tgcn():
    spec = importlib.util.find_spec("torch_geometric_temporal")
    root = os.path.dirname(spec.origin)
    path = os.path.join(root, "nn", "recurrent", "temporalgcn.py")
    mod_spec = importlib.util.spec_from_file_location("pygt_temporalgcn", path)
    mod = importlib.util.module_from_spec(mod_spec)
    mod_spec.loader.exec_module(mod)
    return mod.TGCN


def read(source):
    if os.path.isdir(source):
        src, dst = [], []
        for line in open(os.path.join(source, "edges.txt")):
            if line.startswith("#") or not line.strip():
                continue
            a, b = line.split()[:2]
            # dgnn reads an edge list undirected: both directions.
            src += [int(a), int(b)]
            dst += [int(b), int(a)]
        fx = np.load(os.path.join(source, "signals.npy")).astype(np.float32)
        return np.array([src, dst]), fx
    opener = gzip.open if source.endswith(".gz") else open
    with opener(source, "rt") as f:
        d = json.load(f)
    # As PyG-Temporal's ChickenpoxDatasetLoader: the pairs as listed (directed), FX rows.
    return np.array(d["edges"]).T, np.array(d["FX"], dtype=np.float32)


def main():
    source, lags, hidden, epochs, lr, train_frac, threads = sys.argv[1:8]
    seed = int(sys.argv[8]) if len(sys.argv) > 8 else 0
    lags, hidden, epochs, threads = int(lags), int(hidden), int(epochs), int(threads)
    lr, train_frac = float(lr), float(train_frac)
    torch.set_num_threads(threads)
    torch.manual_seed(seed)
    edges, fx = read(source)
    edge_index = torch.tensor(edges, dtype=torch.long)
    T = fx.shape[0]
    samples = T - lags  # horizon 1
    xs = [torch.tensor(fx[t - lags + 1:t + 1].T.copy()) for t in range(lags - 1, T - 1)]
    ys = [torch.tensor(fx[t + 1].copy()) for t in range(lags - 1, T - 1)]
    assert len(xs) == samples
    n_train = int(train_frac * samples)
    TGCN = load_tgcn()

    class Model(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.recurrent = TGCN(lags, hidden)
            self.linear = torch.nn.Linear(hidden, 1)

        def forward(self, x, h):
            h = self.recurrent(x, edge_index, None, h)
            return self.linear(torch.relu(h)).view(-1), h

    model = Model()
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    times = []
    for _ in range(epochs):
        t0 = time.perf_counter()
        model.train()
        opt.zero_grad()
        h, cost = None, 0
        for i in range(n_train):
            y_hat, h = model(xs[i], h)
            cost = cost + torch.mean((y_hat - ys[i]) ** 2)
        cost = cost / n_train
        cost.backward()
        opt.step()
        times.append((time.perf_counter() - t0) * 1000)
    model.eval()
    with torch.no_grad():
        h, sq, ab, zero, n = None, 0.0, 0.0, 0.0, 0
        for i in range(samples):
            y_hat, h = model(xs[i], h)
            if i >= n_train:
                e = y_hat - ys[i]
                sq += float((e ** 2).sum())
                ab += float(e.abs().sum())
                zero += float((ys[i] ** 2).sum())
                n += ys[i].numel()
    print(json.dumps({"epoch_ms": statistics.median(times), "test_mse": sq / n, "test_mae": ab / n,
                      "zero_mse": zero / n}))


if __name__ == "__main__":
    main()
