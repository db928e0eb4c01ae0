// strata-level/leveldb-zlib against the real npm leveldb-zlib (Mojang's LevelDB as a native
// addon), the same operations on two databases: every result equal (get, getAsString, every
// iterator option the addon has, batches, chained batches, errors), and each engine reading
// what the other wrote. Then bedrock-provider's own test world read through both.

import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
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
