#!/usr/bin/env bash
# `npm run pack [-- OUT_DIR]`: the npm package and its drop-ins as tarballs, the way an app
# installs them (README, "Drop-ins"): strata-level-<version>.tgz (built first when its wasm or
# dist is missing) and one <name>-<version>-strata.tgz per package in js/compat/ (leveldb-zlib,
# and the others there), each re-exporting strata-level's drop-in under the original's name.
# Default OUT_DIR: target/pack. Prints the tarballs' paths, one a line.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-target/pack}
mkdir -p "$out"
out=$(cd "$out" && pwd)
if [[ ! -f js/wasm/strata_bg.wasm || ! -f js/dist/node.js ]]; then bash scripts/build-wasm.sh >&2; fi
pack() { (cd "$1" && npm pack --pack-destination "$out" --loglevel=error | tail -1); }
echo "$out/$(pack js)"
for dir in js/compat/*/; do
  echo "$out/$(pack "$dir")"
done
