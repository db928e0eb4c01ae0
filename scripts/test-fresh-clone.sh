#!/usr/bin/env bash
# `npm run test:fresh-clone [-- --busy]`: the two README commands in a fresh clone of this
# repository with nothing beside it (no ../shared), as a new user runs them:
#   1. `npm start`, serving: the seconds to the first HTTP 200 of the viewer and of its demo
#      world, then to the end of its benchmarks (it is stopped then); the clone's checkout must
#      stay clean;
#   2. `npm test` (with --busy: while stress-ng keeps a core busy), the suites that need the
#      real worlds saying they are skipped.
# Builds everything from scratch in the clone: about as long as a fresh machine (~25-35 min
# here), so it is its own command, not part of `npm test`; .ci/run runs it when the set-up
# changed since it last passed (scripts/setup-hash.sh, .ci/fresh-clone.verified, which a pass
# here rewrites: commit it).
set -euo pipefail
cd "$(dirname "$0")/.."
REPO=$(pwd)
BUSY=0
[ "${1:-}" = --busy ] && BUSY=1
WORK=$(mktemp -d "${TMPDIR:-/tmp}/strata-fresh.XXXXXX")
cleanup() {
  [ -n "${start_pid:-}" ] && kill -- "-$start_pid" 2>/dev/null
  rm -rf "$WORK"
}
trap cleanup EXIT
git clone -q "$REPO" "$WORK/strata"
cd "$WORK/strata"
[ ! -e ../shared ] || { echo "unexpected ../shared beside the clone" >&2; exit 1; }
PORT=$(node -e "const s=require('net').createServer().listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})")

t0=$(date +%s)
setsid env -u CI PORT="$PORT" STRATA_BENCH_CACHE="$WORK/cache" npm start >"$WORK/start.log" 2>&1 &
start_pid=$!
until node -e "Promise.all(['/', '/demo.mcworld'].map((p) => fetch('http://127.0.0.1:$PORT' + p))).then((r) => process.exit(r.every((x) => x.ok) ? 0 : 1), () => process.exit(1))" 2>/dev/null; do
  kill -0 "$start_pid" 2>/dev/null || { tail -30 "$WORK/start.log" >&2; echo "npm start ended before serving" >&2; exit 1; }
  sleep 0.5
done
t_serve=$(($(date +%s) - t0))
echo "npm start: the viewer and its demo world answered 200 after ${t_serve} s"
until grep -q -e '^== npm start: the benchmarks done' -e '^== !!! the benchmarks failed' "$WORK/start.log"; do
  kill -0 "$start_pid" 2>/dev/null || break
  sleep 2
done
t_start=$(($(date +%s) - t0))
kill -- "-$start_pid" 2>/dev/null || true
wait "$start_pid" 2>/dev/null || true
start_pid=
tail -5 "$WORK/start.log"
grep -q '^== npm start: the benchmarks done' "$WORK/start.log" || { echo "npm start's benchmarks failed (above)" >&2; exit 1; }
if [ -n "$(git status --porcelain)" ]; then
  echo "npm start left the checkout changed:" >&2; git status --short >&2; exit 1
fi

t1=$(date +%s)
if [ "$BUSY" = 1 ]; then
  env -u CI bash scripts/test-busy.sh 2>&1 | tee "$WORK/test.log" | tail -5
else
  env -u CI npm test 2>&1 | tee "$WORK/test.log" | tail -5
fi
t_test=$(($(date +%s) - t1))
grep -q "SKIPPED" "$WORK/test.log" || { echo "npm test did not say the worlds were skipped" >&2; exit 1; }
mkdir -p "$REPO/target"
grep -aE "Tests .*passed|test result:|^# (pass|fail)" "$WORK/test.log" | sed 's/\x1b\[[0-9;]*m//g' >"$REPO/target/fresh-clone-counts.txt" || true
busy_note=""
[ "$BUSY" = 1 ] && busy_note=" (a core kept busy)"
echo "fresh clone, nothing beside it: npm start served after ${t_serve} s and finished in ${t_start} s; npm test${busy_note} ${t_test} s; checkout clean"
bash scripts/setup-hash.sh >"$REPO/.ci/fresh-clone.verified"
echo "recorded the set-up fingerprint in .ci/fresh-clone.verified (commit it)"
