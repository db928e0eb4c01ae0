#!/usr/bin/env python3
"""Writes the scan benchmark's world: a Bedrock-shaped LevelDB written by Mojang's LevelDB.

usage: gen_world.py OUT_DIR [--entries N] [--size S] [--seed N] [--verify]

The project's own generator (bench/scan.sh, scripts/start.sh): a clone needs nothing beside
it. Mojang's LevelDB (PyPI amulet-leveldb, `import leveldb`) writes every table, as the game
does: raw deflate blocks (id 4), 160 KiB blocks, bloom filters, 4 MiB write buffer.

Shape (what a scan of a real 1.18+ world meets): chunk records keyed
`x i32 | z i32 | [dimension i32] | tag [| subchunk y]` over a square of chunks around 0,0 (most
in the Overworld, some in the Nether and the End): a Version byte (0x2C), Data3D (0x2B),
several SubChunkPrefix records (0x2F, the bulk of the bytes), FinalizedState (0x36), now and
then block entities (0x31) and entities (`digp` + `actorprefix` records); plus the global
records (`~local_player`, `BiomeData`, ...). Values are slices of synthetic streams that
compress about as real ones do (block-index words with runs, NBT-like text); their bodies are
not meant to load in the game (the map draws `strata gen-world`'s worlds, not this one).

Keys are written in key order (a bulk load: LevelDB moves tables down without rewriting
them), so 5 M entries take minutes, not an hour. --size is the target on-disk size of db/:
it scales the large values' lengths (about, within ~10%). The content depends only on
--seed, --entries and --size.

--verify reads the world back with Mojang's LevelDB and prints
  verify: entries=N key_bytes=N value_bytes=N crc32c=N
where crc32c is CRC-32C over key0 value0 key1 value1 ... in key order (what `strata scan`
reports), the line bench/scan.sh checks every engine against.
"""

import argparse
import os
import random
import struct
import sys
import time

# On-disk bytes per entry at scale 1 (measured with this generator: 250,000 entries).
DISK_PER_ENTRY_AT_SCALE_1 = 520.0
BLOCK = 160 * 1024


def parse_size(s):
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    s = s.strip().upper()
    if s and s[-1] in units:
        return int(float(s[:-1]) * units[s[-1]])
    return int(s)


def terrain_stream(rng, n):
    """Packed block-index words: a small palette, short runs (raw deflate: ~5.3x, as real)."""
    out = bytearray()
    while len(out) < n:
        word = rng.getrandbits(32) & rng.choice((0x0F0F0F0F, 0x33333333, 0x01010101, 0))
        out += struct.pack("<I", word) * rng.randint(1, 6)
    return bytes(out[:n])


def nbt_stream(rng, n):
    """NBT-like records: names and ids repeated with small variations."""
    names = [b"minecraft:stone", b"minecraft:dirt", b"minecraft:grass_block", b"minecraft:water",
             b"minecraft:oak_log", b"minecraft:deepslate", b"minecraft:air", b"Pos", b"Rotation",
             b"identifier", b"UniqueID", b"Chest", b"Items", b"Count", b"Damage"]
    out = bytearray()
    while len(out) < n:
        name = rng.choice(names)
        out += b"\x0a\x00" + struct.pack("<H", len(name)) + name
        out += bytes([rng.choice((1, 2, 3, 8))]) + struct.pack("<i", rng.randint(-64, 320))
    return bytes(out[:n])


class Corpus:
    """Value bodies: slices of two 4 MiB streams, at offsets drawn per value."""

    def __init__(self, seed):
        rng = random.Random(seed ^ 0x5EED)
        self.terrain = terrain_stream(rng, 4 << 20)
        self.nbt = nbt_stream(rng, 4 << 20)

    def take(self, rng, stream, n):
        src = self.terrain if stream == "t" else self.nbt
        start = rng.randrange(0, len(src) - n) if n < len(src) else 0
        return src[start:start + n]


def chunk_key(x, z, dim, tag, y=None):
    k = struct.pack("<ii", x, z)
    if dim:
        k += struct.pack("<i", dim)
    k += bytes([tag])
    if y is not None:
        k += struct.pack("<b", y)
    return k


def chunk_specs(rng, x, z, dim, scale):
    """(key, stream, length) of one chunk's records (lengths scaled)."""
    big = lambda lo, hi: max(16, int(rng.randint(lo, hi) * scale))
    specs = [(chunk_key(x, z, dim, 0x2C), "v", 1),
             (chunk_key(x, z, dim, 0x2B), "t", big(500, 900)),
             (chunk_key(x, z, dim, 0x36), "v", 4)]
    if rng.random() < 0.54:  # a fully generated chunk
        low = -4 if dim == 0 else 0
        for y in range(low, low + rng.randint(6, 12)):
            specs.append((chunk_key(x, z, dim, 0x2F, y), "t", big(1500, 7000)))
        if rng.random() < 0.15:
            specs.append((chunk_key(x, z, dim, 0x31), "n", big(80, 900)))
        if rng.random() < 0.25:
            ids = [rng.getrandbits(63) for _ in range(rng.randint(1, 4))]
            digp = b"digp" + struct.pack("<ii", x, z) + (struct.pack("<i", dim) if dim else b"")
            specs.append((digp, "ids", ids))
            for i in ids:
                specs.append((b"actorprefix" + struct.pack(">q", i), "n", big(300, 1200)))
    return specs


def value(rng, corpus, stream, length):
    if stream == "v":
        return bytes([40])[:1] if length == 1 else struct.pack("<I", 2)
    if stream == "ids":
        return b"".join(struct.pack(">q", i) for i in length)
    return corpus.take(rng, stream, length)


GLOBALS = [b"~local_player", b"BiomeData", b"Overworld", b"Nether", b"TheEnd", b"mobevents",
           b"portals", b"scoreboard", b"AutonomousEntities", b"schedulerWT"]


def plan(seed, entries, scale):
    """Every key with the seed of its value, sorted, stopping at the chunk reaching `entries`."""
    rng = random.Random(seed)
    keys = []
    for g in GLOBALS:
        keys.append((g, "n", 200))
    side = 1
    while side * side * 6 < entries * 1.2:
        side += 1
    half = side // 2
    positions = [(x, z) for x in range(-half, side - half) for z in range(-half, side - half)]
    rng.shuffle(positions)
    for i, (x, z) in enumerate(positions):
        r = i % 100
        dim = 0 if r < 90 else (1 if r < 97 else 2)
        keys.extend(chunk_specs(rng, x, z, dim, scale))
        if len(keys) >= entries:
            break
    # Entity ids may repeat across chunks (a 63-bit draw almost never does): keep keys unique.
    keys.sort(key=lambda k: k[0])
    unique = []
    for k in keys:
        if not unique or unique[-1][0] != k[0]:
            unique.append(k)
    return unique


def write_level_dat(path, name):
    def nbt_string(s):
        b = s.encode()
        return struct.pack("<H", len(b)) + b
    body = b"\x0a" + nbt_string("")
    body += b"\x08" + nbt_string("LevelName") + nbt_string(name)
    body += b"\x03" + nbt_string("StorageVersion") + struct.pack("<i", 10)
    body += b"\x03" + nbt_string("GameType") + struct.pack("<i", 1)
    body += b"\x00"
    with open(path, "wb") as f:
        f.write(struct.pack("<ii", 10, len(body)) + body)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out")
    ap.add_argument("--entries", type=int, default=5_000_000)
    ap.add_argument("--size", default="1G")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--verify", action="store_true")
    a = ap.parse_args()
    import leveldb  # amulet-leveldb: Mojang's LevelDB

    if os.path.exists(a.out) and os.listdir(a.out):
        sys.exit(f"{a.out} exists and is not empty")
    target = parse_size(a.size)
    scale = round(max(0.05, target / (a.entries * DISK_PER_ENTRY_AT_SCALE_1)), 2)
    t0 = time.time()
    keys = plan(a.seed, a.entries, scale)
    os.makedirs(os.path.join(a.out, "db"), exist_ok=True)
    write_level_dat(os.path.join(a.out, "level.dat"), "Strata scan benchmark")
    with open(os.path.join(a.out, "levelname.txt"), "w") as f:
        f.write("Strata scan benchmark")
    corpus = Corpus(a.seed)
    db = leveldb.LevelDB(os.path.join(a.out, "db"), create_if_missing=True)
    rng = random.Random(a.seed * 7919 + 1)
    key_bytes = value_bytes = 0
    batch = {}
    for key, stream, length in keys:
        v = value(rng, corpus, stream, length)
        batch[key] = v
        key_bytes += len(key)
        value_bytes += len(v)
        if len(batch) >= 2000:
            db.putBatch(batch)
            batch = {}
    if batch:
        db.putBatch(batch)
    db.close()
    disk = sum(os.path.getsize(os.path.join(a.out, "db", n)) for n in os.listdir(os.path.join(a.out, "db")))
    print("wrote %d entries, %d key bytes, %d value bytes (scale %.2f) in %.1fs; db %.1f MB"
          % (len(keys), key_bytes, value_bytes, scale, time.time() - t0, disk / 1e6))
    if a.verify:
        import crc32c

        t1 = time.time()
        db = leveldb.LevelDB(os.path.join(a.out, "db"), create_if_missing=False)
        n = kb = vb = 0
        crc = 0
        for k, v in db.iterate():
            n += 1
            kb += len(k)
            vb += len(v)
            crc = crc32c.crc32c(v, crc32c.crc32c(k, crc))
        db.close()
        print("verify: entries=%d key_bytes=%d value_bytes=%d crc32c=%d [%.1fs]"
              % (n, kb, vb, crc, time.time() - t1))
        if (n, kb, vb) != (len(keys), key_bytes, value_bytes):
            sys.exit("verify: Mojang's LevelDB read back different figures")


if __name__ == "__main__":
    main()
