#!/usr/bin/env python3
"""Compares two little-endian NBT files with an independent reader (PyPI amulet-nbt).

usage: nbt_diff.py OLD NEW SKIP

SKIP bytes are skipped at the start of both (8 for level.dat's header). Prints one line per
path whose value differs (`a/b/3/c`), in order; nothing when the trees are equal. Every root
tag of the files is compared (Bedrock records may hold several).
"""
import sys

import amulet_nbt


def walk(a, b, path, out):
    if type(a) is not type(b):
        out.append(path or "/")
        return
    if isinstance(a, amulet_nbt.CompoundTag):
        keys = list(a.keys())
        if keys != list(b.keys()):
            # Names added, removed or reordered: report each name on either side that differs.
            for k in sorted(set(keys) ^ set(b.keys())):
                out.append(f"{path}/{k}")
            for k in keys:
                if k in b:
                    walk(a[k], b[k], f"{path}/{k}", out)
            return
        for k in keys:
            walk(a[k], b[k], f"{path}/{k}", out)
    elif isinstance(a, amulet_nbt.ListTag):
        if len(a) != len(b):
            out.append(path)
            return
        for i, (x, y) in enumerate(zip(a, b)):
            walk(x, y, f"{path}/{i}", out)
    elif a.to_nbt(compressed=False, little_endian=True) != b.to_nbt(compressed=False, little_endian=True):
        out.append(path)


def main():
    old, new, skip = sys.argv[1], sys.argv[2], int(sys.argv[3])
    a = amulet_nbt.load_array(open(old, "rb").read()[skip:], count=-1, compressed=False, little_endian=True)
    b = amulet_nbt.load_array(open(new, "rb").read()[skip:], count=-1, compressed=False, little_endian=True)
    out = []
    if len(a) != len(b):
        out.append(f"roots {len(a)} != {len(b)}")
    for i, (x, y) in enumerate(zip(a, b)):
        if x.name != y.name:
            out.append(f"root {i} name")
        walk(x.tag, y.tag, "", out)
    for line in out:
        print(line)


if __name__ == "__main__":
    main()
