#!/usr/bin/env bash
# The built pages' fingerprint: the engine's (scripts/source-hash.sh) with everything else the
# pages are made from (js/src, www/ but its node_modules and dist, both packages' manifests and
# locks, the build scripts). Two checkouts with the same fingerprint build the same www/dist,
# so a copy kept outside the checkout under this name (scripts/build-www.sh) is served by
# `npm start` in a fresh clone of a commit already built on this machine, before any install.
set -euo pipefail
cd "$(dirname "$0")/.."
{
  bash scripts/source-hash.sh
  node --version
  for f in scripts/build-www.sh scripts/demo-world.sh js/package.json js/package-lock.json \
    js/tsconfig.json $(find js/src www -path www/node_modules -prune -o -path www/dist -prune -o -type f -print | LC_ALL=C sort); do
    printf '%s\n' "$f"
    cat "$f"
  done
} | sha256sum | cut -c1-16
