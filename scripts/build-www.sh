#!/usr/bin/env bash
# Builds the web pages (www/ → www/dist) with Vite, after the wasm + TypeScript package when
# that is missing or older than its sources. Type-checks www/src (strict) first. Skips everything
# that is up to date; a real build is kept under the pages' fingerprint (below).
set -euo pipefail
cd "$(dirname "$0")/.."
bin=js/node_modules/.bin
if [[ ! -f js/wasm/strata_bg.wasm || ! -f js/dist/browser.js || -n $(find js/src -newer js/dist/browser.js 2>/dev/null | head -1) ]]; then
  bash scripts/build-wasm.sh
fi
if [[ -f www/dist/index.html && -z $(find www/index.html www/bench.html www/src www/vite.config.mjs www/package.json js/dist js/wasm -newer www/dist/index.html 2>/dev/null | head -1) ]]; then
  echo "== www/dist is up to date"
  exit 0
fi
echo "== www: tsc (strict), vite build"
"$bin/tsc" -p www/tsconfig.json
"$bin/vite" build www
# Kept for a fresh clone of the same sources (scripts/site-hash.sh), which `npm start` serves
# before installing or building anything (the newest four builds).
cache=${STRATA_BUILD_CACHE:-$HOME/.cache/strata/build}/site-$(bash scripts/site-hash.sh)
rm -rf "$cache.tmp" && mkdir -p "$(dirname "$cache")" && cp -r www/dist "$cache.tmp"
rm -rf "$cache" && mv "$cache.tmp" "$cache"
# shellcheck disable=SC2012
ls -dt "$(dirname "$cache")"/site-* 2>/dev/null | tail -n +5 | xargs -r rm -rf
