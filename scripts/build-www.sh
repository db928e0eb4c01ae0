#!/usr/bin/env bash
# Builds the web pages (www/ → www/dist) with Vite, after the wasm + TypeScript package when
# that is missing or older than its sources. Type-checks www/src (strict) first. Skips everything that is up to date.
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
