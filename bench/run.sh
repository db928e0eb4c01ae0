#!/usr/bin/env bash
# `npm run bench`: every benchmark. For now only the scan workload (bench/scan.sh); options
# are passed through, e.g. `npm run bench -- --entries 250000 --size 51.2M`.
set -euo pipefail
cd "$(dirname "$0")/.."
bash bench/scan.sh "$@"
