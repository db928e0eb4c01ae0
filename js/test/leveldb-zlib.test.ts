// strata-level/leveldb-zlib against the real npm leveldb-zlib (Mojang's LevelDB as a native
// addon), the same operations on two databases: every result equal (get, getAsString, every
// iterator option the addon has, batches, chained batches, errors), and each engine reading
// what the other wrote. Then bedrock-provider's own test world read through both.

import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import zlib from 'node:zlib';
import { expect, test } from 'vitest';

import * as Strata from '../dist/leveldb-zlib.js';
import { tempDir, worldsDir, worldTest } from './helpers.js';

const require = createRequire(import.meta.url);
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AnyDb = any;
const Addon = require('leveldb-zlib') as { LevelDB: new (p: string, o?: object) => AnyDb };

async function drain(db: AnyDb, options: object = {}): Promise<string[][]> {
  const it = db.getIterator({ ...options });
  const out: string[][] = [];
  let n: [Buffer, Buffer] | null;
  while ((n = await it.next())) out.push([Buffer.from(n[0]).toString('hex'), Buffer.from(n[1]).toString('hex')]);
  await it.end();
  return out;
}

const ITERATIONS: object[] = [
  {},
  { reverse: true },
  { limit: 10 },
  { limit: 0 },
  { gte: 'k0100', lt: 'k0200' },
  { gt: 'k0100', lte: 'k0200', reverse: true },
  { gte: Buffer.from('k03'), limit: 7 },
  { keys: false, limit: 20 },
  { values: false, limit: 20, reverse: true },
  { lt: 'k', reverse: true },
];

/** The same script on a database of either engine; everything it observes. */
async function script(LevelDB: new (p: string, o?: object) => AnyDb, dir: string): Promise<unknown[]> {
  const seen: unknown[] = [];
  const db = new LevelDB(dir, { createIfMissing: true });
  await db.open();
  seen.push(db.isOpen());
  for (let i = 0; i < 500; i++) {
    const k = `k${String(i).padStart(4, '0')}`;
    await db.put(i % 2 ? k : Buffer.from(k), Buffer.from(`value ${i} `.repeat(1 + (i % 7))));
  }
  for (let i = 0; i < 500; i += 9) await db.delete(`k${String(i).padStart(4, '0')}`);
  await db.batch([
    { type: 'put', key: 'batch-a', value: 'A' },
    { type: 'del', key: 'k0001' },
    { type: 'put', key: Buffer.from([0, 1, 2, 255]), value: Buffer.from([9, 8, 7]) },
  ]);
  // The addon's chainedBatch() crashes the process (its batch functions get the database's
  // context): the same operations go through batch() there, through chainedBatch() here.
  if (LevelDB === Strata.LevelDB) {
    const chained = db.chainedBatch();
    chained.put(Buffer.from('chained-1'), Buffer.from('one'));
    chained.delete(Buffer.from('k0003'));
    chained.put(Buffer.from('chained-2'), Buffer.from('two'));
    await chained.write();
  } else {
    await db.batch([
      { type: 'put', key: Buffer.from('chained-1'), value: Buffer.from('one') },
      { type: 'del', key: Buffer.from('k0003') },
      { type: 'put', key: Buffer.from('chained-2'), value: Buffer.from('two') },
    ]);
  }
  for (const k of ['k0002', 'k0001', 'k0003', 'batch-a', 'missing', 'chained-2']) {
    const v = await db.get(k);
    seen.push(v === null ? null : Buffer.from(v).toString('hex'));
  }
  seen.push(await db.getAsString('batch-a'), await db.getAsString('missing'));
  for (const o of ITERATIONS) seen.push(await drain(db, o));
  const pairs: string[] = [];
  for await (const [k, v] of db) pairs.push(`${Buffer.from(k).toString('hex')}=${Buffer.from(v).length}`);
  seen.push(pairs);
  await db.close();
  seen.push(db.isOpen());
  seen.push(await db.put('x', 'y').then(() => 'ok', (e: Error) => e.message));
  return seen;
}

test('leveldb-zlib on Strata observes exactly what Mojang\u2019s addon observes, and each reads the other', async () => {
  const base = tempDir('lz');
  const theirs = await script(Addon.LevelDB, path.join(base, 'addon'));
  const ours = await script(Strata.LevelDB, path.join(base, 'strata'));
  expect(ours).toEqual(theirs);

  // Cross-reads: the addon reads Strata's database and Strata the addon's, entry for entry.
  const readAll = async (LevelDB: new (p: string, o?: object) => AnyDb, dir: string) => {
    const db = new LevelDB(dir);
    await db.open();
    const all = await drain(db);
    await db.close();
    return all;
  };
  const a = await readAll(Addon.LevelDB, path.join(base, 'strata'));
  const b = await readAll(Strata.LevelDB, path.join(base, 'addon'));
  expect(a).toEqual(b);
  expect(a.length).toBe(500 - 56 + 4 - 2);

  // A second open context of one path is refused, as the addon refuses it.
  const one = new Strata.LevelDB(path.join(base, 'strata'));
  await one.open();
  const two = new Strata.LevelDB(path.join(base, 'strata'));
  await expect(two.open()).rejects.toThrow('DB already has an open context');
  await one.close();
});

worldTest('bedrock-provider\u2019s test world reads the same through both', async () => {
  const src = path.join(worldsDir, 'bedrock_provider_mctestdb', 'db');
  const dirs = [tempDir('lz-world-a'), tempDir('lz-world-b')];
  for (const d of dirs) fs.cpSync(src, d, { recursive: true });
  const read = async (LevelDB: new (p: string, o?: object) => AnyDb, dir: string) => {
    const db = new LevelDB(dir);
    await db.open();
    const all = await drain(db);
    const rev = await drain(db, { reverse: true, limit: 50 });
    await db.close();
    return { all, rev };
  };
  const theirs = await read(Addon.LevelDB, dirs[0]!);
  const ours = await read(Strata.LevelDB, dirs[1]!);
  expect(ours).toEqual(theirs);
  expect(ours.all.length).toBe(294);
});

// --- The addon's open defaults (bindings.cpp `db_open`), reproduced by the drop-in -----------

/** LevelDB's varint32/64 at `at`: [value, next offset]. */
function varint(b: Uint8Array, at: number): [number, number] {
  let v = 0;
  let shift = 0;
  for (;;) {
    const byte = b[at++]!;
    v += (byte & 0x7f) * 2 ** shift;
    if (byte < 0x80) return [v, at];
    shift += 7;
  }
}

/** A block's entries (prefix-compressed keys, values) and restart count; `raw` is uncompressed. */
function blockEntries(raw: Uint8Array): { entries: Array<[Buffer, Buffer]>; restarts: number } {
  const restarts = Buffer.from(raw).readUInt32LE(raw.length - 4);
  const end = raw.length - 4 - 4 * restarts;
  const entries: Array<[Buffer, Buffer]> = [];
  let at = 0;
  let last = Buffer.alloc(0);
  while (at < end) {
    let shared, unshared, vlen;
    [shared, at] = varint(raw, at);
    [unshared, at] = varint(raw, at);
    [vlen, at] = varint(raw, at);
    const key = Buffer.concat([last.subarray(0, shared), Buffer.from(raw.subarray(at, at + unshared))]);
    at += unshared;
    entries.push([key, Buffer.from(raw.subarray(at, at + vlen))]);
    at += vlen;
    last = key;
  }
  return { entries, restarts };
}

/** A block at `handle` of table `t`: its compression id and uncompressed bytes (ids 0 and 4). */
function readBlock(t: Buffer, offset: number, size: number): { id: number; raw: Uint8Array } {
  const id = t[offset + size]!;
  const body = t.subarray(offset, offset + size);
  return { id, raw: id === 0 ? body : zlib.inflateRawSync(body) };
}

/** What a table's layout shows of the options that wrote it: its data blocks (count, their
 * last keys from the index, restart points per block, compression ids), and its filter
 * (name, probes per key). */
function tableLayout(file: string) {
  const t = fs.readFileSync(file);
  const footer = t.subarray(t.length - 48);
  let at = 0;
  let metaOff, metaSize, indexOff, indexSize;
  [metaOff, at] = varint(footer, at);
  [metaSize, at] = varint(footer, at);
  [indexOff, at] = varint(footer, at);
  [indexSize, at] = varint(footer, at);
  const index = blockEntries(readBlock(t, indexOff, indexSize).raw).entries;
  const blocks = index.map(([sep, handle]) => {
    const [off, next] = varint(handle, 0);
    const [size] = varint(handle, next);
    const b = readBlock(t, off, size);
    const { entries, restarts } = blockEntries(b.raw);
    return { separator: sep.toString('hex'), id: b.id, entries: entries.length, restarts };
  });
  const meta = blockEntries(readBlock(t, metaOff, metaSize).raw).entries;
  const filters = meta.map(([name, handle]) => {
    const [off, next] = varint(handle, 0);
    const [size] = varint(handle, next);
    const f = readBlock(t, off, size).raw;
    const offsetsAt = Buffer.from(f).readUInt32LE(f.length - 5);
    const baseLg = f[f.length - 1]!;
    const count = (f.length - 5 - offsetsAt) / 4;
    const probes = new Set<number>();
    for (let i = 0; i < count; i++) {
      const start = Buffer.from(f).readUInt32LE(offsetsAt + 4 * i);
      const limit = i + 1 < count ? Buffer.from(f).readUInt32LE(offsetsAt + 4 * (i + 1)) : offsetsAt;
      if (limit > start) probes.add(f[limit - 1]!);
    }
    return { name: name.toString(), baseLg, probes: [...probes] };
  });
  return { blocks, filters };
}

test('new LevelDB(path) with no options: the addon\u2019s defaults (create, 4 KiB blocks, restarts every 16 keys, raw deflate, a 10-bit Bloom filter), table for table', async () => {
  const base = tempDir('lz-defaults');
  const layouts = [];
  for (const [name, LevelDB] of [['addon', Addon.LevelDB], ['strata', Strata.LevelDB]] as const) {
    const dir = path.join(base, name); // not there yet
    const db = new LevelDB(dir);
    await db.open(); // createIfMissing defaults to true
    for (let i = 0; i < 3000; i += 100) {
      await db.batch(
        Array.from({ length: 100 }, (_, j) => ({
          type: 'put' as const,
          key: `key-${String(i + j).padStart(6, '0')}`,
          value: `value ${i + j} `.repeat(1 + ((i + j) % 23)),
        })),
      );
    }
    await db.compactRange('key-', 'key.');
    await db.close();
    // errorIfExists defaults to false: the existing database opens again.
    const again = new LevelDB(dir);
    await again.open();
    expect((await again.get('key-000007'))!.toString()).toBe('value 7 '.repeat(8));
    await again.close();
    const tables = fs.readdirSync(dir).filter((f) => f.endsWith('.ldb'));
    expect({ name, tables: tables.length }).toEqual({ name, tables: 1 });
    layouts.push(tableLayout(path.join(dir, tables[0]!)));
  }
  const [theirs, ours] = layouts;
  // Blocks cut at 4 KiB of uncompressed entries, at the same keys.
  expect(ours!.blocks.map((b) => [b.separator, b.entries])).toEqual(theirs!.blocks.map((b) => [b.separator, b.entries]));
  expect(theirs!.blocks.length).toBe(102);
  // A restart point every 16 keys.
  expect(ours!.blocks.map((b) => b.restarts)).toEqual(theirs!.blocks.map((b) => b.restarts));
  expect(theirs!.blocks.every((b) => b.restarts === Math.ceil(b.entries / 16))).toBe(true);
  // Every block raw deflate (id 4).
  expect(new Set(ours!.blocks.map((b) => b.id))).toEqual(new Set([4]));
  expect(new Set(theirs!.blocks.map((b) => b.id))).toEqual(new Set([4]));
  // LevelDB's Bloom filter with 10 bits per key: 6 probes (bits × ln 2), filters per 2 KiB.
  expect(ours!.filters).toEqual(theirs!.filters);
  expect(theirs!.filters).toEqual([{ name: 'filter.leveldb.BuiltinBloomFilter2', baseLg: 11, probes: [6] }]);
}, 120_000);

test('the drop-in passes the addon\u2019s other open options as the addon reads them', () => {
  expect(Strata.engineOpenOptions({})).toEqual({
    createIfMissing: true,
    errorIfExists: false,
    cacheSize: 8 << 20,
    writeBufferSize: 4 << 20,
    blockSize: 4096,
    maxOpenFiles: 1000,
    blockRestartInterval: 16,
    maxFileSize: 2 << 20,
    bloomBitsPerKey: 10,
    profile: 'bedrock',
    compression: 'deflate-raw',
  });
  // A value of the wrong type falls back to the default, as the addon's property readers do.
  expect(Strata.engineOpenOptions({ createIfMissing: 'no' as unknown as boolean, blockSize: 16384, compression: false })).toMatchObject({
    createIfMissing: true,
    blockSize: 16384,
    compression: 'deflate-raw',
  });
  expect(Strata.engineOpenOptions({ createIfMissing: false, errorIfExists: true })).toMatchObject({ createIfMissing: false, errorIfExists: true });
});
