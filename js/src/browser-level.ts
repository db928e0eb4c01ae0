// `strata-level/browser-level`: a drop-in for npm `browser-level` (3.0.0: an abstract-level
// database over IndexedDB) on the Strata engine in browsers: `new BrowserLevel(location,
// options)` with its `prefix` (default 'level-js-', as browser-level) and `version` options,
// its `location`, `namePrefix`, `version` and `type`, and `BrowserLevel.destroy(location,
// prefix)`. The database is the Strata database
// named `prefix + location` in the browser's default storage (browser.ts: OPFS, or IndexedDB
// where OPFS sync access handles are missing), or in `storage` when given.
//
// Invariants: the manifest is browser-level's (no explicit snapshots, no getSync, reads and
// iterators see the database as of their call: the engine's worker runs calls in order, and
// an iterator's cursor is created by its first message). What differs: the data is a LevelDB
// database, not an IndexedDB object store of the same name, so `db.db` (browser-level's
// IDBDatabase) is undefined, and `version` (an IndexedDB schema version) is kept but unused.
// abstract-level does `require('events')` without depending on npm `events` (browser-level's
// users hit this under Vite and webpack 5, which polyfill no Node built-ins): strata-level
// depends on `events`, so this entry bundles with no configuration.

import { AbstractIterator, AbstractLevel } from 'abstract-level';

import { destroy, open, type BrowserOpenOptions } from './browser.js';
import type { Db, Iterator as DbIterator } from './db.js';
import { toStrataError } from './errors.js';
import type { BatchOp, Encoding } from './codec.js';

const DEFAULT_PREFIX = 'level-js-';

type Out = Uint8Array | string;
type Entry = [Out | undefined, Out | undefined];

/** browser-level's options, plus Strata's browser open options. */
export interface BrowserLevelOptions extends Omit<BrowserOpenOptions, 'keyEncoding' | 'valueEncoding'> {
  /** Prefix of the database's name (default 'level-js-'). */
  prefix?: string;
  /** browser-level's IndexedDB version: kept (`db.version`), not used. */
  version?: number | string;
  keyEncoding?: unknown;
  valueEncoding?: unknown;
  [option: string]: unknown;
}

const IteratorBase = AbstractIterator as unknown as new (db: unknown, options: unknown) => object;

class BrowserIterator extends IteratorBase {
  /** A seek in flight: the next read waits for it (abstract-level's `_seek` is synchronous,
   * the engine's is a message). */
  private pending: Promise<void> | undefined;

  constructor(
    db: BrowserLevel,
    options: Record<string, unknown>,
    private readonly it: DbIterator,
  ) {
    super(db, options);
  }

  private async ready(): Promise<void> {
    const p = this.pending;
    this.pending = undefined;
    if (p) await p;
  }

  async _next(): Promise<Entry | undefined> {
    await this.ready();
    return this.it.next().catch((e: unknown) => Promise.reject(toStrataError(e)));
  }

  async _nextv(size: number): Promise<Entry[]> {
    await this.ready();
    return this.it.nextv(size).catch((e: unknown) => Promise.reject(toStrataError(e)));
  }

  async _all(): Promise<Entry[]> {
    await this.ready();
    return this.it.all().catch((e: unknown) => Promise.reject(toStrataError(e)));
  }

  _seek(target: Uint8Array | string): void {
    const before = this.pending;
    this.pending = (async () => {
      await before;
      await this.it.seek(target);
    })();
  }

  async _close(): Promise<void> {
    await this.pending?.catch(() => {});
    await this.it.close();
  }
}

const Base = AbstractLevel as unknown as new (manifest: object, options?: object) => { status: string };

/** A Strata database with browser-level's interface. */
export class BrowserLevel extends Base {
  // ECMAScript private fields: abstract-level reads some names on a database (`prefix`, which
  // marks a sublevel: a root with a `prefix` property breaks `db.sublevel()`), so none of these
  // may be an ordinary property.
  readonly #loc: string;
  readonly #prefix: string;
  readonly #ver: number;
  readonly #openOptions: BrowserOpenOptions;
  #handle: Db | undefined;

  constructor(location: string, options: BrowserLevelOptions = {}) {
    const { prefix, version, ...forward } = options ?? {};
    super(
      {
        encodings: { view: true, utf8: true },
        snapshots: false,
        implicitSnapshots: true,
        explicitSnapshots: false,
        createIfMissing: true,
        errorIfExists: true,
        seek: true,
        has: true,
        getSync: false,
        permanence: true,
      },
      forward,
    );
    if (typeof location !== 'string' || location === '') {
      throw new TypeError("The first argument 'location' must be a non-empty string");
    }
    this.#loc = location;
    this.#prefix = prefix == null ? DEFAULT_PREFIX : prefix;
    this.#ver = parseInt(String(version || 1), 10);
    const { keyEncoding: _k, valueEncoding: _v, ...rest } = forward;
    this.#openOptions = rest as BrowserOpenOptions;
  }

  get location(): string {
    return this.#loc;
  }

  get namePrefix(): string {
    return this.#prefix;
  }

  get version(): number {
    return this.#ver;
  }

  get type(): string {
    return 'browser-level';
  }

  /** browser-level's IndexedDB database: none here (the data is a LevelDB database). */
  get db(): undefined {
    return undefined;
  }

  get #h(): Db {
    return this.#handle!;
  }

  async _open(options: { createIfMissing: boolean; errorIfExists: boolean }): Promise<void> {
    try {
      this.#handle = await open(this.#prefix + this.#loc, {
        ...this.#openOptions,
        createIfMissing: options.createIfMissing,
        errorIfExists: options.errorIfExists,
      });
    } catch (e) {
      throw toStrataError(e);
    }
  }

  async _close(): Promise<void> {
    const db = this.#handle;
    this.#handle = undefined;
    await db?.close();
  }

  _get(key: Uint8Array | string, options: { valueEncoding?: Encoding }): Promise<Out | undefined> {
    return this.#h.get(key, { valueEncoding: options.valueEncoding ?? 'view' });
  }

  _getMany(keys: Array<Uint8Array | string>, options: { valueEncoding?: Encoding }): Promise<Array<Out | undefined>> {
    return this.#h.getMany(keys, { valueEncoding: options.valueEncoding ?? 'view' });
  }

  async _has(key: Uint8Array | string): Promise<boolean> {
    return (await this.#h.get(key)) !== undefined;
  }

  async _hasMany(keys: Array<Uint8Array | string>): Promise<boolean[]> {
    return (await this.#h.getMany(keys)).map((v) => v !== undefined);
  }

  _put(key: Uint8Array | string, value: Uint8Array | string, options: { sync?: boolean }): Promise<void> {
    return this.#h.put(key, value, { sync: options.sync === true });
  }

  _del(key: Uint8Array | string, options: { sync?: boolean }): Promise<void> {
    return this.#h.del(key, { sync: options.sync === true });
  }

  async _batch(operations: BatchOp[], options: { sync?: boolean }): Promise<void> {
    if (operations.length > 0) await this.#h.batch(operations, { sync: options.sync === true });
  }

  /** Deletes every key in the range: keys read as of the call, deleted in batches. */
  async _clear(options: Record<string, unknown>): Promise<void> {
    const it = this.#h.iterator({ ...rangeOf(options), keys: true, values: false });
    try {
      for (;;) {
        const batch = await it.nextv(1000);
        if (batch.length === 0) break;
        await this.#h.batch(batch.map(([key]) => ({ type: 'del' as const, key: key as Uint8Array })));
      }
    } finally {
      await it.close();
    }
  }

  _iterator(options: Record<string, unknown>): BrowserIterator {
    const it = this.#h.iterator({
      ...rangeOf(options),
      keys: options.keys !== false,
      values: options.values !== false,
      keyEncoding: (options.keyEncoding as Encoding) ?? 'view',
      valueEncoding: (options.valueEncoding as Encoding) ?? 'view',
    });
    return new BrowserIterator(this, options, it);
  }

  /** browser-level's `BrowserLevel.destroy(location, prefix)`: deletes the database named
   * `prefix + location` (default prefix 'level-js-') from the default storage (it must be
   * closed). `options.storage`: the storage it was opened in, when one was given to `open`. */
  static async destroy(location: string, prefix?: string | null, options: { storage?: 'opfs' | 'idb' } = {}): Promise<void> {
    try {
      await destroy((prefix == null ? DEFAULT_PREFIX : prefix) + location, options);
    } catch (e) {
      throw toStrataError(e);
    }
  }
}

/** The range options abstract-level hands to `_iterator` and `_clear`, encoded already. */
function rangeOf(options: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k of ['gt', 'gte', 'lt', 'lte'] as const) if (options[k] !== undefined && options[k] !== null) out[k] = options[k];
  if (options.reverse === true) out.reverse = true;
  if (typeof options.limit === 'number' && options.limit >= 0 && options.limit !== Infinity) out.limit = options.limit;
  return out;
}

export default BrowserLevel;
