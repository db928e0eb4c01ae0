#!/usr/bin/env python3
"""The scan workload (DESIGN.md section 2) run by Mojang's own LevelDB, the baseline for Strata.

Usage:
    python3 bench/mojang_scan.py DB_DIR [--tmp DIR] [--in-place] [--python-loop]

DB_DIR is a LevelDB folder or a Bedrock world folder holding db/.  Opens it with PyPI
`amulet-leveldb` (Cython wrapper of Mojang's LevelDB fork: zlib / raw deflate, the game's
settings), iterates every live entry in key order and prints one line of JSON:

    {"entries":N,"key_bytes":N,"value_bytes":N,"crc32c":N,"seconds":X}

crc32c is CRC-32C over key0 || value0 || key1 || value1 ... (no lengths or separators), as an
unsigned decimal: the same figures as `strata scan --json` and ../shared/worlds/MANIFEST.tsv.

Opening a database with LevelDB writes to it (the .log is recovered into a table, a new
MANIFEST is written, seeks may start compactions), so by default the folder is first copied to
a fresh temporary directory (under --tmp, default: next to DB_DIR's parent), which is removed
afterwards.  The copy is not timed: "seconds" covers only open + iterate + checksum, measured
with time.perf_counter().  --in-place skips the copy (only for folders you may modify).

--python-loop also reports "python_loop_seconds": the same loop body (counting, two crc32c
calls) run over the first 20,000 entries held in a list, repeated to the same entry count, so
Python's own share of "seconds" (interpreter loop and checksum, no LevelDB) is visible and
"seconds" minus it approximates Mojang's LevelDB alone.
"""

import argparse
import json
import os
import shutil
import sys
import tempfile
import time

try:
    import leveldb  # amulet-leveldb
except ImportError:  # pragma: no cover
    sys.exit("mojang_scan: needs Mojang's LevelDB wrapper: pip install amulet-leveldb "
             "(bash scripts/setup.sh installs it)")
try:
    from crc32c import crc32c
except ImportError:  # pragma: no cover
    sys.exit("mojang_scan: needs pip install crc32c (bash scripts/setup.sh installs it)")


def resolve_db_dir(path):
    """A world folder (level.dat + db/) resolves to its db/, like `strata`."""
    if not os.path.isfile(os.path.join(path, "CURRENT")) and \
            os.path.isfile(os.path.join(path, "db", "CURRENT")):
        return os.path.join(path, "db")
    return path


def loop(pairs, total):
    """The scan's loop body over in-memory pairs, `total` entries in all. Returns seconds."""
    t0 = time.perf_counter()
    n = kb = vb = c = 0
    reps, rest = divmod(total, len(pairs))
    for chunk in [pairs] * reps + [pairs[:rest]]:
        for k, v in chunk:
            n += 1
            kb += len(k)
            vb += len(v)
            c = crc32c(k, c)
            c = crc32c(v, c)
    assert n == total
    return time.perf_counter() - t0


def python_loop_seconds(db_path, total, sample=20000):
    db = leveldb.LevelDB(db_path, create_if_missing=False)
    pairs = []
    for k, v in db.iterate():
        pairs.append((k, v))
        if len(pairs) == sample:
            break
    db.close()
    return loop(pairs, total) if pairs else 0.0


def scan(db_path):
    """Open, iterate in key order, count and checksum. Returns (figures, seconds)."""
    t0 = time.perf_counter()
    db = leveldb.LevelDB(db_path, create_if_missing=False)
    n = kb = vb = c = 0
    for k, v in db.iterate():
        n += 1
        kb += len(k)
        vb += len(v)
        c = crc32c(k, c)
        c = crc32c(v, c)
    seconds = time.perf_counter() - t0
    db.close()
    figures = {"entries": n, "key_bytes": kb, "value_bytes": vb, "crc32c": c & 0xFFFFFFFF}
    return figures, seconds


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("db", help="LevelDB folder, or a world folder holding db/")
    ap.add_argument("--tmp", help="where to put the temporary copy "
                                  "(default: the parent of the world/db folder)")
    ap.add_argument("--in-place", action="store_true",
                    help="open DB_DIR itself (LevelDB will modify it)")
    ap.add_argument("--python-loop", action="store_true",
                    help="also time Python's own loop over in-memory entries")
    a = ap.parse_args()

    src = resolve_db_dir(os.path.abspath(a.db))
    if not os.path.isfile(os.path.join(src, "CURRENT")):
        sys.exit("mojang_scan: %s is not a LevelDB folder (no CURRENT)" % a.db)

    extra = {}
    if a.in_place:
        figures, seconds = scan(src)
        if a.python_loop:
            extra["python_loop_seconds"] = round(python_loop_seconds(src, figures["entries"]), 4)
    else:
        parent = a.tmp or os.path.dirname(os.path.dirname(src))
        work = tempfile.mkdtemp(prefix=".mojang-scan-", dir=parent)
        try:
            copy = os.path.join(work, "db")
            shutil.copytree(src, copy)
            os.sync()  # write the copy back now, not during the timed scan
            figures, seconds = scan(copy)
            if a.python_loop:
                extra["python_loop_seconds"] = round(
                    python_loop_seconds(copy, figures["entries"]), 4)
        finally:
            shutil.rmtree(work, ignore_errors=True)

    figures["seconds"] = round(seconds, 4)
    figures.update(extra)
    print(json.dumps(figures, separators=(",", ":")))


if __name__ == "__main__":
    main()
