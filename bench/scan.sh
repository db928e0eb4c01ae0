#!/usr/bin/env bash
# The headline benchmark (DESIGN.md §2, the "scan" workload): Strata against Mojang's own LevelDB
# on a synthetic Bedrock-like world.
#
#   bash bench/scan.sh [--entries N] [--size S] [--runs R] [--world DIR] [--no-build] [--prepare]
#
# 1. Generates the world once with Mojang's LevelDB (bench/gen_world.py, the project's own
#    --verify) into a cache OUTSIDE the repo, ${STRATA_BENCH_CACHE:-$HOME/.cache/strata}:
#    defaults (5,000,000 entries, ~1 GB on disk) -> bedrock-1g, otherwise bedrock-<entries>.
#    --size defaults to the same bytes per entry as the 1 GB world (250000 entries -> 51.2M).
#    The generator's log is kept as gen-1g.log / gen-<entries>.log; a world counts as complete
#    once that log holds the generator's "verify: entries=..." line. A generation already
#    running into the same folder (another shell) is waited for, never started twice.
#    --world DIR benchmarks an existing world or LevelDB folder instead (no generation).
# 2. Builds target/release/strata (cargo build --release; a no-op when up to date).
#    --no-build uses the binary already there (recorded as such in the results).
#    --prepare stops here: the world exists and strata is built (scripts/start.sh uses it).
# 3. Times every engine, best of R runs (default 3): Strata native on every core and on one
#    thread, Strata wasm in Node, Mojang's LevelDB (amulet-leveldb, open + iterate inside
#    Python on a fresh copy made outside the timing, plus Python's own loop cost) and
#    rusty-leveldb (bench/rusty). Then one more run of each under bench/measure.py for peak RSS
#    and CPU use, and the inflate floor (bench/inflate: every compressed block, one core).
# 4. Fails (exit 1) unless every engine gives identical entries/key_bytes/value_bytes/crc32c
#    (and the generator's own figures, when its log has them). Prints a table (bench/
#    scan_report.py) and writes bench/results/scan-<UTC date>-<world>.json.
# Needs what scripts/setup.sh installs (amulet-leveldb, crc32c, the wasm toolchain); installs
# matplotlib (for the chart) when missing. Runs on Linux and macOS alike (bench/platform.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
REPO=$(pwd)
source bench/platform.sh

DEFAULT_ENTRIES=5000000
DEFAULT_SIZE=1G
ENTRIES=$DEFAULT_ENTRIES
SIZE=
RUNS=3
WORLD=
BUILD=1
PREPARE=0

usage() {  # $1 = exit code: 0 prints to stdout (--help), else to stderr
  local code=${1:-2}
  if [ "$code" = 0 ]; then exec 3>&1; else exec 3>&2; fi
  sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//' >&3
  exit "$code"
}
die() { printf 'bench/scan: %s\n' "$*" >&2; exit 1; }
say() { printf '[scan] %s\n' "$*"; }

while [ $# -gt 0 ]; do
  case "$1" in
    --entries) ENTRIES=${2:?--entries needs a value}; shift 2 ;;
    --size) SIZE=${2:?--size needs a value}; shift 2 ;;
    --runs) RUNS=${2:?--runs needs a value}; shift 2 ;;
    --world) WORLD=${2:?--world needs a value}; shift 2 ;;
    --no-build) BUILD=0; shift ;;
    --prepare) PREPARE=1; shift ;;
    -h|--help) usage 0 ;;
    *) printf 'bench/scan: unknown option %s\n\n' "$1" >&2; usage ;;
  esac
done
[[ $ENTRIES =~ ^[0-9]+$ ]] || die "--entries must be a number"
[[ $RUNS =~ ^[1-9][0-9]*$ ]] || die "--runs must be a positive number"

PY=${PYTHON:-python3}
CACHE=${STRATA_BENCH_CACHE:-$HOME/.cache/strata}
GEN=$REPO/bench/gen_world.py
SCAN_TMP=$(mktemp -d "${TMPDIR:-/tmp}/strata-scan.XXXXXX")
trap 'rm -rf "$SCAN_TMP"' EXIT

# ---------------------------------------------------------------------------------------------
# 1. The world.
GEN_LOG=
if [ -n "$WORLD" ]; then
  [ -e "$WORLD" ] || die "no such world: $WORLD"
  WORLD=$(cd "$WORLD" && pwd)
  NAME=$(basename "$WORLD")
  [ "$NAME" = db ] && NAME=$(basename "$(dirname "$WORLD")")
else
  if [ -z "$SIZE" ]; then
    if [ "$ENTRIES" = "$DEFAULT_ENTRIES" ]; then
      SIZE=$DEFAULT_SIZE
    else  # same bytes per entry as the 1 GiB world: 1024 MiB / 5M entries
      SIZE=$(awk -v n="$ENTRIES" 'BEGIN { printf "%.1fM", n * 1024 / 5000000 }')
    fi
  fi
  if [ "$ENTRIES" = "$DEFAULT_ENTRIES" ] && [ "$SIZE" = "$DEFAULT_SIZE" ]; then
    SUFFIX=1g
  else
    SUFFIX=$ENTRIES
  fi
  NAME=bedrock-$SUFFIX
  WORLD=$CACHE/$NAME
  GEN_LOG=$CACHE/gen-$SUFFIX.log
  GEN_ARGS="--entries $ENTRIES --size $SIZE"
  PARTIAL=$CACHE/.partial/$NAME

  world_complete() { [ -f "$WORLD/db/CURRENT" ] && grep -q '^verify: entries=' "$GEN_LOG" 2>/dev/null; }
  generator_running() {  # a gen_world.py writing this world (here or in another shell)
    pgrep -f -- "gen_world\.py ($WORLD|$PARTIAL)( |\$)" >/dev/null 2>&1
  }

  if ! world_complete && generator_running; then
    say "another process is generating $WORLD; waiting for it (log: $GEN_LOG)"
    while generator_running; do
      sleep 15
      tail -n 1 "$GEN_LOG" 2>/dev/null | sed 's/^/[scan]   gen: /' || true
    done
  fi
  if world_complete; then
    # The log's first line records the options of a generation started by this script.
    recorded=$(sed -n '1s/^# gen_world\.py //p' "$GEN_LOG")
    if [ -n "$recorded" ] && [ "$recorded" != "$GEN_ARGS" ]; then
      die "$WORLD was generated with '$recorded', not '$GEN_ARGS': pass those options, or remove $WORLD and $GEN_LOG"
    fi
    say "world: $WORLD (cached)"
  elif [ -e "$WORLD" ]; then
    if [ -f "$WORLD/db/CURRENT" ] && [ ! -e "$GEN_LOG" ]; then
      say "world: $WORLD (no generator log: figures are only cross-checked between engines)"
    else
      die "$WORLD is incomplete (no 'verify:' line in $GEN_LOG and no generator running): remove $WORLD and $GEN_LOG, then rerun"
    fi
  else
    [ -f "$GEN" ] || die "generator not found: $GEN"
    mkdir -p "$CACHE/.partial"
    rm -rf "$PARTIAL"
    say "generating $WORLD with Mojang's LevelDB ($GEN_ARGS; 250k entries ~10 s, 5M a few minutes)"
    say "  log: $GEN_LOG"
    echo "# gen_world.py $GEN_ARGS" >"$GEN_LOG"
    # shellcheck disable=SC2086  # GEN_ARGS is a list of options
    if ! "$PY" "$GEN" "$PARTIAL" $GEN_ARGS --verify >>"$GEN_LOG" 2>&1; then
      tail -n 20 "$GEN_LOG" >&2
      die "world generation failed (log: $GEN_LOG)"
    fi
    mv "$PARTIAL" "$WORLD"
    rmdir "$CACHE/.partial" 2>/dev/null || true
    grep -E '^(wrote|verify:)' "$GEN_LOG" | sed 's/^/[scan]   /'
  fi
fi
if [ -f "$WORLD/db/CURRENT" ]; then DB=$WORLD/db; else DB=$WORLD; fi
[ -f "$DB/CURRENT" ] || die "$WORLD holds no LevelDB (no CURRENT, no db/CURRENT)"
DB_BYTES=$(bench_bytes "$DB")
mkdir -p "$CACHE"
DB_FILES=$(find "$DB" -maxdepth 1 -type f | wc -l)

# ---------------------------------------------------------------------------------------------
# 2. The build.
STRATA=$REPO/target/release/strata
if [ "$BUILD" = 1 ]; then
  say "cargo build --release"
  cargo build --release --quiet || die "cargo build --release failed"
  BUILT=fresh
else
  [ -x "$STRATA" ] || die "--no-build: $STRATA does not exist"
  say "--no-build: using $STRATA as built $(bench_mtime "$STRATA")"
  BUILT="prebuilt $(bench_mtime "$STRATA")"
fi
if [ "$PREPARE" = 1 ]; then
  say "ready: $WORLD"
  exit 0
fi

# ---------------------------------------------------------------------------------------------
# 3. Timing. Engines, each printing one JSON line with the four figures and "seconds":
#   strata        native CLI, readahead on every core (process wall time)
#   strata_1t     native CLI, --readahead-threads 0: one thread decodes everything
#   strata_wasm   the npm package in Node (wasm, one thread; bench/node/scan.mjs: open + scan)
#   mojang        Mojang's LevelDB via amulet-leveldb, open + iterate inside Python, on a copy;
#                 with --python-loop: Python's own loop cost over in-memory entries
#   rusty         rusty-leveldb 4 (bench/rusty, Mojang's codecs registered), on a hard-linked copy
# Each engine runs R times (best counts), then once more under bench/measure.py (peak RSS, CPU).
# Then the physical limit: bench/inflate decodes every compressed data block once per decoder
# on one core (libdeflate is what Strata ships natively); floor = that time / cores.
[ -f js/dist/node.js ] || bash scripts/build-wasm.sh >/dev/null
"$PY" -c 'import matplotlib' 2>/dev/null ||
  "$PY" -m pip install --disable-pip-version-check -q matplotlib  # the results chart only
cargo build --release --quiet --manifest-path bench/rusty/Cargo.toml
cargo build --release --quiet --manifest-path bench/inflate/Cargo.toml
RUSTY=bench/rusty/target/release/strata-rusty-scan
INFLATE=bench/inflate/target/release/strata-inflate-bench
ENGINES="strata strata_1t strata_wasm mojang rusty"

with_seconds() {  # $1 = output file; runs the rest, adds the wall time as "seconds"
  local out=$1; shift
  "$PY" bench/measure.py --stdout "$out.raw" -- "$@" >"$out.usage"
  "$PY" - "$out.raw" "$out.usage" >"$out" <<'PY'
import json, sys
with open(sys.argv[1]) as f:
    d = json.loads(f.read().strip().splitlines()[-1])
with open(sys.argv[2]) as f:
    d["seconds"] = json.load(f)["seconds"]
print(json.dumps(d, separators=(",", ":")))
PY
}
writer_copy() {  # a copy LevelDB may write to: tables hard-linked (never rewritten in place)
  rm -rf "$SCAN_TMP/copy"; mkdir -p "$SCAN_TMP/copy"
  for f in "$DB"/*; do
    case "$f" in
      */LOCK) ;;
      *.ldb|*.sst) ln "$f" "$SCAN_TMP/copy/" 2>/dev/null || cp "$f" "$SCAN_TMP/copy/" ;;
      *) cp "$f" "$SCAN_TMP/copy/" ;;
    esac
  done
}
engine_cmd() {  # $1 = engine; sets CMD to its command line
  case "$1" in
    strata) CMD=("$STRATA" scan --json "$WORLD") ;;
    strata_1t) CMD=("$STRATA" scan --json --readahead-threads 0 "$WORLD") ;;
    strata_wasm) CMD=(node bench/node/scan.mjs "$DB") ;;
    mojang) CMD=("$PY" bench/mojang_scan.py "$DB" --tmp "$CACHE" --python-loop) ;;
    rusty) writer_copy; CMD=("$RUSTY" "$SCAN_TMP/copy") ;;
  esac
}
run_engine() {  # $1 = engine, $2 = output file
  engine_cmd "$1"
  case "$1" in
    strata|strata_1t) with_seconds "$2" "${CMD[@]}" ;;
    *) "${CMD[@]}" >"$2" ;;
  esac
}
resources() {  # $1 = engine; prints "PEAK_RSS_KIB CPU_PERCENT" (bench/measure.py: Linux and macOS)
  engine_cmd "$1"
  "$PY" bench/measure.py -- "${CMD[@]}" |
    "$PY" -c 'import json, sys; d = json.load(sys.stdin); print(d["peak_rss_kib"], d["cpu_percent"])'
}

say "world $NAME: db/ $DB_FILES files, $(awk -v b="$DB_BYTES" 'BEGIN { printf "%.1f MB", b / 1e6 }') on disk; $RUNS runs per engine, best wall time counts"
LOAD_BEFORE=$(bench_loadavg 2>/dev/null || echo unknown)
for engine in $ENGINES; do
  for i in $(seq 1 "$RUNS"); do
    run_engine "$engine" "$SCAN_TMP/$engine.$i.json"
    printf '[scan]   %-11s run %d: %s\n' "$engine" "$i" "$(cat "$SCAN_TMP/$engine.$i.json")"
  done
done
say "peak RSS and CPU use (one more run of each under bench/measure.py)"
for engine in $ENGINES; do
  resources "$engine" >"$SCAN_TMP/$engine.usage"
done
say "inflate floor: every compressed data block, each decoder, one core (bench/inflate)"
"$INFLATE" "$DB" --passes 1 --json >"$SCAN_TMP/inflate.json"

# ---------------------------------------------------------------------------------------------
# 4. Check, report, record.
source bench/results_dir.sh
RESULT=$RESULTS_DIR/scan-$(date -u +%F)-$NAME.json
COMMIT=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
[ -n "$(git status --porcelain -- src Cargo.toml Cargo.lock 2>/dev/null)" ] && COMMIT="$COMMIT+dirty"
CPU=$(bench_cpu_model)
WASM_BYTES=$(bench_bytes js/wasm/strata_bg.wasm 2>/dev/null || echo 0)
WASM_GZ=$(gzip -9c js/wasm/strata_bg.wasm 2>/dev/null | wc -c)
OPEN_SECONDS=$("$STRATA" scan --json --timing "$WORLD" 2>&1 >/dev/null | "$PY" -c 'import json,sys; print(json.load(sys.stdin)["open_seconds"])')

export SCAN_TMP RUNS RESULT NAME WORLD DB_BYTES DB_FILES COMMIT CPU BUILT LOAD_BEFORE ENGINES
export GEN_LOG GEN_ARGS=${GEN_ARGS:-} WASM_BYTES WASM_GZ OPEN_SECONDS
"$PY" bench/scan_report.py
