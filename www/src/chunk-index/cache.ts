// The chunk index kept across visits: a world's chunk list per dimension, stored in IndexedDB
// under the SHA-256 of the world's content identity (World.contentIdentity: its last sequence,
// every live table's number, size and key range, every log's bytes), so a world
// opened again draws its first picture without the pass over every block of the database.
//
// Invariants: a list is used only under the identity it was computed for (any write to the
// world changes it, so an edited world is indexed afresh); at most MAX_WORLDS worlds are
// kept, the least recently used dropped first; any failure (no IndexedDB, no crypto.subtle, a
// quota, a damaged entry) answers "not cached" and the caller does the pass, never an error;
// so does a store that does not answer within ANSWER_MS (the pass is never held up by it).

import type { World } from 'strata-level/browser';

const DB_NAME = 'strata-chunk-index';
const STORE = 'lists';
/** Worlds whose lists are kept (each list: 8 bytes per chunk, 1.3 MB for 160,000 chunks). */
export const MAX_WORLDS = 8;
/** How long a lookup may wait for IndexedDB before the caller does the pass instead. */
const ANSWER_MS = 2000;

function within<T>(p: Promise<T>, fallback: T): Promise<T> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => resolve(fallback), ANSWER_MS);
    p.then(
      (v) => {
        clearTimeout(timer);
        resolve(v);
      },
      () => {
        clearTimeout(timer);
        resolve(fallback);
      },
    );
  });
}

interface Entry {
  /** `${identity}/${dimension}` */
  key: string;
  identity: string;
  /** x0, z0, x1, z1, … ascending (x, z), as World.chunks gives them. */
  flat: Int32Array;
  used: number;
}

/** The hex SHA-256 of the world's content identity, or undefined when it cannot be had. */
export async function identityOf(w: World): Promise<string | undefined> {
  try {
    const subtle = globalThis.crypto?.subtle;
    if (!subtle || typeof indexedDB === 'undefined') return undefined;
    const bytes = await w.contentIdentity();
    const digest = new Uint8Array(await subtle.digest('SHA-256', bytes as Uint8Array<ArrayBuffer>));
    return Array.from(digest, (b) => b.toString(16).padStart(2, '0')).join('');
  } catch {
    return undefined;
  }
}

let opened: Promise<IDBDatabase | undefined> | undefined;
function database(): Promise<IDBDatabase | undefined> {
  opened ??= new Promise((resolve) => {
    try {
      const req = indexedDB.open(DB_NAME, 1);
      req.onupgradeneeded = () => {
        const store = req.result.createObjectStore(STORE, { keyPath: 'key' });
        store.createIndex('identity', 'identity');
      };
      req.onsuccess = () => resolve(req.result);
      req.onerror = () => resolve(undefined);
      req.onblocked = () => resolve(undefined);
    } catch {
      resolve(undefined);
    }
  });
  return opened;
}

/** Opens the store ahead of the first world (an open takes tens of milliseconds). */
export function warmUp(): void {
  if (typeof indexedDB !== 'undefined') void database();
}

function done<T>(req: IDBRequest<T>): Promise<T> {
  return new Promise((resolve, reject) => {
    req.onsuccess = () => resolve(req.result);
    req.onerror = () => reject(req.error);
  });
}

/** The chunk list of `dimension` kept for `identity`, as [x, z] pairs; undefined if none. */
export function cachedChunks(identity: string, dimension: number): Promise<Array<[number, number]> | undefined> {
  return within(lookup(identity, dimension), undefined);
}

async function lookup(identity: string, dimension: number): Promise<Array<[number, number]> | undefined> {
  try {
    const db = await database();
    if (!db) return undefined;
    const store = db.transaction(STORE, 'readwrite').objectStore(STORE);
    const entry = (await done(store.get(`${identity}/${dimension}`))) as Entry | undefined;
    if (!entry || !(entry.flat instanceof Int32Array) || entry.flat.length % 2 !== 0) return undefined;
    entry.used = Date.now();
    await done(store.put(entry));
    const out: Array<[number, number]> = [];
    for (let i = 0; i < entry.flat.length; i += 2) out.push([entry.flat[i]!, entry.flat[i + 1]!]);
    return out;
  } catch {
    return undefined;
  }
}

/** Keeps `chunks` as the list of `dimension` for `identity`, then drops the least recently
 * used worlds beyond MAX_WORLDS. Failures are ignored (the next visit does the pass). */
export function keepChunks(identity: string, dimension: number, chunks: ReadonlyArray<readonly [number, number]>): Promise<void> {
  return within(keep(identity, dimension, chunks), undefined);
}

async function keep(identity: string, dimension: number, chunks: ReadonlyArray<readonly [number, number]>): Promise<void> {
  try {
    const db = await database();
    if (!db) return;
    const flat = new Int32Array(chunks.length * 2);
    chunks.forEach(([x, z], i) => {
      flat[2 * i] = x;
      flat[2 * i + 1] = z;
    });
    const store = db.transaction(STORE, 'readwrite').objectStore(STORE);
    const entry: Entry = { key: `${identity}/${dimension}`, identity, flat, used: Date.now() };
    await done(store.put(entry));
    const all = (await done(store.getAll())) as Entry[];
    const lastUse = new Map<string, number>();
    for (const e of all) lastUse.set(e.identity, Math.max(lastUse.get(e.identity) ?? 0, e.used));
    const stale = [...lastUse.entries()].sort((a, b) => b[1] - a[1]).slice(MAX_WORLDS).map(([id]) => id);
    for (const e of all) if (stale.includes(e.identity)) await done(store.delete(e.key));
  } catch {
    // Not kept: the next visit indexes afresh.
  }
}
