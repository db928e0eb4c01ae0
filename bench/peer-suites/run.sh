#!/usr/bin/env bash
# Runs a peer project's OWN test suite twice, on the original and on Strata's drop-in, and
# prints both tallies:
#
#   bench/peer-suites/run.sh classic-level PATH_TO_CLASSIC_LEVEL_CHECKOUT
#   bench/peer-suites/run.sh browser-level PATH_TO_BROWSER_LEVEL_CHECKOUT
#
# The checkout is never modified: it is copied into a temporary folder twice (without .git),
# and only the copies change. Needs js/dist built (scripts/build-wasm.sh) and, for
# browser-level, a Chromium at $CHROMIUM (default /usr/bin/chromium).
#
# classic-level: the copies get the checkout's devDependencies (its node_modules when it has
#   one, else `npm install --ignore-scripts`), the ORIGINAL copy the native addon from the npm
#   tarball of the same version (`npm pack classic-level@VERSION`: its prebuilds/, which
#   node-gyp-build finds in the package root) unless the checkout has a build/ or prebuilds/
#   already; the STRATA copy an index.js that re-exports js/dist/classic-level.js, so the
#   tests' `require('..')` gets Strata. Each runs `tape test/*-test.js` (electron's runner,
#   test/electron.js, is not a *-test.js) and its "# pass / # fail" lines and failing tests
#   are printed. Full output: $OUT/classic-level-{original,strata}.tap (OUT defaults to the
#   temporary folder, which is kept).
# browser-level: the copies share the checkout's devDependencies (or one install of them);
#   bench/peer-suites/browser-level.mjs bundles each copy's test/index.js with Vite (from
#   js/node_modules; tape's Node built-ins mapped to the browserify shims among those
#   devDependencies), the STRATA copy with an index.js that re-exports js/dist/browser-level.js
#   (so the tests' `require('..')` gets Strata's BrowserLevel), serves it from 127.0.0.1, runs
#   it in Chromium through playwright-core (js/node_modules) and reads tape's output from the
#   console. It prints pass/fail per file (custom-test.js's tests told apart by name) and tape's
#   summary for both. Full output: $OUT/browser-level-{original,strata}.tap.
set -euo pipefail

suite=${1:-}
checkout=${2:-}
if [[ -z $suite || -z $checkout || ! -d $checkout ]]; then
  echo "usage: $0 classic-level|browser-level PATH_TO_CHECKOUT" >&2
  exit 2
fi
here=$(cd "$(dirname "$0")" && pwd)
strata=$(cd "$here/../.." && pwd)
checkout=$(cd "$checkout" && pwd)
[[ -f $strata/js/dist/node.js ]] || { echo "js/dist is missing: run scripts/build-wasm.sh first" >&2; exit 2; }
work=$(mktemp -d "${TMPDIR:-/tmp}/peer-suite-$suite.XXXXXX")
OUT=${OUT:-$work}
mkdir -p "$OUT"
echo "== $suite from $checkout, copies in $work"

copy() { # copy DEST: the checkout without .git (node_modules linked, not copied)
  mkdir -p "$1"
  (cd "$checkout" && tar --exclude=.git --exclude=node_modules -cf - .) | (cd "$1" && tar -xf -)
}

deps() { # deps DIR: the checkout's node_modules, or a fresh install of its devDependencies
  if [[ -d $checkout/node_modules ]]; then
    ln -s "$checkout/node_modules" "$1/node_modules"
  elif [[ -d $work/node_modules ]]; then
    ln -s "$work/node_modules" "$1/node_modules"
  else
    (cd "$1" && npm install --ignore-scripts --no-audit --no-fund --loglevel=error >/dev/null)
    mv "$1/node_modules" "$work/node_modules"
    ln -s "$work/node_modules" "$1/node_modules"
  fi
}

count() { # count TAPFILE: "pass fail" from tape's summary ("? ?" when the run died first)
  local pass fail
  pass=$(grep -E '^# pass ' "$1" | tail -1 | awk '{print $3}' || true)
  fail=$(grep -E '^# fail ' "$1" | tail -1 | awk '{print $3}' || true)
  if [[ -z $pass && -z $fail ]]; then
    echo "? ?"
  else
    echo "${pass:-0} ${fail:-0}"
  fi
}

failing() { # failing TAPFILE: each failing assertion with the test it belongs to
  awk '/^# /{t=substr($0,3)} /^not ok/{print "    [" t "] " $0}' "$1"
}

case $suite in
  classic-level)
    version=$(node -p "require('$checkout/package.json').version")
    copy "$work/original"
    copy "$work/strata"
    deps "$work/original"
    # The Strata copy's node_modules: the same packages (as links) plus strata-level as npm
    # would install it (its package.json, dist/ and wasm/ copied, no node_modules of its own),
    # so it shares the tests' abstract-level (one copy, as npm dedupes it) instead of taking
    # Strata's checkout's.
    mods=$(readlink "$work/original/node_modules")
    mkdir "$work/strata/node_modules"
    for m in "$mods"/* "$mods"/.bin; do ln -s "$m" "$work/strata/node_modules/$(basename "$m")"; done
    mkdir "$work/strata/node_modules/strata-level"
    cp -r "$strata/js/package.json" "$strata/js/dist" "$strata/js/wasm" "$work/strata/node_modules/strata-level/"
    if [[ ! -d $checkout/build && ! -d $checkout/prebuilds ]]; then
      (cd "$work" && npm pack "classic-level@$version" --silent >/dev/null && mkdir -p tarball && tar -xzf "classic-level-$version.tgz" -C tarball)
      cp -r "$work/tarball/package/prebuilds" "$work/original/prebuilds"
    fi
    cat >"$work/strata/index.js" <<'EOF'
'use strict'
// Strata's drop-in in place of the native addon (written by bench/peer-suites/run.sh).
module.exports = require('strata-level/classic-level')
EOF
    # One tape process per file: a file that kills its process (an unhandled error in a
    # worker thread) loses only its own count; such a file is marked "died".
    files=$(cd "$work/original" && ls test/*-test.js)
    declare -A sum=([original_pass]=0 [original_fail]=0 [strata_pass]=0 [strata_fail]=0 [original_files]=0 [strata_files]=0)
    printf '%-42s %14s %14s\n' "file: pass/fail" original strata
    for f in $files; do
      line=$(printf '%-42s' "$f")
      for v in original strata; do
        tap="$OUT/classic-level-$v-$(basename "$f" .js).tap"
        status=0
        (cd "$work/$v" && timeout "${SUITE_TIMEOUT:-600}" node node_modules/tape/bin/tape "$f" >"$tap" 2>&1) || status=$?
        read -r p x < <(count "$tap")
        cell="$p/$x"
        died=0
        # tape exits 1 when an assertion failed; any other end before its summary is a death.
        if [[ $p == "?" || ($status != 0 && $x == 0) ]]; then
          died=1
          cell="$cell died"
          echo "# exit: status $status before the end of the run" >>"$tap"
        fi
        if [[ $p != "?" ]]; then
          sum[${v}_pass]=$((sum[${v}_pass] + p))
          sum[${v}_fail]=$((sum[${v}_fail] + x))
          [[ $x == 0 && $died == 0 ]] && sum[${v}_files]=$((sum[${v}_files] + 1))
        fi
        line="$line $(printf '%14s' "$cell")"
      done
      echo "$line"
    done
    n=$(echo "$files" | wc -w)
    echo
    echo "classic-level $version, $n test files:"
    for v in original strata; do
      printf '  %-9s assertions: pass %s, fail %s, total %s; files passing whole: %s of %s\n' "$v" "${sum[${v}_pass]}" "${sum[${v}_fail]}" "$((sum[${v}_pass] + sum[${v}_fail]))" "${sum[${v}_files]}" "$n"
    done
    for v in original strata; do
      for tap in "$OUT"/classic-level-$v-*.tap; do
        if grep -q '^not ok\|^# exit: status' "$tap"; then
          echo "  failing on $v, $(basename "$tap" .tap | sed "s/^classic-level-$v-//").js:"
          failing "$tap"
          grep '^# exit: status' "$tap" | sed 's/^/    /' || true
        fi
      done
    done
    ;;
  browser-level)
    copy "$work/original"
    copy "$work/strata"
    deps "$work/original"
    ln -s "$(readlink "$work/original/node_modules")" "$work/strata/node_modules"
    if [[ ! -f $here/browser-level.mjs ]]; then
      echo "browser-level: the browser driver (bench/peer-suites/browser-level.mjs) is not written yet" >&2
      exit 3
    fi
    node "$here/browser-level.mjs" "$work" "$strata" "$OUT"
    ;;
  *)
    echo "unknown suite $suite (classic-level or browser-level)" >&2
    exit 2
    ;;
esac
