#!/usr/bin/env python3
"""Plots of a `dgnn scale` study from its results.csv.

    scale_plot.py RESULTS_CSV OUT_DIR [--title TEXT]

writes into OUT_DIR:
  epoch_ms.png    epoch time vs ranks, stacked into compute / comm / wait (and the rest of the
                  epoch), one panel per strategy / partitioner
  bytes_sent.png  bytes sent per epoch (all ranks together) vs ranks
  speedup.png     speedup vs ranks against the ideal (linear from the baseline rank count)
and prints one line naming them. Exits 3 when matplotlib cannot be imported (dgnn scale then
tries another python3, or says the plots were skipped).
"""
import argparse
import csv
import os
import sys

try:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
except ImportError as e:  # dgnn scale reads this line
    print(f"matplotlib is not importable by {sys.executable} ({e}; Debian: apt-get install "
          "python3-matplotlib)", file=sys.stderr)
    sys.exit(3)

SPLIT = [("compute_ms", "compute", "#4c72b0"), ("comm_ms", "comm", "#dd8452"),
         ("wait_ms", "wait", "#c44e52")]


def num(row, key):
    v = row.get(key, "")
    return float(v) if v not in ("", None) else None


def load(path):
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    groups = {}
    for r in rows:
        r["ranks"] = int(r["ranks"])
        groups.setdefault((r["strategy"], r["partitioner"]), []).append(r)
    for g in groups.values():
        g.sort(key=lambda r: r["ranks"])
    return groups


def epoch_plot(groups, out, title):
    n = len(groups)
    fig, axes = plt.subplots(1, n, figsize=(3.2 * n + 1.0, 3.4), sharey=True, squeeze=False)
    for ax, ((strategy, part), rows) in zip(axes[0], groups.items()):
        xs = list(range(len(rows)))
        bottom = [0.0] * len(rows)
        parts = SPLIT + [(None, "other", "#aaaaaa")]
        for key, label, color in parts:
            if key is None:  # what the split does not account for (evaluation excluded)
                vals = [max(0.0, (num(r, "epoch_ms") or 0) - b) for r, b in zip(rows, bottom)]
            else:
                vals = [num(r, key) or 0.0 for r in rows]
            ax.bar(xs, vals, bottom=bottom, color=color, label=label, width=0.6)
            bottom = [b + v for b, v in zip(bottom, vals)]
        for x, r in zip(xs, rows):
            t = num(r, "epoch_ms")
            if t is None:
                ax.text(x, 0, "failed", ha="center", va="bottom", rotation=90, color="#c44e52")
            else:
                ax.text(x, t, f"{t:.0f}", ha="center", va="bottom", fontsize=8)
        ax.set_xticks(xs, [str(r["ranks"]) for r in rows])
        ax.set_xlabel("ranks")
        ax.set_title(f"{strategy} / {part}", fontsize=10)
        ax.grid(axis="y", alpha=0.3)
    top = max((num(r, "epoch_ms") or 0) for rows in groups.values() for r in rows)
    axes[0][0].set_ylim(0, top * 1.12 if top > 0 else 1)
    axes[0][0].set_ylabel("ms per epoch (median)")
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, fontsize=8, loc="center right")
    fig.suptitle(title, fontsize=10)
    fig.tight_layout(rect=(0, 0, 1 - 0.9 / fig.get_figwidth(), 1))
    fig.savefig(os.path.join(out, "epoch_ms.png"), dpi=90)
    plt.close(fig)


def line_plot(groups, out, title, name, ylabel, value, ideal=False):
    fig, ax = plt.subplots(figsize=(4.8, 3.4))
    all_ranks = sorted({r["ranks"] for rows in groups.values() for r in rows})
    for (strategy, part), rows in groups.items():
        pts = [(r["ranks"], value(r)) for r in rows if value(r) is not None]
        if pts:
            ax.plot(*zip(*pts), marker="o", label=f"{strategy} / {part}")
    if ideal:
        bases = [int(r["baseline_ranks"]) for rows in groups.values() for r in rows
                 if r.get("baseline_ranks")]
        if bases:
            b = min(bases)
            xs = [x for x in all_ranks if x >= b]
            ax.plot(xs, [x / b for x in xs], "k--", lw=1, label="ideal")
    ax.set_xscale("log", base=2)
    ax.set_xticks(all_ranks, [str(x) for x in all_ranks])
    ax.minorticks_off()
    ax.set_xlabel("ranks")
    ax.set_ylabel(ylabel)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    ax.set_title(title, fontsize=10)
    fig.tight_layout()
    fig.savefig(os.path.join(out, name), dpi=90)
    plt.close(fig)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("csv")
    p.add_argument("out")
    p.add_argument("--title", default="dgnn scale")
    a = p.parse_args()
    groups = load(a.csv)
    if not groups:
        print(f"{a.csv} has no rows", file=sys.stderr)
        sys.exit(1)
    epoch_plot(groups, a.out, a.title)
    mb = lambda r: None if num(r, "bytes_sent_per_epoch") is None else num(r, "bytes_sent_per_epoch") / 1e6
    line_plot(groups, a.out, a.title, "bytes_sent.png", "MB sent per epoch (all ranks)", mb)
    line_plot(groups, a.out, a.title, "speedup.png", "speedup (epoch time)",
              lambda r: num(r, "speedup"), ideal=True)
    names = ", ".join(os.path.join(a.out, n) for n in ("epoch_ms.png", "bytes_sent.png", "speedup.png"))
    print(names)


if __name__ == "__main__":
    main()
