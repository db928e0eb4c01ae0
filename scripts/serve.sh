#!/usr/bin/env bash
# `npm run serve`: builds what is missing (the pages' set-up, wasm + TypeScript package, www/,
# the demo world) and serves the web pages on 127.0.0.1:$PORT (default 8080): the world viewer
# at `/` (with a demo world to open), the benchmark page at `/bench.html`.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh pages
bash scripts/build-www.sh
demo=$(bash scripts/demo-world.sh)
STRATA_DEMO_MCWORLD=$demo exec node scripts/serve-www.mjs www/dist
