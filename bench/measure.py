#!/usr/bin/env python3
"""Runs one command and prints its resource use as JSON, on Linux and macOS alike (no GNU
`time -v`): {"seconds": wall, "peak_rss_kib": the child's peak resident set, "cpu_percent":
(user + system) / wall * 100}. The command's stdout goes to --stdout (default /dev/null); its
exit status is passed on (non-zero: no JSON, the status is this script's).

    python3 bench/measure.py [--stdout FILE] -- COMMAND ARGS...
"""

import json
import os
import resource
import subprocess
import sys
import time


def main() -> int:
    args = sys.argv[1:]
    out = os.devnull
    if len(args) >= 2 and args[0] == "--stdout":
        out, args = args[1], args[2:]
    if args[:1] == ["--"]:
        args = args[1:]
    if not args:
        print(__doc__, file=sys.stderr)
        return 2
    with open(out, "wb") as f:
        t0 = time.perf_counter()
        proc = subprocess.Popen(args, stdout=f)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
    code = os.waitstatus_to_exitcode(status)
    proc.returncode = code
    if code != 0:
        return code if code > 0 else 128 - code
    # ru_maxrss is KiB on Linux, bytes on macOS.
    rss = usage.ru_maxrss // 1024 if sys.platform == "darwin" else usage.ru_maxrss
    cpu = (usage.ru_utime + usage.ru_stime) / wall * 100 if wall > 0 else 0
    print(json.dumps({"seconds": round(wall, 4), "peak_rss_kib": rss, "cpu_percent": round(cpu)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
