// The chunk index kept across visits: a world's chunk list per dimension, with the relief
// samples the same pass took (World.reliefSamples: each chunk's relief at up to 4 pixels per
// chunk), stored in IndexedDB under the SHA-256 of the world's content identity
// (World.contentIdentity: its last sequence, every live table's number, size and key range,
// every log's bytes), so a world opened again draws its map without the pass over every block
// of the database, and without reading its sampled chunks again.
//
// Invariants: a list is used only under the identity it was computed for (any write to the
// world changes it, so an edited world is indexed afresh) and by the same LIST_FORMAT (bumped
// whenever what counts as a chunk changes: keys::chunk_positions); at most MAX_WORLDS worlds
// are kept, the least recently used dropped first; any failure (no IndexedDB, a quota, a
// damaged entry) answers "not cached" and the caller does the pass,
// never an error; a store that does not answer within ANSWER_MS counts as a failure, so it
// delays the pass by that much at most.

import { sha256 } from '@noble/hashes/sha2';
import type { World } from 'strata-level/browser';

import type { ChunkList } from './chunk-list.js';

const DB_NAME = 'strata-chunk-index';
/** Chunk lists by `${LIST_FORMAT}/${identity}/${dimension}`. */
const LISTS = 'lists';
/** When each world's lists were last used, by `${LIST_FORMAT}/${identity}` (small records, so
 * eviction never reads a list). */
const WORLDS = 'worlds';
/** The entries' meaning: bump when `keys::chunk_positions` would answer differently or the
 * entries' fields change (2: relief samples kept too; 3: samples say which record they come
 * from, "SRI3", so the height layer draws from them too). */
const LIST_FORMAT = 3;
/** Relief samples larger than this are not kept (the list still is): about 300,000 chunks. */
const MAX_RELIEF_BYTES = 32 << 20;
/** Worlds whose lists are kept (each list: 8 bytes per chunk and about 100 of relief samples,
 * 17 MB for 160,000 chunks). */
export const MAX_WORLDS = 8;
/** How long a lookup or a keep may wait for IndexedDB. */
const ANSWER_MS = 2000;

interface ListEntry {
  key: string;
  /** x0, z0, x1, z1, … ascending (x, z), as World.chunkList gives them. */
  flat: Int32Array;
  /** World.reliefSamples of the same pass, when it gave them. */
  relief?: Uint8Array;
}

/** A kept chunk index of one dimension. */
export interface KeptChunks {
  /** The list as World.chunkList gave it. */
  chunks: ChunkList;
  relief?: Uint8Array;
}

interface WorldEntry {
  world: string;
  used: number;
}

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

/** The hex SHA-256 of the world's content identity, or undefined when it cannot be had.
 * `crypto.subtle` where the page has it; where it has not (a page served over plain HTTP, say
 * on a LAN: not a secure context), the same digest from @noble/hashes, so a world's kept index
 * is found either way. */
export async function identityOf(w: World): Promise<string | undefined> {
  try {
    if (typeof indexedDB === 'undefined') return undefined;
    const bytes = await w.contentIdentity();
    const subtle = globalThis.crypto?.subtle;
    const digest = subtle ? new Uint8Array(await subtle.digest('SHA-256', bytes as Uint8Array<ArrayBuffer>)) : sha256(bytes);
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
        req.result.createObjectStore(LISTS, { keyPath: 'key' });
        req.result.createObjectStore(WORLDS, { keyPath: 'world' });
      };
      req.onsuccess = () => {
        // A later version opened in another tab: let it upgrade (this tab then does passes).
        req.result.onversionchange = () => req.result.close();
        resolve(req.result);
      };
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

function committed(tx: IDBTransaction): Promise<void> {
  return new Promise((resolve, reject) => {
    tx.oncomplete = () => resolve();
    tx.onerror = () => reject(tx.error);
    tx.onabort = () => reject(tx.error ?? new Error('aborted'));
  });
}

/** The chunk list of `dimension` kept for `identity` and its relief
 * samples; undefined if none. */
export function cachedChunks(identity: string, dimension: number): Promise<KeptChunks | undefined> {
  return within(lookup(identity, dimension), undefined);
}

async function lookup(identity: string, dimension: number): Promise<KeptChunks | undefined> {
  const db = await database();
  if (!db) return undefined;
  const world = `${LIST_FORMAT}/${identity}`;
  const entry = (await done(db.transaction(LISTS, 'readonly').objectStore(LISTS).get(`${world}/${dimension}`))) as ListEntry | undefined;
  if (!entry || !(entry.flat instanceof Int32Array) || entry.flat.length % 2 !== 0) return undefined;
  // Best effort: a failed note of the use does not make the hit a miss.
  try {
    const tx = db.transaction(WORLDS, 'readwrite');
    tx.objectStore(WORLDS).put({ world, used: Date.now() } satisfies WorldEntry);
  } catch {
    // The world may be evicted a little early.
  }
  return { chunks: entry.flat, relief: entry.relief instanceof Uint8Array ? entry.relief : undefined };
}

/** Keeps `chunks` as the list of `dimension` for `identity` (settles once committed), then
 * drops the least recently used worlds beyond MAX_WORLDS. Failures are ignored (the next
 * visit does the pass). */
export function keepChunks(identity: string, dimension: number, chunks: ChunkList, relief?: Uint8Array): Promise<void> {
  return within(
    keep(identity, dimension, chunks, relief).catch(() => undefined),
    undefined,
  );
}

async function keep(identity: string, dimension: number, flat: ChunkList, relief?: Uint8Array): Promise<void> {
  const db = await database();
  if (!db) return;
  const world = `${LIST_FORMAT}/${identity}`;
  const tx = db.transaction([LISTS, WORLDS], 'readwrite');
  const lists = tx.objectStore(LISTS);
  const worlds = tx.objectStore(WORLDS);
  const entry: ListEntry = { key: `${world}/${dimension}`, flat };
  if (relief && relief.length <= MAX_RELIEF_BYTES) entry.relief = relief;
  lists.put(entry);
  worlds.put({ world, used: Date.now() } satisfies WorldEntry);
  const all = (await done(worlds.getAll())) as WorldEntry[];
  const stale = all.sort((a, b) => b.used - a.used).slice(MAX_WORLDS);
  for (const s of stale) {
    worlds.delete(s.world);
    lists.delete(IDBKeyRange.bound(`${s.world}/`, `${s.world}/\uffff`));
  }
  await committed(tx);
}
