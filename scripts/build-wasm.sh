#!/usr/bin/env bash
# Builds the wasm engine into js/wasm (cargo, wasm-bindgen, then wasm-opt from npm's binaryen)
# and the TypeScript package into js/dist. Skips the Rust build when no Rust source changed.
# wasm-bindgen runs with --experimental-reset-state-function: after a trap (out of memory, or
# a bug) the Node entry point starts a new instance in place of the dead one (js/src/node.ts).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PWD/js/node_modules/.bin:$PATH"
# macOS: Apple's clang has no wasm32 target; the C part (libdeflate) is compiled by Homebrew's
# LLVM (scripts/setup.sh installs it).
if [ "$(uname -s)" = Darwin ] && command -v brew >/dev/null 2>&1; then
  llvm=$(brew --prefix llvm 2>/dev/null || true)
  if [ -x "$llvm/bin/clang" ]; then
    export CC_wasm32_unknown_unknown="$llvm/bin/clang" AR_wasm32_unknown_unknown="$llvm/bin/llvm-ar"
  fi
fi

out=js/wasm
stamp=$out/.stamp
# A build kept outside the checkout under the sources' fingerprint (scripts/source-hash.sh):
# a fresh clone of a commit already built on this machine takes it instead of compiling.
cache=${STRATA_BUILD_CACHE:-$HOME/.cache/strata/build}/wasm-$(bash scripts/source-hash.sh)
newest=$(find src Cargo.toml Cargo.lock -type f -newer "$stamp" 2>/dev/null | head -1 || true)
if [[ ! -f $out/strata_bg.wasm || ! -f $stamp || -n $newest ]]; then
  if [[ -f $cache/strata_bg.wasm ]]; then
    echo "== the wasm engine of these sources, built before on this machine ($cache)"
    mkdir -p "$out"
    cp "$cache"/strata.js "$cache"/strata.d.ts "$cache"/strata_bg.wasm "$cache"/strata_bg.wasm.d.ts "$out"/
  else
    echo "== cargo build (wasm32, release)"
    cargo build -q --lib --release --target wasm32-unknown-unknown
    echo "== wasm-bindgen"
    wasm-bindgen target/wasm32-unknown-unknown/release/strata.wasm --target web --out-dir "$out" \
      --out-name strata --experimental-reset-state-function
    echo "== wasm-opt -O3"
    wasm-opt -O3 --strip-debug --enable-bulk-memory --enable-nontrapping-float-to-int --enable-sign-ext \
      --enable-mutable-globals --enable-reference-types --enable-multivalue \
      "$out/strata_bg.wasm" -o "$out/strata_bg.opt.wasm"
    mv "$out/strata_bg.opt.wasm" "$out/strata_bg.wasm"
    rm -f "$out/.gitignore"
    # Kept for the next checkout of the same sources (the newest four builds).
    mkdir -p "$cache.tmp"
    cp "$out"/strata.js "$out"/strata.d.ts "$out"/strata_bg.wasm "$out"/strata_bg.wasm.d.ts "$cache.tmp"/
    rm -rf "$cache" && mv "$cache.tmp" "$cache"
    # shellcheck disable=SC2012
    ls -dt "$(dirname "$cache")"/wasm-* 2>/dev/null | tail -n +5 | xargs -r rm -rf
  fi
  touch "$stamp"
fi
raw=$(wc -c <"$out/strata_bg.wasm" | tr -d " ")
gz=$(gzip -9c "$out/strata_bg.wasm" | wc -c)
echo "== strata_bg.wasm: $raw bytes ($gz gzipped)"

echo "== tsc"
(cd js && rm -rf dist && tsc -p tsconfig.json)
