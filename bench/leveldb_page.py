#!/usr/bin/env python3
"""LevelDB's own benchmark page (doc/benchmark.html, Google, July 2011: LevelDB, Kyoto
Cabinet TreeDB, SQLite3) reproduced section by section as named scenarios, with every system
Strata is compared with, in one run on this machine, through the db_bench harnesses
(`strata bench`, bench/*_bench built by bench/leveldb_page.sh). The page's published figures
(a 6-core Xeon X5650, ext3, 2011) are a reference column, not a target: the ratios that count
are those measured here, in the same run. With --rounds N every scenario is run N times, every
engine once per round (interleaved, so a slow spell of the machine hits all of them), and each
cell is the engine's best round.

usage: leveldb_page.py BENCH_DIR RESULTS_BASE [--num N] [--engines a,b,...] [--rounds N]
                      [--only TEXT[,TEXT...]]   (only the sections whose title contains one TEXT)
"""

import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ratio_chart import ratio_chart  # noqa: E402

ENGINES = ["strata", "leveldb", "rocksdb", "sqlite", "kyotocabinet", "lmdb"]
NAMES = {"strata": "Strata", "leveldb": "LevelDB", "rocksdb": "RocksDB", "sqlite": "SQLite",
         "kyotocabinet": "Kyoto TreeDB", "lmdb": "LMDB"}
MB = 1 << 20

# (section, scenario, workloads run in order, the one reported, flags, per-engine flags,
#  published ops/sec {leveldb, kyotocabinet, sqlite} or None).
SCENARIOS = [
    ("1 Baseline", "A. sequential reads", "fillrandom,readseq", "readseq", {}, {}, (4_030_000, 1_010_000, 174_000)),
    ("1 Baseline", "B. random reads", "fillrandom,readrandom", "readrandom", {}, {}, (129_000, 151_000, 134_000)),
    ("1 Baseline", "C. sequential writes", "fillseq", "fillseq", {}, {}, (779_000, 342_000, 48_600)),
    ("1 Baseline", "D. random writes", "fillrandom", "fillrandom", {}, {}, (164_000, 88_500, 9_860)),
    ("2A Large values (1,000 x 100,000 B)", "sequential writes", "fillseq", "fillseq", {"num": 1000, "value_size": 100_000}, {}, (1_100, 1_000, 1_600)),
    ("2A Large values (1,000 x 100,000 B)", "random writes", "fillrandom", "fillrandom", {"num": 1000, "value_size": 100_000}, {}, (480, 1_100, 1_600)),
    ("2A Large values (1,000 x 100,000 B)", "random writes, 64 MB write buffer in every LSM (RocksDB's default)", "fillrandom", "fillrandom",
     {"num": 1000, "value_size": 100_000, "write_buffer_size": 64 * MB}, {}, None),
    ("2A Large values (1,000 x 100,000 B)", "random writes, 4 MB write buffer in every LSM (LevelDB's default)", "fillrandom", "fillrandom",
     {"num": 1000, "value_size": 100_000, "write_buffer_size": 4 * MB}, {}, None),
    ("2B Batch writes (1,000 batches of 1,000)", "sequential writes (entries/s)", "fillbatch", "fillbatch", {}, {}, (840_000, None, 124_000)),
    ("2C Synchronous writes (10,000)", "random writes", "fillsync", "fillsync", {"num_scale": 10}, {}, (100, 8, 88)),
    ("2D Compression off", "sequential writes", "fillseq", "fillseq", {"compression": "none"}, {}, (594_000, 485_000, 48_600)),
    ("2D Compression off", "random writes", "fillrandom", "fillrandom", {"compression": "none"}, {}, (135_000, 159_000, 9_860)),
    ("2E More memory (120 MB write buffer, 8 MB cache; others 128 MB cache)", "sequential writes", "fillseq", "fillseq",
     {"write_buffer_size": 120 * MB, "cache_size": 8 * MB}, {"sqlite": {"cache_size": 128 * MB}, "kyotocabinet": {"cache_size": 128 * MB}}, (812_000, 321_000, 48_500)),
    ("2E More memory (120 MB write buffer, 8 MB cache; others 128 MB cache)", "random writes", "fillrandom", "fillrandom",
     {"write_buffer_size": 120 * MB, "cache_size": 8 * MB}, {"sqlite": {"cache_size": 128 * MB}, "kyotocabinet": {"cache_size": 128 * MB}}, (355_000, 284_000, 9_670)),
    ("3A Larger caches (8 MB write buffer, 120 MB cache; others 128 MB)", "sequential reads", "fillrandom,readseq", "readseq",
     {"write_buffer_size": 8 * MB, "cache_size": 120 * MB}, {"sqlite": {"cache_size": 128 * MB}, "kyotocabinet": {"cache_size": 128 * MB}}, (5_210_000, 1_070_000, 210_000)),
    ("3A Larger caches (8 MB write buffer, 120 MB cache; others 128 MB)", "random reads", "fillrandom,readrandom", "readrandom",
     {"write_buffer_size": 8 * MB, "cache_size": 120 * MB}, {"sqlite": {"cache_size": 128 * MB}, "kyotocabinet": {"cache_size": 128 * MB}}, (190_000, 463_000, 186_000)),
    ("3B No compression reads", "sequential reads", "fillrandom,readseq", "readseq", {"compression": "none"}, {}, (4_880_000, 1_230_000, 174_000)),
    ("3B No compression reads", "random reads", "fillrandom,readrandom", "readrandom", {"compression": "none"}, {}, (149_000, 175_000, 134_000)),
    ("3C Random reads after compaction", "random reads", "fillrandom,compact,readrandom", "readrandom", {}, {}, None),
]


def run(engine, bench_dir, db, workloads, flags):
    if engine == "strata":
        cmd = [os.path.join("target", "release", "strata"), "bench"]
    else:
        cmd = [os.path.join(bench_dir, f"{engine}_bench")]
    cmd += [f"--benchmarks={workloads}", f"--db={db}", "--json"]
    cmd += [f"--{k}={v}" for k, v in flags.items()]
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit(f"{engine}: {' '.join(cmd)} failed: {out.stderr.strip()[-400:]}")
    return [json.loads(l) for l in out.stdout.splitlines() if l.startswith("{")]


def main():
    bench_dir, base = sys.argv[1], sys.argv[2]
    num = 1_000_000
    engines = ENGINES
    rounds = 1
    only = None
    args = sys.argv[3:]
    while args:
        if args[0] == "--num":
            num = int(args[1]); args = args[2:]
        elif args[0] == "--engines":
            engines = [e for e in args[1].split(",") if e]; args = args[2:]
        elif args[0] == "--only":
            only = [t for t in args[1].split(",") if t]; args = args[2:]
        elif args[0] == "--rounds":
            rounds = int(args[1]); args = args[2:]
            if rounds < 1:
                raise SystemExit("--rounds must be at least 1")
        else:
            raise SystemExit(f"unknown option {args[0]}")
    tmp = tempfile.mkdtemp(prefix="leveldb-page.")
    results = []
    try:
        for section, name, workloads, report, flags, per_engine, published in SCENARIOS:
            if only and not any(t in section for t in only):
                continue
            row = {"section": section, "scenario": name, "published": published, "ops": {}, "rounds": {e: [] for e in engines}}
            for round_no, e in ((r, e) for r in range(rounds) for e in engines):
                f = {"num": num, "value_size": 100, "compression_ratio": 0.5, "compression": "snappy"}
                f.update({k: v for k, v in flags.items() if k != "num_scale"})
                if "num_scale" in flags:  # fillsync writes num/1000 entries: 10,000 at 1 M
                    f["num"] = flags["num_scale"] * num
                f.update(per_engine.get(e, {}))
                db = os.path.join(tmp, e)
                shutil.rmtree(db, ignore_errors=True)
                for p in (db + ".kct",):
                    if os.path.exists(p):
                        os.remove(p)
                lines = run(e, bench_dir, db, workloads, f)
                got = [l for l in lines if l["benchmark"] == report]
                ops = got[-1]["ops"] / got[-1]["seconds"] if got and got[-1]["seconds"] > 0 else None
                row["rounds"][e].append(ops)
                if ops and ops > (row["ops"].get(e) or 0):
                    row["ops"][e] = ops
                print(f"[leveldb-page] {section} / {name}: round {round_no + 1}/{rounds} {e} {ops or '-'}", file=sys.stderr)
                shutil.rmtree(db, ignore_errors=True)
            results.append(row)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    fmt = lambda v: f"{v:,.0f}" if v else "-"
    lines = [f"# LevelDB's benchmark page (2011), reproduced here: {num:,} entries of 100 B unless the scenario says otherwise", "",
             f"Machine: {platform.machine()}, {os.cpu_count()} cores; "
             + ("one run" if rounds == 1 else f"best of {rounds} rounds, engines interleaved in each")
             + ". ops/s (batch: entries/s). "
             "'2011' columns: the page's published figures (Xeon X5650, ext3), for reference only.", ""]
    section = None
    charts = 0

    def chart_of(section_name):
        # The section's table as a chart: Strata's ops/s over each other system's.
        nonlocal charts
        rows = [(r["scenario"], {e: (r["ops"]["strata"] / r["ops"][e]) if r["ops"].get("strata") and r["ops"].get(e) else None for e in engines if e != "strata"})
                for r in results if r["section"] == section_name]
        charts += 1
        return ratio_chart(f"{base}-{charts}", f"{section_name}: Strata's ops/s over each system's", "Strata's ops/s over the system's (> 1: Strata is faster)",
                           rows, [e for e in engines if e != "strata"], NAMES)

    for r in results:
        if r["section"] != section:
            if section is not None:
                line = chart_of(section)
                if line:
                    lines += ["", line]
            section = r["section"]
            lines += ["", f"## {section}", "", "| scenario | 2011 LevelDB | 2011 TreeDB | 2011 SQLite | " + " | ".join(NAMES[e] for e in engines) + " | Strata/LevelDB | Strata/best LSM | Strata/best other |",
                      "|---|---:|---:|---:|" + "---:|" * len(engines) + "---:|---:|---:|"]
        pub = r["published"] or (None, None, None)
        s = r["ops"].get("strata")
        lv = r["ops"].get("leveldb")
        others = [v for e, v in r["ops"].items() if e != "strata" and v]
        best = max(others) if others else None
        # The engines with Strata's guarantees: a write-ahead log in front of an LSM tree.
        lsms = [v for e, v in r["ops"].items() if e in ("leveldb", "rocksdb") and v]
        best_lsm = max(lsms) if lsms else None
        cells = [r["scenario"], fmt(pub[0]), fmt(pub[1]), fmt(pub[2])] + [fmt(r["ops"].get(e)) for e in engines]
        cells += [f"{s / lv:.2f}" if s and lv else "-", f"{s / best_lsm:.2f}" if s and best_lsm else "-",
                  f"{s / best:.2f}" if s and best else "-"]
        lines.append("| " + " | ".join(cells) + " |")
    if section is not None:
        line = chart_of(section)
        if line:
            lines += ["", line]
    lines += ["", "Guarantees differ (see bench/db_bench.sh's report): 'best LSM' is the best of LevelDB and RocksDB, the engines that give "
              "Strata's guarantees (a write-ahead log in front of an LSM tree of compressed tables; RocksDB with its own defaults, a 64 MB write buffer "
              "where LevelDB and Strata have 4 MB unless the scenario sets it). TreeDB and LMDB keep no write-ahead log; SQLite commits a transaction per write; "
              "TreeDB has no batch writes (its row repeats single puts, as LevelDB's db_bench_tree_db.cc does)."]
    text = "\n".join(lines)
    print(text)
    with open(base + ".md", "w") as f:
        f.write(text + "\n")
    with open(base + ".json", "w") as f:
        json.dump({"num": num, "engines": engines, "rounds": rounds, "scenarios": results}, f, indent=1)


if __name__ == "__main__":
    main()
