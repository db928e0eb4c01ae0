#!/usr/bin/env bash
# `npm test`: every test suite, after the idempotent set-up.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh

# The real worlds (../shared/worlds or $STRATA_WORLDS): a clone with nothing beside it has none,
# and the suites that read them say they are skipped; under CI they must be there.
WORLDS=${STRATA_WORLDS:-$(cd .. && pwd)/shared/worlds}
worlds_banner() {
  if [ ! -f "$WORLDS/MANIFEST.tsv" ]; then
    echo "!!! SKIPPED: the real Bedrock worlds are not at $WORLDS (set STRATA_WORLDS):"
    echo "!!!   every test that reads them says SKIPPED and checks nothing; everything else runs."
  fi
}
if [ ! -f "$WORLDS/MANIFEST.tsv" ] && [ -n "${CI:-}" ]; then
  echo "CI: the real worlds are missing at $WORLDS" >&2
  exit 1
fi
worlds_banner
trap worlds_banner EXIT
echo "== cargo fmt --check"
cargo fmt --all -- --check
echo "== cargo clippy"
cargo clippy --all-targets -- -D warnings
cargo clippy --target wasm32-unknown-unknown --lib -- -D warnings
echo "== cross-checks: aarch64 Linux and Apple Silicon (cargo check)"
bash scripts/check-targets.sh
echo "== the benchmarks' platform layer (Linux, and macOS with stand-ins)"
bash bench/test-platform.sh
echo "== cargo test"
cargo test --all-targets
echo "== bench/rucksdb.sh at a tiny size (LevelDB, RocksDB, Strata; the checks, the report)"
bash bench/test-rucksdb.sh
echo "== cargo test --doc (the crate guide) and cargo doc (no warnings)"
cargo test --doc
RUSTDOCFLAGS="-D warnings" cargo doc --no-deps --lib -q
echo "== wasm + TypeScript build"
bash scripts/build-wasm.sh
echo "== js: vitest (worlds, API, interop, packaging, browser, World API, world viewer in Chromium, bundler examples)"
(cd js && npx vitest run)
echo "== js: abstract-level compliance suite"
(cd js && node test/abstract-level.mjs > ../target/abstract-level.tap) || { tail -50 target/abstract-level.tap; exit 1; }
tail -4 target/abstract-level.tap
