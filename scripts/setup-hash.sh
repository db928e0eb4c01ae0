#!/usr/bin/env bash
# The set-up's fingerprint: one SHA-256 over the scripts and manifests that decide what a fresh
# machine installs and builds. `npm run test:fresh-clone` records it in .ci/fresh-clone.verified
# when both README commands passed in a fresh clone; .ci/run runs that check again whenever the
# fingerprint differs from the recorded one (a set-up change not yet proven on a bare clone).
set -euo pipefail
cd "$(dirname "$0")/.."
FILES=(.ci/run package.json Cargo.toml Cargo.lock js/package.json js/package-lock.json
  www/package.json www/package-lock.json scripts/setup.sh scripts/start.sh scripts/test.sh
  scripts/build-wasm.sh scripts/build-www.sh scripts/demo-world.sh scripts/serve.sh
  scripts/test-fresh-clone.sh scripts/source-hash.sh scripts/site-hash.sh)
for f in "${FILES[@]}"; do printf '%s\n' "$f"; cat "$f"; done | sha256sum | cut -d' ' -f1
