#!/usr/bin/env bash
# `npm run serve`: builds what is missing (set-up, wasm + TypeScript package, www/) and serves
# the web pages on 127.0.0.1:$PORT (default 8080): the world viewer at `/` (with a demo
# world to open), the benchmark page at `/bench.html`.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build-www.sh
# The demo world offered by the viewer's "Open the demo world": a deterministic synthetic
# world (strata gen-world, 32×32 chunks with terrain), zipped once into target/www-demo/.
demo=target/www-demo/demo.mcworld
if [[ ! -f $demo ]]; then
  [[ -x target/release/strata ]] || cargo build --release --bin strata
  rm -rf target/www-demo && mkdir -p target/www-demo
  target/release/strata gen-world target/www-demo/world --chunks-x 32 --chunks-z 32 --seed 7
  python3 - target/www-demo/world "$demo" <<'PY'
import os, sys, zipfile
src, out = sys.argv[1:3]
with zipfile.ZipFile(out, 'w', zipfile.ZIP_DEFLATED) as z:
    for root, _, files in os.walk(src):
        for f in sorted(files):
            p = os.path.join(root, f)
            z.write(p, os.path.relpath(p, src))
PY
fi
STRATA_DEMO_MCWORLD=$demo exec node scripts/serve-www.mjs www/dist
