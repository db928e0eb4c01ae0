// `strata-level/leveldb-zlib`: a drop-in for npm `leveldb-zlib` (Mojang's LevelDB as a native
// addon, what PrismarineJS's bedrock-provider and other Bedrock tools use), on the Strata
// engine: the same exported names (`LevelDB`, `Iterator`, `ChainedBatch`), methods, option
// names and results (Buffers; `get` resolves null for a missing key; an iterator's `next()`
// resolves `[value, key]` and null at the end, as the addon's does). Writes use Mojang's
// dialect (raw deflate, what the addon writes), so the game reads them.
//
// Switch an existing project with npm `overrides`: `"overrides": { "leveldb-zlib":
// "file:<strata>/js/compat/leveldb-zlib" }` (a one-file package re-exporting this module).

import { Buffer } from 'node:buffer';

import { LEVELDOWN_BLOOM_BITS, LEVELDOWN_SIZES } from './leveldown-defaults.js';
import { open as openDb } from './node.js';
import type { Db, Iterator as DbIterator, OpenOptions } from './db.js';

export interface LevelDBOptions {
  bufferKeys?: boolean;
  snapshots?: boolean;
  permanence?: boolean;
  seek?: boolean;
  clear?: boolean;
  createIfMissing?: boolean;
  errorIfExists?: boolean;
  additionalMethods?: { approximateSize?: boolean; compactRange?: boolean };
  /** Read by the addon's `db_open` (bindings.cpp) though its typings omit them. */
  compression?: boolean;
  cacheSize?: number;
  writeBufferSize?: number;
  blockSize?: number;
  maxOpenFiles?: number;
  blockRestartInterval?: number;
  maxFileSize?: number;
}

/** The addon's open defaults, as its `db_open` reads them (bindings.cpp: `BooleanProperty` /
 * `Uint32Property` with these fallbacks) and sets them on Mojang's `leveldb::Options`; its
 * Database also gives every open a 10-bit Bloom filter and writes raw deflate
 * (`compressors[0] = ZlibCompressorRaw`) whatever `compression` says. */
export const ADDON_DEFAULTS = {
  createIfMissing: true,
  errorIfExists: false,
  ...LEVELDOWN_SIZES,
  bloomBitsPerKey: LEVELDOWN_BLOOM_BITS,
} as const;

/** The engine's open options for the addon's `options` (a value of the wrong type falls back
 * to the default, as the addon's property readers do). */
export function engineOpenOptions(options: LevelDBOptions): OpenOptions {
  const o = options as Record<string, unknown>;
  const flag = (k: 'createIfMissing' | 'errorIfExists') => (typeof o[k] === 'boolean' ? (o[k] as boolean) : ADDON_DEFAULTS[k]);
  const size = (k: 'cacheSize' | 'writeBufferSize' | 'blockSize' | 'maxOpenFiles' | 'blockRestartInterval' | 'maxFileSize') =>
    typeof o[k] === 'number' ? (o[k] as number) >>> 0 : ADDON_DEFAULTS[k];
  return {
    createIfMissing: flag('createIfMissing'),
    errorIfExists: flag('errorIfExists'),
    cacheSize: size('cacheSize'),
    writeBufferSize: size('writeBufferSize'),
    blockSize: size('blockSize'),
    maxOpenFiles: size('maxOpenFiles'),
    blockRestartInterval: size('blockRestartInterval'),
    maxFileSize: size('maxFileSize'),
    bloomBitsPerKey: ADDON_DEFAULTS.bloomBitsPerKey,
    profile: 'bedrock',
    compression: 'deflate-raw',
  };
}

export interface Operation {
  type: 'del' | 'put';
  key: Buffer | string;
  value?: Buffer | string;
}

export interface OpOpts {
  sync?: boolean;
}

export interface IterOpts {
  reverse?: boolean;
  keys?: boolean;
  values?: boolean;
  fillCache?: boolean;
  keyAsBuffer?: boolean;
  valueAsBuffer?: boolean;
  limit?: number;
  gt?: Buffer | string;
  gte?: Buffer | string;
  lt?: Buffer | string;
  lte?: Buffer | string;
  start?: Buffer | string;
  end?: Buffer | string;
}

/** The open databases by path: the addon's own set (`globalThis.levelDbOpened`, shared with
 * the addon and every copy of this module), so a second open context is refused the same way. */
const opened: Set<string> = ((globalThis as { levelDbOpened?: Set<string> }).levelDbOpened ??= new Set<string>());

function bytes(k: Buffer | string): Uint8Array {
  return typeof k === 'string' ? Buffer.from(k) : k;
}

function buf(u: Uint8Array): Buffer {
  return Buffer.from(u.buffer, u.byteOffset, u.byteLength);
}

export class LevelDB {
  path: string;
  options: LevelDBOptions;
  status: 'closed' | 'open' = 'closed';
  /** The Strata database (after `open()`). */
  db: Db | undefined;

  constructor(path: string, options: LevelDBOptions = {}) {
    this.path = path;
    this.options = options;
  }

  async open(): Promise<boolean> {
    if (opened.has(this.path)) throw new Error('DB already has an open context, did you close it properly?');
    opened.add(this.path);
    try {
      this.db = await openDb(this.path, engineOpenOptions(this.options));
    } catch (e) {
      opened.delete(this.path);
      throw new Error(String((e as Error).message ?? e));
    }
    this.status = 'open';
    return true;
  }

  isOpen(): boolean {
    return this.status === 'open';
  }

  async close(): Promise<boolean | undefined> {
    if (!this.isOpen()) {
      this.status = 'closed';
      opened.delete(this.path);
      return undefined;
    }
    await this.db!.close();
    this.db = undefined;
    this.status = 'closed';
    opened.delete(this.path);
    return true;
  }

  static serializeKey(key: unknown): Buffer | string {
    return Buffer.isBuffer(key) ? key : String(key);
  }

  static serializeValue(value: unknown): Buffer | string {
    return Buffer.isBuffer(value) ? value : String(value);
  }

  private live(): Db {
    if (this.status !== 'open' || !this.db) throw new Error('DB is not open');
    return this.db;
  }

  async put(key: Buffer | string, value: Buffer | string, options: OpOpts = {}): Promise<boolean> {
    const db = this.live();
    if (!key.length) throw new Error('Empty key');
    await db.put(bytes(key), bytes(value), { sync: options.sync === true });
    return true;
  }

  async get(key: Buffer | string, _options: OpOpts = {}): Promise<Buffer | null> {
    const db = this.live();
    if (!key.length) throw new Error('Empty key');
    const v = await db.get(bytes(key));
    return v === undefined ? null : buf(v as Uint8Array);
  }

  async getAsString(key: Buffer | string, options: OpOpts = {}): Promise<string> {
    return String(await this.get(key, options));
  }

  async delete(key: Buffer | string, options: OpOpts = {}): Promise<boolean> {
    await this.live().del(bytes(key), { sync: options.sync === true });
    return true;
  }

  chainedBatch(): ChainedBatch {
    return new ChainedBatch(this);
  }

  async batch(operations: Operation[], options: OpOpts = {}): Promise<boolean> {
    const db = this.live();
    await db.batch(
      operations.map((op) =>
        op.type === 'put'
          ? { type: 'put' as const, key: bytes(op.key), value: bytes(op.value ?? '') }
          : { type: 'del' as const, key: bytes(op.key) },
      ),
      { sync: options.sync === true },
    );
    return true;
  }

  async compactRange(start: unknown, end: unknown): Promise<void> {
    if (start == null || end == null || typeof start === 'function' || typeof end === 'function') {
      throw new Error('compactRange() requires valid `start` and `end` arguments');
    }
    await this.live().compactRange(bytes(LevelDB.serializeKey(start)), bytes(LevelDB.serializeKey(end)));
  }

  getIterator(options: IterOpts = {}): Iterator {
    if (this.status !== 'open') throw new Error('cannot call iterator() before open()');
    return new Iterator(this, options);
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<[Buffer, Buffer]> {
    const it = this.getIterator();
    let next;
    while ((next = await it.next())) {
      const [value, key] = next;
      yield [key, value];
    }
  }
}

/** The addon's iterator: `next()` resolves `[value, key]` (Buffers; empty ones when `keys` or
 * `values` is false), then null. */
export class Iterator {
  finished = false;
  db: LevelDB;
  private readonly it: DbIterator;
  private readonly keys: boolean;
  private readonly values: boolean;
  private cache: Array<[Buffer, Buffer]> = [];
  private left: number;
  /** A seek in flight (the addon's seek is synchronous; the engine's is a call). */
  private seeking: Promise<void> | undefined;

  constructor(db: LevelDB, options: IterOpts) {
    this.db = db;
    this.keys = options.keys !== false;
    this.values = options.values !== false;
    this.left = options.limit === undefined || options.limit < 0 ? Infinity : options.limit;
    const range: Record<string, Uint8Array> = {};
    for (const k of ['gt', 'gte', 'lt', 'lte'] as const) {
      const v = options[k];
      if (v !== undefined && v !== null) range[k] = bytes(v);
    }
    // The addon's legacy `start`/`end` (inclusive, swapped when reversed).
    if (options.start !== undefined) range[options.reverse ? 'lte' : 'gte'] = bytes(options.start);
    if (options.end !== undefined) range[options.reverse ? 'gte' : 'lte'] = bytes(options.end);
    this.it = db.db!.iterator({ ...range, reverse: options.reverse === true });
  }

  /** Moves to the first key at or after `target` (before it when reversed). */
  seek(target: Buffer | string): void {
    if (target == null) throw Error('invalid seek target');
    this.seeking = this.it.seek(bytes(target));
    this.cache = [];
    this.finished = false;
  }

  async next(): Promise<[Buffer, Buffer] | null> {
    if (this.seeking) {
      const s = this.seeking;
      this.seeking = undefined;
      await s;
    }
    if (this.cache.length === 0 && !this.finished) {
      const n = Math.min(this.left, 1000);
      const batch = n > 0 ? await this.it.nextv(n) : [];
      this.left -= batch.length;
      if (batch.length < n || this.left === 0) this.finished = true;
      this.cache = batch
        .map(([k, v]) => [this.values ? buf(v as Uint8Array) : Buffer.alloc(0), this.keys ? buf(k as Uint8Array) : Buffer.alloc(0)] as [Buffer, Buffer])
        .reverse();
    }
    return this.cache.pop() ?? null;
  }

  async end(): Promise<boolean> {
    this.cache = [];
    this.finished = true;
    await this.it.close();
    return true;
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<[Buffer, Buffer]> {
    let next;
    while ((next = await this.next())) {
      const [value, key] = next;
      yield [key, value];
    }
    await this.end();
  }
}

/** The addon's chained batch: operations queued, then written atomically by `write()`. */
export class ChainedBatch {
  private ops: Operation[] = [];

  constructor(private readonly db: LevelDB) {}

  put(key: Buffer | string, value: Buffer | string): void {
    this.ops.push({ type: 'put', key, value });
  }

  delete(key: Buffer | string): void {
    this.ops.push({ type: 'del', key });
  }

  clear(): void {
    this.ops = [];
  }

  async write(options: OpOpts = {}): Promise<undefined> {
    const ops = this.ops;
    this.ops = [];
    await this.db.batch(ops, options);
    return undefined;
  }
}
