// Bedrock worlds through the package's World API in Node (wasm engine, node:fs): for one
// world of each era (Data2D, Data3D, LegacyTerrain) the summary totals equal MANIFEST.tsv,
// chunk counts equal the native CLI's `world chunks`, the map draws every chunk, one chunk's
// records equal the keys found by a plain iterator, NBT decodes; `.mcworld` zips (made here
// with Python's zipfile in a temp folder) give the same figures, and hostile zips are refused.

import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, test } from 'vitest';

import { openMcworld, openWorld, type World } from '../dist/node.js';
import { cliPath, repoRoot, tempDir, worlds, worldsDir } from './helpers.js';

// The release CLI when built (npm start builds it), else the debug one `cargo test` builds.
const releaseCli = process.env.STRATA_CLI ?? (fs.existsSync(path.join(repoRoot, 'target/release/strata')) ? path.join(repoRoot, 'target/release/strata') : cliPath);

/** Chunks with a Version record per dimension, from the native CLI. */
function cliChunks(world: string): [number, number, number] {
  const count = (d: number) => Number(execFileSync(releaseCli, ['world', 'chunks', world, '--dimension', String(d)], { encoding: 'utf8' }).trim());
  return [count(0), count(1), count(2)];
}

/** Zips `dir` (entries relative to it, or under `nest/` when given) with Python's zipfile. */
function zipWorld(dir: string, out: string, nest = ''): void {
  execFileSync('python3', [
    '-c',
    `import os, sys, zipfile
src, out, nest = sys.argv[1:4]
with zipfile.ZipFile(out, 'w', zipfile.ZIP_DEFLATED) as z:
    for root, _, files in os.walk(src):
        for f in sorted(files):
            p = os.path.join(root, f)
            z.write(p, os.path.join(nest, os.path.relpath(p, src)))`,
    dir,
    out,
    nest,
  ]);
}

// Per world: the map scale and the opaque pixels it must draw (the Rust tests' figures), and
// one known chunk with the record names it holds.
const CASES = [
  { name: 'amulet_1_16', chunks: [436, 0, 0], ppc: 16, opaque: 436 * 256 },
  { name: 'amulet_1_18_vanilla', chunks: [2737, 70, 13], ppc: 4, opaque: 2737 * 16 },
  { name: 'mcpe_0_11_mcedit_testdb', chunks: [256, 0, 0], ppc: 16, opaque: 15_657 },
] as const;

async function checkWorld(w: World, name: string): Promise<void> {
  const row = worlds().find((r) => r.name === name)!;
  const c = CASES.find((k) => k.name === name)!;
  const s = await w.summary();
  expect(s.total).toEqual({ count: row.entries, keyBytes: row.keyBytes, valueBytes: row.valueBytes });
  const sum = s.kinds.reduce((a, k) => ({ count: a.count + k.count, keyBytes: a.keyBytes + k.keyBytes, valueBytes: a.valueBytes + k.valueBytes }), {
    count: 0,
    keyBytes: 0,
    valueBytes: 0,
  });
  expect(sum).toEqual(s.total);
  expect(s.chunks).toEqual(c.chunks);
  expect(s.chunks).toEqual(cliChunks(path.join(worldsDir, name)));
  expect(s.levelDat).not.toBeNull();
  expect(await w.db.scan()).toEqual({ entries: row.entries, keyBytes: row.keyBytes, valueBytes: row.valueBytes, crc32c: row.crc32c });

  const list = await w.chunks(0);
  expect(list.length).toBe(c.chunks[0]);
  // The flat list is the same list, and a band drawn from a part of it (Int32Array or
  // pairs) is the same image.
  const flat = await w.chunkList(0);
  expect(flat).toBeInstanceOf(Int32Array);
  expect(Array.from(flat)).toEqual(list.flat());
  if (list.length > 0) {
    const zs = list.map((p) => p[1]);
    const [za, zb] = [Math.min(...zs), Math.min(...zs) + 3];
    const part = list.filter(([, cz]) => cz >= za - 1 && cz <= zb);
    const partFlat = Int32Array.from(part.flat());
    const region = [Math.min(...list.map((p) => p[0])), za, Math.max(...list.map((p) => p[0])), zb] as const;
    const fromPairs = await w.map({ dimension: 0, pixelsPerChunk: 4, region, chunks: part });
    const fromFlat = await w.map({ dimension: 0, pixelsPerChunk: 4, region, chunks: partFlat });
    expect([fromFlat.chunksIndexed, fromFlat.chunksDrawn, fromFlat.width, fromFlat.height]).toEqual([fromPairs.chunksIndexed, fromPairs.chunksDrawn, fromPairs.width, fromPairs.height]);
    expect(fromFlat.chunksIndexed).toBe(list.filter(([, cz]) => cz >= za && cz <= zb).length);
    expect(Buffer.from(fromFlat.rgba).equals(Buffer.from(fromPairs.rgba))).toBe(true);
    await expect(w.map({ dimension: 0, pixelsPerChunk: 4, region, chunks: partFlat.subarray(1) })).rejects.toMatchObject({ code: 'LEVEL_INVALID_ARGUMENT' });
  }
  const map = await w.map({ dimension: 0, pixelsPerChunk: c.ppc });
  expect([map.chunksIndexed, map.chunksDrawn, map.chunksFailed]).toEqual([c.chunks[0], c.chunks[0], 0]);
  expect(map.rgba.length).toBe(map.width * map.height * 4);
  let opaque = 0;
  for (let i = 3; i < map.rgba.length; i += 4) if (map.rgba[i] !== 0) opaque++;
  expect(opaque).toBe(c.opaque);

  // One chunk's records equal the Overworld chunk keys under its 8-byte prefix.
  const [x, z] = list[0]!;
  const prefix = new Uint8Array(8);
  new DataView(prefix.buffer).setInt32(0, x, true);
  new DataView(prefix.buffer).setInt32(4, z, true);
  // The first key past the prefix: drop trailing 0xff bytes, then add one to the last.
  let end = 8;
  while (end > 0 && prefix[end - 1] === 0xff) end--;
  const upper = prefix.slice(0, end);
  upper[end - 1]! += 1;
  const keys = (await w.db.iterator({ gte: prefix, lt: upper }).all()) as Array<[Uint8Array, Uint8Array]>;
  const own = keys.filter(([k]) => k.length === 9 || k.length === 10);
  const records = await w.chunkRecords(0, x, z);
  expect(records.map((r) => [Array.from(r.key), r.size])).toEqual(own.map(([k, v]) => [Array.from(k), v.length]));
  expect(records.filter((r) => r.name === 'Version' || r.name === 'LegacyVersion').length).toBe(1);

  // Block tiles: one per chunk having SubChunkPrefix records (none for LegacyTerrain chunks).
  const some = list.slice(0, 6);
  const withBlocks: string[] = [];
  for (const [cx, cz] of some) {
    if ((await w.chunkRecords(0, cx, cz)).some((r) => r.name === 'SubChunkPrefix')) withBlocks.push(`${cx},${cz}`);
  }
  const tiles = await w.surfaceTiles(0, some);
  expect([...tiles.keys()]).toEqual(withBlocks);
  for (const t of tiles.values()) expect(t.length).toBe(1024);
  if (name === 'mcpe_0_11_mcedit_testdb') expect(tiles.size).toBe(0);
  else expect(tiles.size).toBeGreaterThan(0);
}

describe('Bedrock worlds through World', () => {
  for (const c of CASES) {
    test(`${c.name} opened in place`, async () => {
      const w = await openWorld(path.join(worldsDir, c.name));
      try {
        await checkWorld(w, c.name);
      } finally {
        await w.close();
      }
    });

    test(`${c.name} as a .mcworld (nested one folder deep)`, async () => {
      const zip = path.join(tempDir('mcworld'), `${c.name}.mcworld`);
      zipWorld(path.join(worldsDir, c.name), zip, 'My World');
      const w = await openMcworld(fs.readFileSync(zip));
      try {
        expect(w.source.mcworld!.rootInZip).toBe('My World');
        await checkWorld(w, c.name);
      } finally {
        await w.close();
      }
    });
  }

  test('content identity: one world in place and as a .mcworld alike, another world and an edit not', async () => {
    const dir = path.join(worldsDir, 'amulet_1_16');
    const zip = path.join(tempDir('identity'), 'amulet_1_16.mcworld');
    zipWorld(dir, zip, 'My World');
    const identity = async (open: () => Promise<World>) => {
      const w = await open();
      try {
        return Buffer.from(await w.contentIdentity());
      } finally {
        await w.close();
      }
    };
    const inPlace = await identity(() => openWorld(dir));
    expect(inPlace.length).toBeGreaterThan(100);
    expect((await identity(() => openWorld(dir))).equals(inPlace)).toBe(true);
    expect((await identity(() => openMcworld(fs.readFileSync(zip)))).equals(inPlace)).toBe(true);
    expect((await identity(() => openWorld(path.join(worldsDir, 'amulet_1_18_vanilla')))).equals(inPlace)).toBe(false);
    // An edit (on a writable copy in memory) changes it. (A writable open already does: it
    // writes its log's entries into a table and starts a new log.)
    const w = await openMcworld(fs.readFileSync(zip), { writable: true });
    try {
      const opened = Buffer.from(await w.contentIdentity());
      expect(Buffer.from(await w.contentIdentity()).equals(opened)).toBe(true);
      const [x, z] = (await w.chunks(0))[0]!;
      expect((await w.deleteChunks(0, `${x},${z}`)).chunks).toBe(1);
      expect(Buffer.from(await w.contentIdentity()).equals(opened)).toBe(false);
    } finally {
      await w.close();
    }
  });

  test('relief samples kept from a chunk list draw the reads\' map, none is used once the world changed, and handed to another open they draw it too', async () => {
    const zip = path.join(tempDir('relief'), 'w.mcworld');
    zipWorld(path.join(worldsDir, 'amulet_1_18_vanilla'), zip);
    const mapOf = async (w: World) => w.map({ dimension: 0, pixelsPerChunk: 4 });
    // Without a chunk list first: every chunk read.
    const plain = await openMcworld(fs.readFileSync(zip));
    const read = await mapOf(plain);
    await plain.close();
    const w = await openMcworld(fs.readFileSync(zip), { writable: true });
    try {
      // A plain chunk list takes no samples.
      const chunks = await w.chunks(0);
      expect(await w.reliefSamples(0)).toBeUndefined();
      expect(await w.chunks(0, { reliefSamples: true })).toEqual(chunks);
      const sampled = await mapOf(w);
      expect([sampled.width, sampled.height, sampled.chunksDrawn, sampled.chunksFailed]).toEqual([read.width, read.height, read.chunksDrawn, read.chunksFailed]);
      expect(Buffer.from(sampled.rgba).equals(Buffer.from(read.rgba))).toBe(true);
      // Chunk A gets chunk B's Data3D (another height map and biomes): the next map shows it,
      // though the samples of the list read before the write say otherwise.
      const key = (x: number, z: number) => {
        const k = Buffer.alloc(9);
        k.writeInt32LE(x, 0);
        k.writeInt32LE(z, 4);
        k[8] = 0x2b;
        return k;
      };
      const [a, b] = [chunks[Math.floor(chunks.length / 2)]!, chunks[0]!];
      const other = (await w.db.get(key(b[0], b[1]), { valueEncoding: 'view' })) as Uint8Array;
      await w.db.put(key(a[0], a[1]), other);
      const after = await mapOf(w);
      await w.chunks(0, { reliefSamples: true }); // samples of the world as it is now
      const again = await mapOf(w);
      expect(Buffer.from(after.rgba).equals(Buffer.from(again.rgba))).toBe(true);
      expect(Buffer.from(after.rgba).equals(Buffer.from(read.rgba))).toBe(false);
      // Written since the list: no samples to hand out.
      await w.db.put(key(b[0], b[1]), other);
      expect(await w.reliefSamples(0)).toBeUndefined();
    } finally {
      await w.close();
    }
    // Samples handed out, then back to another open of the same world: the same map, and
    // bytes that are not samples are refused.
    const first = await openMcworld(fs.readFileSync(zip));
    await first.chunks(0, { reliefSamples: true });
    const packed = (await first.reliefSamples(0))!;
    expect(await first.reliefSamples(1)).toBeUndefined();
    await first.close();
    expect(Buffer.from(packed.subarray(0, 4)).toString()).toBe('SRI3');
    const second = await openMcworld(fs.readFileSync(zip));
    try {
      await expect(second.setReliefSamples(packed.subarray(0, packed.length - 1))).rejects.toMatchObject({ code: 'LEVEL_INVALID_ARGUMENT' });
      await second.setReliefSamples(packed);
      const kept = await mapOf(second);
      expect(Buffer.from(kept.rgba).equals(Buffer.from(read.rgba))).toBe(true);
      expect((await second.reliefSamples(0))!.length).toBe(packed.length);
    } finally {
      await second.close();
    }
  });

  test('two engines on the same world share the chunk index pass: ranges between split keys, joined in key order, are one pass\'s list and samples, byte for byte', async () => {
    const dir = path.join(worldsDir, 'amulet_1_18_vanilla');
    const [page, helper, alone] = [await openWorld(dir), await openWorld(dir), await openWorld(dir)];
    try {
      const whole = await alone.chunkList(0, { reliefSamples: true });
      const packed = (await alone.reliefSamples(0))!;
      const map = await alone.map({ dimension: 0, pixelsPerChunk: 4 });
      // Above the world's table bytes: nothing to share. Parts out of range: refused.
      expect(await page.chunkSplitKeys(4, 2 ** 40)).toEqual([]);
      await expect(page.chunkSplitKeys(1)).rejects.toMatchObject({ code: 'LEVEL_INVALID_ARGUMENT' });
      const keys = await page.chunkSplitKeys(6);
      expect(keys.length).toBe(5);
      expect(keys.every((k, i) => k.length === 8 && (i === 0 || Buffer.compare(Buffer.from(keys[i - 1]!), Buffer.from(k)) < 0))).toBe(true);
      const ranges = [undefined, ...keys].map((start, i) => ({ start, end: keys[i] }));
      // Alternate ranges on each engine, as the viewer's page and map helper take them.
      const parts = await Promise.all(ranges.map((r, i) => (i % 2 === 0 ? page : helper).chunkListPart(0, r)));
      // Each range holds some of the chunks, and none is in two.
      const counts = parts.map((p) => Buffer.from(p).readUInt32LE(8));
      expect(counts.reduce((a, b) => a + b, 0)).toBe(whole.length / 2);
      expect(counts.every((c) => c > 0)).toBe(true);
      expect(await helper.reliefSamples(0)).toBeUndefined(); // a part keeps nothing
      const joined = await page.joinChunkParts(0, parts);
      expect(Buffer.from(joined.buffer, joined.byteOffset, joined.byteLength).equals(Buffer.from(whole.buffer, whole.byteOffset, whole.byteLength))).toBe(true);
      expect(Buffer.from((await page.reliefSamples(0))!).equals(Buffer.from(packed))).toBe(true);
      const shared = await page.map({ dimension: 0, pixelsPerChunk: 4 });
      expect(Buffer.from(shared.rgba).equals(Buffer.from(map.rgba))).toBe(true);
      // Parts of another dimension, a part cut short, or no part: refused.
      await expect(page.joinChunkParts(1, parts)).rejects.toMatchObject({ code: 'LEVEL_INVALID_ARGUMENT' });
      await expect(page.joinChunkParts(0, [parts[0]!.subarray(1)])).rejects.toMatchObject({ code: 'LEVEL_INVALID_ARGUMENT' });
      await expect(page.joinChunkParts(0, [])).rejects.toMatchObject({ code: 'LEVEL_INVALID_ARGUMENT' });
    } finally {
      await Promise.all([page.close(), helper.close(), alone.close()]);
    }
  });

  test('level.dat fields and NBT values', async () => {
    const w = await openWorld(path.join(worldsDir, 'amulet_1_16'));
    try {
      const dat = (await w.summary()).levelDat!;
      expect({ ...dat, root: undefined }).toEqual({
        storageVersion: 8,
        name: 'Bedrock 1.16',
        gameVersion: '1.16.200.52.1',
        seed: '4098508317',
        spawn: [84, 32767, 4],
        gameMode: 0,
        root: undefined,
      });
      expect((dat.root as Record<string, unknown>).LevelName).toBe('Bedrock 1.16');
      const player = (await w.nbt('~local_player'))!;
      expect(player.length).toBe(1);
      expect(player[0]!.name).toBe('');
      expect((player[0]!.value as { Armor: unknown[] }).Armor.length).toBe(4);
      expect(await w.nbt('no such key')).toBeUndefined();
      // A Version record is one byte, not NBT.
      const version = (await w.chunkRecords(0, -17, -7)).find((r) => r.name === 'Version')!;
      await expect(w.nbt(version.key)).rejects.toMatchObject({ code: 'LEVEL_CORRUPTION' });
      await expect(w.map({ pixelsPerChunk: 3 })).rejects.toMatchObject({ code: 'LEVEL_INVALID_ARGUMENT' });
      const nether = await w.map({ dimension: 1 });
      expect([nether.width, nether.height, nether.chunksDrawn]).toEqual([0, 0, 0]);
    } finally {
      await w.close();
    }
    await expect(w.summary()).rejects.toMatchObject({ code: 'LEVEL_DATABASE_NOT_OPEN' });
  });

  test('hostile input: no world, a zip bomb, a truncated .mcworld', async () => {
    const dir = tempDir('notworld');
    fs.writeFileSync(path.join(dir, 'levelname.txt'), 'nothing here');
    await expect(openWorld(dir)).rejects.toMatchObject({ code: 'LEVEL_NOT_FOUND', message: expect.stringContaining('no level.dat') });

    const bomb = path.join(tempDir('bomb'), 'bomb.mcworld');
    execFileSync('python3', [
      '-c',
      `import sys, zipfile
with zipfile.ZipFile(sys.argv[1], 'w', zipfile.ZIP_DEFLATED) as z:
    z.writestr('level.dat', b'\\0' * 16)
    z.writestr('db/CURRENT', b'MANIFEST-000001\\n')
    z.writestr('db/000005.ldb', b'\\0' * (64 << 20))`,
      bomb,
    ]);
    await expect(openMcworld(fs.readFileSync(bomb))).rejects.toMatchObject({
      code: 'LEVEL_INVALID_ARGUMENT',
      message: expect.stringContaining('inflates more than 200× its compressed size'),
    });

    const good = path.join(tempDir('trunc'), 'w.mcworld');
    zipWorld(path.join(worldsDir, 'amulet_1_16'), good);
    const bytes = fs.readFileSync(good);
    await expect(openMcworld(bytes.subarray(0, bytes.length >> 1))).rejects.toMatchObject({
      code: 'LEVEL_CORRUPTION',
      message: expect.stringContaining('not a readable zip'),
    });
    // The engine is still usable afterwards.
    const w = await openMcworld(bytes);
    expect((await w.summary()).total.count).toBe(4174);
    await w.close();
  });
});

// The viewer's demo world is written by the wasm engine (scripts/demo-world.sh calls
// synthMcworld), so that serving the pages needs no native build: it must hold what the native
// `strata gen-world` writes with the same parameters, record for record.
const DEMO_ENTRIES = 4113;
const DEMO_CRC32C = 1072366442;
describe('the demo world written by the wasm engine', () => {
  test('synthMcworld(32, 32, 7) holds exactly what `strata gen-world --chunks-x 32 --chunks-z 32 --seed 7` writes', async () => {
    const wasm = await import('../wasm/strata.js');
    wasm.initSync({ module: fs.readFileSync(path.join(repoRoot, 'js/wasm/strata_bg.wasm')) });
    const zip = wasm.Database.synthMcworld(32, 32, 7);
    const dir = path.join(tempDir('demo'), 'world');
    execFileSync(releaseCli, ['gen-world', dir, '--chunks-x', '32', '--chunks-z', '32', '--seed', '7']);

    const fromWasm = await openMcworld(zip);
    const fromCli = await openWorld(dir);
    try {
      const scan = await fromWasm.db.scan();
      expect(scan).toEqual(await fromCli.db.scan());
      // 1,024 chunks (each a Version, a Data3D and the subchunks its surface spans) and 11
      // global records; the CRC-32C over every key and value.
      expect(scan.entries).toBe(DEMO_ENTRIES);
      expect(scan.crc32c).toBe(DEMO_CRC32C);
      const [a, b] = [await fromWasm.summary(), await fromCli.summary()];
      expect(a.total).toEqual(b.total);
      expect(a.levelDat).toEqual(b.levelDat);
      expect(fromWasm.source.mcworld!.rootInZip).toBe('');
      expect(fromWasm.source.mcworld!.files).toBe(fs.readdirSync(path.join(dir, 'db')).filter((f) => f !== 'LOCK').length + 2);
    } finally {
      await fromWasm.close();
      await fromCli.close();
    }
    // Hostile parameters are refused with a clear error, not a trap.
    expect(() => wasm.Database.synthMcworld(0, 32, 7)).toThrow(/1..=1024/);
    expect(() => wasm.Database.synthMcworld(32, 32, -1)).toThrow(/seed/);
    expect(() => wasm.Database.synthMcworld(32, 32, 0.5)).toThrow(/seed/);
  });
});
