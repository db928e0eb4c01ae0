#!/usr/bin/env python3
"""Writes a database with Google's LevelDB (PyPI plyvel) for Strata's interop tests.

usage: google_db.py OUT_DIR {snappy|none} SEED OPS

Random puts, overwrites, deletes and batches over a small key space, with a small write
buffer so the data spreads over several flushes and compactions (levels 0..2), one manual
compaction half-way, and a non-empty log at close (LevelDB does not flush the memtable on
close). Then writes OUT_DIR.expected: the live entries in key order as
(u32 LE key length, key, u32 LE value length, value) records, and OUT_DIR.absent: keys
that were deleted (u32 LE length, key).
"""
import random
import struct
import sys

import plyvel


def main():
    out, compression, seed, ops = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    rng = random.Random(seed)
    db = plyvel.DB(
        out,
        create_if_missing=True,
        error_if_exists=True,
        compression=None if compression == "none" else "snappy",
        write_buffer_size=64 * 1024,
        block_size=2048,
        bloom_filter_bits=10,
    )
    model = {}
    deleted = set()

    def key():
        r = rng.random()
        if r < 0.05:  # binary keys, including 0x00 and 0xff bytes
            return bytes(rng.randrange(256) for _ in range(rng.randrange(1, 12)))
        return b"key%06d" % rng.randrange(ops // 3 + 1)

    def value():
        r = rng.random()
        if r < 0.02:
            return b""
        if r < 0.03:  # larger than a block: a block of its own
            return bytes(rng.randrange(256) for _ in range(rng.randrange(3000, 20000)))
        n = rng.randrange(1, 300)
        word = bytes(rng.randrange(97, 123) for _ in range(8))
        return (word * (n // 8 + 1))[:n]

    for i in range(ops):
        r = rng.random()
        if r < 0.65:
            k, v = key(), value()
            db.put(k, v)
            model[k] = v
            deleted.discard(k)
        elif r < 0.85:
            k = key()
            db.delete(k)
            if k in model:
                del model[k]
                deleted.add(k)
        else:
            with db.write_batch() as wb:
                for _ in range(rng.randrange(1, 20)):
                    k = key()
                    if rng.random() < 0.7:
                        v = value()
                        wb.put(k, v)
                        model[k] = v
                        deleted.discard(k)
                    else:
                        wb.delete(k)
                        if k in model:
                            del model[k]
                            deleted.add(k)
        if i == ops // 2:
            db.compact_range()
    db.close()

    with open(out + ".expected", "wb") as f:
        for k in sorted(model):
            v = model[k]
            f.write(struct.pack("<I", len(k)) + k + struct.pack("<I", len(v)) + v)
    with open(out + ".absent", "wb") as f:
        for k in sorted(deleted):
            f.write(struct.pack("<I", len(k)) + k)
    print(f"{len(model)} live, {len(deleted)} deleted")


if __name__ == "__main__":
    main()
