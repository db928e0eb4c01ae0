#!/usr/bin/env bash
# LevelDB's benchmark page (2011) reproduced as named scenarios, every system in one run
# (bench/leveldb_page.py): baseline, large values, batch writes, synchronous writes, compression
# off, more memory, larger caches, no-compression reads, random reads after compaction.
# Strata, LevelDB, RocksDB, SQLite, Kyoto TreeDB and LMDB; the page's published figures as a
# reference column. Writes target/bench-results/leveldb-page-<date>[-N].{md,json}.
#   bash bench/leveldb_page.sh [--num N] [--engines strata,leveldb,...] [--rounds N] [--only TEXT[,TEXT...]]
#                              [--no-build]
# (--rounds N: each cell the best of N rounds, engines interleaved in each round.)
set -euo pipefail
cd "$(dirname "$0")/.."
source bench/platform.sh
ARGS=()
BUILD=1
while [ $# -gt 0 ]; do
  case "$1" in
    --no-build) BUILD=0; shift ;;
    --num|--engines|--rounds|--only) ARGS+=("$1" "$2"); shift 2 ;;
    *) echo "bench/leveldb_page: unknown option $1" >&2; exit 2 ;;
  esac
done
# The harnesses, as bench/db_bench.sh builds them (it installs the libraries too).
# (Not saved: its 1,000-entry report would overwrite the day's db_bench report under bench:save.)
STRATA_BENCH_SAVE=0 STRATA_DB_BENCH_ROUNDS=1 STRATA_RESULTS_DIR="$(mktemp -d)" bash bench/db_bench.sh --num=1000 --rounds=1 --no-build >/dev/null
if [ "$BUILD" = 1 ]; then cargo build --release --quiet --bin strata; fi
source bench/results_dir.sh
python3 bench/leveldb_page.py target/bench "$(result_base leveldb-page)" ${ARGS[@]+"${ARGS[@]}"}
