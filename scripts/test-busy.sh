#!/usr/bin/env bash
# `npm run test:busy [-- CMD ...]`: `npm test` (or CMD) with one core kept busy by another
# process the whole time (stress-ng's cpu stressor, at normal priority), as on a shared machine
# where a test thread may be slower than the one it waits on. A test that depends on which
# thread gets ahead fails here rather than in a user's first run.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh peers >/dev/null
stress-ng --cpu 1 --cpu-method loop --quiet &
busy=$!
trap 'kill "$busy" 2>/dev/null || true' EXIT
echo "== a core kept busy by stress-ng (pid $busy) while: ${*:-npm test}"
if [ $# -gt 0 ]; then "$@"; else npm test; fi
