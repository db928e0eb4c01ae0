#!/usr/bin/env bash
# Checks bench/platform.sh and bench/measure.py, the layer that lets `npm run bench` run on macOS
# as on Linux (part of `npm test`). Runs the Linux functions for real, and the macOS branch with
# stand-in `brew` and `sysctl` commands on PATH that record what they were asked (this machine
# is Linux: a real Mac run is still the proof, and the README says so), and the charts' axis
# ticks. Exact values throughout.
set -euo pipefail
cd "$(dirname "$0")/.."
T=$(mktemp -d "${TMPDIR:-/tmp}/strata-platform.XXXXXX")
trap 'rm -rf "$T"' EXIT
fail() { echo "bench/test-platform: FAIL: $*" >&2; exit 1; }
expect() { [ "$2" = "$3" ] || fail "$1: expected '$3', got '$2'"; }

# --- Linux, for real.
(
  source bench/platform.sh
  expect "os" "$BENCH_OS" linux
  mkdir -p "$T/d/sub"
  head -c 1000 /dev/zero >"$T/d/a"
  head -c 2345 /dev/zero >"$T/d/sub/b"
  expect "bytes of a folder" "$(bench_bytes "$T/d")" 3345
  expect "bytes of a file" "$(bench_bytes "$T/d/sub/b")" 2345
  touch -d '2026-01-02 03:04:05 UTC' "$T/d/a"
  expect "mtime" "$(bench_mtime "$T/d/a")" 2026-01-02T03:04:05Z
  [[ $(bench_now) =~ ^[0-9]{10}\.[0-9]{9}$ ]] || fail "bench_now: $(bench_now)"
  [[ $(bench_loadavg) =~ ^[0-9.]+\ [0-9.]+\ [0-9.]+$ ]] || fail "bench_loadavg: $(bench_loadavg)"
  expect "version of sqlite's package" "$(bench_pkg_version sqlite | cut -d' ' -f1)" libsqlite3-dev
)

# --- bench/measure.py: wall time, peak RSS of the child (not of Python itself), CPU, status.
python3 bench/measure.py --stdout "$T/out" -- python3 -c '
import time
x = bytearray(96 * 1024 * 1024)
for i in range(0, len(x), 4096): x[i] = 1
t = time.time()
while time.time() - t < 0.2: pass
print("hello")' >"$T/m.json"
python3 - "$T/m.json" "$T/out" <<'PY' || fail "measure.py figures: $(cat "$T/m.json")"
import json, sys
m = json.load(open(sys.argv[1]))
assert open(sys.argv[2]).read() == "hello\n", "stdout not captured"
assert set(m) == {"seconds", "peak_rss_kib", "cpu_percent"}, m
assert 96 * 1024 <= m["peak_rss_kib"] < 160 * 1024, m   # the 96 MiB the child touched
assert 0.2 <= m["seconds"] < 5, m
assert 50 <= m["cpu_percent"] <= 110, m                  # a busy loop on one core
PY
set +e
python3 bench/measure.py -- sh -c 'exit 7' >"$T/none.json"
status=$?
set -e
expect "measure.py passes on the exit status" "$status" 7
expect "measure.py prints nothing for a failed command" "$(cat "$T/none.json")" ""

# --- macOS, with stand-ins: `brew` (formulae leveldb and snappy missing, the rest installed)
# and `sysctl`, each logging its arguments.
mkdir -p "$T/bin" "$T/brew/include" "$T/brew/lib"
cat >"$T/bin/brew" <<SH
#!/bin/sh
echo "brew \$*" >>"$T/brew.log"
case "\$1" in
  --prefix) echo "$T/brew" ;;
  list) shift 2; for f in "\$@"; do case "\$f" in leveldb|snappy) exit 1 ;; esac; done
        for f in "\$@"; do echo "\$f 9.8.7"; done ;;
  install) ;;
esac
SH
printf '#!/bin/sh\necho "Apple M1 Pro"\n' >"$T/bin/sysctl"
chmod +x "$T/bin/brew" "$T/bin/sysctl"
(
  export PATH="$T/bin:$PATH" STRATA_PLATFORM=darwin
  source bench/platform.sh
  expect "os" "$BENCH_OS" darwin
  expect "cpu model" "$(bench_cpu_model)" "Apple M1 Pro"
  bench_pkg_install leveldb rocksdb sqlite 2>"$T/install.err"
  expect "formulae installed" "$(grep '^brew install' "$T/brew.log")" "brew install -q leveldb snappy"
  expect "install message" "$(cat "$T/install.err")" "[bench] installing leveldb snappy"
  expect "version of a formula" "$(bench_pkg_version rocksdb)" "rocksdb 9.8.7"
  # The harnesses compile with Homebrew's include and lib folders on the command line: a
  # header only the stand-in prefix has, and a library only it has.
  printf '#define PROBE 42\n' >"$T/brew/include/probe.h"
  printf 'int probe_lib(void) { return 1; }\n' >"$T/probe_lib.c"
  cc -c "$T/probe_lib.c" -o "$T/probe_lib.o" && ar rcs "$T/brew/lib/libprobe.a" "$T/probe_lib.o"
  printf '#include <probe.h>\nint probe_lib(void);\nint main(void) { return PROBE + probe_lib() == 43 ? 0 : 1; }\n' >"$T/probe.c"
  bench_cc -O2 "$T/probe.c" -lprobe -o "$T/probe" || fail "bench_cc did not pass Homebrew's include and lib folders"
  "$T/probe" || fail "the probe built with bench_cc did not run"
  bench_cxx -O2 -x c++ -c "$T/probe.c" -o "$T/probe_cxx.o" || fail "bench_cxx did not pass Homebrew include folder"
)
# --- bench/ratio_chart.py's axis ticks (plain Python: no matplotlib needed): 1 always, no two
# labels closer than 5% of the axis (0.2 and 0.25 printed as one "0.20.25" on a wide axis).
expect "ticks of a wide axis" "$(python3 -c 'import sys; sys.path.insert(0, "bench"); from ratio_chart import ticks; print(ticks(0.18, 90))')" \
  "[0.2, 0.5, 1, 2, 3, 5, 10, 20, 50]"
expect "ticks of a narrow axis" "$(python3 -c 'import sys; sys.path.insert(0, "bench"); from ratio_chart import ticks; print(ticks(0.5, 2))')" \
  "[0.5, 0.75, 1, 1.25, 1.5, 2]"
echo "bench/test-platform: ok (Linux functions, measure.py, the macOS branch with stand-ins, chart ticks)"
