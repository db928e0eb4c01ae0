#!/usr/bin/env bash
# `npm run serve`: builds what is missing (set-up, wasm + TypeScript package, www/) and serves
# the web pages on 127.0.0.1:$PORT (default 8080), the world viewer at `/`.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build-www.sh
exec node scripts/serve-www.mjs www/dist
