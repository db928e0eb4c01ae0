#!/usr/bin/env bash
# Cross-checks the native build for the platforms users run besides this one (part of
# `npm test`): `cargo check` of the library and the CLI, no linker needed.
#   aarch64-unknown-linux-gnu: default features; C libdeflate cross-compiled by clang against
#     Debian's arm64 libc headers (libc6-dev-arm64-cross).
#   aarch64-apple-darwin (Apple Silicon, where the seeds' figures were measured): default
#     features; C libdeflate compiled by clang for the target in its `freestanding` mode, since
#     no macOS SDK can be had here (a Mac builds it against its SDK).
# Installs what it needs when missing (rustup targets, the Debian headers): idempotent.
set -euo pipefail
cd "$(dirname "$0")/.."
say() { printf '[targets] %s\n' "$*"; }

for t in aarch64-unknown-linux-gnu aarch64-apple-darwin; do
  if ! rustup target list --installed 2>/dev/null | grep -qx "$t"; then
    say "adding the $t target"; rustup target add "$t" >/dev/null
  fi
done
if [ ! -f /usr/aarch64-linux-gnu/include/stdint.h ]; then
  say "installing libc6-dev-arm64-cross (Debian)"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q libc6-dev-arm64-cross >/dev/null 2>&1 ||
    { apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -q libc6-dev-arm64-cross >/dev/null; }
fi

CC_aarch64_unknown_linux_gnu=clang \
CFLAGS_aarch64_unknown_linux_gnu="-isystem /usr/aarch64-linux-gnu/include" \
  cargo check -q --target aarch64-unknown-linux-gnu --lib --bins
say "aarch64-unknown-linux-gnu: ok (default features: C libdeflate cross-compiled)"

CC_aarch64_apple_darwin=clang \
  cargo check -q --target aarch64-apple-darwin --features libdeflater/freestanding --lib --bins
say "aarch64-apple-darwin: ok (default features: C libdeflate compiled freestanding, no SDK here)"

cargo check -q --target aarch64-apple-darwin --no-default-features --lib --bins
say "aarch64-apple-darwin: ok (pure Rust: --no-default-features)"
