"""One chart per benchmark table: per row, each peer's figure against Strata's as a ratio where
above 1 means Strata is ahead, on a log scale with the 1.0 line drawn. Used by the reports of
bench/leveldb_page.py and bench/kvbench.sh; bench/db_bench.sh draws its own and labels its axis
with `label_ratio_axis`; bench/rucksdb_report.py (ops/s, not ratios) draws its own. Without
matplotlib the chart is skipped, loudly, and the report keeps its tables."""

import math
import os
import sys
import textwrap

COLOURS = {"leveldb": "#3d6b94", "rocksdb": "#d08c32", "sqlite": "#6b9a4a", "kyotocabinet": "#8c5fa8", "lmdb": "#b0413e"}


# Candidate ticks, most wanted first: 1 always, then the round ratios, then the in-betweens.
TICKS = (1, 0.5, 2, 0.1, 10, 100, 0.2, 5, 50, 20, 0.25, 4, 3, 1.5, 0.75, 1.25, 0.05)


def ticks(lo, hi):
    """The ticks for a log axis from lo to hi: each candidate in TICKS order that lies inside and
    keeps at least 5% of the axis's width from every tick kept before it, so no two labels
    overlap (0.2 and 0.25 printed as "0.20.25" on a wide axis)."""
    span = math.log10(hi / lo)
    kept = []
    for t in TICKS:
        if lo <= t <= hi and all(abs(math.log10(t / k)) >= 0.05 * span for k in kept):
            kept.append(t)
    return sorted(kept)


def label_ratio_axis(ax):
    """Labels a log x axis of ratios with plain numbers at `ticks` (a log axis alone labels
    only 10^0 and 10^1). Shared by every chart of ratios, this module's and db_bench.sh's."""
    import matplotlib.ticker
    ax.set_xticks(ticks(*ax.get_xlim()))
    ax.xaxis.set_major_formatter(matplotlib.ticker.FormatStrFormatter("%g"))
    ax.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())


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
    label_ratio_axis(ax)
    # Long scenario names wrap (they were cut at the figure's left edge).
    labels = [textwrap.fill(label, 34) for label, _ in rows]
    ax.set_yticks([i + height * (len(drawn) - 1) / 2 for i in range(len(rows))], labels, fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel(xlabel)
    ax.set_title(textwrap.fill(title, 80), fontsize=10)
    ax.legend(fontsize=8)
    fig.tight_layout()
    # The box grows to hold every label and the title rather than clipping them.
    fig.savefig(path + ".svg", bbox_inches="tight")
    fig.savefig(path + ".png", dpi=80, bbox_inches="tight")
    plt.close(fig)
    return f"![{title}]({os.path.basename(path)}.svg)"
