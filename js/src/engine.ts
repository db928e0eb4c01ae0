// The engine side of the package: owns the wasm databases, cursors and snapshots by numeric
// handle and answers operations on them. It runs in-process in Node and inside the dedicated
// worker in browsers; either way every operation is a plain call with cloneable arguments, so
// the same code serves direct calls and `postMessage`.
//
// Invariants: handles are never reused; an operation on a closed or unknown database fails
// with LEVEL_DATABASE_NOT_OPEN, on a closed iterator with LEVEL_ITERATOR_NOT_OPEN; closing a
// database closes its cursors and releases its snapshots first. Pending compaction work runs
// in bounded steps when the engine is idle (the wasm build has no background thread).

import { toBytes } from './codec.js';
import { chunkListWithDecoders, scanWithDecoders, type DecodePool, type Stepper } from './decode-pool.js';
import { StrataError, invalidArgument } from './errors.js';
import type { StorageHost } from './host.js';
import { fence } from './instance-fence.js';

/** The wasm facade's classes (src/wasm/mod.rs), as far as this package uses them. */
export interface WasmDatabase {
  get(key: Uint8Array, snapshot: number | undefined, fillCache: boolean): Uint8Array | undefined;
  getMany(keys: Uint8Array, snapshot: number | undefined): Uint8Array;
  put(key: Uint8Array, value: Uint8Array, sync: boolean): void;
  del(key: Uint8Array, sync: boolean): void;
  write(ops: Uint8Array, sync: boolean): void;
  iterator(options: object): WasmCursor;
  snapshot(): number;
  releaseSnapshot(id: number): void;
  scan(): Float64Array | number[];
  scanCursor(): { step(max: number): boolean; figures(): Float64Array | number[]; free(): void };
  lendRuns(max: number): Uint8Array;
  deliverRun(id: number, packed: Uint8Array): void;
  abandonRun(id: number): void;
  readaheadStats(): string;
  compactRange(start: Uint8Array | undefined, end: Uint8Array | undefined): void;
  approximateSize(start: Uint8Array, end: Uint8Array): number;
  flush(): void;
  maintenance(): boolean;
  properties(): string;
  sstables(): string;
  recovery(): string;
  dialect(): string;
  close(): void;
  free(): void;
  // Bedrock worlds (src/wasm/world.rs).
  worldSummary(): string;
  chunkList(dimension: number, reliefSamples: boolean): Int32Array;
  chunkListCursor(dimension: number): Stepper;
  chunkListFinish(cursor: Stepper): Int32Array;
  chunkSplitKeys(parts: number, minBytes: number): Uint8Array;
  chunkListPart(dimension: number, start?: Uint8Array, end?: Uint8Array): Uint8Array;
  joinChunkParts(dimension: number, parts: Uint8Array): Int32Array;
  contentIdentity(): Uint8Array;
  reliefSamples(dimension: number): Uint8Array | undefined;
  setReliefSamples(packed: Uint8Array): void;
  renderMap(dimension: number, pixelsPerChunk: number, layer?: string, y?: number, chunksPerPixel?: number, region?: Int32Array, chunks?: Int32Array): WasmMapImage;
  surfaceTiles(dimension: number, coords: Int32Array): Uint8Array;
  chunkRecords(dimension: number, x: number, z: number): string;
  recordNbt(key: Uint8Array): string | undefined;
  deleteChunks(dimension: number, areas: string): string;
  pruneChunks(dimension: number, keep: string, allowEmpty: boolean): string;
  applyEdits(text: string, dryRun: boolean): string;
  entities(dimension: number): string;
  deleteEntities(dimension: number, areas: string, identifier: string | undefined, dryRun: boolean): string;
  deleteEntity(dimension: number, key: Uint8Array, root: number): string;
  recordSnbt(key: Uint8Array): string | undefined;
  setRecordSnbt(key: Uint8Array, text: string): string;
  levelDatSnbt(): string;
  setLevelDatSnbt(text: string): string;
  exportMcworld(): Uint8Array;
  exportBegin(host: StorageHost | undefined, dir: string): WasmExport;
}

/** A streamed `.mcworld` export in the engine (src/wasm/export.rs). */
export interface WasmExport {
  step(budget: number): boolean;
  progress(): ExportProgress;
  zipPath(): string;
  cancel(): void;
  finishTo(to: string): void;
  free(): void;
}

/** Where a streamed export is: the current phase's bytes (`copy`: the world's bytes copied;
 * `compact`: table bytes rewritten of an estimate, reaching `total` as the phase ends; `zip`:
 * bytes of the compacted files zipped; `done`), and the files and bytes in the zip so far. */
export interface ExportProgress {
  phase: 'copy' | 'compact' | 'zip' | 'done';
  done: number;
  total: number;
  files: number;
  bytes: number;
}

/** Where a streamed export keeps its temporary folder: storage `kind` at `location` (an OPFS
 * pool, an IndexedDB store, `fs`), folder `dir` inside it. */
export interface ExportScratch {
  kind: StorageKind;
  location: string;
  dir: string;
}

/** A top-down map as the facade draws it (see world.ts's `MapImage`). */
export interface WasmMapImage {
  width: number;
  height: number;
  rgba: Uint8Array;
  minChunkX: number;
  minChunkZ: number;
  pixelsPerChunk: number;
  chunksIndexed: number;
  chunksDrawn: number;
  chunksFailed: number;
  /** The first failed chunks (at most 64), in the order read: `[x, z, why]`. */
  failedChunks: Array<[number, number, string]>;
  chunksWithoutSurface: number;
  /** Chunks per pixel side (1 unless asked; then `pixelsPerChunk` is 1 / it). */
  chunksPerPixel: number;
  /** Chunks not read because another chunk of their pixel was drawn. */
  chunksSampledOut: number;
  /** The layer drawn: relief, surface, height, biome, slime or cave. */
  layer: MapLayer;
  /** Slime chunks among the dimension's chunks (Bedrock's rule), whatever the layer. */
  slimeChunks: number;
  /** Lowest and highest top-block y drawn (height layer only). */
  heightMin?: number;
  heightMax?: number;
  /** Biome layer: `[id, name (null when unknown), columns, '#rrggbb']`, most columns first. */
  biomes: Array<[number, string | null, number, string]>;
}

export type MapLayer = 'relief' | 'surface' | 'height' | 'biome' | 'slime' | 'cave';

export interface WasmCursor {
  nextv(n: number, maxBytes: number, keys: boolean, values: boolean): Uint8Array;
  seek(target: Uint8Array): void;
  close(): void;
  free(): void;
}

export interface WasmModule {
  Database: {
    open(host: StorageHost | undefined, path: string, options: object): WasmDatabase;
    openWorld(host: StorageHost | undefined, root: string, options: object): WasmDatabase;
    repair(host: StorageHost | undefined, path: string, options: object): string;
    destroy(host: StorageHost | undefined, path: string): string;
    importMcworld(zip: Uint8Array, name: string): string;
    dropMemStore(name: string): boolean;
    snbtTree(text: string): string;
    memoryBytes(): number;
  };
  /** Zips files (name, bytes) into one archive (the browser build's folder exports). */
  zipFiles?(names: string[], datas: Uint8Array[]): Uint8Array;
}

/** Which storage a database lives in (`host`: Node only, a caller-supplied `StorageHost`;
 * `idb`: browsers, IndexedDB, the fallback where OPFS sync access handles are missing). */
export type StorageKind = 'fs' | 'mem' | 'opfs' | 'idb' | 'files' | 'host';

/** Engine-level open options (the wasm facade reads these names). */
export interface EngineOptions {
  createIfMissing?: boolean;
  errorIfExists?: boolean;
  readOnly?: boolean;
  paranoidChecks?: boolean;
  /** The dialect to write. Default: the database's own (its tables' codecs, a level.dat beside
   * it; `db.dialect()` tells), Google's for an empty database. */
  profile?: 'google' | 'bedrock';
  compression?: 'none' | 'snappy' | 'zlib' | 'deflate-raw';
  /** Allow a codec the database's own dialect cannot read (refused with LEVEL_INVALID_ARGUMENT
   * otherwise). Default: false. */
  allowForeignCodec?: boolean;
  cacheSize?: number;
  writeBufferSize?: number;
  blockSize?: number;
  /** Keys between restart points in a data block (default 16). */
  blockRestartInterval?: number;
  maxFileSize?: number;
  bloomBitsPerKey?: number;
  maxOpenFiles?: number;
  /** Scans hand runs of compressed blocks to this many decode workers (default: cores - 1;
   * 0: the engine decodes every block itself). */
  decodeWorkers?: number;
}

/** Engine options from the package's open options: the JS-only fields dropped, and a
 * missing database created unless the open is read-only or says otherwise. */
export function engineOptions(
  options: EngineOptions & {
    storage?: unknown;
    files?: unknown;
    fileCacheBytes?: unknown;
    host?: unknown;
    keyEncoding?: unknown;
    valueEncoding?: unknown;
    passive?: unknown;
  },
): EngineOptions {
  const { storage: _s, files: _f, fileCacheBytes: _c, host: _h, keyEncoding: _k, valueEncoding: _v, passive: _p, ...rest } = options;
  return { createIfMissing: options.readOnly !== true, ...rest } as EngineOptions;
}

/** The engine's iterator spec from range options already encoded as strings or bytes. */
export function iteratorSpec(options: Record<string, unknown>, snapshot: number | undefined): IteratorSpec {
  const spec: IteratorSpec = {};
  for (const bound of ['gt', 'gte', 'lt', 'lte'] as const) {
    const v = options[bound];
    if (v !== undefined && v !== null) spec[bound] = toBytes(v, bound);
  }
  if (options.reverse !== undefined) spec.reverse = options.reverse === true;
  const limit = options.limit;
  if (limit !== undefined && limit !== null) {
    if (typeof limit !== 'number' || Number.isNaN(limit)) throw invalidArgument('limit must be a number');
    if (limit >= 0 && limit !== Infinity) spec.limit = Math.floor(limit);
  }
  if (snapshot !== undefined) spec.snapshot = snapshot;
  if (options.fillCache === false) spec.fillCache = false;
  return spec;
}

export interface IteratorSpec {
  gt?: Uint8Array;
  gte?: Uint8Array;
  lt?: Uint8Array;
  lte?: Uint8Array;
  reverse?: boolean;
  limit?: number;
  snapshot?: number;
  fillCache?: boolean;
}

/** A storage host for one database, with an optional async step run before each operation
 * (OPFS opens file handles ahead of need there), one run after each (IndexedDB commits what
 * the operation made durable before its caller hears), and a release when it closes. */
export interface HostLease {
  host: StorageHost | undefined;
  prepare?(): Promise<void>;
  /** True when `prepare()` would do nothing now (the call may skip it and run at once). */
  prepared?(): boolean;
  settle?(): Promise<void>;
  release?(): Promise<void> | void;
  /** The engine stopped (see `Engine.stopped`): let go of what its dead instance held in this
   * storage (a caller's own Node host: its descriptors and locks). */
  abandon?(): void;
  /** A file of the storage as a Blob that stays readable after the release (browser stores:
   * an OPFS file's own `File`, without copying it into memory). */
  blob?(path: string): Promise<Blob>;
  /** Removes a folder and everything in it (hosts with real folders: node:fs). */
  removeDir?(path: string): void;
  /** Removes the whole store, after the release (a browser store that held only an export's
   * temporary files). */
  destroy?(): Promise<void>;
}

export type HostFactory = (kind: StorageKind, location: string, extra: unknown) => Promise<HostLease> | HostLease;

interface OpenDb {
  db: WasmDatabase;
  lease: HostLease;
  decodeWorkers: number;
  cursors: Set<number>;
  idle: ReturnType<typeof setTimeout> | undefined;
  /** Streamed exports running (idle compaction waits: the export copies the files as they
   * were when it began). */
  exports: Set<number>;
}

interface RunningExport {
  exp: WasmExport;
  lease: HostLease;
  db: number;
  scratch: ExportScratch;
}

/** Handles of databases, cursors and exports, counted across every engine of this JS realm:
 * a worker that replaces a stopped engine never hands out a handle the page still holds. */
let nextHandle = 1;

/** Every operation a link may call (local-link.ts dispatches these names, nothing else). */
export const ENGINE_OPS: ReadonlySet<string> = new Set([
  'open',
  'get',
  'getMany',
  'put',
  'del',
  'write',
  'iterator',
  'nextv',
  'seek',
  'closeIterator',
  'snapshot',
  'releaseSnapshot',
  'scan',
  'decodeStats',
  'terminateDecodeWorker',
  'compactRange',
  'approximateSize',
  'flush',
  'properties',
  'sstables',
  'recovery',
  'dialect',
  'close',
  'repairDb',
  'destroyDb',
  'openWorld',
  'worldSummary',
  'chunkList',
  'chunkSplitKeys',
  'chunkListPart',
  'joinChunkParts',
  'contentIdentity',
  'reliefSamples',
  'setReliefSamples',
  'renderMap',
  'surfaceTiles',
  'chunkRecords',
  'recordNbt',
  'deleteChunks',
  'pruneChunks',
  'applyEdits',
  'entities',
  'deleteEntities',
  'deleteEntity',
  'recordSnbt',
  'setRecordSnbt',
  'levelDatSnbt',
  'setLevelDatSnbt',
  'snbtTree',
  'exportMcworld',
  'exportBegin',
  'exportStep',
  'exportCancel',
  'exportFinish',
  'importMcworld',
  'dropMemStore',
  'memoryBytes',
]);

/** Operations that still answer after the engine stopped: releasing what the caller holds
 * (its databases, cursors, snapshots and exports are already gone: they do nothing), and the
 * memory figure. */
const AFTER_STOP: ReadonlySet<string> = new Set(['close', 'closeIterator', 'releaseSnapshot', 'exportCancel', 'memoryBytes']);

export class Engine {
  private readonly dbs = new Map<number, OpenDb>();
  private readonly cursors = new Map<number, { cursor: WasmCursor; db: number }>();
  private readonly exports = new Map<number, RunningExport>();
  /** Handles below this one were handed out by engines before this one (see `nextHandle`). */
  private readonly firstHandle = nextHandle;

  private pool: DecodePool | undefined;

  /** The module behind the instance fence (instance-fence.ts): every wasm object this engine
   * holds came through it, so after the stop none of them reaches the dead instance. */
  private readonly wasm: WasmModule;

  constructor(
    module: WasmModule,
    private readonly hosts: HostFactory,
    /** Starts decode workers (Node worker_threads, browser workers); none: scans decode inline. */
    private readonly decoders?: (size: number) => DecodePool,
    /** Decode workers of a database whose options name none (cores - 1 where `decoders`). */
    private readonly defaultDecodeWorkers = 0,
    /** Called once if the engine stops (see `stopped`): the host lets go of what the dead
     * instance held (Node: its file descriptors and locks), so a new engine can open the
     * same databases. */
    private readonly onStop?: () => void,
    /** The stopped engine this one replaces: calls with its handles fail with its error. */
    private readonly predecessor?: Engine,
  ) {
    const gate = { stopped: () => this.stopped, failure: (e: unknown) => this.failure(e) };
    const zip = module.zipFiles;
    this.wasm = {
      Database: fence(module.Database, gate, new Set(['memoryBytes'])),
      zipFiles: zip ? fence({ zip }, gate).zip : undefined,
    };
    // Every operation goes through `guard`: a trap inside the wasm instance (`unreachable`
    // after an allocation it could not make, or a bug) stops the engine instead of leaving
    // later calls to run on whatever state the trap left behind.
    for (const op of ENGINE_OPS) {
      const method = (Engine.prototype as unknown as Record<string, unknown>)[op];
      if (typeof method !== 'function') throw new Error(`Engine has no operation ${op}`);
      const always = AFTER_STOP.has(op);
      Object.defineProperty(this, op, { value: (...args: unknown[]) => this.guard(method as (...a: unknown[]) => unknown, args, always) });
    }
  }

  /** Set once a call into the wasm instance trapped: the instance's memory may hold a half-made
   * change and locks never released, so no later call may run in it. Its databases are dropped
   * (writes acknowledged before the trap are in their logs: an open in a new engine recovers
   * them), and every call fails with this error. */
  stopped: StrataError | undefined;

  private guard(method: (...a: unknown[]) => unknown, args: unknown[], always: boolean): unknown {
    if (this.stopped && !always) throw this.stopped;
    let value: unknown;
    try {
      value = method.apply(this, args);
    } catch (e) {
      throw this.failure(e);
    }
    if (value instanceof Promise) return value.catch((e: unknown) => Promise.reject(this.failure(e)));
    return value;
  }

  /** Throws `stopped` once the engine stopped: called before a database or an export is
   * registered after an await (a stopped engine keeps none: `stop` released what it had). The
   * instance itself needs no check here: the fence refuses every call into it after the stop. */
  private live(): void {
    if (this.stopped) throw this.stopped;
  }

  /** `e` as the error to report: a wasm trap stops the engine and becomes `stopped`. */
  private failure(e: unknown): unknown {
    if (!(e instanceof WebAssembly.RuntimeError)) return e;
    this.stop(e);
    return this.stopped;
  }

  private stop(trap: WebAssembly.RuntimeError): void {
    if (this.stopped) return;
    this.stopped = new StrataError(
      'LEVEL_IO_ERROR',
      `Strata's WebAssembly engine stopped (${trap.message}): out of memory, or a bug in Strata. Its databases were dropped without closing (in-memory ones with it); writes acknowledged before this are in their logs, and an open (in a new engine) recovers them`,
      { kind: 'EngineStopped', cause: trap },
    );
    const leases = [...this.dbs.values()].map((x) => x.lease);
    for (const x of this.exports.values()) leases.push(x.lease);
    for (const entry of this.dbs.values()) if (entry.idle !== undefined) clearTimeout(entry.idle);
    this.dbs.clear();
    this.cursors.clear();
    this.exports.clear();
    this.pool?.close();
    this.pool = undefined;
    // Browser stores close their handles here (the instance never will).
    for (const lease of leases) {
      try {
        lease.abandon?.();
      } catch {
        // a caller's host: nothing more to do for it
      }
      void Promise.resolve(lease.release?.()).catch(() => {});
    }
    // The host's own clean-up (releasing the dead instance's files, resetting the instance):
    // its failure must not replace the stop error, nor escape from a path with no caller
    // (idle maintenance). The home retries a reset that failed before its next engine.
    try {
      this.onStop?.();
    } catch {
      // retried by the home (node.ts, worker-engine.ts) before a new engine starts
    }
  }

  /** The decode workers, started on the first scan that wants them (shared by databases);
   * a pass waits for `started`. */
  decodePool(size: number): DecodePool | undefined {
    if (!this.decoders || size <= 0) return undefined;
    // A pool none of whose workers ever started is not tried again: scans decode alone
    // rather than wait out the start bound every time.
    if (this.pool?.neverStarted) return undefined;
    if (!this.pool || this.pool.live === 0) {
      this.pool?.close();
      this.pool = this.decoders(size);
    }
    return this.pool;
  }

  /** Opens a database; the host is created (and for OPFS, prepared) first. */
  open(kind: StorageKind, location: string, options: EngineOptions, extra?: unknown): Promise<number> {
    const o = this.withDecoders(options);
    return this.openWith(kind, location, extra, o.decodeWorkers, (host) => this.wasm.Database.open(host, location, o));
  }

  /** Opens a Bedrock world folder (level.dat + db/, or a bare db folder) read-only. */
  openWorld(kind: StorageKind, location: string, options: EngineOptions, extra?: unknown): Promise<number> {
    const o = this.withDecoders(options);
    return this.openWith(kind, location, extra, o.decodeWorkers, (host) => this.wasm.Database.openWorld(host, location, o));
  }

  /** `options` with `decodeWorkers` settled: 0 where this engine cannot start workers. */
  private withDecoders(options: EngineOptions): EngineOptions & { decodeWorkers: number } {
    const n = options.decodeWorkers ?? this.defaultDecodeWorkers;
    if (!Number.isInteger(n) || n < 0 || n > 64) throw invalidArgument('decodeWorkers must be an integer from 0 to 64');
    return { ...options, decodeWorkers: this.decoders ? n : 0 };
  }

  private async openWith(
    kind: StorageKind,
    location: string,
    extra: unknown,
    decodeWorkers: number,
    opener: (host: StorageHost | undefined) => WasmDatabase,
  ): Promise<number> {
    const lease = await this.hosts(kind, location, extra);
    try {
      await lease.prepare?.();
      const db = opener(lease.host);
      try {
        await lease.settle?.();
      } catch (e) {
        try {
          db.close();
        } catch {
          // the settle's error is the one to report
        } finally {
          db.free();
        }
        throw e;
      }
      this.live();
      const handle = nextHandle++;
      this.dbs.set(handle, { db, lease, decodeWorkers, cursors: new Set(), idle: undefined, exports: new Set() });
      this.scheduleIdle(handle);
      return handle;
    } catch (e) {
      await lease.release?.();
      throw e;
    }
  }

  /** The storage lease of database `handle` (undefined for other handles, e.g. cursors). */
  lease(handle: number): HostLease | undefined {
    return this.dbs.get(handle)?.lease;
  }

  private entry(handle: number): OpenDb {
    const entry = this.dbs.get(handle);
    if (!entry) throw this.inherited(handle) ?? new StrataError('LEVEL_DATABASE_NOT_OPEN', 'Database is not open');
    return entry;
  }

  /** For a handle an engine before this one handed out: the error that stopped it. */
  private inherited(handle: number): StrataError | undefined {
    return handle < this.firstHandle ? this.predecessor?.stopped : undefined;
  }

  private db(handle: number): WasmDatabase {
    return this.entry(handle).db;
  }

  /** The database for a call that may write to its files: refused while a streamed export of
   * it is copying them (a write can flush or compact, deleting and reusing files the copy has
   * yet to read: the zip would hold a mix). After the copy the export reads its own copy. */
  private writableDb(handle: number, dryRun = false): WasmDatabase {
    const entry = this.entry(handle);
    if (!dryRun) {
      for (const eh of entry.exports) {
        if (this.exports.get(eh)?.exp.progress().phase === 'copy') {
          throw new StrataError('LEVEL_LOCKED', 'the world is being copied for a .mcworld export: write again once the export has copied it (or cancel the export)');
        }
      }
    }
    return entry.db;
  }

  private cursor(handle: number): WasmCursor {
    const c = this.cursors.get(handle);
    if (!c) throw this.inherited(handle) ?? new StrataError('LEVEL_ITERATOR_NOT_OPEN', 'Iterator is not open');
    return c.cursor;
  }

  get(h: number, key: Uint8Array, snapshot: number | undefined, fillCache: boolean): Uint8Array | undefined {
    return this.db(h).get(key, snapshot, fillCache);
  }

  getMany(h: number, keys: Uint8Array, snapshot: number | undefined): Uint8Array {
    return this.db(h).getMany(keys, snapshot);
  }

  put(h: number, key: Uint8Array, value: Uint8Array, sync: boolean): void {
    this.writableDb(h).put(key, value, sync);
    this.scheduleIdle(h);
  }

  del(h: number, key: Uint8Array, sync: boolean): void {
    this.writableDb(h).del(key, sync);
    this.scheduleIdle(h);
  }

  write(h: number, ops: Uint8Array, sync: boolean): void {
    this.writableDb(h).write(ops, sync);
    this.scheduleIdle(h);
  }

  iterator(h: number, spec: IteratorSpec): number {
    const entry = this.entry(h);
    const cursor = entry.db.iterator(spec);
    const handle = nextHandle++;
    this.cursors.set(handle, { cursor, db: h });
    entry.cursors.add(handle);
    return handle;
  }

  nextv(it: number, n: number, maxBytes: number, keys: boolean, values: boolean): Uint8Array {
    return this.cursor(it).nextv(n, maxBytes, keys, values);
  }

  seek(it: number, target: Uint8Array): void {
    this.cursor(it).seek(target);
  }

  closeIterator(it: number): void {
    const c = this.cursors.get(it);
    if (!c) return;
    this.cursors.delete(it);
    this.dbs.get(c.db)?.cursors.delete(it);
    c.cursor.free();
  }

  snapshot(h: number): number {
    return this.db(h).snapshot();
  }

  releaseSnapshot(h: number, id: number): void {
    this.dbs.get(h)?.db.releaseSnapshot(id);
  }

  /** Every entry's figures; with decode workers, a scan in steps whose runs of compressed
   * blocks the workers inflate (the same figures). */
  scan(h: number): number[] | Promise<number[]> {
    const entry = this.entry(h);
    const pool = this.decodePool(entry.decodeWorkers);
    if (!pool) return Array.from(entry.db.scan());
    // The pass begins once the pool started (decode-pool.ts: no worker starting while this
    // thread reads storage synchronously).
    return pool.started.then(() => scanWithDecoders(entry.db, pool, () => this.dbs.get(h) === entry)).catch((e: unknown) => Promise.reject(this.stopped ?? e));
  }

  /** Readahead counters of database `h` (null without decode workers) and the pool's. */
  decodeStats(h: number): string {
    return JSON.stringify({ readahead: JSON.parse(this.db(h).readaheadStats()) as unknown, pool: this.pool ? { live: this.pool.live, ...this.pool.stats } : null });
  }

  /** Terminates decode worker `i` (tests: a worker killed mid-scan). */
  terminateDecodeWorker(_h: number, i: number): boolean {
    if (!this.pool) return false;
    this.pool.terminateWorker(i);
    return true;
  }

  compactRange(h: number, start: Uint8Array | undefined, end: Uint8Array | undefined): void {
    this.writableDb(h).compactRange(start, end);
  }

  /** Approximate table bytes of the keys in `[start, end)` (flushed tables only). */
  approximateSize(h: number, start: Uint8Array, end: Uint8Array): number {
    return this.db(h).approximateSize(start, end);
  }

  flush(h: number): void {
    this.writableDb(h).flush();
  }

  /** Repairs the closed database at `location` (LevelDB's RepairDB); the report as JSON. */
  repairDb(kind: StorageKind, location: string, options: EngineOptions, extra?: unknown): Promise<string> {
    return this.withStorage(kind, location, extra, (host) => this.wasm.Database.repair(host, location, options));
  }

  /** Deletes LevelDB's files of the closed database at `location` (LevelDB's DestroyDB: its
   * LOCK taken first; other files are left). JSON `{removed, remaining}`: `remaining` counts
   * what is left in the folder, which the caller removes when it is 0. */
  destroyDb(kind: StorageKind, location: string, extra?: unknown): Promise<string> {
    return this.withStorage(kind, location, extra, (host) => this.wasm.Database.destroy(host, location));
  }

  /** Runs `fn` on the storage of `location` without opening a database there. */
  private async withStorage<T>(kind: StorageKind, location: string, extra: unknown, fn: (host: StorageHost | undefined) => T): Promise<T> {
    const lease = await this.hosts(kind, location, extra);
    try {
      await lease.prepare?.();
      const value = fn(lease.host);
      await lease.settle?.();
      return value;
    } finally {
      await lease.release?.();
    }
  }

  /** The engine's figures plus `iterators`: this database's cursors not yet closed. */
  properties(h: number): string {
    const entry = this.entry(h);
    const p = JSON.parse(entry.db.properties()) as Record<string, unknown>;
    return JSON.stringify({ ...p, iterators: entry.cursors.size });
  }

  /** The live tables per level as LevelDB's `leveldb.sstables` property prints them. */
  sstables(h: number): string {
    return this.db(h).sstables();
  }

  recovery(h: number): string {
    return this.db(h).recovery();
  }

  dialect(h: number): string {
    return this.db(h).dialect();
  }

  worldSummary(h: number): string {
    return this.db(h).worldSummary();
  }

  /** The chunks of `dimension`; with relief samples and decode workers, a pass in steps whose
   * runs of blocks the workers inflate and hand back with only the records it reads (the
   * same list and samples). */
  chunkList(h: number, dimension: number, reliefSamples = false): Int32Array | Promise<Int32Array> {
    const entry = this.entry(h);
    const pool = reliefSamples === true ? this.decodePool(entry.decodeWorkers) : undefined;
    if (!pool) return entry.db.chunkList(dimension, reliefSamples === true);
    return pool.started.then(() => chunkListWithDecoders(entry.db, dimension, pool, () => this.dbs.get(h) === entry)).catch((e: unknown) => Promise.reject(this.stopped ?? e));
  }

  chunkSplitKeys(h: number, parts: number, minBytes: number): Uint8Array {
    return this.db(h).chunkSplitKeys(parts, minBytes);
  }

  chunkListPart(h: number, dimension: number, start?: Uint8Array, end?: Uint8Array): Uint8Array {
    return this.db(h).chunkListPart(dimension, start, end);
  }

  joinChunkParts(h: number, dimension: number, parts: Uint8Array): Int32Array {
    return this.db(h).joinChunkParts(dimension, parts);
  }

  contentIdentity(h: number): Uint8Array {
    return this.db(h).contentIdentity();
  }

  reliefSamples(h: number, dimension: number): Uint8Array | undefined {
    return this.db(h).reliefSamples(dimension);
  }

  setReliefSamples(h: number, packed: Uint8Array): void {
    this.db(h).setReliefSamples(packed);
  }

  renderMap(h: number, dimension: number, pixelsPerChunk: number, layer?: string, y?: number, chunksPerPixel?: number, region?: Int32Array, chunks?: Int32Array): WasmMapImage {
    return this.db(h).renderMap(dimension, pixelsPerChunk, layer, y, chunksPerPixel, region, chunks);
  }

  surfaceTiles(h: number, dimension: number, coords: Int32Array): Uint8Array {
    return this.db(h).surfaceTiles(dimension, coords);
  }

  chunkRecords(h: number, dimension: number, x: number, z: number): string {
    return this.db(h).chunkRecords(dimension, x, z);
  }

  recordNbt(h: number, key: Uint8Array): string | undefined {
    return this.db(h).recordNbt(key);
  }

  deleteChunks(h: number, dimension: number, areas: string): string {
    return this.writableDb(h).deleteChunks(dimension, areas);
  }

  pruneChunks(h: number, dimension: number, keep: string, allowEmpty: boolean): string {
    return this.writableDb(h).pruneChunks(dimension, keep, allowEmpty);
  }

  applyEdits(h: number, text: string, dryRun: boolean): string {
    return this.writableDb(h, dryRun).applyEdits(text, dryRun);
  }

  entities(h: number, dimension: number): string {
    return this.db(h).entities(dimension);
  }

  deleteEntities(h: number, dimension: number, areas: string, identifier: string | undefined, dryRun: boolean): string {
    return this.writableDb(h, dryRun).deleteEntities(dimension, areas, identifier, dryRun);
  }

  deleteEntity(h: number, dimension: number, key: Uint8Array, root: number): string {
    return this.writableDb(h).deleteEntity(dimension, key, root);
  }

  recordSnbt(h: number, key: Uint8Array): string | undefined {
    return this.db(h).recordSnbt(key);
  }

  setRecordSnbt(h: number, key: Uint8Array, text: string): string {
    return this.writableDb(h).setRecordSnbt(key, text);
  }

  levelDatSnbt(h: number): string {
    return this.db(h).levelDatSnbt();
  }

  setLevelDatSnbt(h: number, text: string): string {
    return this.writableDb(h).setLevelDatSnbt(text);
  }

  exportMcworld(h: number): Uint8Array {
    return this.db(h).exportMcworld();
  }

  /** Starts a streamed export of world `h` through `scratch` (its storage opened here; a
   * leftover of a crashed export there removed first). Returns the export's handle. */
  async exportBegin(h: number, scratch: ExportScratch, extra?: unknown): Promise<number> {
    const entry = this.entry(h);
    if (typeof scratch?.location !== 'string' || typeof scratch.dir !== 'string' || scratch.dir === '') throw invalidArgument('export: scratch needs a location and a dir');
    const lease = await this.hosts(scratch.kind, scratch.location, extra);
    let exp: WasmExport;
    try {
      await lease.prepare?.();
      exp = entry.db.exportBegin(lease.host, scratch.dir);
      await lease.settle?.();
    } catch (e) {
      await lease.release?.();
      throw e;
    }
    if (this.dbs.get(h) !== entry) {
      // The world was closed meanwhile, or the engine stopped (then `cancel` throws its error).
      try {
        exp.cancel();
      } finally {
        exp.free();
        await lease.release?.();
      }
      throw new StrataError('LEVEL_DATABASE_NOT_OPEN', 'World is not open');
    }
    const handle = nextHandle++;
    this.exports.set(handle, { exp, lease, db: h, scratch });
    entry.exports.add(handle);
    return handle;
  }

  private runningExport(eh: number): RunningExport {
    const x = this.exports.get(eh);
    if (!x) throw this.inherited(eh) ?? new StrataError('LEVEL_DATABASE_NOT_OPEN', 'the export is not running (finished, cancelled or failed, or its world was closed)');
    return x;
  }

  /** One step of about `budget` bytes; the progress after it, with `finished`. A failure ends
   * the export (its temporary files are removed) and rejects. */
  async exportStep(eh: number, budget: number): Promise<ExportProgress & { finished: boolean }> {
    const x = this.runningExport(eh);
    try {
      await x.lease.prepare?.();
      const finished = x.exp.step(budget);
      await x.lease.settle?.();
      return { ...x.exp.progress(), finished };
    } catch (e) {
      await this.endExport(eh, false);
      throw e;
    }
  }

  /** Stops export `eh` and removes its temporary files. Idempotent. */
  async exportCancel(eh: number): Promise<void> {
    if (!this.exports.has(eh)) return;
    await this.endExport(eh, false);
  }

  /** A finished export: with `to`, the zip is moved there (same storage) and the temporary
   * folder removed; without, the zip stays in the scratch storage and comes back as a Blob of
   * it (the caller removes the scratch store later). */
  async exportFinish(eh: number, to?: string): Promise<{ files: number; bytes: number; size: number; path?: string; file?: Blob; store: StorageKind }> {
    const x = this.runningExport(eh);
    try {
      const p = x.exp.progress();
      if (p.phase !== 'done') throw invalidArgument('export: the zip is not complete yet');
      await x.lease.prepare?.();
      if (to !== undefined) {
        x.exp.finishTo(to);
        await x.lease.settle?.();
        const size = x.lease.host!.fileSize(to);
        x.lease.removeDir?.(x.scratch.dir);
        await this.endExport(eh, true);
        return { files: p.files, bytes: p.bytes, size, path: to, store: x.scratch.kind };
      }
      if (!x.lease.blob) throw invalidArgument(`export: storage '${x.scratch.kind}' cannot hand a file over: give a path`);
      const zipPath = x.exp.zipPath();
      await x.lease.settle?.();
      const blob = await x.lease.blob(zipPath);
      await this.endExport(eh, true);
      return { files: p.files, bytes: p.bytes, size: blob.size, file: blob, store: x.scratch.kind };
    } catch (e) {
      await this.endExport(eh, false);
      throw e;
    }
  }

  /** Frees export `eh` (cancelled first unless `keep`: then the zip stays) and its storage. */
  private async endExport(eh: number, keep: boolean): Promise<void> {
    const x = this.exports.get(eh);
    if (!x) return;
    this.exports.delete(eh);
    try {
      if (!keep) {
        await x.lease.prepare?.().catch(() => {});
        try {
          x.exp.cancel();
          await x.lease.settle?.();
        } catch {
          // the export's own error is the one reported; the next export removes what is left
        }
        try {
          x.lease.removeDir?.(x.scratch.dir);
        } catch {
          // as above
        }
      }
    } finally {
      x.exp.free();
      await x.lease.release?.();
      if (!keep) await x.lease.destroy?.().catch(() => {});
      const entry = this.dbs.get(x.db);
      if (entry) {
        entry.exports.delete(eh);
        this.scheduleIdle(x.db);
      }
    }
  }

  /** Unpacks a `.mcworld` into the in-memory store `name`; JSON `{rootInZip, files, bytes}`. */
  importMcworld(zip: Uint8Array, name: string): string {
    return this.wasm.Database.importMcworld(zip, name);
  }

  /** Zips files in the engine's instance (a browser folder export; not a link operation). */
  zipFiles(names: string[], datas: Uint8Array[]): Uint8Array {
    if (!this.wasm.zipFiles) throw new Error('this build of the engine has no zip');
    return this.wasm.zipFiles(names, datas);
  }

  /** Bytes of the engine's wasm memory (its peak: wasm memory never shrinks). */
  memoryBytes(): number {
    return this.wasm.Database.memoryBytes();
  }

  dropMemStore(name: string): boolean {
    return this.wasm.Database.dropMemStore(name);
  }

  /** SNBT text as tree JSON (the world handle only routes the call; the text is parsed alone). */
  snbtTree(h: number, text: string): string {
    this.db(h);
    return this.wasm.Database.snbtTree(text);
  }

  async close(h: number): Promise<void> {
    const entry = this.dbs.get(h);
    if (!entry) return;
    this.dbs.delete(h);
    if (entry.idle !== undefined) clearTimeout(entry.idle);
    for (const it of entry.cursors) this.closeIterator(it);
    for (const eh of entry.exports) await this.endExport(eh, false);
    if (this.stopped) {
      // Stopped meanwhile: this database was no longer in `dbs` for `stop` to release.
      await entry.lease.release?.();
      return;
    }
    try {
      entry.db.close();
    } finally {
      entry.db.free();
      await entry.lease.release?.();
    }
  }

  /** Runs one compaction step soon if work is pending, and keeps going while the engine is
   * otherwise idle. */
  private scheduleIdle(h: number): void {
    const entry = this.dbs.get(h);
    if (!entry || entry.idle !== undefined || entry.exports.size > 0) return;
    entry.idle = setTimeout(() => {
      entry.idle = undefined;
      if (!this.dbs.has(h)) return;
      void (async () => {
        try {
          await entry.lease.prepare?.();
          if (this.stopped || !this.dbs.has(h) || entry.exports.size > 0) return;
          if (entry.db.maintenance()) this.scheduleIdle(h);
        } catch (e) {
          // A trap stops the engine; any other error is kept by the engine and reported by
          // the next write.
          this.failure(e);
        }
      })();
    }, 0);
    const t = entry.idle as { unref?: () => void };
    t.unref?.();
  }
}
