#!/usr/bin/env bash
# db_bench workloads, Strata (`strata bench`) against peer engines in one run on this machine:
# Google's LevelDB (Debian libleveldb-dev through bench/leveldb_bench.cc), RocksDB (Debian
# librocksdb-dev through bench/rocksdb_bench.cc) and SQLite (Debian libsqlite3-dev through
# bench/sqlite_bench.c), Kyoto Cabinet's TreeDB (libkyotocabinet-dev through
# bench/kyoto_bench.cc, LevelDB's 2011 benchmark page's third system) and LMDB (liblmdb-dev
# through bench/lmdb_bench.cc, kvbench's), harnesses with the same workloads, keys, values and
# seeds (bench/harness.h). Prints a
# table of micros/op and the ratios peer/Strata per workload (> 1: Strata is faster) and writes
# bench/results/db_bench-<date>[-N].{json,md}. A workload a peer has no counterpart for (SQLite:
# compact) shows "-".
#
# usage: bash bench/db_bench.sh [--num=N] [--rounds=R] [--no-build]
# env:   STRATA_DB_BENCH_PEERS  comma-separated peers to run besides Strata
#                               (default leveldb,rocksdb,sqlite,kyotocabinet,lmdb; empty:
#                               Strata alone)
#        STRATA_DB_BENCH_ROUNDS rounds (default 3, or --rounds): every engine runs the whole
#                               workload list once per round, engines interleaved within a
#                               round, and each workload counts its best (lowest) micros/op
#                               over the rounds, so a burst of load on this shared machine
#                               during one engine's turn does not decide a ratio
set -euo pipefail
cd "$(dirname "$0")/.."

NUM=1000000
BUILD=1
ROUNDS=${STRATA_DB_BENCH_ROUNDS:-3}
for a in "$@"; do
  case "$a" in
    --num=*) NUM=${a#--num=} ;;
    --rounds=*) ROUNDS=${a#--rounds=} ;;
    --no-build) BUILD=0 ;;
    *) echo "unknown option $a" >&2; exit 2 ;;
  esac
done

[[ $ROUNDS =~ ^[1-9][0-9]*$ ]] || { echo "--rounds must be a positive number" >&2; exit 2; }

PEERS=${STRATA_DB_BENCH_PEERS-leveldb,rocksdb,sqlite,kyotocabinet,lmdb}
PEER_LIST=()
for p in ${PEERS//,/ }; do
  case "$p" in
    leveldb | rocksdb | sqlite | kyotocabinet | lmdb) PEER_LIST+=("$p") ;;
    *) echo "STRATA_DB_BENCH_PEERS: unknown peer $p (leveldb, rocksdb, sqlite, kyotocabinet, lmdb)" >&2; exit 2 ;;
  esac
done

# The peers' libraries: Debian packages, or Homebrew formulae on macOS (idempotent).
source bench/platform.sh
bench_pkg_install ${PEER_LIST[@]+"${PEER_LIST[@]}"}

OUT=target/bench
source bench/results_dir.sh
mkdir -p "$OUT"
build() { # source binary compiler "flags" "libraries" (rebuilt when the source is newer)
  local src=$1 bin=$2 cc=$3 flags=$4 libs=$5
  if [ ! -x "$bin" ] || [ "$src" -nt "$bin" ] || [ bench/harness.h -nt "$bin" ]; then
    # shellcheck disable=SC2086 # word splitting wanted
    $cc $flags "$src" $libs -o "$bin"
  fi
}
for p in ${PEER_LIST[@]+"${PEER_LIST[@]}"}; do
  case "$p" in
    leveldb) build bench/leveldb_bench.cc "$OUT/leveldb_bench" bench_cxx "-O2 -std=c++17" "-lleveldb -lsnappy -lpthread" ;;
    rocksdb) build bench/rocksdb_bench.cc "$OUT/rocksdb_bench" bench_cxx "-O2 -Wall -std=c++17" "-lrocksdb -lpthread" ;;
    sqlite) build bench/sqlite_bench.c "$OUT/sqlite_bench" bench_cc "-O2 -Wall" "-lsqlite3" ;;
    kyotocabinet) build bench/kyoto_bench.cc "$OUT/kyotocabinet_bench" bench_cxx "-O2 -Wall -std=c++17" "-lkyotocabinet -lz -lpthread" ;;
    lmdb) build bench/lmdb_bench.cc "$OUT/lmdb_bench" bench_cxx "-O2 -Wall -std=c++17" "-llmdb -lpthread" ;;
  esac
done
if [ "$BUILD" = 1 ]; then cargo build --release --quiet; fi

WORKLOADS="fillseq,fillsync,fillrandom,overwrite,readrandom,readseq,readreverse,readmissing,readhot,seekrandom,compact,readrandom,readseq,readreverse,fill100K,fillbatch,deleteseq,fillrandom,deleterandom,bulkload_seq,readseq,bulkload_random,mixed"
COMMON=(--num="$NUM" --value_size=100 --compression_ratio=0.5 --compression=snappy --json)
DBS=$(mktemp -d "${TMPDIR:-/tmp}/db-bench.XXXX")
trap 'rm -rf "$DBS"' EXIT

run() { # engine benchmarks extra-args...
  local engine=$1 list=$2; shift 2
  if [ "$engine" = strata ]; then
    target/release/strata bench --benchmarks="$list" --db="$DBS/strata" "${COMMON[@]}" "$@"
  else
    "$OUT/${engine}_bench" --benchmarks="$list" --db="$DBS/$engine" "${COMMON[@]}" "$@"
  fi
}

{
  for round in $(seq 1 "$ROUNDS"); do
    echo "[db_bench] round $round of $ROUNDS" >&2
    for engine in ${PEER_LIST[@]+"${PEER_LIST[@]}"} strata; do
      tag="{\"engine\":\"$engine\",\"round\":$round,"
      run "$engine" "$WORKLOADS" | sed "s/^{/$tag/"
      rm -rf "${DBS:?}/$engine"
      # Same memory: fill100K with one write buffer in every LSM, RocksDB's default 64 MB and
      # LevelDB's 4 MB (the row above gives each its own default: RocksDB 64 MB, LevelDB and
      # Strata 4 MB), so the memtable budget and the engine are told apart.
      case "$engine" in
        strata|leveldb|rocksdb)
          for mb in 64 4; do
            run "$engine" fill100K --write_buffer_size=$((mb << 20)) |
              sed "s/^{/$tag\"variant\":\"fill100K, $mb MB write buffer in every LSM\",/"
            rm -rf "${DBS:?}/$engine"
          done ;;
      esac
      # Thread scaling: the LSM engines (SQLite's one connection holds an exclusive lock).
      [ "$engine" = sqlite ] && continue
      for t in 1 2 4 8; do
        run "$engine" fillrandom --threads="$t" --num=$((NUM / t)) | sed "s/^{/$tag\"scaling\":true,/"
      done
      rm -rf "${DBS:?}/$engine"
    done
  done
} > "$OUT/db_bench.jsonl"

# Versions of the peers' libraries (Debian packages or Homebrew formulae), as
# "peer package version" lines.
VERSIONS=$OUT/db_bench.versions
: > "$VERSIONS"
for p in ${PEER_LIST[@]+"${PEER_LIST[@]}"}; do
  echo "$p $(bench_pkg_version "$p")" >> "$VERSIONS"
done

python3 -c 'import matplotlib' 2>/dev/null ||
  python3 -m pip install --disable-pip-version-check -q matplotlib || true  # the chart only
python3 - "$OUT/db_bench.jsonl" "$(result_base db_bench)" "$NUM" "$VERSIONS" "$ROUNDS" <<'PY'
import json, os, platform, re, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
base, num, rounds = sys.argv[2], int(sys.argv[3]), int(sys.argv[5])
# peer -> (Debian package, Debian version), in the order they ran.
peers = {}
for line in open(sys.argv[4]):
    engine, pkg, version = line.split()
    peers[engine] = (pkg, version)
def upstream(v):  # Debian version -> upstream: drop the epoch and the Debian revision
    return re.sub(r"-[^-]*$", "", v.split(":", 1)[-1])
names = {"leveldb": "LevelDB", "rocksdb": "RocksDB", "sqlite": "SQLite", "kyotocabinet": "Kyoto TreeDB", "lmdb": "LMDB"}
ran = [e for e in ("leveldb", "rocksdb", "sqlite", "kyotocabinet", "lmdb") if e in peers]
def group(r):
    return "scaling" if r.get("scaling") else "variant" if r.get("variant") else "main"
def pick(engine, kind):
    """(workload, row) in run order; a workload's row is its best round (lowest micros/op),
    with every round's figure kept in "rounds"."""
    best, order = {}, []
    for rnd in range(1, rounds + 1):
        seen = {}
        for r in rows:
            if r["engine"] != engine or group(r) != kind or r.get("round", 1) != rnd:
                continue
            n = seen.get(r["benchmark"], 0); seen[r["benchmark"]] = n + 1
            key = r["benchmark"] if n == 0 else f'{r["benchmark"]} ({n + 1})'
            if kind == "scaling": key = f'fillrandom x{r["threads"]} threads'
            if kind == "variant": key = r["variant"]
            if key not in best:
                order.append(key)
                best[key] = {k: v for k, v in r.items() if k != "round"}
                best[key]["rounds"] = []
            best[key]["rounds"].append(r["micros_per_op"])
            if r["micros_per_op"] < best[key]["micros_per_op"]:
                best[key].update({k: v for k, v in r.items() if k != "round"})
    return [(k, best[k]) for k in order]
peer_text = ", ".join(f"{pkg} {v}" for pkg, v in peers.values()) or "none"
cols = [f"{names[e]} {upstream(peers[e][1])} micros/op" for e in ran if e == "leveldb"] + ["Strata micros/op"] \
    + [f"{names[e]} {upstream(peers[e][1])} micros/op" for e in ran if e != "leveldb"] \
    + [f"{names[e]}/Strata" for e in ran]
snappy = "Snappy" + (" (SQLite, LMDB: uncompressed; Kyoto: its zlib)" if set(ran) & {"sqlite", "lmdb", "kyotocabinet"} else "")
how = "one run" if rounds == 1 else f"best of {rounds} rounds, engines interleaved in each round"
lines = [f"db_bench workloads, {num:,} entries, 16-byte keys, 100-byte values (ratio 0.5), {snappy}; {how}; peers: {peer_text}",
         "", "| workload | " + " | ".join(cols) + " |", "|---|" + "---:|" * len(cols)]
result = {"num": num, "rounds": rounds, "machine": {"cpus": os.cpu_count(), "arch": platform.machine()},
          "peers": {e: {"package": pkg, "version": v} for e, (pkg, v) in peers.items()},
          "workloads": []}
fmt = lambda r: f'{r["micros_per_op"]:.3f}' if r else "-"
for kind in ("main", "variant", "scaling"):
    by = {e: dict(pick(e, kind)) for e in ran}
    for k, sr in pick("strata", kind):
        got = {e: by[e].get(k) for e in ran}
        ratio = {e: (got[e]["micros_per_op"] / sr["micros_per_op"] if got[e] and sr["micros_per_op"] > 0 else None) for e in ran}
        cells = [fmt(got[e]) for e in ran if e == "leveldb"] + [fmt(sr)] + [fmt(got[e]) for e in ran if e != "leveldb"] \
            + [f"{ratio[e]:.2f}" if ratio[e] is not None else "-" for e in ran]
        lines.append(f"| {k} | " + " | ".join(cells) + " |")
        w = {"workload": k, "leveldb": got.get("leveldb"), "strata": sr}
        for e in ("rocksdb", "sqlite", "kyotocabinet", "lmdb"): w[e] = got.get(e)
        for e in ("leveldb", "rocksdb", "sqlite", "kyotocabinet", "lmdb"): w[f"ratio_{e}_over_strata"] = ratio.get(e)
        result["workloads"].append(w)
if set(ran) & {"sqlite", "kyotocabinet", "lmdb"}:
    lines += ["", "Guarantees differ, so read those columns with care: Strata, LevelDB and RocksDB log every "
              "write ahead (an unsynced write survives a process crash; a synced one a machine crash). "
              "SQLite commits each write as a transaction (its journal; no batching across puts). Kyoto "
              "TreeDB updates a memory-mapped B+ tree in place with no log: a crash can lose or tear "
              "unsynced updates. LMDB's copy-on-write B-tree commits each write as a transaction with "
              "MDB_NOSYNC (a crash can lose the last commits, never corrupt); fillsync is durable in every "
              "engine. compact has no LMDB counterpart."]
# One chart of the table: per workload, each peer's micros/op over Strata's (> 1: Strata is
# faster), log scale, the 1.0 line drawn.
try:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    ws = result["workloads"]
    fig, ax = plt.subplots(figsize=(10, 0.32 * len(ws) * max(1, len(ran)) / 2 + 1.5))
    height = 0.8 / max(1, len(ran))
    colours = {"leveldb": "#3d6b94", "rocksdb": "#d08c32", "sqlite": "#6b9a4a", "kyotocabinet": "#8c5fa8", "lmdb": "#b0413e"}
    for j, e in enumerate(ran):
        ys = [i + j * height for i in range(len(ws))]
        xs = [w[f"ratio_{e}_over_strata"] or 0 for w in ws]
        ax.barh([y for y, x in zip(ys, xs) if x > 0], [x for x in xs if x > 0], height=height, color=colours[e], label=names[e])
    ax.axvline(1.0, color="black", linewidth=1)
    ax.set_xscale("log")
    sys.path.insert(0, "bench")
    from ratio_chart import label_ratio_axis
    label_ratio_axis(ax)
    ax.set_yticks([i + height * (len(ran) - 1) / 2 for i in range(len(ws))], [w["workload"] for w in ws], fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel("peer micros/op over Strata's (> 1: Strata is faster)")
    ax.set_title(f"db_bench, {num:,} entries, {how}")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(base + ".svg")
    fig.savefig(base + ".png", dpi=80)
    lines += ["", f"![peer micros/op over Strata's per workload]({os.path.basename(base)}.svg)"]
except ImportError:
    print("!!! no chart: matplotlib is not installed (pip install matplotlib)", file=sys.stderr)
text = "\n".join(lines)
print(text)
open(base + ".md", "w").write(text + "\n")
json.dump(result, open(base + ".json", "w"), indent=1)
PY
