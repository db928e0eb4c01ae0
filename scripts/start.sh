#!/usr/bin/env bash
# `npm start`: the main job on a small demo world, from a fresh machine or a warm one.
#   1. bash scripts/setup.sh (idempotent installs: amulet-leveldb, crc32c, GNU time, ...)
#   2. cargo build --release and, once, a Bedrock-like demo world written by Mojang's LevelDB
#      (250,000 entries, ~53 MB on disk, ~30 s), cached outside the repo as
#      ${STRATA_BENCH_CACHE:-$HOME/.cache/strata}/bedrock-250000 (bench/scan.sh --prepare)
#   3. strata info and strata verify on it
#   4. the scan comparison, Strata against Mojang's LevelDB (bench/scan.sh): identical figures,
#      seconds, entries/s, MB/s, peak RSS; results in bench/results/
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

section "scan: Strata vs Mojang's LevelDB"
bash bench/scan.sh "${DEMO[@]}"
