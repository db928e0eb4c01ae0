#!/usr/bin/env bash
# Idempotent set-up for a fresh machine: everything `npm test`, `npm start` and `npm run bench`
# need, installed only when missing. Safe to run any number of times.
set -euo pipefail
cd "$(dirname "$0")/.."

say() { printf '[setup] %s\n' "$*"; }

# Rust toolchain components.
if ! command -v cargo >/dev/null 2>&1; then
  echo "cargo not found: install Rust with rustup first" >&2
  exit 1
fi
if ! cargo fmt --version >/dev/null 2>&1; then
  say "adding rustfmt"; rustup component add rustfmt
fi
if ! cargo clippy --version >/dev/null 2>&1; then
  say "adding clippy"; rustup component add clippy
fi

# Python peers: Google's LevelDB (plyvel) and Mojang's (amulet-leveldb), for interop tests
# and benchmarks; crc32c for the world generator's --verify.
PY=${PYTHON:-python3}
pip_install() {
  "$PY" -m pip install --disable-pip-version-check -q "$@"
}
if ! "$PY" -c 'import plyvel' >/dev/null 2>&1; then
  say "installing plyvel (Google LevelDB)"; pip_install 'plyvel==1.5.1'
fi
if ! "$PY" -c 'import leveldb' >/dev/null 2>&1; then
  say "installing amulet-leveldb (Mojang LevelDB; builds from source, ~1 min)"
  pip_install 'amulet-leveldb==1.0.7'
fi
if ! "$PY" -c 'import crc32c' >/dev/null 2>&1; then
  say "installing crc32c (Python)"; pip_install 'crc32c'
fi

# /usr/bin/time -v measures peak RSS in tests and benchmarks.
if [ ! -x /usr/bin/time ]; then
  say "installing GNU time"
  if command -v apt-get >/dev/null 2>&1; then
    (apt-get install -y -q time >/dev/null 2>&1 || { apt-get update -q >/dev/null && apt-get install -y -q time >/dev/null; })
  fi
fi
say "ok"
