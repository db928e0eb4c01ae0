#!/usr/bin/env bash
# The world editor's benchmark: prune the largest shared world to a quarter, compact, export.
#
#   bash bench/prune.sh [--world DIR] [--no-build]
#
# 1. Copies the world (default ../shared/worlds/amulet_1_18_vanilla, the largest) three times
#    into a temp folder (outside the timings). The keep selection runs from the north-west
#    corner of the Overworld's chunks to their median x and z, about a quarter of them
#    (bench/prune_mojang.py select, on a throwaway copy).
# 2. Strata (target/release/strata): `world prune` (in place), `compact`, `world export`
#    (copies, compacts the copy, zips), each timed; then the one-shot `world prune WORLD
#    --keep SEL --out F.mcworld` (prune + compaction + zip) on the untouched copy.
# 3. Mojang's LevelDB (amulet-leveldb, bench/prune_mojang.py prune): open, collect the same
#    keys, delete them (one call per key: amulet-leveldb has no batch delete), compact, close.
# 4. Fails unless both pruned worlds have identical contents (strata scan --json: entries,
#    bytes, CRC-32C). Prints the figures and writes $RESULTS_DIR/prune-<UTC date>.json.
# One run of each (a fresh copy per engine); sizes: the original db, the pruned+compacted db,
# the .mcworld.
set -euo pipefail
cd "$(dirname "$0")/.."
REPO=$(pwd)
WORLD=${STRATA_WORLDS:-$REPO/../shared/worlds}/amulet_1_18_vanilla
BUILD=1
while [[ $# -gt 0 ]]; do
  case $1 in
    --world) WORLD=$2; shift 2 ;;
    --no-build) BUILD=0; shift ;;
    *) echo "usage: bench/prune.sh [--world DIR] [--no-build]" >&2; exit 2 ;;
  esac
done
PY=${PYTHON:-python3}
if [[ $BUILD == 1 ]]; then
  cargo build --release --quiet
fi
S=$REPO/target/release/strata
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

for c in select strata oneshot mojang; do cp -r "$WORLD" "$TMP/$c"; done
chmod -R u+w "$TMP"
SEL=$("$PY" bench/prune_mojang.py select "$TMP/select/db")
echo "world: $WORLD; keep (dimension 0): $SEL"

source bench/platform.sh
now() { bench_now; }
secs() { echo "$2 - $1" | bc -l | xargs printf '%.3f'; }
size() { bench_bytes "$1"; }

orig_db=$(size "$TMP/strata/db")
t0=$(now)
prune_out=$("$S" world prune "$TMP/strata" --dimension 0 --keep "$SEL")
t1=$(now)
"$S" compact "$TMP/strata" >/dev/null
t2=$(now)
"$S" world export "$TMP/strata" --out "$TMP/strata.mcworld" >/dev/null
t3=$(now)
"$S" world prune "$TMP/oneshot" --dimension 0 --keep "$SEL" --out "$TMP/oneshot.mcworld" >/dev/null
t4=$(now)
pruned_db=$(size "$TMP/strata/db")
zip_bytes=$(bench_bytes "$TMP/strata.mcworld")
echo "strata: $prune_out"

mojang=$("$PY" bench/prune_mojang.py prune "$TMP/mojang/db" "$SEL")
mojang_db=$(size "$TMP/mojang/db")
echo "mojang: $mojang"

a=$("$S" scan --json "$TMP/strata/db")
b=$("$S" scan --json "$TMP/mojang/db")
if [[ "$a" != "$b" ]]; then
  echo "MISMATCH: strata $a, mojang $b" >&2
  exit 1
fi
echo "contents identical: $a"

source bench/results_dir.sh
out=$(result_base prune).json
cat > "$out" <<JSON
{
  "world": "$(basename "$WORLD")",
  "keep": "$SEL",
  "strata": {
    "prune_s": $(secs "$t0" "$t1"),
    "compact_s": $(secs "$t1" "$t2"),
    "export_s": $(secs "$t2" "$t3"),
    "prune_compact_zip_one_command_s": $(secs "$t3" "$t4"),
    "report": "$prune_out"
  },
  "mojang": $mojang,
  "bytes": {
    "original_db": $orig_db,
    "strata_pruned_compacted_db": $pruned_db,
    "mojang_pruned_compacted_db": $mojang_db,
    "mcworld": $zip_bytes,
    "original_world_folder": $(size "$WORLD")
  },
  "contents": $a
}
JSON
cat "$out"
