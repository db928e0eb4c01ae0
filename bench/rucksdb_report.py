#!/usr/bin/env python3
"""The report of bench/rucksdb.sh: RucksDB's suite, LevelDB, Strata and RocksDB side by side.

usage: rucksdb_report.py JSONL BASE [--num N] [--rounds R] [--versions FILE] [--machine TEXT]

JSONL holds the JSON lines of `strata bench` and the harnesses, each tagged with "engine" and
"round". Writes BASE.md (a table per group: RucksDB's published figure as a reference column,
each system, ratios vs LevelDB), BASE.json and one chart, BASE.svg and BASE.png (matplotlib;
skipped with a !!! line when it is missing). Throughput: each workload's best round (highest
ops/s). Latency while flushes run: the round with the lowest mean latency (its best
throughput), whole (its percentiles, flushes and puts during background work belong
together), with every round's p99 and max beside it.
"""

import argparse
import json
import os
import re
import sys

NAMES = {"leveldb": "LevelDB", "strata": "Strata", "rocksdb": "RocksDB"}
ORDER = ["leveldb", "strata", "rocksdb"]
COLOURS = {"leveldb": "#3d6b94", "strata": "#b0413e", "rocksdb": "#d08c32"}

# drmingdrmer/rucksdb BENCHMARK_RESULTS.md (2025-10-23, v0.1.0, Apple Silicon, macOS; Criterion
# medians, ops/s). Their set-up differs from this suite's; see NOTES.
SOURCE = "drmingdrmer/rucksdb BENCHMARK_RESULTS.md (2025-10-23, v0.1.0, Apple Silicon, Criterion medians)"
REFERENCE = {
    "put_100b": 339_040,
    "put_1kb": 136_770,
    "put_10kb": 23_572,
    "get_memtable": 20_302,
    "get_sstable": 9_366,
    "get_not_found": 4_908_700,
    "delete": 378_860,
    "read_write_50_50": 34_991,
    "concurrent_writes x1": 98_762,
    "concurrent_writes x2": 112_250,
    "concurrent_writes x4": 123_950,
    "concurrent_writes x8": 116_800,
}
# flush_impact/writes_during_flush: 28.442 ms per iteration (a database opened with a 1 MB
# write buffer, then 2,000 puts of 1 KB): a mean only, open included.
REFERENCE_FLUSH_MEAN_US = 28_442 / 2000

GROUPS = [
    ("Puts (ops/s)", [("put_100b", "100 B values, N puts"), ("put_1kb", "1 KB values, N/10 puts"),
                      ("put_10kb", "10 KB values, N/100 puts")]),
    ("Gets (ops/s)", [("get_memtable", "1,000 keys just written, in the memtable"),
                      ("get_sstable", "N/10 keys, flushed and compacted into tables"),
                      ("get_not_found", "absent keys inside the tables' range: the bloom filter")]),
    ("Deletes and the 50/50 mix (ops/s)", [("delete", "N keys deleted in order"),
                                           ("read_write_50_50", "get of a key written so far, put of a new key, alternating")]),
    ("Concurrent writers (total ops/s)", [(f"concurrent_writes x{t}", f"{t} thread{'s' if t > 1 else ''}, N/10 puts of 1 KB in all")
                                          for t in (1, 2, 4, 8)]),
]

NOTES = [
    f"RucksDB's column: {SOURCE}, on another machine and with another method, so read it as a "
    "reference, not as a fourth system of this run. Their Criterion loops put constant `x` values "
    "under `key%010d` keys into one growing database; get_memtable and get_sstable cycled through "
    "1,000 and 5,000 keys of 1 KB (the 5,000 with a 4 MB buffer: about a fifth still in the memtable); "
    "their get_not_found asked for `notfound…` keys of a database of 1,000 keys held in the memtable "
    "(no table, so no bloom filter was read: a memtable miss), while this suite's absent keys sit "
    "between keys of compacted tables so every lookup reaches a table's filter; their delete removed "
    "keys of 10,000 written; their mix read 1,000 prepopulated keys; their concurrent_writes timed a "
    "fresh database's open plus 1,000 puts of 1 KB per thread; their flush_impact reports only the "
    "time of an open plus 2,000 puts of 1 KB with a 1 MB buffer (28.4 ms, about 14.2 µs a put), "
    "no percentiles.",
    "This suite: the same keys (16-byte `%016d`), values (db_bench's generator, half compressible), "
    "seeds and checks for every system (bench/harness.h, src/bin/strata/bench/rucks.rs); each "
    "workload starts from a fresh database with a 4 MB write buffer, a 10-bit bloom filter and "
    "Snappy, and fails the run if a get misses a key it wrote, finds an absent key, reads back a "
    "different value, or (writes_during_flush) no flush ran during its puts.",
    "Background work while the puts ran: LevelDB from its Env (a background call queued or running; "
    "a flush completes when the log it replaced is removed), Strata from `Db::background_busy` (a "
    "flush or compaction scheduled or running) and its flush counter, RocksDB from its "
    "EventListener (between a flush's or compaction's begin and completion callbacks: a queued job "
    "does not count).",
]


def ops_per_s(row):
    return 1e6 / row["micros_per_op"] if row and row["micros_per_op"] > 0 else None


def key_of(r):
    return f'concurrent_writes x{r["threads"]}' if r["benchmark"] == "concurrent_writes" else r["benchmark"]


def upstream(v):  # Debian version -> upstream: drop the epoch and the Debian revision
    return re.sub(r"-[^-]*$", "", v.split(":", 1)[-1])


def fmt_ops(v):
    if v is None:
        return "-"
    return f"{v / 1e6:.2f} M" if v >= 1e6 else f"{v:,.0f}"


def fmt_ratio(v):
    return f"{v:.2f}" if v is not None else "-"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("jsonl")
    ap.add_argument("base")
    ap.add_argument("--num", type=int, default=0)
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--versions")
    ap.add_argument("--machine", default="")
    a = ap.parse_args()

    rows = [json.loads(line) for line in open(a.jsonl) if line.strip()]
    engines = [e for e in ORDER if any(r["engine"] == e for r in rows)]
    versions = {}
    if a.versions and os.path.exists(a.versions):
        for line in open(a.versions):
            if line.strip():
                engine, pkg, version = line.split()
                versions[engine] = (pkg, version)

    # Throughput: each (engine, workload)'s best round; every round's ops/s kept.
    best, rounds_seen = {}, {}
    for r in rows:
        k = (r["engine"], key_of(r))
        rounds_seen.setdefault(k, []).append(round(ops_per_s(r) or 0))
        if k not in best or r["micros_per_op"] < best[k]["micros_per_op"]:
            best[k] = r
    # Latency: the round with the lowest mean over every put (the best throughput round).
    lat, lat_rounds = {}, {}
    for r in rows:
        if r["benchmark"] != "writes_during_flush" or not r.get("latency"):
            continue
        lat_rounds.setdefault(r["engine"], []).append(r)
        if r["engine"] not in lat or r["latency"]["mean_us"] < lat[r["engine"]]["latency"]["mean_us"]:
            lat[r["engine"]] = r

    label = {e: NAMES[e] + (f" {upstream(versions[e][1])}" if e in versions else "") for e in engines}
    peers = [e for e in engines if e != "leveldb"]
    have_leveldb = "leveldb" in engines
    how = "one run" if a.rounds == 1 else f"best of {a.rounds} rounds, engines interleaved in each round"
    lines = [
        f"# RucksDB's benchmark suite: {', '.join(NAMES[e] for e in engines)}",
        "",
        f"N = {a.num:,}; {how}; 16-byte keys, db_bench's values (half compressible), Snappy, "
        "4 MB write buffer, 10-bit bloom filter. "
        + (f"Libraries: {', '.join(f'{p} {v}' for p, v in versions.values())}. " if versions else "")
        + (f"Machine: {a.machine}." if a.machine else ""),
        "",
        "Indicative figures: one machine, shared with other work while it ran. RucksDB's column is "
        "its own published figure (another machine, another method: see the notes); "
        + ("the ratios are each system's over LevelDB's (> 1: better than LevelDB)." if have_leveldb else "no LevelDB in this run, so no ratios."),
    ]
    result = {"num": a.num, "rounds": a.rounds, "machine": a.machine, "source": SOURCE,
              "versions": {e: {"package": p, "version": v} for e, (p, v) in versions.items()},
              "groups": [], "latency": {}}

    def ratio_cols():
        return [f"{NAMES[e]} vs LevelDB" for e in peers] if have_leveldb else []

    for title, items in GROUPS:
        lines += ["", f"## {title}", "",
                  "| workload | what | RucksDB (published) | " + " | ".join(label[e] for e in engines)
                  + "".join(f" | {c}" for c in ratio_cols()) + " |",
                  "|---|---|" + "---:|" * (1 + len(engines) + len(ratio_cols()))]
        group = {"group": title, "workloads": []}
        for key, what in items:
            got = {e: ops_per_s(best.get((e, key))) for e in engines}
            if all(v is None for v in got.values()):
                continue
            ref = REFERENCE.get(key)
            ratios = {e: (got[e] / got["leveldb"] if have_leveldb and got[e] and got["leveldb"] else None) for e in peers}
            lines.append(f"| {key} | {what} | {fmt_ops(ref)} | " + " | ".join(fmt_ops(got[e]) for e in engines)
                         + "".join(f" | {fmt_ratio(ratios[e])}" for e in peers if have_leveldb) + " |")
            group["workloads"].append({
                "workload": key, "what": what, "rucksdb_ops_per_s": ref,
                **{e: {"ops_per_s": got[e], "best": best.get((e, key)), "rounds_ops_per_s": rounds_seen.get((e, key))} for e in engines},
                **{f"ratio_{e}_over_leveldb": ratios[e] for e in peers},
            })
        result["groups"].append(group)

    # Latency while flushes run.
    if lat:
        lines += ["", "## Write latency while memtable flushes run (µs)", "",
                  "writes_during_flush: a 1 MB write buffer, max(N/10, 4,096) puts of 1 KB, each timed; "
                  "each system's round with the lowest mean (its best throughput), every figure from that "
                  "round; the last two rows give every round's p99 and max, the figures a burst of other "
                  "work on the machine moves most (so the maxima get no ratio). Ratios: LevelDB's latency "
                  "over each system's (> 1: lower than LevelDB's).", "",
                  "| metric | RucksDB (published) | " + " | ".join(label[e] for e in engines)
                  + "".join(f" | {c}" for c in ratio_cols()) + " |",
                  "|---|" + "---:|" * (1 + len(engines) + len(ratio_cols()))]

        def lat_row(title, ref, get, ratio=True, fmt=lambda v: f"{v:,.1f}"):
            vals = {e: (get(lat[e]) if e in lat else None) for e in engines}
            cells = [fmt(vals[e]) if vals[e] is not None else "-" for e in engines]
            rs = []
            if have_leveldb:
                for e in peers:
                    v, base = vals[e], vals["leveldb"]
                    rs.append(fmt_ratio(base / v) if ratio and v and base else "-")
            lines.append(f"| {title} | {ref} | " + " | ".join(cells) + "".join(f" | {x}" for x in rs) + " |")
            return vals

        spec = [
            ("p50, every put", "-", lambda r: r["latency"]["p50_us"]),
            ("p99, every put", "-", lambda r: r["latency"]["p99_us"]),
            ("p99.9, every put", "-", lambda r: r["latency"]["p999_us"]),
            ("max, every put", "-", lambda r: r["latency"]["max_us"]),
            ("mean, every put", f"{REFERENCE_FLUSH_MEAN_US:.1f} (open included)", lambda r: r["latency"]["mean_us"]),
            ("p50, puts during a flush/compaction", "-", lambda r: (r.get("latency_busy") or {}).get("p50_us")),
            ("p99, puts during a flush/compaction", "-", lambda r: (r.get("latency_busy") or {}).get("p99_us")),
            ("max, puts during a flush/compaction", "-", lambda r: (r.get("latency_busy") or {}).get("max_us")),
        ]
        for title, ref, get in spec:
            result["latency"][title] = lat_row(title, ref, get, ratio=not title.startswith("max"))
        result["latency"]["puts during a flush/compaction"] = lat_row(
            "puts issued during a flush/compaction", "-",
            lambda r: None if r.get("busy_ops") is None else f'{r["busy_ops"]:,} of {r["ops"]:,}', ratio=False, fmt=str)
        result["latency"]["flushes completed during the puts"] = lat_row(
            "flushes completed during the puts", "-", lambda r: r.get("flushes"), ratio=False, fmt=str)
        every = lambda m: lambda r: " / ".join(f'{x["latency"][m]:,.1f}' for x in lat_rounds[r["engine"]])
        result["latency"]["p99 in each round"] = lat_row("p99 in each round", "-", every("p99_us"), ratio=False, fmt=str)
        result["latency"]["max in each round"] = lat_row("max in each round", "-", every("max_us"), ratio=False, fmt=str)
        result["latency"]["rows"] = lat
        result["latency"]["every_round"] = lat_rounds

    lines += ["", "## Notes", ""] + [f"- {n}" for n in NOTES]
    missing = [k for k in REFERENCE if not any((e, k) in best for e in engines)]
    if missing:
        lines.append(f"- Not run here: {', '.join(missing)}.")

    # One chart: throughput per workload (log scale, RucksDB's figure as a black mark) and the
    # latency percentiles of writes_during_flush.
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        keys = [k for _, items in GROUPS for k, _ in items if any((e, k) in best for e in engines)]
        fig, (ax, bx) = plt.subplots(1, 2, figsize=(13, 0.42 * len(keys) * len(engines) / 2 + 2),
                                     gridspec_kw={"width_ratios": [3, 2]})
        h = 0.8 / len(engines)
        for j, e in enumerate(engines):
            ys = [i + j * h for i in range(len(keys))]
            xs = [ops_per_s(best.get((e, k))) or 0 for k in keys]
            ax.barh(ys, xs, height=h, color=COLOURS[e], label=label[e])
        refs = [(i + h * (len(engines) - 1) / 2, REFERENCE[k]) for i, k in enumerate(keys) if k in REFERENCE]
        ax.scatter([x for _, x in refs], [y for y, _ in refs], marker="D", color="black", s=18, zorder=3,
                   label="RucksDB (published, other machine)")
        ax.set_xscale("log")
        ax.set_yticks([i + h * (len(engines) - 1) / 2 for i in range(len(keys))], keys, fontsize=8)
        ax.invert_yaxis()
        ax.set_xlabel("ops/s (log scale; concurrent_writes: total)")
        ax.set_title(f"RucksDB's suite, N = {a.num:,}, {how}", fontsize=9)
        ax.legend(fontsize=7, loc="lower right")
        metrics = [("p50", "p50_us"), ("p99", "p99_us"), ("p99.9", "p999_us"), ("max", "max_us")]
        w = 0.8 / len(engines)
        for j, e in enumerate(engines):
            if e not in lat:
                continue
            bx.bar([i + j * w for i in range(len(metrics))], [lat[e]["latency"][m] for _, m in metrics],
                   width=w, color=COLOURS[e], label=label[e])
        bx.set_yscale("log")
        bx.set_xticks([i + w * (len(engines) - 1) / 2 for i in range(len(metrics))], [m for m, _ in metrics])
        bx.set_ylabel("µs per put (log scale)")
        bx.set_title("put latency while memtable flushes run (1 MB buffer)", fontsize=9)
        bx.legend(fontsize=7)
        fig.tight_layout()
        fig.savefig(a.base + ".svg")
        fig.savefig(a.base + ".png", dpi=80)
        plt.close(fig)
        lines += ["", f"![ops/s per workload and put latency while flushes run]({os.path.basename(a.base)}.svg)"]
    except ImportError:
        print("!!! no chart: matplotlib is not installed (pip install matplotlib)", file=sys.stderr)

    text = "\n".join(lines)
    print(text)
    with open(a.base + ".md", "w") as f:
        f.write(text + "\n")
    with open(a.base + ".json", "w") as f:
        json.dump(result, f, indent=1)


if __name__ == "__main__":
    main()
