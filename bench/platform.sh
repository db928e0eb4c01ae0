# Sourced by the benchmark scripts: the few things that differ between Linux and macOS, so
# `npm run bench` runs unchanged on both (the seeds' figures were measured on an M1 MacBook).
# Everything that GNU coreutils, /proc or apt would give on Linux goes through a function here
# (or through Python, which the benchmarks need anyway), never inline in a script.
#   STRATA_PLATFORM   linux | darwin (default: from uname); darwin expects Homebrew (`brew`).
#   bench_pkg_install PEER...   the peers' libraries: Debian packages or Homebrew formulae
#   bench_pkg_version PEER      "package version" of an installed peer library
#   bench_cc / bench_cxx        C and C++ compilers, with Homebrew's include and lib paths
#   bench_now                   wall clock, seconds with nanoseconds (BSD date has no %N)
#   bench_bytes PATH            bytes of a file, or of every file under a folder (du -sb)
#   bench_mtime PATH            modification time, ISO 8601 UTC
#   bench_cpu_model, bench_loadavg
# Needs python3 (every benchmark does).

case "${STRATA_PLATFORM:-$(uname -s)}" in
  Darwin | darwin) BENCH_OS=darwin ;;
  *) BENCH_OS=linux ;;
esac
BENCH_PY=${PYTHON:-python3}

bench_pkgs_of() {  # peer -> the packages (Debian) or formulae (Homebrew) it builds against
  case "$BENCH_OS:$1" in
    linux:leveldb) echo libleveldb-dev libsnappy-dev ;;
    linux:rocksdb) echo librocksdb-dev ;;
    linux:sqlite) echo libsqlite3-dev ;;
    linux:kyotocabinet) echo libkyotocabinet-dev ;;
    linux:lmdb) echo liblmdb-dev ;;
    darwin:leveldb) echo leveldb snappy ;;
    darwin:rocksdb) echo rocksdb ;;
    darwin:sqlite) echo sqlite ;;
    darwin:kyotocabinet) echo kyoto-cabinet ;;
    darwin:lmdb) echo lmdb ;;
    *) echo "bench/platform: no package known for peer $1" >&2; return 1 ;;
  esac
}

bench_pkg_install() {  # PEER...: installs what is missing (idempotent)
  local missing=() p pkg
  for p in "$@"; do
    for pkg in $(bench_pkgs_of "$p"); do
      if [ "$BENCH_OS" = darwin ]; then
        brew list --versions "$pkg" >/dev/null 2>&1 || missing+=("$pkg")
      else
        dpkg -s "$pkg" >/dev/null 2>&1 || missing+=("$pkg")
      fi
    done
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  echo "[bench] installing ${missing[*]}" >&2
  if [ "$BENCH_OS" = darwin ]; then
    command -v brew >/dev/null 2>&1 || { echo "[bench] Homebrew not found: install it (https://brew.sh), or run: brew install ${missing[*]}" >&2; return 1; }
    brew install -q "${missing[@]}" >/dev/null
  else
    command -v apt-get >/dev/null 2>&1 || { echo "[bench] apt-get not found: install ${missing[*]} by hand" >&2; return 1; }
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}" >/dev/null 2>&1 ||
      { apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}" >/dev/null; }
  fi
}

bench_pkg_version() {  # PEER: prints "package version" (the first package of the peer)
  local pkg
  pkg=$(bench_pkgs_of "$1" | cut -d' ' -f1)
  if [ "$BENCH_OS" = darwin ]; then
    echo "$pkg $(brew list --versions "$pkg" | awk '{ print $NF }')"
  else
    echo "$pkg $(dpkg-query -W -f='${Version}' "$pkg")"
  fi
}

if [ "$BENCH_OS" = darwin ]; then
  BENCH_BREW=$(brew --prefix 2>/dev/null || echo /opt/homebrew)
  bench_cc() { cc -I"$BENCH_BREW/include" -L"$BENCH_BREW/lib" "$@"; }
  bench_cxx() { c++ -I"$BENCH_BREW/include" -L"$BENCH_BREW/lib" "$@"; }
else
  bench_cc() { gcc "$@"; }
  bench_cxx() { g++ "$@"; }
fi

bench_now() { "$BENCH_PY" -c 'import time; print("%.9f" % time.time())'; }
bench_bytes() {
  "$BENCH_PY" - "$1" <<'PY'
import os, sys
p = sys.argv[1]
if os.path.isfile(p):
    print(os.path.getsize(p))
else:
    print(sum(os.path.getsize(os.path.join(r, f)) for r, _, fs in os.walk(p) for f in fs))
PY
}
bench_mtime() {
  "$BENCH_PY" -c 'import os, sys, time; print(time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(os.path.getmtime(sys.argv[1]))))' "$1"
}
bench_cpu_model() {
  if [ "$BENCH_OS" = darwin ]; then
    sysctl -n machdep.cpu.brand_string 2>/dev/null || echo unknown
  else
    awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo 2>/dev/null || echo unknown
  fi
}
bench_loadavg() { "$BENCH_PY" -c 'import os; print("%.2f %.2f %.2f" % os.getloadavg())'; }
