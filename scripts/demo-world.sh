#!/usr/bin/env bash
# The demo world offered by the viewer's "Open the demo world": a deterministic synthetic world
# (strata gen-world, 32×32 chunks with terrain, seed 7), zipped once into
# target/www-demo/demo.mcworld. Builds the release CLI when it is missing. Prints the path.
set -euo pipefail
cd "$(dirname "$0")/.."
# Kept outside the checkout under the sources' fingerprint (scripts/source-hash.sh), as the
# wasm build is: a fresh clone of a commit already built here serves it without the CLI.
cache=${STRATA_BUILD_CACHE:-$HOME/.cache/strata/build}/demo-$(bash scripts/source-hash.sh).mcworld
demo=target/www-demo/demo.mcworld
if [[ ! -f $demo && -f $cache ]]; then
  mkdir -p target/www-demo && cp "$cache" "$demo"
fi
if [[ ! -f $demo ]]; then
  [[ -x target/release/strata ]] || cargo build -q --release --bin strata
  rm -rf target/www-demo && mkdir -p target/www-demo
  target/release/strata gen-world target/www-demo/world --chunks-x 32 --chunks-z 32 --seed 7 >&2
  python3 - target/www-demo/world "$demo.tmp" <<'PY'
import os, sys, zipfile
src, out = sys.argv[1:3]
with zipfile.ZipFile(out, 'w', zipfile.ZIP_DEFLATED) as z:
    for root, _, files in os.walk(src):
        for f in sorted(files):
            p = os.path.join(root, f)
            z.write(p, os.path.relpath(p, src))
PY
  mv "$demo.tmp" "$demo"
  mkdir -p "$(dirname "$cache")" && cp "$demo" "$cache.tmp" && mv "$cache.tmp" "$cache"
  # shellcheck disable=SC2012
  ls -t "$(dirname "$cache")"/demo-*.mcworld 2>/dev/null | tail -n +5 | xargs -r rm -f
fi
echo "$demo"
