#!/usr/bin/env python3
"""Lists a Bedrock world's entities and block entities of one dimension independently of
Strata: Mojang's LevelDB (PyPI amulet-leveldb) reads the db, amulet-nbt decodes the NBT.

usage: entities.py DB_DIR DIMENSION   (pass a copy: LevelDB opens as a writer)

Prints one JSON object: {"actor": {identifier: count}, "entity": {...}, "block entity": {...},
"positions": {kind: sum of floor(16 * coordinate)}}. Rules as src/bedrock/entities.rs
documents them (digp lists actor ids; chunk tags 0x32 Entity and 0x31 BlockEntity hold
concatenated compounds).
"""
import json
import math
import struct
import sys

import amulet_nbt
import leveldb


def main():
    path, dim = sys.argv[1], int(sys.argv[2])
    db = leveldb.LevelDB(path, create_if_missing=False)
    out = {"actor": {}, "entity": {}, "block entity": {}}
    pos_sum = {"actor": 0, "entity": 0, "block entity": 0}
    digests = []
    records = []
    for k, v in db.iterate():
        if k.startswith(b"digp") and len(k) in (12, 16):
            d = struct.unpack("<i", k[12:16])[0] if len(k) == 16 else 0
            if d == dim:
                digests.append(v)
            continue
        if k.startswith((b"actorprefix", b"player", b"~local", b"VILLAGE", b"map_", b"structuretemplate", b"tickingarea")):
            continue
        if len(k) in (9, 13):
            d = struct.unpack("<i", k[8:12])[0] if len(k) == 13 else 0
            if len(k) == 13 and d not in (1, 2):
                continue
            if d == dim and k[-1] in (0x31, 0x32):
                records.append(("entity" if k[-1] == 0x32 else "block entity", v))
    def add(kind, tag):
        if kind == "block entity":
            ident = str(tag["id"].py_str) if "id" in tag and isinstance(tag["id"], amulet_nbt.StringTag) else "?"
            p = [int(tag[n].py_int) for n in ("x", "y", "z")]
        else:
            if "identifier" in tag:
                ident = tag["identifier"].py_str
            elif "id" in tag and hasattr(tag["id"], "py_int"):
                ident = "id:%d" % (tag["id"].py_int & 0xFF)
            else:
                ident = "?"
            p = [float(x.py_float) for x in tag["Pos"]]
        out[kind][ident] = out[kind].get(ident, 0) + 1
        pos_sum[kind] += sum(math.floor(c * 16) for c in p)
    for kind, v in records:
        for named in amulet_nbt.load_array(v, count=-1, little_endian=True, string_decoder=amulet_nbt.utf8_escape_decoder):
            add(kind, named.compound)
    for digest in digests:
        for i in range(0, len(digest) - len(digest) % 8, 8):
            try:
                value = db.get(b"actorprefix" + digest[i : i + 8])
            except KeyError:
                continue
            if value is None:
                continue
            add("actor", amulet_nbt.load(value, little_endian=True, string_decoder=amulet_nbt.utf8_escape_decoder).compound)
    db.close()
    print(json.dumps({"counts": out, "positions": pos_sum}, sort_keys=True))


if __name__ == "__main__":
    main()
