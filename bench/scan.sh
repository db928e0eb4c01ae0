#!/usr/bin/env bash
# The headline benchmark (DESIGN.md §2, the "scan" workload): Strata against Mojang's own LevelDB
# on a synthetic Bedrock-like world.
#
#   bash bench/scan.sh [--entries N] [--size S] [--runs R] [--world DIR] [--no-build] [--prepare]
#
# 1. Generates the world once with Mojang's LevelDB (../shared/tools/gen_bedrock_like.py
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
# 3. Times `strata scan --json WORLD` (wall time around the process) and
#    `python3 bench/mojang_scan.py WORLD/db` (open + iterate inside Python, on a fresh copy made
#    outside the timing: LevelDB writes to any folder it opens), best of R runs (default 3).
#    Then one more run of each under /usr/bin/time -v for peak RSS and CPU use.
# 4. Fails (exit 1) unless both engines give identical entries/key_bytes/value_bytes/crc32c
#    (and the generator's own figures, when its log has them). Prints a table and writes
#    bench/results/scan-<UTC date>-<world>.json.
# Needs what scripts/setup.sh installs (amulet-leveldb, crc32c, GNU time).
set -euo pipefail
cd "$(dirname "$0")/.."
REPO=$(pwd)

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
GEN=$REPO/../shared/tools/gen_bedrock_like.py
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
  generator_running() {  # a gen_bedrock_like.py writing this world (here or in another shell)
    pgrep -f -- "gen_bedrock_like\.py ($WORLD|$PARTIAL)( |\$)" >/dev/null 2>&1
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
    recorded=$(sed -n '1s/^# gen_bedrock_like\.py //p' "$GEN_LOG")
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
    say "generating $WORLD with Mojang's LevelDB ($GEN_ARGS; 250k entries ~30 s, 5M ~6 min)"
    say "  log: $GEN_LOG"
    echo "# gen_bedrock_like.py $GEN_ARGS" >"$GEN_LOG"
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
DB_BYTES=$(du -sb "$DB" | cut -f1)
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
  say "--no-build: using $STRATA as built $(date -u -r "$STRATA" +%FT%TZ)"
  BUILT="prebuilt $(date -u -r "$STRATA" +%FT%TZ)"
fi
if [ "$PREPARE" = 1 ]; then
  say "ready: $WORLD"
  exit 0
fi

# ---------------------------------------------------------------------------------------------
# 3. Timing. Each run's JSON line goes to $SCAN_TMP/<engine>.<run>.json; "seconds" is added for Strata.
now_ns() { date +%s%N; }
run_strata() {  # $1 = output file
  local t0 t1
  t0=$(now_ns)
  "$STRATA" scan --json "$WORLD" >"$1.raw"
  t1=$(now_ns)
  "$PY" - "$1.raw" "$t0" "$t1" >"$1" <<'PY'
import json, sys
raw, t0, t1 = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
with open(raw) as f:
    d = json.loads(f.read().strip().splitlines()[-1])
d["seconds"] = round((t1 - t0) / 1e9, 4)
print(json.dumps(d, separators=(",", ":")))
PY
}
run_mojang() {  # $1 = output file; the temporary copy of db/ goes into the cache folder
  "$PY" bench/mojang_scan.py "$DB" --tmp "$CACHE" >"$1"
}
resources() {  # $@ = command; prints "PEAK_RSS_KIB CPU_PERCENT" (or "null null" without GNU time)
  if [ -x /usr/bin/time ]; then
    /usr/bin/time -v -o "$SCAN_TMP/time.txt" "$@" >/dev/null
    awk -F': ' '/Maximum resident set size/ { rss = $2 }
                /Percent of CPU this job got/ { cpu = $2; sub(/%/, "", cpu) }
                END { print rss, cpu }' "$SCAN_TMP/time.txt"
  else
    "$@" >/dev/null
    echo null null
  fi
}

say "world $NAME: db/ $DB_FILES files, $(awk -v b="$DB_BYTES" 'BEGIN { printf "%.1f MB", b / 1e6 }') on disk; $RUNS runs per engine, best wall time counts"
LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo unknown)
for engine in strata mojang; do
  for i in $(seq 1 "$RUNS"); do
    "run_$engine" "$SCAN_TMP/$engine.$i.json"
    printf '[scan]   %-6s run %d: %s\n' "$engine" "$i" "$(cat "$SCAN_TMP/$engine.$i.json")"
  done
done
say "peak RSS and CPU use (one more run of each under /usr/bin/time -v)"
usage_strata=$(resources "$STRATA" scan --json "$WORLD")
usage_mojang=$(resources "$PY" bench/mojang_scan.py "$DB" --tmp "$CACHE")
read -r RSS_STRATA CPU_STRATA <<<"$usage_strata"
read -r RSS_MOJANG CPU_MOJANG <<<"$usage_mojang"

# ---------------------------------------------------------------------------------------------
# 4. Check, report, record.
mkdir -p bench/results
RESULT=bench/results/scan-$(date -u +%F)-$NAME.json
COMMIT=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
[ -n "$(git status --porcelain -- src Cargo.toml Cargo.lock 2>/dev/null)" ] && COMMIT="$COMMIT+dirty"
CPU=$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo 2>/dev/null || true)

export SCAN_TMP RUNS RESULT NAME WORLD DB_BYTES DB_FILES COMMIT CPU BUILT LOAD_BEFORE RSS_STRATA RSS_MOJANG CPU_STRATA CPU_MOJANG
export GEN_LOG GEN_ARGS=${GEN_ARGS:-}
"$PY" - <<'PY'
import json, os, platform, sys, time
E = os.environ
tmp, runs, result = E["SCAN_TMP"], int(E["RUNS"]), E["RESULT"]
FIG = ("entries", "key_bytes", "value_bytes", "crc32c")


def load(engine):
    out = []
    for i in range(1, runs + 1):
        with open(os.path.join(tmp, "%s.%d.json" % (engine, i))) as f:
            out.append(json.loads(f.read()))
    return out

res = {"strata": load("strata"), "mojang": load("mojang")}
figures = {}
bad = []
for engine, rs in res.items():
    for r in rs:
        fig = {k: r[k] for k in FIG}
        figures.setdefault(engine, fig)
        if fig != figures[engine]:
            bad.append("%s gave different figures in different runs: %s vs %s" % (engine, fig, figures[engine]))
if figures["strata"] != figures["mojang"]:
    bad.append("figures differ: strata %s, mojang %s" % (figures["strata"], figures["mojang"]))

expected = None
gen_log = E["GEN_LOG"]
if gen_log and os.path.exists(gen_log):
    for line in open(gen_log):
        if line.startswith("verify: "):
            kv = dict(w.split("=", 1) for w in line.split()[1:] if "=" in w)
            if "crc32c" in kv:
                expected = {k: int(kv[k]) for k in FIG}
    if expected and expected != figures["mojang"]:
        bad.append("figures differ from the generator's: generator %s, engines %s" % (expected, figures["mojang"]))

if bad:
    for b in bad:
        print("bench/scan: MISMATCH: " + b, file=sys.stderr)
    sys.exit(1)

fig = figures["strata"]
raw_mb = (fig["key_bytes"] + fig["value_bytes"]) / 1e6
def num(var):
    return int(E[var]) if E.get(var, "").isdigit() else None


rss = {"strata": num("RSS_STRATA"), "mojang": num("RSS_MOJANG")}
cpu = {"strata": num("CPU_STRATA"), "mojang": num("CPU_MOJANG")}
engines = {}
for engine, label in (("strata", "Strata (native)"), ("mojang", "Mojang LevelDB (amulet-leveldb, Python)")):
    secs = [r["seconds"] for r in res[engine]]
    best = min(secs)
    engines[engine] = {
        "label": label,
        "runs_seconds": secs,
        "best_seconds": best,
        "entries_per_s": round(fig["entries"] / best),
        "mb_per_s": round(raw_mb / best, 1),
        "peak_rss_kib": rss[engine],
        "cpu_percent": cpu[engine],
    }
ratio = engines["mojang"]["best_seconds"] / engines["strata"]["best_seconds"]

print()
print("scan of %s: %d entries, %.1f MB of keys+values, crc32c %d (identical in both engines%s)"
      % (E["NAME"], fig["entries"], raw_mb, fig["crc32c"],
         " and the generator" if expected else ""))
print("%-42s %9s %12s %9s %10s %6s" % ("engine", "seconds", "entries/s", "MB/s", "peak RSS", "CPU"))
for e in engines.values():
    r = "%.1f MiB" % (e["peak_rss_kib"] / 1024) if e["peak_rss_kib"] is not None else "n/a"
    c = "%d%%" % e["cpu_percent"] if e["cpu_percent"] is not None else "n/a"
    print("%-42s %9.3f %12s %9.1f %10s %6s" % (e["label"], e["best_seconds"],
                                                format(e["entries_per_s"], ","), e["mb_per_s"], r, c))
print("ratio Mojang/Strata (time): %.2fx" % ratio)

record = {
    "workload": "scan",
    "date_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    "commit": E["COMMIT"],
    "binary": E["BUILT"],
    "machine": {"cpus": os.cpu_count(), "cpu": E["CPU"], "arch": platform.machine(),
                "loadavg_before": E["LOAD_BEFORE"]},
    "world": {"name": E["NAME"], "path": E["WORLD"], "db_bytes": int(E["DB_BYTES"]),
              "db_files": int(E["DB_FILES"]), "generator_args": E["GEN_ARGS"] or None},
    "expected_from_generator": expected is not None,
    "figures": fig,
    "runs": runs,
    "engines": engines,
    "ratio_mojang_over_strata": round(ratio, 3),
}
with open(result, "w") as f:
    json.dump(record, f, indent=2)
    f.write("\n")
print("results: " + result)
PY
