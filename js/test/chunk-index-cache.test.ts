// The viewer's kept chunk indexes (www/src/chunk-index/cache.ts) over fake-indexeddb: a world's
// identity is the SHA-256 of its content identity with or without crypto.subtle (a page served
// over plain HTTP has none); a kept list and its relief samples come back exactly, only under
// their identity and dimension; at most MAX_WORLDS worlds are kept, the least recently used
// (kept or looked up) dropped first; samples past 32 MB are not kept (the list is); a damaged
// entry is "not cached", never an error.

import 'fake-indexeddb/auto';

import { createHash } from 'node:crypto';
import { afterEach, describe, expect, test, vi } from 'vitest';

import { cachedChunks, identityOf, keepChunks, MAX_WORLDS } from '../../www/src/chunk-index/cache.js';

type W = Parameters<typeof identityOf>[0];
const worldOf = (bytes: Uint8Array) => ({ contentIdentity: async () => bytes }) as unknown as W;

let clock = 1_000_000;
afterEach(() => vi.restoreAllMocks());
/** Date.now() advancing by a second per call: keeps and lookups are ordered. */
function tick(): void {
  vi.spyOn(Date, 'now').mockImplementation(() => (clock += 1000));
}

/** n chunks ascending, flat (as World.chunkList gives them). */
function list(n: number, seed: number): Int32Array {
  const out = new Int32Array(2 * n);
  for (let i = 0; i < n; i++) [out[2 * i], out[2 * i + 1]] = [seed * 1000 + (i >> 4) - 2 ** 31 + 1, (i & 15) - 8];
  return out;
}

describe('kept chunk indexes (the viewer, IndexedDB)', () => {
  test('identity: SHA-256 of the content identity, the same without crypto.subtle', async () => {
    const bytes = new Uint8Array(5000).map((_, i) => (i * 37) & 0xff);
    const want = createHash('sha256').update(bytes).digest('hex');
    expect(await identityOf(worldOf(bytes))).toBe(want);
    const real = Object.getOwnPropertyDescriptor(globalThis, 'crypto')!;
    Object.defineProperty(globalThis, 'crypto', { value: {}, configurable: true });
    try {
      expect(globalThis.crypto.subtle).toBeUndefined();
      expect(await identityOf(worldOf(bytes))).toBe(want);
    } finally {
      Object.defineProperty(globalThis, 'crypto', real);
    }
    // A world that cannot say its identity: undefined, not an error.
    expect(await identityOf({ contentIdentity: async () => Promise.reject(new Error('closed')) } as unknown as W)).toBeUndefined();
  });

  test('a kept list and its samples come back exactly, under their identity and dimension only', async () => {
    tick();
    const chunks = list(3000, 1);
    const relief = new Uint8Array(4099).map((_, i) => (i * 7) & 0xff);
    await keepChunks('a'.repeat(64), 0, chunks, relief);
    const got = await cachedChunks('a'.repeat(64), 0);
    expect(got!.chunks).toEqual(chunks);
    expect(Buffer.from(got!.relief!).equals(Buffer.from(relief))).toBe(true);
    expect(await cachedChunks('a'.repeat(64), 1)).toBeUndefined();
    expect(await cachedChunks('b'.repeat(64), 0)).toBeUndefined();
    // Kept again without samples: the list alone.
    await keepChunks('a'.repeat(64), 0, chunks);
    expect((await cachedChunks('a'.repeat(64), 0))!.relief).toBeUndefined();
    // Samples past 32 MB are not kept; the list is.
    await keepChunks('a'.repeat(64), 2, chunks.slice(0, 20), new Uint8Array((32 << 20) + 1));
    const big = await cachedChunks('a'.repeat(64), 2);
    expect([big!.chunks, big!.relief]).toEqual([chunks.slice(0, 20), undefined]);
  });

  test(`at most ${MAX_WORLDS} worlds, the least recently used out; a damaged entry is not cached`, async () => {
    tick();
    const id = (i: number) => `w${i}`.padEnd(64, '0');
    for (let i = 0; i < MAX_WORLDS; i++) await keepChunks(id(i), 0, list(5, i));
    // World 0 looked up: now the most recently used; world 1 is the oldest.
    expect((await cachedChunks(id(0), 0))!.chunks).toEqual(list(5, 0));
    await keepChunks(id(MAX_WORLDS), 0, list(5, MAX_WORLDS));
    await keepChunks(id(MAX_WORLDS + 1), 0, list(5, MAX_WORLDS + 1));
    const kept: number[] = [];
    for (let i = 0; i < MAX_WORLDS + 2; i++) if (await cachedChunks(id(i), 0)) kept.push(i);
    expect(kept).toEqual([0, ...Array.from({ length: MAX_WORLDS - 1 }, (_, i) => i + 3)]);
    expect((await cachedChunks(id(MAX_WORLDS + 1), 0))!.chunks).toEqual(list(5, MAX_WORLDS + 1));
    // Entries written by something else (or damaged): not cached, no error.
    const db = await new Promise<IDBDatabase>((resolve, reject) => {
      const req = indexedDB.open('strata-chunk-index', 1);
      req.onsuccess = () => resolve(req.result);
      req.onerror = () => reject(req.error);
    });
    const put = (entry: object) =>
      new Promise<void>((resolve, reject) => {
        const tx = db.transaction('lists', 'readwrite');
        tx.objectStore('lists').put(entry);
        tx.oncomplete = () => resolve();
        tx.onerror = () => reject(tx.error);
      });
    await put({ key: `3/${id(0)}/1`, flat: [1, 2, 3, 4] });
    await put({ key: `3/${id(0)}/2`, flat: new Int32Array([1, 2, 3]) });
    expect(await cachedChunks(id(0), 1)).toBeUndefined();
    expect(await cachedChunks(id(0), 2)).toBeUndefined();
    db.close();
  });
});
