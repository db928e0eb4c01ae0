// The browser entry point: the same `Db` API, with the engine in a dedicated worker (OPFS
// sync access handles and FileReaderSync exist only there).
// - Called from a page (or any context that is not a dedicated worker), the engine runs in the
//   package's own worker and calls become messages; byte arguments and results are
//   transferred. The calls a page makes in one turn of its event loop (a burst of promises not
//   awaited one by one) cross in ONE message, and their results come back in one; order and
//   error semantics are those of separate calls. One worker serves every database of the page
//   and lives as long as the page (in-memory databases live in it).
// - Called from a dedicated worker, the engine runs in that worker itself (no hop per call),
//   unless `engine: 'worker'` asks for the package's worker. `engine: 'inline'` elsewhere is an
//   error (a page's main thread has no OPFS sync access handles).
// - Databases and worlds in OPFS or IndexedDB are shared with the origin's other tabs
//   (tabs.ts); a shared world's finished export is discarded by this context's own engine,
//   so `discard()` works after the world is closed.

import { Db, type Link, type OpenOptions } from './db.js';
import { engineOptions } from './engine.js';
import { StrataError, invalidArgument, toErrorShape, toStrataError, type ErrorShape } from './errors.js';
import { canShareTabs, TabLink } from './tabs.js';
import { filesExtra, openMcworldVia, openWorldVia, World, type WorldOpenOptions } from './world.js';
import { snapshotOpfs, type Durability } from './opfs-host.js';

export type { Durability };

export * from './db.js';
export { StrataError, type ErrorCode } from './errors.js';
export type { BatchOp, Encoding, Input } from './codec.js';
export type { EngineOptions, StorageKind } from './engine.js';
export * from './world.js';
export * from './snbt-tree.js';

interface Reply {
  id: number;
  ok: boolean;
  value?: unknown;
  error?: ErrorShape;
}

interface Request {
  id: number;
  op: string;
  args: unknown[];
}

class WorkerLink implements Link {
  private readonly pending = new Map<number, { resolve(v: unknown): void; reject(e: unknown): void }>();
  private nextId = 1;
  private dead: StrataError | undefined;
  users = 0;

  /** Requests made in this turn of the event loop, sent together by `flush`. */
  private outbox: Array<{ req: Request; transfer: ArrayBuffer[] }> = [];
  /** Messages sent, and requests carried by them (tests and the benchmark page read these). */
  readonly stats = { messages: 0, requests: 0 };

  /** Decode workers this page started for the worker's engine (ended with it). */
  private readonly decoders: DecodeWorkers[] = [];

  constructor(readonly worker: Worker) {
    worker.onmessage = (ev: MessageEvent<Reply | { batch: Reply[] } | { decoders: number }>) => {
      if ('decoders' in ev.data) {
        this.startDecoders(ev.data.decoders);
        return;
      }
      if ('batch' in ev.data) for (const r of ev.data.batch) this.settle(r);
      else this.settle(ev.data);
    };
    worker.onerror = (ev: ErrorEvent) => {
      const err = new StrataError('LEVEL_IO_ERROR', `worker failed: ${ev.message}`);
      for (const p of this.pending.values()) p.reject(err);
      this.pending.clear();
    };
  }

  /** Decode workers sent to the worker so far (it numbers their ports in the same order). */
  private decodersSent = 0;

  /** The engine wants `count` decode workers: started here, not nested in its worker (see
   * worker-engine.ts suppliedPorts). Every request is answered, with the ports of those that
   * started and the count that could not; a worker whose script then fails is reported by
   * its number (`decoderGone`). */
  private startDecoders(count: number): void {
    if (this.dead) return;
    const first = this.decodersSent;
    let d: DecodeWorkers | undefined;
    try {
      d = startDecodeWorkers(count, (i, why) => {
        if (!this.dead) this.worker.postMessage({ decoderGone: first + i, why });
      });
    } catch {
      d = undefined;
    }
    const ports = d?.ports ?? [];
    this.decodersSent += ports.length;
    if (d) this.decoders.push(d);
    try {
      this.worker.postMessage({ decoderPorts: ports, failed: count - ports.length }, ports);
    } catch {
      d?.terminate();
    }
  }

  private settle(r: Reply): void {
    const p = this.pending.get(r.id);
    if (!p) return;
    this.pending.delete(r.id);
    if (r.ok) p.resolve(r.value);
    else p.reject(toStrataError(r.error));
  }

  call(op: string, args: unknown[], transfer: ArrayBuffer[] = []): Promise<unknown> {
    if (this.dead) return Promise.reject(this.dead);
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      if (this.outbox.length === 0) queueMicrotask(() => this.flush());
      this.outbox.push({ req: { id, op, args }, transfer });
    });
  }

  /** Sends the requests of this turn: one message, whatever their number. */
  private flush(): void {
    const out = this.outbox;
    this.outbox = [];
    if (out.length === 0 || this.dead) return;
    this.stats.messages += 1;
    this.stats.requests += out.length;
    if (out.length === 1) {
      this.send(out[0]!.req, out[0]!.transfer);
      return;
    }
    const transfer = [...new Set(out.flatMap((o) => o.transfer))];
    try {
      this.worker.postMessage({ batch: out.map((o) => o.req) }, transfer);
    } catch {
      // Not cloneable (a caller's bad argument): nothing was sent; each request goes alone,
      // so only the bad one fails, as it would have without coalescing.
      for (const o of out) this.send(o.req, o.transfer);
    }
  }

  private send(req: Request, transfer: ArrayBuffer[]): void {
    try {
      this.worker.postMessage(req, transfer);
    } catch (e) {
      this.settle({ id: req.id, ok: false, error: { code: 'LEVEL_INVALID_ARGUMENT', message: `cannot send ${req.op} to the engine's worker: ${(e as Error)?.message ?? e}` } });
    }
  }

  /** Ends the worker at once, even mid-call; pending and later calls reject with `err`. */
  terminate(err: StrataError): void {
    this.worker.terminate();
    for (const d of this.decoders.splice(0)) d.terminate();
    this.dead = err;
    for (const p of this.pending.values()) p.reject(err);
    this.pending.clear();
  }

  release(): void {
    // The worker stays up for the page's life: in-memory databases live in it.
    this.users -= 1;
  }
}

/** The engine in the calling dedicated worker itself: each call runs there, no message. */
class InlineLink implements Link {
  users = 0;
  constructor(private readonly runner: { run(op: string, args: unknown[]): Promise<unknown> }) {}

  call(op: string, args: unknown[]): Promise<unknown> {
    // The same errors as through the package's worker (which sends their shape).
    return this.runner.run(op, args).catch((e: unknown) => {
      throw toStrataError(toErrorShape(e));
    });
  }

  release(): void {
    this.users -= 1;
  }
}

/** Where the engine runs: `auto` (default) is `inline` in a dedicated worker, `worker` elsewhere. */
export type EnginePlacement = 'auto' | 'inline' | 'worker';

let shared: WorkerLink | undefined;
let inline: Promise<InlineLink> | undefined;

function inDedicatedWorker(): boolean {
  const g = globalThis as unknown as { DedicatedWorkerGlobalScope?: abstract new () => unknown };
  return typeof g.DedicatedWorkerGlobalScope === 'function' && globalThis instanceof g.DedicatedWorkerGlobalScope;
}

function workerLink(): WorkerLink {
  shared ??= new WorkerLink(new Worker(new URL('./worker.js', import.meta.url), { type: 'module', name: 'strata' }));
  return shared;
}

async function link(placement: EnginePlacement = 'auto'): Promise<WorkerLink | InlineLink> {
  if (placement !== 'auto' && placement !== 'inline' && placement !== 'worker') {
    throw invalidArgument("engine must be 'auto', 'inline' or 'worker'");
  }
  const here = inDedicatedWorker();
  if (placement === 'inline' && !here) throw invalidArgument("engine: 'inline' needs a dedicated worker (OPFS sync access handles exist only there)");
  if (placement === 'worker' || !here) return workerLink();
  inline ??= import('./worker-engine.js').then((m) => new InlineLink(new m.WorkerEngine()));
  return inline;
}

/** Decode workers started by `startDecodeWorkers`: the engine's end of each one's channel, to
 * transfer to the dedicated worker that runs the engine (`useDecodeWorkers` there). */
export interface DecodeWorkers {
  readonly ports: MessagePort[];
  /** Ends the workers at once (the engine also closes each one it is done with). */
  terminate(): void;
}

/** Starts `count` decode workers (default: hardware threads - 1, at most 64) from this
 * context (`onError`: told which one failed, its script say), for an
 * engine running inline in a dedicated worker this page started: hand it `ports` (transfer
 * them) and call `useDecodeWorkers(ports)` there before its first scan. Without them such an
 * engine starts its decode workers itself, from its worker; in Firefox, a worker started from
 * a worker can block its parent forever while a WebDriver BiDi session (browser automation)
 * is attached. (Databases in the package's own worker get theirs from the page this way
 * already.) */
export function startDecodeWorkers(count?: number, onError?: (index: number, why: string) => void): DecodeWorkers {
  const cores = (globalThis as { navigator?: { hardwareConcurrency?: number } }).navigator?.hardwareConcurrency ?? 1;
  const n = count ?? Math.min(64, Math.max(0, cores - 1));
  if (!Number.isInteger(n) || n < 0 || n > 64) throw invalidArgument('count must be an integer from 0 to 64');
  const workers: Worker[] = [];
  const ports: MessagePort[] = [];
  for (let i = 0; i < n; i++) {
    const w = new Worker(new URL('./decode-worker.js', import.meta.url), { type: 'module', name: 'strata-decode' });
    w.onerror = (ev) => {
      w.terminate();
      onError?.(i, String(ev.message ?? 'the decode worker failed'));
    };
    const channel = new MessageChannel();
    w.postMessage({ port: channel.port1 }, [channel.port1]);
    workers.push(w);
    ports.push(channel.port2);
  }
  return { ports, terminate: () => workers.forEach((w) => w.terminate()) };
}

/** In a dedicated worker that runs the engine inline: decode workers its page started
 * (`startDecodeWorkers(...).ports`), taken by scans before any worker is started from here. */
export async function useDecodeWorkers(ports: readonly MessagePort[]): Promise<void> {
  const m = await import('./worker-engine.js');
  m.supplyDecodePorts(ports);
}

/** Where databases opened with `engine` (default `auto`) run: `inline` (this dedicated worker)
 * or `worker` (the package's worker); and, for the worker, the messages sent so far and the
 * calls they carried (calls made in one turn share a message). */
export function engineInfo(placement: EnginePlacement = 'auto'): { placement: 'inline' | 'worker'; messages: number; requests: number } {
  const worker = placement === 'worker' || !inDedicatedWorker();
  return worker
    ? { placement: 'worker', messages: shared?.stats.messages ?? 0, requests: shared?.stats.requests ?? 0 }
    : { placement: 'inline', messages: 0, requests: 0 };
}

/** Cancels all engine work of the page: terminates the worker (an engine call is synchronous
 * wasm and cannot be interrupted otherwise) and rejects its pending calls with
 * LEVEL_DATABASE_NOT_OPEN. Every database and world opened before is gone (later calls on them
 * reject the same way; in-memory databases are lost; OPFS handles are released by the browser
 * as the worker dies, which may take a moment: an OPFS open right after can get LEVEL_LOCKED
 * briefly). The next open starts a fresh worker. Returns whether a worker was running. */
export function terminateWorker(reason = 'cancelled'): boolean {
  const l = shared;
  shared = undefined;
  if (!l) return false;
  l.terminate(new StrataError('LEVEL_DATABASE_NOT_OPEN', `the engine's worker was terminated: ${reason}`));
  TabLink.abandonAll(l);
  return true;
}

/** Bytes of the engine's wasm memory in its worker (wasm memory only grows: the peak so far);
 * for measuring what an operation costs. */
export async function engineMemory(options: { engine?: EnginePlacement } = {}): Promise<number> {
  const l = await link(options.engine);
  l.users += 1;
  try {
    return (await l.call('memoryBytes', [])) as number;
  } catch (e) {
    throw toStrataError(e);
  } finally {
    l.release();
  }
}

/** Browser-only open options. */
export interface BrowserOpenOptions extends OpenOptions {
  /** Where the engine runs (default `auto`: in the calling dedicated worker when there is one,
   * otherwise in the package's worker). */
  engine?: EnginePlacement;
  /** OPFS: share the database with the other tabs of this origin that open it (default
   * true where Web Locks and BroadcastChannel exist): one tab runs the engine, the others
   * forward their calls to it (see tabs.ts). `false`: a second tab gets LEVEL_LOCKED. */
  shared?: boolean;
  /** OPFS: most sync access handles open at once (default 200, at least 64; Safari allows
   * about 250 per page). Tables beyond it are read through File snapshots. */
  maxHandles?: number;
  /** OPFS: `default` (every write handed to OPFS before its call resolves: an acknowledged
   * write survives the tab's crash) or `relaxed` (log appends gathered in memory and written
   * when the worker's task ends, at 256 KiB, at a sync, or before another step on the log: much faster
   * where each OPFS write is slow, but the last moments' acknowledged writes can be lost if
   * the tab dies; never reordered; a synced write is written and flushed at once). */
  durability?: Durability;
}

type BrowserStore = 'opfs' | 'idb';
const STORES: ReadonlySet<string> = new Set(['opfs', 'idb']);

/** The storage used when none is named: OPFS where the engine's worker can create sync access
 * handles, IndexedDB otherwise (WebKitGTK, Safari before 15.2, Firefox private windows). */
export async function defaultStorage(options: { engine?: EnginePlacement } = {}): Promise<BrowserStore> {
  const l = await link(options.engine);
  l.users += 1;
  try {
    return (await l.call('defaultStorage', [])) as BrowserStore;
  } catch (e) {
    throw toStrataError(e);
  } finally {
    l.release();
  }
}

/** `storage` as given, or the default one of this browser. */
async function storageOf(storage: string | undefined, placement: EnginePlacement | undefined): Promise<string> {
  return storage ?? defaultStorage({ engine: placement });
}

/** Opens (by default creating) a database. Default storage: OPFS, or IndexedDB where OPFS sync
 * access handles are missing (`db.storage` says which). */
export async function open(location: string, options: BrowserOpenOptions = {}): Promise<Db> {
  if (typeof location !== 'string' || location === '') throw invalidArgument('location must be a non-empty string');
  if (typeof options !== 'object' || options === null) throw invalidArgument('options must be an object');
  if (options.storage === 'host') throw invalidArgument("storage 'host' is only available in Node (a host cannot cross into the worker)");
  const { engine: placement, maxHandles, shared, durability, ...given } = options;
  const kind = (await storageOf(given.storage, placement)) as NonNullable<OpenOptions['storage']>;
  const rest = { ...given, storage: kind };
  if (maxHandles !== undefined && (!Number.isInteger(maxHandles) || maxHandles < 64)) {
    throw invalidArgument('maxHandles must be an integer >= 64');
  }
  if (durability !== undefined && durability !== 'default' && durability !== 'relaxed') {
    throw invalidArgument("durability must be 'default' or 'relaxed'");
  }
  // A picked folder is always read-only.
  const opts = engineOptions(kind === 'files' ? { ...rest, readOnly: true } : rest);
  if (STORES.has(kind) && shared !== false && canShareTabs()) {
    const t = await TabLink.open(kind === 'opfs' ? location : `${kind}:${location}`, async () => {
      const l = await link(placement);
      l.users += 1;
      try {
        const handle = (await l.call('open', [kind, location, opts, { maxHandles, durability }])) as number;
        return { link: l, handle };
      } catch (e) {
        l.release();
        throw toStrataError(e);
      }
    });
    return new Db(t, 0, location, rest);
  }
  const l = await link(placement);
  l.users += 1;
  try {
    const extra = kind === 'opfs' ? { maxHandles, durability } : filesExtra(options);
    const handle = (await l.call('open', [kind, location, opts, extra])) as number;
    return new Db(l, handle, location, rest);
  } catch (e) {
    l.release();
    throw toStrataError(e);
  }
}

/** Sharing across tabs of this context's open databases at `location`: for each, whether it
 * runs the engine now, how many times it took the lead, how many calls it answered for others. */
export function tabInfo(location: string): Array<{ leading: boolean; led: number; served: number; heldForOthers: number }> {
  return [...(TabLink.open_.get(location) ?? []), ...(TabLink.open_.get(`idb:${location}`) ?? [])].map((t) => ({
    leading: t.leading,
    led: t.stats.led,
    served: t.stats.served,
    heldForOthers: t.heldForOthers,
  }));
}

/** Whether `db` (opened shared over OPFS) is the one running the engine for the tabs. */
export function isLeading(db: Db): boolean {
  const l = (db as unknown as { link?: unknown }).link;
  return l instanceof TabLink && l.leading;
}

/** Deletes a database in browser storage (it must be closed; default storage as for `open`). */
export async function destroy(location: string, options: { engine?: EnginePlacement; storage?: BrowserStore } = {}): Promise<void> {
  const kind = await storageOf(options.storage, options.engine);
  const l = await link(options.engine);
  l.users += 1;
  try {
    await l.call('destroy', [location, kind]);
  } catch (e) {
    throw toStrataError(e);
  } finally {
    l.release();
  }
}

/** Copies files (e.g. a world's `db/` folder) into an OPFS database folder, replacing files
 * of the same names; names may hold relative subfolders (`db/CURRENT`, so a whole world
 * folder imports for `openWorld(location, { storage: 'opfs' })`); the database must not be
 * open. Returns the bytes written. */
export async function importIntoOpfs(
  location: string,
  files: ReadonlyArray<{ name: string; data: Uint8Array | Blob }>,
  options: { engine?: EnginePlacement; storage?: BrowserStore } = {},
): Promise<number> {
  if (!Array.isArray(files)) throw invalidArgument('files must be an array');
  const kind = await storageOf(options.storage, options.engine);
  const l = await link(options.engine);
  l.users += 1;
  try {
    return (await l.call('import', [location, files, kind])) as number;
  } catch (e) {
    throw toStrataError(e);
  } finally {
    l.release();
  }
}

/** Gives an OPFS database's files back (it must not be open): a zip of them (tables stored,
 * other files deflated), or, with `{ to }` (a directory handle: a picked folder where the
 * browser allows writing one, or another OPFS folder), the files written into it, returning
 * `{ files, bytes }`. What `importIntoOpfs` put in comes back byte-exact. */
export async function exportFromOpfs(
  location: string,
  options: { to?: FileSystemDirectoryHandle; engine?: EnginePlacement; storage?: BrowserStore } = {},
): Promise<Uint8Array | { files: number; bytes: number }> {
  if (typeof location !== 'string' || location === '') throw invalidArgument('location must be a non-empty string');
  const kind = await storageOf(options.storage, options.engine);
  const l = await link(options.engine);
  l.users += 1;
  try {
    return (await l.call('export', [location, options.to, kind])) as Uint8Array | { files: number; bytes: number };
  } catch (e) {
    throw toStrataError(e);
  } finally {
    l.release();
  }
}

/** The files of database (or world) `location` in OPFS as `File` snapshots (`path`: the
 * engine's path, under `location`), read without opening it and without a lock: while this
 * page's engine holds the database, other workers can open these read-only with
 * `storage: 'files'` (the viewer's map helpers do). Snapshots never change: take them while
 * nothing writes the database (a world open read-only), or a reader may find a file the
 * engine removed since. OPFS only (a store in IndexedDB has no such files). */
export async function opfsFiles(location: string): Promise<Array<{ path: string; file: Blob }>> {
  if (typeof location !== 'string' || location === '') throw invalidArgument('location must be a non-empty string');
  try {
    return await snapshotOpfs(location);
  } catch (e) {
    throw toStrataError(e);
  }
}

/** This context's own engine for a call that belongs to no database (a finished export's
 * `discard()`: the scratch store is removed by whichever engine runs it, once nothing holds it). */
function ownEngine(placement: EnginePlacement | undefined): Link {
  return {
    async call(op, args) {
      const l = await link(placement);
      l.users += 1;
      try {
        return await l.call(op, args);
      } finally {
        l.release();
      }
    },
  };
}

/** Opens the Bedrock world in folder `location` in the worker, read-only unless
 * `{ writable: true }`. Default storage:
 * OPFS; `storage: 'files'` with `files` opens a picked folder in place. */
export async function openWorld(location: string, options: WorldOpenOptions & { engine?: EnginePlacement; shared?: boolean } = {}): Promise<World> {
  const { engine: placement, shared: share, ...given } = options;
  const kind = (await storageOf(given.storage, placement)) as NonNullable<WorldOpenOptions['storage']>;
  const rest = { ...given, storage: kind };
  if (STORES.has(kind) && share !== false && canShareTabs() && typeof location === 'string' && location !== '') {
    // Shared with this origin's other tabs that open the same world the same way (read-only
    // and writable opens share separately: a tab that wants to edit needs its own engine).
    const writable = rest.writable === true;
    const { writable: _w, ...engineRest } = rest;
    const dbOptions = { ...engineRest, readOnly: !writable, profile: 'bedrock' as const };
    const opts = engineOptions(dbOptions);
    const t = await TabLink.open(`world-${writable ? 'rw' : 'ro'}:${kind === 'opfs' ? '' : `${kind}:`}${location}`, async () => {
      const l = await link(placement);
      l.users += 1;
      try {
        return { link: l, handle: (await l.call('openWorld', [kind, location, opts, undefined])) as number };
      } catch (e) {
        l.release();
        throw toStrataError(e);
      }
    });
    return new World(t, 0, new Db(t, 0, location, { ...dbOptions, storage: kind }), { location }, undefined, writable, ownEngine(placement));
  }
  const l = await link(placement);
  l.users += 1;
  return openWorldVia(l, location, rest, kind);
}

/** Opens a `.mcworld` (the zip's bytes), unpacked into the worker's memory; `writable` edits
 * that in-memory copy (save it with `exportMcworld()`); `decodeWorkers` as for `openWorld`. */
export async function openMcworld(zip: Uint8Array, options: { writable?: boolean; engine?: EnginePlacement; decodeWorkers?: number } = {}): Promise<World> {
  const l = await link(options.engine);
  l.users += 1;
  return openMcworldVia(l, zip, options);
}
