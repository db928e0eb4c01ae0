#!/usr/bin/env bash
# `npm run bench`: every benchmark, each against its peers in the same run. Reports go to
# target/bench-results/ (bench/results_dir.sh); `npm run bench:save` writes bench/results/.
#   bench/scan.sh      the Bedrock scan, Strata vs Mojang's LevelDB (options pass through,
#                      e.g. `npm run bench -- --entries 250000 --size 51.2M`)
#   bench/db_bench.sh  db_bench workloads, Strata vs Google's LevelDB (STRATA_DB_BENCH_NUM)
#   bench/kvbench.sh   kvbench's scenarios (open, put_seq_sync, footprint) vs LevelDB and LMDB
#   bench/leveldb_page.sh  LevelDB's 2011 benchmark page, section by section, all six systems
#   bench/rucksdb.sh   RucksDB's suite (puts, gets, deletes, mix, concurrent writers, latency
#                      while flushes run) vs LevelDB and RocksDB (STRATA_RUCKSDB_NUM)
#   bench/node.sh      the npm package in Node vs classic-level and leveldb-zlib
set -euo pipefail
cd "$(dirname "$0")/.."
bash bench/scan.sh "$@"
bash bench/db_bench.sh --num="${STRATA_DB_BENCH_NUM:-1000000}" --no-build
bash bench/kvbench.sh --no-build
bash bench/leveldb_page.sh --no-build
bash bench/rucksdb.sh --num="${STRATA_RUCKSDB_NUM:-1000000}" --no-build
bash bench/node.sh --num "${STRATA_DB_BENCH_NUM:-1000000}"
node bench/browser.mjs   # the benchmark page in headless Chromium (Strata over OPFS vs IndexedDB): browser-<date>.*
