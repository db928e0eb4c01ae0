#!/usr/bin/env bash
# The npm package in Node against the native Node peers, one run (bench/node/bench.mjs):
#   bash bench/node.sh [--world DIR] [--num N]
# Defaults: the cached 250,000-entry Bedrock world made by bench/scan.sh --prepare, and 1M
# entries for the db_bench-style workloads. Installs the peers (classic-level, leveldb-zlib
# with its bundled linux-x64 binary: SKIP_BUILD=1, no compilation) into bench/node on first use,
# and builds the wasm package and the native CLI. Writes bench/results/node-<date>[-N].{json,md}.
set -euo pipefail
cd "$(dirname "$0")/.."
WORLD=
NUM=1000000
while [ $# -gt 0 ]; do
  case "$1" in
    --world) WORLD=$2; shift 2 ;;
    --num) NUM=$2; shift 2 ;;
    *) echo "bench/node: unknown option $1" >&2; exit 2 ;;
  esac
done
if [ -z "$WORLD" ]; then
  bash bench/scan.sh --entries 250000 --prepare >/dev/null
  WORLD=${STRATA_BENCH_CACHE:-$HOME/.cache/strata}/bedrock-250000/db
fi
bash scripts/build-wasm.sh >/dev/null
cargo build --release -q --bin strata
if [ "$(uname -s)-$(uname -m)" = Linux-x86_64 ]; then
  if [ ! -d bench/node/node_modules/leveldb-zlib ]; then
    (cd bench/node && SKIP_BUILD=1 npm install --no-audit --no-fund --ignore-scripts --loglevel=error)
  fi
  # leveldb-zlib looks for its prebuilt addon under the running kernel's major version; it ships
  # one linux-x64 build (made on 5.x), which is what SKIP_BUILD=1 means to use.
  major=$(uname -r | cut -d. -f1)
  pre=bench/node/node_modules/leveldb-zlib/prebuilds
  [ -e "$pre/linux-$major-x64" ] || cp -r "$pre/linux-5-x64" "$pre/linux-$major-x64"
elif [ ! -d bench/node/node_modules/classic-level ]; then
  # Elsewhere (macOS, arm64) leveldb-zlib has no prebuilt addon: npm builds it (a compiler and
  # CMake needed); if that fails, classic-level is installed alone and bench.mjs skips
  # leveldb-zlib's rows, saying so.
  (cd bench/node && npm install --no-audit --no-fund --loglevel=error) ||
    (cd bench/node && npm install --no-audit --no-fund --ignore-scripts --loglevel=error)
fi
source bench/results_dir.sh
base=$(result_base node)
node bench/node/bench.mjs --world "$WORLD" --num "$NUM" --out "$base.json" | tee "$base.md"
