#!/usr/bin/env bash
# Idempotent set-up for a fresh machine: everything `npm test`, `npm start` and `npm run bench`
# need, installed only when missing. Safe to run any number of times.
#
#   bash scripts/setup.sh            everything (npm test, npm run bench)
#   bash scripts/setup.sh pages      what building the web pages needs but wasm-bindgen-cli: the
#                                    wasm32 target, clang and llvm-ar (part `toolchain`), npm ci in
#                                    js/ and www/ (part `npm`)
#   bash scripts/setup.sh bindgen    wasm-bindgen-cli (npm start builds it while the wasm engine
#                                    compiles; npm start serves after these two parts alone)
#   bash scripts/setup.sh peers      the rest: rustfmt/clippy, the Python peers, GNU time, the
#                                    browsers the test suites drive
# Each step says what it installs and about how long it takes on a fresh machine (2 cores).
set -euo pipefail
cd "$(dirname "$0")/.."
PART=${1:-all}
case $PART in all | pages | toolchain | npm | bindgen | peers) ;; *) echo "usage: setup.sh [all|pages|toolchain|npm|bindgen|peers]" >&2; exit 2 ;; esac
want() { [ "$PART" = all ] || [[ " $* " == *" $PART "* ]]; }

say() { printf '[setup] %s\n' "$*"; }
# Linux (Debian: apt-get) or macOS (Homebrew), for the system packages below.
OS=$(uname -s)
export PATH="$HOME/.cargo/bin:$PATH"

apt_install() {
  command -v apt-get >/dev/null 2>&1 || { echo "apt-get not found: install $* by hand" >&2; exit 1; }
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$@" >/dev/null 2>&1 ||
    { apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$@" >/dev/null; }
}
brew_install() {
  command -v brew >/dev/null 2>&1 || { echo "Homebrew not found (https://brew.sh): brew install $*" >&2; exit 1; }
  brew list --versions "$@" >/dev/null 2>&1 || brew install -q "$@"
}

if ! command -v cargo >/dev/null 2>&1; then
  echo "cargo not found: install Rust with rustup first" >&2
  exit 1
fi

# WebAssembly toolchain (docs: the wasm build): the wasm32 target, wasm-bindgen-cli pinned to
# the `wasm-bindgen` version in Cargo.toml (scripts/build-wasm.sh runs cargo and wasm-bindgen
# itself: no wasm-pack). A cargo install takes minutes: only when missing. wasm-opt comes
# from npm's binaryen (js/ devDependencies), never from Debian.
if want bindgen; then
  WASM_BINDGEN_VERSION=$(sed -n 's/^wasm-bindgen = "=\(.*\)"/\1/p' Cargo.toml)
  if [ "$(wasm-bindgen --version 2>/dev/null | awk '{print $2}')" != "$WASM_BINDGEN_VERSION" ]; then
    say "installing wasm-bindgen-cli $WASM_BINDGEN_VERSION (cargo install: ~2.5 min on 2 cores)"
    # No default features: they only add TLS (rustls, ring) to the test runner's HTTP client,
    # which this build never runs; not --locked: its lock names a webpki-roots the registry
    # may no longer serve (seen on a fresh machine).
    cargo install -q --no-default-features wasm-bindgen-cli --version "$WASM_BINDGEN_VERSION"
  fi
fi
if want pages toolchain; then
  if ! rustup target list --installed 2>/dev/null | grep -qx wasm32-unknown-unknown; then
    say "adding the wasm32-unknown-unknown target (~5 s)"; rustup target add wasm32-unknown-unknown
  fi
  # The wasm build compiles C libdeflate (libdeflater, `freestanding`) for wasm32: the cc crate
  # needs clang (gcc has no wasm32 target; neither has Apple's clang: Homebrew's llvm on macOS,
  # which scripts/build-wasm.sh finds) and llvm-ar. Linking is Rust's own rust-lld.
  if [ "$OS" = Darwin ]; then
    if [ ! -x "$(brew --prefix llvm 2>/dev/null)/bin/clang" ]; then
      say "installing llvm (Homebrew; clang with the wasm32 target)"; brew_install llvm
    fi
  else
    if ! command -v clang >/dev/null 2>&1; then
      say "installing clang (Debian, ~10 s)"; apt_install clang
    fi
    if ! command -v llvm-ar >/dev/null 2>&1; then
      say "installing llvm (Debian; llvm-ar)"; apt_install llvm
    fi
  fi
fi
if want pages npm; then
  # The npm package's dev tools (TypeScript, vitest, tape, playwright-core, binaryen, peers).
  if [ ! -f js/node_modules/.package-lock.json ] || [ js/package-lock.json -nt js/node_modules/.package-lock.json ]; then
    say "npm ci in js/ (~20 s)"; (cd js && npm ci --no-audit --no-fund --loglevel=error)
  fi
  # The web pages' own dependencies (browser-level, chart.js, events); Vite comes from js/.
  if [ ! -f www/node_modules/.package-lock.json ] || [ www/package-lock.json -nt www/node_modules/.package-lock.json ]; then
    say "npm ci in www/ (~2 s)"; (cd www && npm ci --no-audit --no-fund --loglevel=error)
  fi
fi

if want peers; then
  # Rust toolchain components.
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
    "$PY" -m pip install --disable-pip-version-check --root-user-action=ignore -q "$@"
  }
  if ! "$PY" -c 'import plyvel' >/dev/null 2>&1; then
    say "installing plyvel (Google LevelDB, ~2 s)"; pip_install 'plyvel==1.5.1'
  fi
  if ! "$PY" -c 'import leveldb' >/dev/null 2>&1; then
    say "installing amulet-leveldb (Mojang LevelDB; builds from source, ~30 s)"
    pip_install 'amulet-leveldb==1.0.7'
  fi
  if ! "$PY" -c 'import amulet_nbt' >/dev/null 2>&1; then
    say "installing amulet-nbt (independent NBT reader for the world editor's tests, ~70 s)"
    pip_install 'amulet-nbt==2.1.8'
  fi
  if ! "$PY" -c 'import crc32c' >/dev/null 2>&1; then
    say "installing crc32c (Python)"; pip_install 'crc32c'
  fi

  # /usr/bin/time -v measures peak RSS in the CLI's tests (Linux; the benchmarks use
  # bench/measure.py, which works on macOS too).
  if [ "$OS" = Linux ] && [ ! -x /usr/bin/time ]; then
    say "installing GNU time"; apt_install time
  fi

  # Browser tests: Debian's Chromium, driven by playwright-core (never a downloaded browser).
  # Firefox for the browser suites that run beyond Chromium (js/test/firefox.test.ts), driven by
  # puppeteer-core over WebDriver BiDi: Debian's firefox-esr, never a downloaded browser.
  # On macOS the tests are not run (CI is Debian); the benchmark page uses the installed Google
  # Chrome or Chromium (bench/browser.mjs, STRATA_CHROMIUM).
  if [ "$OS" = Linux ]; then
    if [ ! -x /usr/bin/chromium ]; then
      say "installing chromium (Debian, ~20 s)"; apt_install chromium
    fi
    if [ ! -x /usr/bin/firefox-esr ]; then
      say "installing firefox-esr (Debian, ~10 s)"; apt_install firefox-esr
    fi
    # WebKit (js/test/webkit.test.ts): WebKitGTK's WebDriver and MiniBrowser, under a virtual X
    # display; driven by npm selenium-webdriver. Debian's packages, never a downloaded browser.
    if [ ! -x /usr/bin/WebKitWebDriver ] || ! command -v xvfb-run >/dev/null 2>&1; then
      say "installing webkit2gtk-driver and xvfb (Debian, ~20 s)"; apt_install webkit2gtk-driver xvfb
    fi
    # A second core kept busy for `npm run test:busy` (stress-ng's cpu stressor).
    if ! command -v stress-ng >/dev/null 2>&1; then
      say "installing stress-ng (Debian)"; apt_install stress-ng
    fi
  fi
fi
say "ok ($PART)"
