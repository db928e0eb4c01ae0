#!/usr/bin/env bash
# `npm start`: the web pages served first, then the main job while they are served.
#   1. what the pages need (scripts/setup.sh pages; wasm-bindgen-cli built beside the wasm
#      engine when missing), the wasm engine and TypeScript package, the pages (Vite), the demo
#      world (written by the wasm engine): ~4 min on a fresh 2-core machine, seconds on a warm
#      one. Pages built before from the same sources (a fresh clone of a commit built on this
#      machine) are served first instead, and this step runs while they are served.
#   2. the server on 127.0.0.1:$PORT (default 8080), its URL printed as soon as it answers: the
#      world viewer (demo world ready to open) and the benchmark page. Not under CI or
#      STRATA_NO_SERVE=1, where everything else runs and the command exits.
#   3. while it serves: the rest of the set-up (scripts/setup.sh peers: the Python peers, the
#      browsers for the tests), the release build and a Bedrock-like benchmark world written by
#      Mojang's LevelDB (250,000 entries, ~53 MB, cached outside the repo as
#      ${STRATA_BENCH_CACHE:-$HOME/.cache/strata}/bedrock-250000), strata info and verify on
#      it, the scan comparison (Strata native and wasm in Node vs Mojang's LevelDB and
#      rusty-leveldb), put/get natively (db_bench workloads) and in Node (vs classic-level and
#      leveldb-zlib); reports in target/bench-results/ (never in the checkout)
#   4. keeps serving until interrupted (Ctrl-C).
# Safe to run any number of times: nothing is installed, generated or rebuilt twice.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"

DEMO=(--entries 250000 --size 51.2M)
WORLD=${STRATA_BENCH_CACHE:-$HOME/.cache/strata}/bedrock-250000
STRATA=target/release/strata
PORT=${PORT:-8080}
SERVE=1
if [ -n "${CI:-}" ] || [ "${STRATA_NO_SERVE:-0}" = 1 ]; then SERVE=0; fi
T0=$(date +%s)

section() { printf '\n== %s\n' "$*"; }
since() { echo "$(($(date +%s) - T0)) s"; }

build_cache=${STRATA_BUILD_CACHE:-$HOME/.cache/strata/build}
sources=$(bash scripts/source-hash.sh)

# The pages: set-up, the wasm engine, the TypeScript package, Vite, the demo world.
pages() {
  section "set-up for the pages (a fresh machine: ~1 min; wasm-bindgen-cli and npm ci run beside the wasm engine's build)"
  # A wasm engine and a demo world built before from these very sources (scripts/source-hash.sh;
  # kept in $build_cache) are taken as they are: a fresh clone of a commit already built on
  # this machine serves without compiling.
  if [[ -f $build_cache/wasm-$sources/strata_bg.wasm && -f $build_cache/demo-$sources.mcworld ]]; then
    bash scripts/setup.sh pages
    echo "   the wasm engine and the demo world of these sources were built before ($build_cache)"
  else
    bash scripts/setup.sh toolchain
    # wasm-bindgen-cli (a cargo install, ~2 min when missing) builds while the wasm engine
    # compiles, and npm ci (network, little CPU) runs meanwhile; their output goes to logs,
    # shown if they fail. The native CLI is not needed to serve (the wasm engine writes the
    # demo world): it compiles after the server is up.
    mkdir -p target
    bindgen_log=target/setup-bindgen.log
    bash scripts/setup.sh bindgen >"$bindgen_log" 2>&1 &
    bindgen=$!
    wasm_log=target/build-wasm-engine.log
    section "the wasm engine (cargo, release, wasm32; a fresh machine: ~2 min); npm ci meanwhile"
    cargo build -q --lib --release --target wasm32-unknown-unknown >"$wasm_log" 2>&1 &
    wasm=$!
    bash scripts/setup.sh npm
    if ! wait "$wasm"; then
      cat "$wasm_log" >&2
      echo "the wasm engine did not compile (above)" >&2
      exit 1
    fi
    echo "   compiled ($(since) since npm start)"
    if ! wait "$bindgen"; then
      cat "$bindgen_log" >&2
      echo "set-up of wasm-bindgen-cli failed (above)" >&2
      exit 1
    fi
    sed 's/^/   /' "$bindgen_log"
  fi
  section "the pages: wasm-bindgen, wasm-opt, tsc, Vite; the demo world (written by the wasm engine)"
  bash scripts/build-www.sh
  demo=$(bash scripts/demo-world.sh)
}

server=
# Serves folder $1 with the demo world $2 at /demo.mcworld, and waits until it answers.
serve() {
  STRATA_DEMO_MCWORLD=$2 PORT=$PORT node scripts/serve-www.mjs "$1" &
  server=$!
  trap '[ -n "$server" ] && kill "$server" 2>/dev/null; true' EXIT
  trap 'exit 130' INT TERM
  for _ in $(seq 100); do
    if node -e "fetch('http://127.0.0.1:$PORT/').then(r => process.exit(r.ok ? 0 : 1), () => process.exit(1))"; then break; fi
    kill -0 "$server" 2>/dev/null || { echo "the server did not start (port $PORT taken? set PORT)" >&2; exit 1; }
    sleep 0.1
  done
  echo "   the world viewer answers at http://127.0.0.1:$PORT/ ($(since) since npm start); the benchmark page at /bench.html"
  echo "   the benchmarks run now while it serves; Ctrl-C stops both"
}

# Pages built before from these very sources (scripts/site-hash.sh; scripts/build-www.sh keeps
# them) are served at once, before any install or build: a fresh clone of a commit already
# built on this machine answers in seconds. The set-up and the builds follow while it serves.
site=$build_cache/site-$(bash scripts/site-hash.sh)
prebuilt=0
if [ "$SERVE" = 1 ] && [[ -f $site/index.html && -f $build_cache/demo-$sources.mcworld ]]; then
  section "serving the pages built before from these sources ($site)"
  rm -rf target/www-prebuilt && mkdir -p target && cp -r "$site" target/www-prebuilt
  cp "$build_cache/demo-$sources.mcworld" target/www-prebuilt.mcworld
  serve target/www-prebuilt target/www-prebuilt.mcworld
  prebuilt=1
else
  pages
  if [ "$SERVE" = 1 ]; then
    section "serving the web pages"
    serve www/dist "$demo"
  fi
fi

benchmarks() {
  if [ "$prebuilt" = 1 ]; then pages; fi

  section "set-up for the benchmarks and tests (Python peers, browsers; a fresh machine: ~3 min)"
  bash scripts/setup.sh peers

  section "the release CLI (cargo, release; a fresh machine: ~2 min)"
  cargo build -q --release --bin strata

  section "the benchmark world (written by Mojang's LevelDB)"
  bash bench/scan.sh "${DEMO[@]}" --prepare

  section "strata info $WORLD"
  "$STRATA" info "$WORLD"

  section "strata verify $WORLD"
  "$STRATA" verify "$WORLD"

  section "scan: Strata (native, wasm in Node) vs Mojang's LevelDB and rusty-leveldb"
  bash bench/scan.sh "${DEMO[@]}"

  section "put/get natively: strata bench (db_bench workloads, 200,000 entries)"
  BENCH_DB=$(mktemp -d "${TMPDIR:-/tmp}/strata-start.XXXXXX")
  "$STRATA" bench --benchmarks=fillseq,fillrandom,overwrite,readrandom,readseq,readreverse \
    --num=200000 --db="$BENCH_DB/db"
  rm -rf "$BENCH_DB"

  section "Node: the npm package vs classic-level and leveldb-zlib (200,000 entries)"
  bash bench/node.sh --world "$WORLD/db" --num 200000
}

if [ "$SERVE" = 0 ]; then
  benchmarks
  section "web pages: built, not served (CI or STRATA_NO_SERVE=1); npm run serve serves them"
  echo "npm start: done in $(since)"
  exit 0
fi

# The benchmarks in the foreground (Ctrl-C reaches them); their failure is reported and the
# pages stay served.
set +e
(set -e; benchmarks)
status=$?
set -e
if [ "$status" = 0 ]; then
  section "npm start: the benchmarks done in $(since)"
else
  section "!!! the benchmarks failed (exit $status, above); the pages are still served"
fi
echo "   still serving http://127.0.0.1:$PORT/ (Ctrl-C to stop)"
wait "$server" || true
exit "$status"
