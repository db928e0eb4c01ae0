#!/usr/bin/env bash
# `npm run test:fresh-clone`: the two README commands in a fresh clone with nothing beside it
# (no ../shared): `npm start` (STRATA_NO_SERVE=1) and `npm test` must both pass there, the
# suites that need the real worlds saying they are skipped. Builds everything from scratch in
# the clone (about as long as a fresh machine: ~15-20 minutes here), so it is its own command,
# not part of `npm test`. Also checks that `npm start` leaves the clone's checkout clean.
set -euo pipefail
cd "$(dirname "$0")/.."
REPO=$(pwd)
WORK=$(mktemp -d "${TMPDIR:-/tmp}/strata-fresh.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
git clone -q "$REPO" "$WORK/strata"
cd "$WORK/strata"
[ ! -e ../shared ] || { echo "unexpected ../shared beside the clone" >&2; exit 1; }
start=$(date +%s)
env -u CI STRATA_NO_SERVE=1 STRATA_BENCH_CACHE="$WORK/cache" npm start 2>&1 | tee "$WORK/start.log" | tail -5
t_start=$(( $(date +%s) - start ))
if [ -n "$(git status --porcelain)" ]; then
  echo "npm start left the checkout changed:" >&2; git status --short >&2; exit 1
fi
start=$(date +%s)
env -u CI npm test 2>&1 | tee "$WORK/test.log" | tail -5
t_test=$(( $(date +%s) - start ))
grep -q "SKIPPED" "$WORK/test.log" || { echo "npm test did not say the worlds were skipped" >&2; exit 1; }
echo "fresh clone, nothing beside it: npm start ${t_start} s, npm test ${t_test} s; checkout clean"
