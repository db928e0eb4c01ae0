#!/usr/bin/env python3
"""Reads a whole database with a real LevelDB and writes its entries in iteration order.

usage: dump_db.py {plyvel|amulet} DB_DIR OUT_FILE

plyvel is Google's LevelDB; amulet is Mojang's (PyPI amulet-leveldb). OUT_FILE receives
(u32 LE key length, key, u32 LE value length, value) records. Both libraries open the database
as writers (they may rewrite it), so pass a copy.
"""
import struct
import sys


def main():
    engine, path, out = sys.argv[1], sys.argv[2], sys.argv[3]
    if engine == "plyvel":
        import plyvel

        db = plyvel.DB(path, create_if_missing=False)
        items = db.iterator()
    elif engine == "amulet":
        import leveldb

        db = leveldb.LevelDB(path, create_if_missing=False)
        items = db.iterate()
    else:
        sys.exit(f"unknown engine {engine}")
    n = 0
    with open(out, "wb") as f:
        for k, v in items:
            f.write(struct.pack("<I", len(k)) + k + struct.pack("<I", len(v)) + v)
            n += 1
    db.close()
    print(n)


if __name__ == "__main__":
    main()
