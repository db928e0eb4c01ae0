// The public promise API (`Db`, `Iterator`, `Snapshot`), the same in Node and in browsers.
// It validates and encodes arguments, then calls the engine through a `Link`: a direct call in
// Node, a message to the worker in browsers. Entries come back in batches; the iterator hands
// them out one by one from its current batch.

import { checkEncoding, decode, packKeys, packOps, toBytes, unpackEntries, unpackValues, type BatchOp, type Encoding, type Input } from './codec.js';
import { StrataError, invalidArgument, toStrataError } from './errors.js';
import type { StorageHost } from './host.js';
import { iteratorSpec, type EngineOptions, type IteratorSpec, type StorageKind } from './engine.js';

/** How `Db` reaches the engine. */
export interface Link {
  call(op: string, args: unknown[], transfer?: ArrayBuffer[]): Promise<unknown>;
  /** Ends the link when its last database closes (the browser worker). */
  release?(): void;
}

export interface OpenOptions extends EngineOptions {
  /** Where the database lives: `fs` (Node default), `opfs` (browser default), `mem`,
   * `files` (browser, read-only: a user-picked folder, given in `files`) or `host` (Node: the
   * caller's `host`). */
  storage?: StorageKind;
  /** For `storage: 'files'`: the picked `File`s with their paths inside the folder. */
  files?: ReadonlyArray<{ path: string; file: Blob }>;
  /** For `storage: 'files'`: bytes of the files kept in memory once read (tables whole, larger
   * files by 256 KiB windows; default 64 MiB). A browser reads a picked file through a round
   * trip to its own process per read, so a world that fits is read once. */
  fileCacheBytes?: number;
  /** For `storage: 'host'` (Node only): the object that performs the file operations (the
   * `StorageHost` contract; e.g. a wrapper over `NodeFsHost` that adds a quota). */
  host?: StorageHost;
  /** Encoding of keys and values returned by reads (default `view`: Uint8Array). */
  keyEncoding?: Encoding;
  valueEncoding?: Encoding;
}

export interface ReadOptions {
  snapshot?: Snapshot;
  keyEncoding?: Encoding;
  valueEncoding?: Encoding;
  fillCache?: boolean;
}

export interface WriteOptions {
  /** Wait until the write is durable (fsync of the log). */
  sync?: boolean;
}

export interface IteratorOptions extends ReadOptions {
  gt?: Input;
  gte?: Input;
  lt?: Input;
  lte?: Input;
  reverse?: boolean;
  /** Stop after this many entries; -1 or absent: no limit. */
  limit?: number;
  keys?: boolean;
  values?: boolean;
}

export interface ScanResult {
  entries: number;
  keyBytes: number;
  valueBytes: number;
  crc32c: number;
}

/** What recovery did not use when the database was opened (`db.recovery()`); LevelDB drops
 * all of this silently. `clean` when there is nothing to say. */
export interface RecoveryReport {
  clean: boolean;
  /** Bytes after the last complete record of the MANIFEST or a log (a torn or damaged tail). */
  droppedTails: { file: string; offset: number; bytes: number }[];
  /** Tables on disk the MANIFEST never mentions: kept in place until a repair folds them in. */
  unreferencedTables: { file: string; bytes: number; entries: number | null }[];
  /** A log whose first sequence is beyond where the previous one ended (its tail was lost). */
  gap: { log: string; expected: number; found: number } | null;
  /** Logs not replayed because of the gap (parked in lost/ by a writable open). */
  lostLogs: { file: string; bytes: number }[];
  /** One line per finding, for people. */
  messages: string[];
}

export interface Properties {
  filesPerLevel: number[];
  bytesPerLevel: number[];
  lastSequence: number;
  memtableBytes: number;
  compactions: number;
  flushes: number;
  /** Data blocks compactions wrote as they were stored (one value alone in a block that reaches
   * the block size, already in the table's codec) instead of decompressing and compressing them
   * again. */
  blocksCopied: number;
  /** Write groups committed since the open: one log record each. Puts and dels that crossed
   * to the engine's worker in one message share one (group commit), so writes / groups is
   * the fan-in. */
  writeGroups: number;
  /** Snapshots taken and not yet released (by this handle, or by other tabs through a
   * shared database's leader). */
  snapshots: number;
  /** Iterators open and not yet closed (the same). */
  iterators: number;
}

type Out = Uint8Array | string;

/** A pinned view of the database; pass it as `snapshot` to reads. */
export class Snapshot {
  private released = false;
  /** @internal */
  constructor(
    private readonly db: Db,
    /** @internal */ readonly id: number,
  ) {}

  /** @internal */
  owner(): Db {
    return this.db;
  }

  async release(): Promise<void> {
    if (this.released) return;
    this.released = true;
    await this.db.releaseSnapshot(this);
  }
}

/** An open database. */
export class Db {
  private closed = false;
  private readonly iterators = new Set<Iterator>();
  private readonly snapshots = new Set<Snapshot>();

  /** @internal */
  constructor(
    private readonly link: Link,
    private readonly handle: number,
    readonly location: string,
    private readonly options: OpenOptions,
  ) {}

  /** Where the database's files are (`opfs`, `idb`, `mem`, `fs`, `files`, `host`): in
   * browsers, the default storage resolved at open (OPFS, or IndexedDB without OPFS). */
  get storage(): StorageKind | undefined {
    return this.options.storage;
  }

  get status(): 'open' | 'closed' {
    return this.closed ? 'closed' : 'open';
  }

  private async call(op: string, args: unknown[], transfer?: ArrayBuffer[]): Promise<unknown> {
    if (this.closed) throw new StrataError('LEVEL_DATABASE_NOT_OPEN', 'Database is not open');
    try {
      return await this.link.call(op, [this.handle, ...args], transfer);
    } catch (e) {
      throw toStrataError(e);
    }
  }

  private snapshotId(snapshot: Snapshot | undefined): number | undefined {
    if (snapshot === undefined) return undefined;
    if (!(snapshot instanceof Snapshot) || snapshot.owner() !== this) {
      throw invalidArgument('snapshot must come from this database');
    }
    return snapshot.id;
  }

  /** The value of `key`, or `undefined` when it is absent. */
  async get(key: Input, options: ReadOptions = {}): Promise<Out | undefined> {
    const k = toBytes(key, 'key');
    const enc = checkEncoding(options.valueEncoding ?? this.options.valueEncoding, 'valueEncoding');
    const v = (await this.call('get', [k, this.snapshotId(options.snapshot), options.fillCache ?? true])) as Uint8Array | undefined;
    return v === undefined ? undefined : decode(v, enc);
  }

  /** Values of many keys in one engine call (`undefined` for absent keys). */
  async getMany(keys: Input[], options: ReadOptions = {}): Promise<Array<Out | undefined>> {
    if (!Array.isArray(keys)) throw invalidArgument('keys must be an array');
    const enc = checkEncoding(options.valueEncoding ?? this.options.valueEncoding, 'valueEncoding');
    const packed = packKeys(keys.map((k) => toBytes(k, 'key')));
    const out = (await this.call('getMany', [packed, this.snapshotId(options.snapshot)], [packed.buffer as ArrayBuffer])) as Uint8Array;
    return unpackValues(out).map((v) => (v === undefined ? undefined : decode(v, enc)));
  }

  async put(key: Input, value: Input, options: WriteOptions = {}): Promise<void> {
    const k = toBytes(key, 'key');
    if (value === undefined || value === null) throw invalidArgument('value must be a string or a Uint8Array');
    await this.call('put', [k, toBytes(value, 'value'), options.sync === true]);
  }

  async del(key: Input, options: WriteOptions = {}): Promise<void> {
    await this.call('del', [toBytes(key, 'key'), options.sync === true]);
  }

  /** Applies all operations atomically. */
  async batch(ops: BatchOp[], options: WriteOptions = {}): Promise<void> {
    const packed = packOps(ops);
    await this.call('write', [packed, options.sync === true], [packed.buffer as ArrayBuffer]);
  }

  /** An iterator over a key range, in key order (or reversed). */
  iterator(options: IteratorOptions = {}): Iterator {
    if (this.closed) throw new StrataError('LEVEL_DATABASE_NOT_OPEN', 'Database is not open');
    const spec = iteratorSpec(options as Record<string, unknown>, this.snapshotId(options.snapshot));
    const it = new Iterator(
      this,
      spec,
      options.keys !== false,
      options.values !== false,
      checkEncoding(options.keyEncoding ?? this.options.keyEncoding, 'keyEncoding'),
      checkEncoding(options.valueEncoding ?? this.options.valueEncoding, 'valueEncoding'),
    );
    this.iterators.add(it);
    return it;
  }

  /** Pins the current state for consistent reads; release it when done. */
  async snapshot(): Promise<Snapshot> {
    const id = (await this.call('snapshot', [])) as number;
    const s = new Snapshot(this, id);
    this.snapshots.add(s);
    return s;
  }

  /** @internal */
  async releaseSnapshot(s: Snapshot): Promise<void> {
    this.snapshots.delete(s);
    if (!this.closed) await this.call('releaseSnapshot', [s.id]);
  }

  /** Reads every entry in key order inside the engine: count, bytes and CRC-32C of
   * key‖value over all entries (the headline workload). */
  async scan(): Promise<ScanResult> {
    const [entries, keyBytes, valueBytes, crc32c] = (await this.call('scan', [])) as number[];
    return { entries: entries!, keyBytes: keyBytes!, valueBytes: valueBytes!, crc32c: crc32c! };
  }

  /** Decode workers at work for this database's scans: the readahead's counters (runs lent,
   * decoded by workers in time, decoded by the engine itself) and the pool's; `readahead` is
   * null when the database has none. */
  async decodeStats(): Promise<{ readahead: null | Record<string, number>; pool: null | Record<string, number> }> {
    return JSON.parse((await this.call('decodeStats', [])) as string) as { readahead: null | Record<string, number>; pool: null | Record<string, number> };
  }

  /** @internal Tests: terminates decode worker `i` (a worker killed mid-scan). */
  async terminateDecodeWorker(i: number): Promise<boolean> {
    return (await this.call('terminateDecodeWorker', [i])) as boolean;
  }

  /** Compacts the key range (both ends optional) as far down as it goes. */
  async compactRange(start?: Input, end?: Input): Promise<void> {
    const s = start === undefined ? undefined : toBytes(start, 'start');
    const e = end === undefined ? undefined : toBytes(end, 'end');
    await this.call('compactRange', [s, e]);
  }

  /** Writes the memtable to a table file. */
  async flush(): Promise<void> {
    await this.call('flush', []);
  }

  async properties(): Promise<Properties> {
    return JSON.parse((await this.call('properties', [])) as string) as Properties;
  }

  /** The database's dialect as detected at open (its tables' codecs, a level.dat beside it):
   * what an open without `profile` writes. `profile` is null for an empty database. */
  async dialect(): Promise<{ profile: 'google' | 'bedrock' | null; reason: string }> {
    return JSON.parse((await this.call('dialect', [])) as string) as { profile: 'google' | 'bedrock' | null; reason: string };
  }

  /** What recovery did not use at open (torn tails, unreferenced tables, a gap). */
  async recovery(): Promise<RecoveryReport> {
    return JSON.parse((await this.call('recovery', [])) as string) as RecoveryReport;
  }

  /** Closes open iterators, releases snapshots and closes the database. Idempotent. */
  async close(): Promise<void> {
    if (this.closed) return;
    for (const it of [...this.iterators]) await it.close();
    this.snapshots.clear();
    this.closed = true;
    try {
      await this.link.call('close', [this.handle]);
    } catch (e) {
      throw toStrataError(e);
    } finally {
      this.link.release?.();
    }
  }

  /** @internal */
  async iteratorCall(op: string, args: unknown[]): Promise<unknown> {
    if (this.closed) throw new StrataError('LEVEL_DATABASE_NOT_OPEN', 'Database is not open');
    try {
      return await this.link.call(op, args);
    } catch (e) {
      throw toStrataError(e);
    }
  }

  /** @internal */
  async openCursor(spec: IteratorSpec): Promise<number> {
    return (await this.call('iterator', [spec])) as number;
  }

  /** @internal */
  forget(it: Iterator): void {
    this.iterators.delete(it);
  }
}

const FIRST_BATCH = 16;
const MAX_BATCH = 1000;
const BATCH_BYTES = 1 << 20;

/** An iterator: `next()`, `nextv(n)`, `all()`, `seek()`, `for await`, `close()`. */
export class Iterator {
  private readonly cursor: Promise<number>;
  private keys: Uint8Array[] = [];
  private values: Uint8Array[] = [];
  private pos = 0;
  private count = 0;
  private ended = false;
  private closed = false;
  private batch = FIRST_BATCH;

  /** @internal */
  constructor(
    private readonly db: Db,
    spec: IteratorSpec,
    private readonly wantKeys: boolean,
    private readonly wantValues: boolean,
    private readonly keyEncoding: Encoding,
    private readonly valueEncoding: Encoding,
  ) {
    // Asked for now, so the engine creates the cursor (and pins its view) before any write
    // issued after this call; failures surface on the first read.
    this.cursor = this.db.openCursor(spec);
    this.cursor.catch(() => {});
  }

  private open(): Promise<number> {
    if (this.closed) return Promise.reject(new StrataError('LEVEL_ITERATOR_NOT_OPEN', 'Iterator is not open'));
    return this.cursor;
  }

  private async fill(n: number): Promise<void> {
    const id = await this.open();
    const buf = (await this.db.iteratorCall('nextv', [id, n, BATCH_BYTES, this.wantKeys, this.wantValues])) as Uint8Array;
    const b = unpackEntries(buf, this.wantKeys, this.wantValues);
    this.keys = b.keys;
    this.values = b.values;
    this.count = b.count;
    this.pos = 0;
    this.ended = b.ended;
  }

  private take(): [Out | undefined, Out | undefined] {
    const i = this.pos++;
    return [
      this.wantKeys ? decode(this.keys[i]!, this.keyEncoding) : undefined,
      this.wantValues ? decode(this.values[i]!, this.valueEncoding) : undefined,
    ];
  }

  /** The next entry as `[key, value]`, or `undefined` at the end. */
  async next(): Promise<[Out | undefined, Out | undefined] | undefined> {
    if (this.closed) throw new StrataError('LEVEL_ITERATOR_NOT_OPEN', 'Iterator is not open');
    if (this.pos >= this.count) {
      if (this.ended) return undefined;
      await this.fill(this.batch);
      this.batch = Math.min(MAX_BATCH, this.batch * 2);
      if (this.count === 0) return undefined;
    }
    return this.take();
  }

  /** Up to `size` entries (fewer only at the end), in one engine call when none are buffered. */
  async nextv(size: number): Promise<Array<[Out | undefined, Out | undefined]>> {
    if (this.closed) throw new StrataError('LEVEL_ITERATOR_NOT_OPEN', 'Iterator is not open');
    if (typeof size !== 'number' || Number.isNaN(size) || size < 0) throw invalidArgument('size must be a non-negative number');
    const want = Math.min(Math.floor(size), 0x7fffffff);
    const out: Array<[Out | undefined, Out | undefined]> = [];
    while (out.length < want) {
      if (this.pos >= this.count) {
        if (this.ended) break;
        await this.fill(want - out.length);
        if (this.count === 0) break;
      }
      while (out.length < want && this.pos < this.count) out.push(this.take());
    }
    return out;
  }

  /** Every remaining entry; closes the iterator. */
  async all(): Promise<Array<[Out | undefined, Out | undefined]>> {
    const out: Array<[Out | undefined, Out | undefined]> = [];
    try {
      for (;;) {
        const batch = await this.nextv(MAX_BATCH);
        if (batch.length === 0) break;
        for (const e of batch) out.push(e);
      }
    } finally {
      await this.close();
    }
    return out;
  }

  /** Moves to the first entry at or after `target` in the iterator's direction (and range). */
  async seek(target: Input): Promise<void> {
    if (this.closed) throw new StrataError('LEVEL_ITERATOR_NOT_OPEN', 'Iterator is not open');
    const t = toBytes(target, 'target');
    const id = await this.open();
    await this.db.iteratorCall('seek', [id, t]);
    this.keys = [];
    this.values = [];
    this.pos = 0;
    this.count = 0;
    this.ended = false;
    this.batch = FIRST_BATCH;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.db.forget(this);
    try {
      await this.db.iteratorCall('closeIterator', [await this.cursor]);
    } catch {
      // The cursor never opened, or the database closed first and took its cursors along.
    }
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<[Out | undefined, Out | undefined]> {
    try {
      for (;;) {
        const e = await this.next();
        if (e === undefined) return;
        yield e;
      }
    } finally {
      await this.close();
    }
  }
}
