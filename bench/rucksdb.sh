#!/usr/bin/env bash
# RucksDB's benchmark suite (drmingdrmer/rucksdb: benches/basic_ops.rs, benches/concurrent.rs),
# Strata against Google's LevelDB and RocksDB side by side in one run: puts of 100 B, 1 KB and
# 10 KB values; gets from the memtable, from tables and of absent keys through the bloom
# filter; deletes; a 50/50 read/write mix; concurrent writers at 1, 2, 4 and 8 threads (total
# ops/s); and the latency of puts while memtable flushes run (p50/p99/p99.9/max, the puts
# issued during a flush or compaction, the flushes completed). `strata bench` and the
# harnesses bench/leveldb_bench.cc and bench/rocksdb_bench.cc run the same workloads with the
# same keys, values, seeds and output (bench/harness.h's RunRucks, src/bin/strata/bench/rucks.rs);
# each workload checks its own results and fails the run when they are wrong.
#
# Every engine gets RucksDB's configuration: a 4 MB write buffer (writes_during_flush: 1 MB),
# a 10-bit bloom filter, Snappy. Rounds interleave the engines; each workload keeps its best
# round. Writes <results>/rucksdb-<date>[-N].{md,json,svg,png} (bench/results_dir.sh): a table per
# group with RucksDB's published figure as a reference column, each system, ratios vs LevelDB,
# and one chart (bench/rucksdb_report.py).
#
# usage: bash bench/rucksdb.sh [--num=N] [--rounds=R] [--engines=leveldb,rocksdb,strata]
#                              [--strata=PATH] [--no-build]
#   --num      N of the workloads (default 1000000: about 3 minutes on 2 cores, 40 s at
#              200000); puts of 100 B are N, of 1 KB N/10, of 10 KB N/100, gets N, the
#              concurrent writers N/10 in all (see bench/harness.h)
#   --rounds   rounds (default 3)
#   --engines  which systems (default all three)
#   --strata   the strata binary (default target/release/strata, built unless --no-build)
set -euo pipefail
cd "$(dirname "$0")/.."

NUM=1000000
ROUNDS=3
BUILD=1
ENGINES=leveldb,rocksdb,strata
STRATA=target/release/strata
for a in "$@"; do
  case "$a" in
    --num=*) NUM=${a#--num=} ;;
    --rounds=*) ROUNDS=${a#--rounds=} ;;
    --engines=*) ENGINES=${a#--engines=} ;;
    --strata=*) STRATA=${a#--strata=}; BUILD=0 ;;
    --no-build) BUILD=0 ;;
    *) echo "bench/rucksdb: unknown option $a" >&2; exit 2 ;;
  esac
done
[[ $NUM =~ ^[1-9][0-9]*$ ]] || { echo "bench/rucksdb: --num must be a positive number" >&2; exit 2; }
[[ $ROUNDS =~ ^[1-9][0-9]*$ ]] || { echo "bench/rucksdb: --rounds must be a positive number" >&2; exit 2; }
ENGINE_LIST=()
PEER_LIST=()
for e in ${ENGINES//,/ }; do
  case "$e" in
    leveldb | rocksdb) ENGINE_LIST+=("$e"); PEER_LIST+=("$e") ;;
    strata) ENGINE_LIST+=("$e") ;;
    *) echo "bench/rucksdb: unknown engine $e (leveldb, rocksdb, strata)" >&2; exit 2 ;;
  esac
done
[ ${#ENGINE_LIST[@]} -gt 0 ] || { echo "bench/rucksdb: no engine" >&2; exit 2; }

source bench/platform.sh
bench_pkg_install ${PEER_LIST[@]+"${PEER_LIST[@]}"}

# The harnesses, built as bench/db_bench.sh builds them (same flags, same binaries).
OUT=target/bench
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
  esac
done
if [ "$BUILD" = 1 ]; then cargo build --release --quiet --bin strata; fi

WORKLOADS=put_100b,put_1kb,put_10kb,get_memtable,get_sstable,get_not_found,delete,read_write_50_50,writes_during_flush
COMMON=(--num="$NUM" --write_buffer_size=4194304 --bloom_bits=10 --compression=snappy --json)
DBS=$(mktemp -d "${TMPDIR:-/tmp}/rucksdb.XXXX")
trap 'rm -rf "$DBS"' EXIT

run() { # engine args...: JSON lines; a failed check stops the run
  local engine=$1; shift
  if [ "$engine" = strata ]; then
    "$STRATA" bench --db="$DBS/strata" "${COMMON[@]}" "$@"
  else
    "$OUT/${engine}_bench" --db="$DBS/$engine" "${COMMON[@]}" "$@"
  fi
}

LOAD_BEFORE=$(bench_loadavg)
JSONL=$OUT/rucksdb.jsonl
{
  for round in $(seq 1 "$ROUNDS"); do
    echo "[rucksdb] round $round of $ROUNDS (num $NUM)" >&2
    for engine in "${ENGINE_LIST[@]}"; do
      tag="{\"engine\":\"$engine\",\"round\":$round,"
      run "$engine" --benchmarks="$WORKLOADS" | sed "s/^{/$tag/"
      for t in 1 2 4 8; do
        run "$engine" --benchmarks=concurrent_writes --threads="$t" | sed "s/^{/$tag/"
      done
      rm -rf "${DBS:?}/$engine"
    done
  done
} > "$JSONL"

VERSIONS=$OUT/rucksdb.versions
: > "$VERSIONS"
for p in ${PEER_LIST[@]+"${PEER_LIST[@]}"}; do
  echo "$p $(bench_pkg_version "$p")" >> "$VERSIONS"
done
MACHINE="$(bench_cpu_model); load average before $LOAD_BEFORE, after $(bench_loadavg)"

source bench/results_dir.sh
python3 -c 'import matplotlib' 2>/dev/null ||
  python3 -m pip install --disable-pip-version-check -q matplotlib || true  # the chart only
python3 bench/rucksdb_report.py "$JSONL" "$(result_base rucksdb)" \
  --num "$NUM" --rounds "$ROUNDS" --versions "$VERSIONS" --machine "$MACHINE"
