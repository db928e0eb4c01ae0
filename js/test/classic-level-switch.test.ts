// The one-line switch from classic-level: `new StrataLevel(location, options)` with the options
// a classic-level user already passes (compression as a boolean, multithreading,
// blockRestartInterval) opens, writes what those options mean, and classic-level (Google's
// LevelDB) reads it back exactly.

import fs from 'node:fs';
import path from 'node:path';
import { ClassicLevel } from 'classic-level';
import { describe, expect, test } from 'vitest';

import { StrataLevel } from '../dist/level.js';
import { tempDir } from './helpers.js';

const N = 2000;
const key = (i: number) => `key${String(i).padStart(6, '0')}`;
const value = (i: number) => `${i}:`.padEnd(200, 'x'); // compresses about 20 times

function tableBytes(dir: string): number {
  return fs
    .readdirSync(dir)
    .filter((f) => f.endsWith('.ldb') || f.endsWith('.sst'))
    .reduce((n, f) => n + fs.statSync(path.join(dir, f)).size, 0);
}

async function write(dir: string, options: Record<string, unknown>): Promise<number> {
  const db = new StrataLevel(dir, { ...options, writeBufferSize: 64 * 1024 });
  await db.open();
  for (let i = 0; i < N; i += 100) {
    await db.batch(Array.from({ length: 100 }, (_, j) => ({ type: 'put' as const, key: key(i + j), value: value(i + j) })));
  }
  await db.compactRange?.(key(0), key(N));
  await db.close();
  return tableBytes(dir);
}

async function readWithClassicLevel(dir: string): Promise<{ count: number; bad: number; first: string; last: string }> {
  const db = new ClassicLevel<string, string>(dir, { createIfMissing: false });
  await db.open();
  let count = 0;
  let bad = 0;
  let first = '';
  let last = '';
  for await (const [k, v] of db.iterator()) {
    if (count === 0) first = k;
    last = k;
    if (v !== value(Number(k.slice(3)))) bad++;
    count++;
  }
  await db.close();
  return { count, bad, first, last };
}

describe('switching from classic-level', () => {
  test('classic-level options: compression true/false, multithreading, blockRestartInterval', async () => {
    const root = tempDir('classic-switch');
    const packed = path.join(root, 'compressed');
    const plain = path.join(root, 'plain');
    const packedBytes = await write(packed, { compression: true, multithreading: true, blockRestartInterval: 16 });
    const plainBytes = await write(plain, { compression: false });
    // Uncompressed tables hold every value byte flushed so far (the last memtable's worth
    // stays in the log: 64 KiB buffers, 400 KB written); Snappy's (compression: true) far fewer.
    expect(plainBytes).toBeGreaterThan(300_000);
    expect(packedBytes).toBeLessThan(plainBytes / 5);
    const want = { count: N, bad: 0, first: key(0), last: key(N - 1) };
    expect(await readWithClassicLevel(packed)).toEqual(want);
    expect(await readWithClassicLevel(plain)).toEqual(want);
  });
});
