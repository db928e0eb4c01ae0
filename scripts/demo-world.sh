#!/usr/bin/env bash
# The demo world offered by the viewer's "Open the demo world": a deterministic synthetic world
# (the content of `strata gen-world --chunks-x 32 --chunks-z 32 --seed 7`, terrain included),
# written and zipped by the wasm engine (Database.synthMcworld) into
# target/www-demo/demo.mcworld. Builds the wasm engine when it is missing. Prints the path.
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
  # Written by the wasm engine (the pages' own build, js/wasm): serving needs no native build.
  [[ -f js/wasm/strata_bg.wasm ]] || bash scripts/build-wasm.sh >&2
  mkdir -p target/www-demo
  node --input-type=module - "$demo.tmp" <<'JS'
import fs from 'node:fs';
import { initSync, Database } from './js/wasm/strata.js';
initSync({ module: fs.readFileSync('js/wasm/strata_bg.wasm') });
fs.writeFileSync(process.argv[2], Database.synthMcworld(32, 32, 7));
JS
  mv "$demo.tmp" "$demo"
  mkdir -p "$(dirname "$cache")" && cp "$demo" "$cache.tmp" && mv "$cache.tmp" "$cache"
  # shellcheck disable=SC2012
  ls -t "$(dirname "$cache")"/demo-*.mcworld 2>/dev/null | tail -n +5 | xargs -r rm -f
fi
echo "$demo"
