#!/usr/bin/env bash
# `npm start`: the main job on a small demo world, from a fresh machine or a warm one.
#   1. bash scripts/setup.sh (idempotent installs: amulet-leveldb, crc32c, GNU time, ...)
#   2. cargo build --release and, once, a Bedrock-like demo world written by Mojang's LevelDB
#      (250,000 entries, ~53 MB on disk, ~30 s), cached outside the repo as
#      ${STRATA_BENCH_CACHE:-$HOME/.cache/strata}/bedrock-250000 (bench/scan.sh --prepare)
#   3. strata info and strata verify on it
#   4. the scan comparison (bench/scan.sh): Strata native (every core, one thread), Strata wasm
#      in Node, Mojang's LevelDB, rusty-leveldb: identical figures, seconds, entries/s, MB/s,
#      peak RSS, the inflate floor; reports in target/bench-results/ (never in the checkout)
#   5. put/get natively: db_bench workloads through `strata bench` (200,000 entries)
#   6. put/get and scan in Node: the npm package against classic-level and leveldb-zlib
#      (bench/node.sh, 200,000 entries)
#   7. serves the web pages (world viewer with the demo world, benchmark page) on
#      127.0.0.1:$PORT (default 8080) until interrupted: `npm run serve`. Skipped when CI is
#      set or STRATA_NO_SERVE=1.
# Safe to run any number of times: nothing is installed, generated or rebuilt twice.
set -euo pipefail
cd "$(dirname "$0")/.."

DEMO=(--entries 250000 --size 51.2M)
WORLD=${STRATA_BENCH_CACHE:-$HOME/.cache/strata}/bedrock-250000
STRATA=target/release/strata

section() { printf '\n== %s\n' "$*"; }

section "set-up"
bash scripts/setup.sh

section "build and demo world"
bash bench/scan.sh "${DEMO[@]}" --prepare

section "strata info $WORLD"
"$STRATA" info "$WORLD"

section "strata verify $WORLD"
"$STRATA" verify "$WORLD"

section "scan: Strata (native, wasm in Node) vs Mojang's LevelDB and rusty-leveldb"
bash bench/scan.sh "${DEMO[@]}"

section "put/get natively: strata bench (db_bench workloads, 200,000 entries)"
BENCH_DB=$(mktemp -d "${TMPDIR:-/tmp}/strata-start.XXXXXX")
trap 'rm -rf "$BENCH_DB"' EXIT
"$STRATA" bench --benchmarks=fillseq,fillrandom,overwrite,readrandom,readseq,readreverse \
  --num=200000 --db="$BENCH_DB/db"

section "Node: the npm package vs classic-level and leveldb-zlib (200,000 entries)"
bash bench/node.sh --world "$WORLD/db" --num 200000

if [ -n "${CI:-}" ] || [ "${STRATA_NO_SERVE:-0}" = 1 ]; then
  section "web pages: not served (CI or STRATA_NO_SERVE=1); npm run serve serves them"
else
  section "web pages: the world viewer (demo world ready to open) and the benchmark page"
  exec bash scripts/serve.sh
fi
