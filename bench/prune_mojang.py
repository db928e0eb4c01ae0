#!/usr/bin/env python3
"""The prune of bench/prune.sh done with Mojang's LevelDB (PyPI amulet-leveldb).

usage: prune_mojang.py select DB_DIR          prints the keep selection: from the north-west
                                              corner of dimension 0's chunks to their median x
                                              and median z (about a quarter of the chunks)
       prune_mojang.py prune DB_DIR SELECTION prints JSON timings: open, collect the keys to
                                              delete (same rule as src/bedrock/edit.rs), delete
                                              them in one batch-like loop, compact, close

The key rule (src/bedrock/edit.rs): a chunk of dimension 0 is an (x, z) with a recognised chunk
record (9/10-byte key, known tag; y byte only on 0x2F) or a digp record; every 9/10-byte key
of such a chunk, its digp and the actorprefix records that digp names (unless a kept chunk's
digp names them too) are deleted.
"""
import json
import struct
import sys
import time

import leveldb

STRINGS = (b"~local_player", b"player_", b"actorprefix", b"VILLAGE_", b"map_",
           b"structuretemplate_", b"tickingarea_", b"digp")


def recognised(tag, has_y):
    return (0x2B <= tag <= 0x41 or tag in (0x76, 0x77)) and has_y == (tag == 0x2F)


def index(db):
    chunk_keys, digps = {}, {}
    known = set()
    for k, v in db.iterate():
        if k.startswith(b"digp") and len(k) in (12, 16):
            x, z = struct.unpack_from("<ii", k, 4)
            d = struct.unpack_from("<i", k, 12)[0] if len(k) == 16 else 0
            digps[(x, z, d)] = (k, v)
            if d == 0:
                known.add((x, z))
            continue
        if any(k.startswith(p) for p in STRINGS) or len(k) not in (9, 10):
            continue
        x, z = struct.unpack_from("<ii", k, 0)
        chunk_keys.setdefault((x, z), []).append(k)
        if recognised(k[8], len(k) == 10):
            known.add((x, z))
    return chunk_keys, digps, known


def parse(sel):
    areas = []
    for part in sel.split(";"):
        corners = [tuple(int(n) for n in c.split(",")) for c in part.split(":")]
        (xa, za), (xb, zb) = corners[0], corners[-1]
        areas.append((min(xa, xb), min(za, zb), max(xa, xb), max(za, zb)))
    return lambda x, z: any(a <= x <= c and b <= z <= d for a, b, c, d in areas)


def main():
    mode, path = sys.argv[1], sys.argv[2]
    t0 = time.perf_counter()
    db = leveldb.LevelDB(path, create_if_missing=False)
    t_open = time.perf_counter()
    if mode == "select":
        _, _, known = index(db)
        xs = sorted(x for x, _ in known)
        zs = sorted(z for _, z in known)
        print(f"{xs[0]},{zs[0]}:{xs[len(xs) // 2]},{zs[len(zs) // 2]}")
        db.close()
        return
    keep = parse(sys.argv[3])
    chunk_keys, digps, known = index(db)
    doomed = []
    kept_ids, doomed_ids = set(), set()
    for (x, z, d), (k, v) in digps.items():
        ids = {v[i:i + 8] for i in range(0, len(v) - len(v) % 8, 8)}
        if d == 0 and not keep(x, z):
            doomed.append(k)
            doomed_ids |= ids
        else:
            kept_ids |= ids
    for xz in known:
        if not keep(*xz):
            doomed.extend(chunk_keys.get(xz, []))
    for i in sorted(doomed_ids - kept_ids):
        k = b"actorprefix" + i
        if db.get(k) is not None:
            doomed.append(k)
    t_collect = time.perf_counter()
    for k in doomed:
        db.delete(k)
    t_delete = time.perf_counter()
    db.compact()
    t_compact = time.perf_counter()
    db.close()
    t_close = time.perf_counter()
    print(json.dumps({
        "records": len(doomed),
        "open_s": round(t_open - t0, 3),
        "collect_s": round(t_collect - t_open, 3),
        "delete_s": round(t_delete - t_collect, 3),
        "compact_s": round(t_compact - t_delete, 3),
        "close_s": round(t_close - t_compact, 3),
        "total_s": round(t_close - t0, 3),
    }))


if __name__ == "__main__":
    main()
