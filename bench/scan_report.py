#!/usr/bin/env python3
"""Report of one bench/scan.sh run: checks that every engine gave the same figures (and the
generator's, when known), prints a table with ratios against Mojang's LevelDB and the issue's
targets, and writes $RESULTS_DIR/scan-<date>-<world>.{json,md,svg} (bench/results_dir.sh).

Reads what bench/scan.sh left in $SCAN_TMP (<engine>.<run>.json, <engine>.usage,
inflate.json) and its environment (RESULT, NAME, ENGINES, ...). Not meant to be run by hand.
"""

import json
import os
import platform
import sys
import time

E = os.environ
TMP, RUNS, RESULT = E["SCAN_TMP"], int(E["RUNS"]), E["RESULT"]
ENGINES = E["ENGINES"].split()
FIG = ("entries", "key_bytes", "value_bytes", "crc32c")
LABELS = {
    "strata": "Strata native, readahead on every core",
    "strata_1t": "Strata native, one thread",
    "strata_wasm": "Strata wasm in Node (one thread)",
    "mojang": "Mojang LevelDB (amulet-leveldb, Python)",
    "rusty": "rusty-leveldb 4 (Mojang codecs, miniz_oxide)",
}
CORES = os.cpu_count() or 1
# The block cache the CLI opens read-only databases with (Options::google()).
BLOCK_CACHE_MIB = 8


def load(engine):
    runs = []
    for i in range(1, RUNS + 1):
        with open(os.path.join(TMP, "%s.%d.json" % (engine, i))) as f:
            runs.append(json.loads(f.read().strip().splitlines()[-1]))
    with open(os.path.join(TMP, engine + ".usage")) as f:
        rss, cpu = f.read().split()
    return runs, (int(rss) if rss.isdigit() else None), (int(cpu) if cpu.isdigit() else None)


def generator_figures():
    gen_log = E.get("GEN_LOG")
    if not gen_log or not os.path.exists(gen_log):
        return None
    found = None
    for line in open(gen_log):
        if line.startswith("verify: "):
            kv = dict(w.split("=", 1) for w in line.split()[1:] if "=" in w)
            if "crc32c" in kv:
                found = {k: int(kv[k]) for k in FIG}
    return found


def main():
    results = {e: load(e) for e in ENGINES}
    bad = []
    reference = None
    for engine, (runs, _, _) in results.items():
        for r in runs:
            fig = {k: r[k] for k in FIG}
            reference = reference or fig
            if fig != reference:
                bad.append("%s gave %s, expected %s" % (engine, fig, reference))
    expected = generator_figures()
    if expected and expected != reference:
        bad.append("engines gave %s, the generator %s" % (reference, expected))
    if bad:
        for b in bad:
            print("bench/scan: MISMATCH: " + b, file=sys.stderr)
        sys.exit(1)

    fig = reference
    raw_mb = (fig["key_bytes"] + fig["value_bytes"]) / 1e6
    engines = {}
    for engine, (runs, rss, cpu) in results.items():
        secs = [r["seconds"] for r in runs]
        best = min(secs)
        engines[engine] = {
            "label": LABELS[engine],
            "runs_seconds": secs,
            "best_seconds": best,
            "entries_per_s": round(fig["entries"] / best),
            "mb_per_s": round(raw_mb / best, 1),
            "peak_rss_kib": rss,
            "cpu_percent": cpu,
        }
        loops = [r["python_loop_seconds"] for r in runs if "python_loop_seconds" in r]
        if loops:
            engines[engine]["python_loop_seconds"] = min(loops)
    mojang = engines["mojang"]["best_seconds"]

    with open(os.path.join(TMP, "inflate.json")) as f:
        inflate = json.load(f)
    decoders = {d["decoder"]: d["seconds"] for d in inflate["decoders"]}
    # What native Strata ships by default (src/compress.rs); zlib-rs is the pure-Rust build's.
    shipped = decoders["libdeflate"]
    floor = shipped / CORES

    s = engines["strata"]["best_seconds"]
    s1 = engines["strata_1t"]["best_seconds"]
    w = engines["strata_wasm"]["best_seconds"]
    rss = engines["strata"]["peak_rss_kib"]
    open_s = float(E["OPEN_SECONDS"])
    targets = [
        ("native scan >= 5x faster than Mojang's LevelDB", mojang / s, ">= 5", mojang / s >= 5),
        ("native scan within 1.3x of the inflate floor (libdeflate / %d cores)" % CORES,
         s / floor, "<= 1.3", s / floor <= 1.3),
        ("native peak RSS <= 64 MiB + %d MiB block cache" % BLOCK_CACHE_MIB,
         (rss or 0) / 1024, "<= %d MiB" % (64 + BLOCK_CACHE_MIB),
         rss is not None and rss / 1024 <= 64 + BLOCK_CACHE_MIB),
        ("wasm scan faster than Mojang's native LevelDB", mojang / w, "> 1", w < mojang),
        ("wasm scan <= 1.5x Strata native one thread", w / s1, "<= 1.5", w / s1 <= 1.5),
        ("open <= 50 ms (native)", open_s * 1000, "<= 50 ms", open_s <= 0.05),
    ]

    lines = []
    out = lines.append
    out("scan of %s: %d entries, %.1f MB of keys+values, crc32c %d (identical in every engine%s)"
        % (E["NAME"], fig["entries"], raw_mb, fig["crc32c"], " and the generator" if expected else ""))
    out("")
    out("| engine | seconds (best of %d) | entries/s | MB/s | peak RSS | CPU | Mojang / engine |" % RUNS)
    out("|---|---:|---:|---:|---:|---:|---:|")
    for e in engines.values():
        r = "%.1f MiB" % (e["peak_rss_kib"] / 1024) if e["peak_rss_kib"] else "n/a"
        c = "%d%%" % e["cpu_percent"] if e["cpu_percent"] is not None else "n/a"
        out("| %s | %.3f | %s | %.1f | %s | %s | %.2fx |" % (
            e["label"], e["best_seconds"], format(e["entries_per_s"], ","), e["mb_per_s"], r, c,
            mojang / e["best_seconds"]))
    loop = engines["mojang"].get("python_loop_seconds")
    if loop is not None:
        out("")
        out("Mojang's figure includes Python: the same loop over in-memory entries (counting + "
            "crc32c) takes %.3f s, so Mojang's LevelDB alone is about %.3f s (Strata on every "
            "core is %.2fx faster than that)." % (loop, mojang - loop, (mojang - loop) / s))
    out("")
    out("Inflate floor (bench/inflate, %d blocks, %.1f MB compressed -> %.1f MB, one core, one pass):"
        % (inflate["blocks"], inflate["compressed_bytes"] / 1e6, inflate["raw_bytes"] / 1e6))
    for name, secs in decoders.items():
        out("- %s: %.3f s (%.0f MB/s)" % (name, secs, inflate["raw_bytes"] / 1e6 / secs))
    out("- floor for Strata (libdeflate / %d cores): %.3f s; the native scan is %.2fx that"
        % (CORES, floor, s / floor))
    out("")
    out("Open of the database (native): %.1f ms. strata_bg.wasm: %s bytes (%s gzipped)."
        % (open_s * 1000, E["WASM_BYTES"], E["WASM_GZ"]))
    out("")
    out("| target | measured | wanted | met |")
    out("|---|---:|---:|---|")
    for name, value, wanted, met in targets:
        out("| %s | %.2f | %s | %s |" % (name, value, wanted, "yes" if met else "no"))
    text = "\n".join(lines)
    print()
    print(text)

    record = {
        "workload": "scan",
        "date_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "commit": E["COMMIT"],
        "binary": E["BUILT"],
        "machine": {"cpus": CORES, "cpu": E["CPU"], "arch": platform.machine(),
                    "loadavg_before": E["LOAD_BEFORE"]},
        "world": {"name": E["NAME"], "path": E["WORLD"], "db_bytes": int(E["DB_BYTES"]),
                  "db_files": int(E["DB_FILES"]), "generator_args": E.get("GEN_ARGS") or None},
        "expected_from_generator": expected is not None,
        "figures": fig,
        "runs": RUNS,
        "engines": engines,
        "inflate": inflate,
        "inflate_floor_seconds": round(floor, 4),
        "open_seconds": open_s,
        "wasm_bytes": int(E["WASM_BYTES"]),
        "wasm_gzip_bytes": int(E["WASM_GZ"]),
        "targets": [{"target": n, "measured": round(v, 3), "wanted": t, "met": m}
                    for n, v, t, m in targets],
    }
    base = RESULT[:-len(".json")]
    with open(RESULT, "w") as f:
        json.dump(record, f, indent=2)
        f.write("\n")
    with open(base + ".md", "w") as f:
        f.write(text + "\n")
    chart(engines, floor, base + ".svg")
    print("results: %s, %s.md, %s.svg" % (RESULT, base, base))


def chart(engines, floor, path):
    """Horizontal bars of best seconds per engine, with the inflate floor marked."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = [e["label"] for e in engines.values()][::-1]
    secs = [e["best_seconds"] for e in engines.values()][::-1]
    fig, ax = plt.subplots(figsize=(8, 0.5 * len(names) + 1.2))
    bars = ax.barh(names, secs, color=["#4878d0" if "Strata" in n else "#aaaaaa" for n in names])
    ax.bar_label(bars, fmt="%.2f s", padding=3)
    ax.axvline(floor, color="#d65f5f", linestyle="--", label="inflate floor (libdeflate / cores)")
    ax.set_xlabel("seconds (lower is better)")
    ax.set_title("Scan of %s (%s)" % (E["NAME"], time.strftime("%Y-%m-%d", time.gmtime())))
    ax.legend(loc="lower right")
    ax.set_xlim(0, max(secs) * 1.18)
    fig.tight_layout()
    fig.savefig(path)


if __name__ == "__main__":
    main()
