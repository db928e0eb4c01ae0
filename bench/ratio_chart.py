"""One chart per benchmark table: per row, each peer's figure against Strata's as a ratio where
above 1 means Strata is ahead, on a log scale with the 1.0 line drawn. Used by the reports of
bench/leveldb_page.py and bench/kvbench.sh (bench/db_bench.sh and bench/rucksdb_report.py draw
their own). Without matplotlib the chart is skipped, loudly, and the report keeps its tables."""

import os
import sys

COLOURS = {"leveldb": "#3d6b94", "rocksdb": "#d08c32", "sqlite": "#6b9a4a", "kyotocabinet": "#8c5fa8", "lmdb": "#b0413e"}


def ratio_chart(path, title, xlabel, rows, peers, names):
    """rows: [(label, {peer: ratio or None})]; writes path.svg and path.png and returns the
    Markdown line that shows the chart, or None when matplotlib is missing or nothing to draw."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("!!! no chart: matplotlib is not installed (pip install matplotlib)", file=sys.stderr)
        return None
    drawn = [p for p in peers if any(r.get(p) for _, r in rows)]
    if not rows or not drawn:
        return None
    height = 0.8 / len(drawn)
    fig, ax = plt.subplots(figsize=(9, 0.3 * len(rows) * len(drawn) + 1.6))
    for j, p in enumerate(drawn):
        pts = [(i + j * height, r.get(p)) for i, (_, r) in enumerate(rows) if r.get(p)]
        ax.barh([y for y, _ in pts], [x for _, x in pts], height=height, color=COLOURS.get(p, "#777777"), label=names[p])
    ax.axvline(1.0, color="black", linewidth=1)
    ax.set_xscale("log")
    ax.set_yticks([i + height * (len(drawn) - 1) / 2 for i in range(len(rows))], [label for label, _ in rows], fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel(xlabel)
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path + ".svg")
    fig.savefig(path + ".png", dpi=80)
    plt.close(fig)
    return f"![{title}]({os.path.basename(path)}.svg)"
