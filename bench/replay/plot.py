#!/usr/bin/env python3
"""Matching time against queue length, from onic-replay --csv: the papers'
figures (paper 000 fig. 5 and 6, paper 002 fig. 5) for the models, and
onic's engines as measured on this machine beside them.

    bench/replay/plot.py CURVE.csv OUT.png [TITLE]

onic-replay --plot OUT.png runs this on a temporary CSV.
"""
import csv
import sys


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    path, out = sys.argv[1], sys.argv[2]
    title = sys.argv[3] if len(sys.argv) > 3 else "matching time against queue length"
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    if not rows:
        sys.exit("plot.py: %s has no lookups to plot" % path)
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    length = [int(r["length"]) for r in rows]
    models = [c for c in rows[0] if c.startswith("model_")]
    engines = [c for c in rows[0] if c.startswith("engine_")]
    panels = 2 if engines else 1
    fig, axes = plt.subplots(1, panels, figsize=(6 * panels, 4.2), squeeze=False)
    names = {"model_nic_ns": "NIC processor walking the list (paper 000 baseline)",
             "model_alpu_ns": "NIC processor + ALPU (paper 000)",
             "model_pim_ns": "PIM NIC, wide compares (paper 002)"}
    ax = axes[0][0]
    for c in models:
        ax.plot(length, [float(r[c]) / 1000 for r in rows], marker=".", label=names.get(c, c))
    ax.set_xlabel("queue length when the lookup began (entries)")
    ax.set_ylabel("matching time per lookup (us)")
    ax.set_title("models of the papers' NICs")
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    if engines:
        ax = axes[0][1]
        for c in engines:
            ax.plot(length, [float(r[c]) for r in rows], marker=".",
                    label="onic " + c[len("engine_"):-len("_ns")])
        ax.set_xlabel("queue length when the lookup began (entries)")
        ax.set_ylabel("time per lookup here (ns)")
        ax.set_title("onic's engines on this machine")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=8)
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(out, dpi=110)


if __name__ == "__main__":
    main()
