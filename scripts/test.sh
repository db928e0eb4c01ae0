#!/usr/bin/env bash
# `npm test`: every test suite, after the idempotent set-up.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
echo "== cargo fmt --check"
cargo fmt --all -- --check
echo "== cargo clippy"
cargo clippy --all-targets -- -D warnings
cargo clippy --target wasm32-unknown-unknown --lib -- -D warnings
echo "== cross-checks: aarch64 Linux and Apple Silicon (cargo check)"
bash scripts/check-targets.sh
echo "== cargo test"
cargo test --all-targets
echo "== cargo test --doc (the crate guide) and cargo doc (no warnings)"
cargo test --doc
RUSTDOCFLAGS="-D warnings" cargo doc --no-deps --lib -q
echo "== wasm + TypeScript build"
bash scripts/build-wasm.sh
echo "== js: vitest (worlds, API, interop, packaging, browser, World API, world viewer in Chromium)"
(cd js && npx vitest run)
echo "== js: abstract-level compliance suite"
(cd js && node test/abstract-level.mjs > ../target/abstract-level.tap) || { tail -50 target/abstract-level.tap; exit 1; }
tail -4 target/abstract-level.tap
