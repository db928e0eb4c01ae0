// `StrataLevel`: the engine as an `abstract-level` database, for the `level` ecosystem (Node).
//
// It drives the in-process engine synchronously, so reads see the database as it was when
// they were called (implicit snapshots), iterators pin their view when created, and explicit
// snapshots are engine snapshots. Encodings: the private API takes and returns `view`,
// `buffer` and `utf8` directly.

import { AbstractIterator, AbstractLevel, AbstractSnapshot } from 'abstract-level';

import { decode, packKeys, packOps, toBytes, unpackEntries, unpackValues, type Encoding } from './codec.js';
import { engineOptions, iteratorSpec, type Engine } from './engine.js';
import { toStrataError } from './errors.js';
import { getEngine } from './node.js';
import type { OpenOptions } from './db.js';

type Out = Uint8Array | string;
type Entry = [Out | undefined, Out | undefined];

interface EncodingOptions {
  keyEncoding?: Encoding;
  valueEncoding?: Encoding;
  snapshot?: StrataSnapshot;
  sync?: boolean;
  fillCache?: boolean;
}

const BATCH_BYTES = 1 << 20;

/** Options for `new StrataLevel(location, options)`: `level` options plus the engine's. */
export type StrataLevelOptions = OpenOptions & Record<string, unknown>;

function wrap<T>(fn: () => T): Promise<T> {
  try {
    return Promise.resolve(fn());
  } catch (e) {
    return Promise.reject(toStrataError(e));
  }
}

class StrataSnapshot extends (AbstractSnapshot as unknown as new (db: unknown) => object) {
  constructor(
    private readonly engine: Engine,
    private readonly handle: number,
    readonly id: number,
    options: unknown,
  ) {
    super(options);
  }

  async _close(): Promise<void> {
    this.engine.releaseSnapshot(this.handle, this.id);
  }
}

class StrataIterator extends (AbstractIterator as unknown as new (db: unknown, options: unknown) => {
  db: unknown;
}) {
  private readonly cursor: number | undefined;
  /** Why the cursor could not be created (a released snapshot); thrown on first read. */
  private readonly failure: unknown;
  private buffered: Entry[] = [];
  private pos = 0;
  private ended = false;
  private batch = 16;
  /** The iterator's `limit` (Infinity: none) and the entries handed out so far. Kept here,
   * not in the engine's cursor: entries read ahead and dropped by a seek must not count. */
  private readonly limit: number;
  private taken = 0;

  constructor(
    db: StrataLevel,
    options: Record<string, unknown>,
    private readonly engine: Engine,
    handle: number,
    private readonly wantKeys: boolean,
    private readonly wantValues: boolean,
    private readonly keyEncoding: Encoding,
    private readonly valueEncoding: Encoding,
  ) {
    super(db, options);
    const { limit, ...spec } = iteratorSpec(options, (options.snapshot as StrataSnapshot | undefined)?.id);
    this.limit = limit ?? Infinity;
    // Created now, so the iterator sees the database as of this call.
    try {
      this.cursor = engine.iterator(handle, spec);
    } catch (e) {
      this.failure = toStrataError(e);
    }
  }

  private id(): number {
    if (this.cursor === undefined) throw this.failure;
    return this.cursor;
  }

  private fill(want: number): void {
    const n = Math.min(want, this.limit - this.taken);
    if (n <= 0) {
      this.buffered = [];
      this.pos = 0;
      this.ended = true;
      return;
    }
    const buf = this.engine.nextv(this.id(), n, BATCH_BYTES, this.wantKeys, this.wantValues);
    const b = unpackEntries(buf, this.wantKeys, this.wantValues);
    this.buffered = [];
    for (let i = 0; i < b.count; i++) {
      this.buffered.push([
        this.wantKeys ? decode(b.keys[i]!, this.keyEncoding) : undefined,
        this.wantValues ? decode(b.values[i]!, this.valueEncoding) : undefined,
      ]);
    }
    this.pos = 0;
    this.ended = b.ended;
  }

  /** Whether a read that needs a batch from the engine first lets the event loop run (one
   * macrotask per batch), so a long iteration does not starve timers and I/O (classic-level's
   * reads go through the thread pool; classic-level.ts asks for it). */
  breathes = false;

  private breath(): Promise<void> | undefined {
    if (!this.breathes || this.pos < this.buffered.length || this.ended) return undefined;
    return new Promise((resolve) => setImmediate(resolve));
  }

  _next(): Promise<Entry | undefined> {
    const b = this.breath();
    return b ? b.then(() => this.nextNow()) : this.nextNow();
  }

  private nextNow(): Promise<Entry | undefined> {
    return wrap(() => {
      if (this.pos >= this.buffered.length) {
        if (this.ended) return undefined;
        this.fill(this.batch);
        this.batch = Math.min(1000, this.batch * 2);
        if (this.buffered.length === 0) return undefined;
      }
      this.taken++;
      return this.buffered[this.pos++];
    });
  }

  _nextv(size: number): Promise<Entry[]> {
    const b = this.breath();
    return b ? b.then(() => this.nextvNow(size)) : this.nextvNow(size);
  }

  private nextvNow(size: number): Promise<Entry[]> {
    return wrap(() => {
      const out: Entry[] = [];
      while (out.length < size) {
        if (this.pos >= this.buffered.length) {
          if (this.ended) break;
          this.fill(size - out.length);
          if (this.buffered.length === 0) break;
        }
        while (out.length < size && this.pos < this.buffered.length) {
          out.push(this.buffered[this.pos++]!);
          this.taken++;
        }
      }
      return out;
    });
  }

  async _all(): Promise<Entry[]> {
    const out: Entry[] = [];
    for (;;) {
      const batch = await this._nextv(1000);
      if (batch.length === 0) return out;
      for (const e of batch) out.push(e);
    }
  }

  _seek(target: unknown): void {
    this.engine.seek(this.id(), toBytes(target, 'target'));
    this.buffered = [];
    this.pos = 0;
    this.ended = false;
    this.batch = 16;
  }

  async _close(): Promise<void> {
    if (this.cursor !== undefined) this.engine.closeIterator(this.cursor);
  }
}

/**
 * classic-level's options where they differ from Strata's: `compression` is a boolean there
 * (true: the profile's codec, Snappy for Google's format; false: none); `multithreading` has
 * no counterpart (one engine per thread) and is accepted and ignored, so code written for
 * classic-level opens unchanged. `blockRestartInterval` goes to the engine as it is.
 */
export function fromClassicLevel(options: StrataLevelOptions): StrataLevelOptions {
  const { multithreading: _m, ...o } = options;
  if (o.compression === (true as unknown)) delete o.compression;
  else if (o.compression === (false as unknown)) o.compression = 'none';
  return o;
}

const Base = AbstractLevel as unknown as new (manifest: object, options?: object) => {
  status: string;
};

/** A Strata database behind the `abstract-level` interface. */
export class StrataLevel extends Base {
  readonly location: string;
  /** The engine of the current open: taken again at each open, so a database reopened after
   * its engine stopped (node.ts's `getEngine`) runs in the new one. */
  protected engine: Engine;
  protected handle: number | undefined;
  private readonly strataOptions: StrataLevelOptions;

  /** `manifest`: what a subclass adds to the manifest (classic-level.ts: its additional methods). */
  constructor(location: string, options: StrataLevelOptions = {}, manifest: Record<string, unknown> = {}) {
    super(
      {
        encodings: { buffer: true, view: true, utf8: true },
        implicitSnapshots: true,
        explicitSnapshots: true,
        getSync: true,
        has: true,
        seek: true,
        permanence: true,
        createIfMissing: true,
        errorIfExists: true,
        additionalMethods: {},
        ...manifest,
      },
      options,
    );
    if (typeof location !== 'string' || location === '') throw new TypeError('The first argument "location" must be a non-empty string');
    this.location = location;
    this.engine = getEngine();
    this.strataOptions = options;
  }

  protected get h(): number {
    return this.handle!;
  }

  async _open(options: { createIfMissing: boolean; errorIfExists: boolean }): Promise<void> {
    try {
      // abstract-level hands the constructor's options to open() again, merged with open()'s own.
      const o = engineOptions(fromClassicLevel({ ...this.strataOptions, ...options }));
      this.engine = getEngine();
      this.handle = await this.engine.open(this.strataOptions.storage ?? 'fs', this.location, o);
    } catch (e) {
      throw toStrataError(e);
    }
  }

  async _close(): Promise<void> {
    const h = this.handle;
    this.handle = undefined;
    if (h !== undefined) await this.engine.close(h);
  }

  _getSync(key: unknown, options: EncodingOptions): Out | undefined {
    try {
      const v = this.engine.get(this.h, toBytes(key, 'key'), options.snapshot?.id, options.fillCache !== false);
      return v === undefined ? undefined : decode(v, options.valueEncoding ?? 'view');
    } catch (e) {
      throw toStrataError(e);
    }
  }

  _get(key: unknown, options: EncodingOptions): Promise<Out | undefined> {
    return wrap(() => this._getSync(key, options));
  }

  _getMany(keys: unknown[], options: EncodingOptions): Promise<Array<Out | undefined>> {
    return wrap(() => {
      const packed = packKeys(keys.map((k) => toBytes(k, 'key')));
      return unpackValues(this.engine.getMany(this.h, packed, options.snapshot?.id)).map((v) =>
        v === undefined ? undefined : decode(v, options.valueEncoding ?? 'view'),
      );
    });
  }

  _has(key: unknown, options: EncodingOptions): Promise<boolean> {
    return wrap(() => this.engine.get(this.h, toBytes(key, 'key'), options.snapshot?.id, true) !== undefined);
  }

  _hasMany(keys: unknown[], options: EncodingOptions): Promise<boolean[]> {
    return wrap(() => {
      const packed = packKeys(keys.map((k) => toBytes(k, 'key')));
      return unpackValues(this.engine.getMany(this.h, packed, options.snapshot?.id)).map((v) => v !== undefined);
    });
  }

  _put(key: unknown, value: unknown, options: EncodingOptions): Promise<void> {
    return wrap(() => this.engine.put(this.h, toBytes(key, 'key'), toBytes(value, 'value'), options.sync === true));
  }

  _del(key: unknown, options: EncodingOptions): Promise<void> {
    return wrap(() => this.engine.del(this.h, toBytes(key, 'key'), options.sync === true));
  }

  _batch(operations: Array<{ type: string; key: unknown; value?: unknown }>, options: EncodingOptions): Promise<void> {
    return wrap(() => {
      const packed = packOps(operations);
      if (packed.length > 0) this.engine.write(this.h, packed, options.sync === true);
    });
  }

  _snapshot(options: { owner?: unknown }): StrataSnapshot {
    return new StrataSnapshot(this.engine, this.h, this.engine.snapshot(this.h), options);
  }

  /** Deletes every key in the range, reading keys as of the call and deleting in batches. */
  _clear(options: Record<string, unknown>): Promise<void> {
    return wrap(() => {
      const spec = iteratorSpec(options, (options.snapshot as StrataSnapshot | undefined)?.id);
      const cursor = this.engine.iterator(this.h, spec);
      try {
        for (;;) {
          const b = unpackEntries(this.engine.nextv(cursor, 1000, BATCH_BYTES, true, false), true, false);
          if (b.count > 0) {
            this.engine.write(this.h, packOps(b.keys.map((key) => ({ type: 'del', key }))), false);
          }
          if (b.ended) break;
        }
      } finally {
        this.engine.closeIterator(cursor);
      }
    });
  }

  /** Iterators let the event loop run before each batch they take from the engine (see
   * `StrataIterator.breathes`). */
  protected iteratorsBreathe = false;

  _iterator(options: Record<string, unknown>): StrataIterator {
    const it = new StrataIterator(
      this,
      options,
      this.engine,
      this.h,
      options.keys !== false,
      options.values !== false,
      (options.keyEncoding as Encoding) ?? 'view',
      (options.valueEncoding as Encoding) ?? 'view',
    );
    it.breathes = this.iteratorsBreathe;
    return it;
  }
}

export default StrataLevel;
