#!/usr/bin/env bash
# The engine's source fingerprint: one SHA-256 over what the wasm build and the demo world are
# made from (src/, Cargo.toml, Cargo.lock, the wasm build script, rustc's version). Two checkouts
# with the same fingerprint build the same wasm engine, so a build kept outside the checkout
# under this name (scripts/build-wasm.sh, scripts/demo-world.sh) serves a fresh clone of a
# commit already built on this machine.
set -euo pipefail
cd "$(dirname "$0")/.."
{
  rustc -V
  echo "RUSTFLAGS=${RUSTFLAGS:-}"
  sed -n 's/^wasm-bindgen = "=\(.*\)"/wasm-bindgen \1/p' Cargo.toml
  for f in Cargo.toml Cargo.lock scripts/build-wasm.sh $(find src -type f | LC_ALL=C sort); do
    printf '%s\n' "$f"
    cat "$f"
  done
} | sha256sum | cut -c1-16
