// The engine where its storage is: a dedicated worker (OPFS sync access handles and
// FileReaderSync exist only there). `WorkerEngine.run(op, args)` runs one named operation:
// it prepares the database's storage (OPFS handles are opened asynchronously, between engine
// calls), then calls the synchronous wasm engine. Calls run one at a time in the order they
// were made (`run` chains them), so an engine call never sees storage prepared for another.
// Used by worker.ts (the package's own worker, answering messages) and by browser.ts directly
// when the caller is itself a dedicated worker (no message hop per call).

import init, { Database, zipFiles, __wbg_reset_state } from '../wasm/strata.js';
import { DecodePool, type DecodeMessage, type DecodePort } from './decode-pool.js';
import { Engine, type HostLease, type StorageKind, type WasmModule } from './engine.js';
import { FilePickerHost } from './file-picker-host.js';
import { hostError, type StorageHost } from './host.js';
import { IdbHost } from './idb-host.js';
import { dispatch, runOp } from './local-link.js';
import { OpfsPool, destroyOpfs, type OpfsOptions } from './opfs-host.js';

async function hostFor(kind: StorageKind, location: string, extra: unknown): Promise<HostLease> {
  switch (kind) {
    case 'mem':
      return { host: undefined };
    case 'opfs': {
      const { scratch, ...opts } = (extra ?? {}) as OpfsOptions & { scratch?: boolean };
      const pool = await OpfsPool.open(location, opts);
      const destroy = scratch === true ? () => destroyOpfs(location) : undefined;
      return { host: pool, prepare: () => pool.prepare(), prepared: () => pool.prepared(), release: () => pool.release(), blob: (p) => pool.blob(p), destroy };
    }
    case 'idb': {
      const host = await IdbHost.open(location);
      const destroy = (extra as { scratch?: boolean } | undefined)?.scratch === true ? () => IdbHost.destroy(location) : undefined;
      return { host, settle: () => host.settle(), release: () => host.release(), blob: (p) => host.blob(p), destroy };
    }
    case 'files': {
      // The files, or { files, cacheBytes } (world.ts filesExtra).
      const given = extra as ReadonlyArray<{ path: string; file: Blob }> | { files?: unknown; cacheBytes?: number } | undefined;
      const files = Array.isArray(given) ? given : (given as { files?: unknown } | undefined)?.files;
      if (!Array.isArray(files)) throw hostError('EINVAL', "storage 'files' needs the picked files");
      const cacheBytes = Array.isArray(given) ? undefined : (given as { cacheBytes?: number }).cacheBytes;
      return { host: new FilePickerHost(files as ReadonlyArray<{ path: string; file: Blob }>, cacheBytes) };
    }
    default:
      throw hostError('EINVAL', `storage '${kind}' is not available in a browser worker`);
  }
}

/** Names of OPFS failures that mean "no usable sync access handles here" (WebKitGTK:
 * NotSupportedError "Backend does not support this operation", UnknownError in automation
 * sessions; Firefox private windows: SecurityError). Any other failure (a quota, a lock) is
 * OPFS working and reporting a real condition: it does not switch the storage. */
const NO_OPFS = new Set(['NotSupportedError', 'UnknownError', 'SecurityError', 'TypeError', 'InvalidStateError']);

let probed: Promise<'opfs' | 'idb'> | undefined;

/** The storage a database gets when none is named: OPFS where a sync access handle can be
 * created in this worker, IndexedDB otherwise. Decided once per worker. */
export function defaultStorage(): Promise<'opfs' | 'idb'> {
  probed ??= (async () => {
    const g = globalThis as { FileSystemFileHandle?: { prototype: object }; indexedDB?: unknown; navigator?: { storage?: { getDirectory?: () => Promise<FileSystemDirectoryHandle> } } };
    const idb = typeof g.indexedDB === 'object' && g.indexedDB !== null;
    if (!g.FileSystemFileHandle || !('createSyncAccessHandle' in g.FileSystemFileHandle.prototype) || !g.navigator?.storage?.getDirectory) {
      return idb ? 'idb' : 'opfs';
    }
    const name = `.strata-probe-${Date.now().toString(36)}-${Math.random().toString(36).slice(2)}`;
    let root: FileSystemDirectoryHandle | undefined;
    try {
      root = await g.navigator.storage.getDirectory();
      const fh = await root.getFileHandle(name, { create: true });
      const h = await (fh as unknown as { createSyncAccessHandle(): Promise<{ close(): void }> }).createSyncAccessHandle();
      h.close();
      return 'opfs';
    } catch (e) {
      return idb && NO_OPFS.has((e as { name?: string })?.name ?? '') ? 'idb' : 'opfs';
    } finally {
      await root?.removeEntry(name).catch(() => {});
    }
  })();
  return probed;
}

let ready: Promise<Engine> | undefined;
/** The engine `ready` resolved to (to see whether it stopped). */
let current: Engine | undefined;
let compiled: WebAssembly.Module | undefined;

/** Decode workers started by the page (browser.ts `startDecodeWorkers`): the engine's end of
 * each one's MessagePort, handed in by `useDecodeWorkers` or, in the package's worker, sent by
 * the page when asked (`askForDecodePorts`). Pools take these instead of starting workers here:
 * a worker started from a worker can block its parent in the Worker constructor forever in
 * Firefox while a WebDriver BiDi session is attached (its worker-debugger listener makes the
 * parent wait for the main thread's registration of the new worker), which stalled a whole
 * engine worker in the test suites; a worker started by the page never waits that way.
 *
 * Ports are numbered in arrival order (the page numbers the workers it starts for this worker
 * the same way: messages keep their order), so the page can say which one failed to load
 * (`decoderGone`). A port that could not be had resolves its waiter with null. */
const suppliedPorts: Array<{ port: MessagePort; index: number }> = [];
const waitingForPorts: Array<(port: { port: MessagePort; index: number } | null) => void> = [];
const goneHandlers = new Map<number, (why: string) => void>();
let portsArrived = 0;
let askForDecodePorts: ((count: number) => void) | undefined;
/** Set once the page supplied ports (`useDecodeWorkers`): no worker is ever started here. */
let pageSupplies = false;

/** Hands the engine decode workers' ports (see `suppliedPorts`); `failed` more that the page
 * could not start. */
export function supplyDecodePorts(ports: readonly MessagePort[], failed = 0): void {
  pageSupplies = true;
  for (const port of ports) {
    const given = { port, index: portsArrived++ };
    const waiting = waitingForPorts.shift();
    if (waiting) waiting(given);
    else suppliedPorts.push(given);
  }
  for (let i = 0; i < failed; i++) waitingForPorts.shift()?.(null);
}

/** The page says decode worker `index` (in arrival order) failed (its script, say). */
export function decodeWorkerGone(index: number, why: string): void {
  goneHandlers.get(index)?.(why);
}

/** Set by the package's worker: asks its page for `count` decode workers' ports. */
export function setDecodePortSource(ask: (count: number) => void): void {
  askForDecodePorts = ask;
}

/** A pool member: a decode worker the page started (a supplied port, or one asked for now), or
 * else one started from this worker (never once the page supplied some). */
function decodePort(module: WebAssembly.Module): DecodePort {
  const supplied = suppliedPorts.shift();
  if (supplied) return pagePort(Promise.resolve(supplied), module);
  if (askForDecodePorts) {
    const port = new Promise<{ port: MessagePort; index: number } | null>((resolve) => waitingForPorts.push(resolve));
    askForDecodePorts(1);
    return pagePort(port, module);
  }
  if (pageSupplies) return pagePort(Promise.resolve(null), module);
  return browserDecodePort(module);
}

/** A decode worker the page started, over its MessagePort (which may still be on its way):
 * given the compiled module first; `terminate` asks it to close itself. A port that never
 * comes (null), a module that cannot be sent, or the page saying the worker failed make it
 * gone; a worker that fails silently never says it is ready, and the pool's start bound
 * drops it. */
function pagePort(port: Promise<{ port: MessagePort; index: number } | null>, module: WebAssembly.Module): DecodePort {
  let open: MessagePort | undefined;
  let stopped = false;
  let queued: Array<[unknown, Transferable[]]> = [];
  let onMessage: (m: DecodeMessage) => void = () => {};
  let gone: string | undefined;
  let onGone: (why: string) => void = (why) => void (gone ??= why);
  const fail = (why: string) => onGone(why);
  void port.then((given) => {
    if (!given) {
      fail('the page could not start a decode worker');
      return;
    }
    const p = given.port;
    if (stopped) {
      p.postMessage({ stop: true });
      p.close();
      return;
    }
    open = p;
    goneHandlers.set(given.index, fail);
    p.onmessage = (ev: MessageEvent<DecodeMessage>) => onMessage(ev.data);
    p.onmessageerror = () => fail('an unreadable message');
    try {
      p.postMessage({ module });
      for (const [m, t] of queued) p.postMessage(m, t);
    } catch (e) {
      fail(`cannot send to the decode worker: ${String((e as Error)?.message ?? e)}`);
    }
    queued = [];
  });
  return {
    post: (msg, transfer) => {
      if (open) open.postMessage(msg, transfer);
      else queued.push([msg, transfer]);
    },
    listen(message, goneHandler) {
      onMessage = message;
      onGone = goneHandler;
      if (gone !== undefined) goneHandler(gone);
    },
    terminate: () => {
      if (stopped) return;
      stopped = true;
      for (const [i, f] of goneHandlers) if (f === fail) goneHandlers.delete(i);
      open?.postMessage({ stop: true });
      open?.close();
    },
    announcesReady: true,
    byPage: true,
  };
}

/** A decode worker (decode-worker.ts) started from this worker, given the compiled module. */
function browserDecodePort(module: WebAssembly.Module): DecodePort {
  const w = new Worker(new URL('./decode-worker.js', import.meta.url), { type: 'module', name: 'strata-decode' });
  w.postMessage({ module });
  return {
    post: (msg, transfer) => w.postMessage(msg, transfer),
    listen(onMessage, onGone) {
      w.onmessage = (ev: MessageEvent<DecodeMessage>) => onMessage(ev.data);
      w.onerror = (ev) => onGone(ev.message);
      w.onmessageerror = () => onGone('an unreadable message');
    },
    terminate: () => w.terminate(),
    announcesReady: true,
  };
}

/** Set from a stop until the instance was reset: no engine may start on the dead instance. */
let staleInstance = false;

/** Lets go of a stopped engine's wasm instance (a fresh one, a new instance id). */
function resetInstance(): void {
  staleInstance = true;
  __wbg_reset_state();
  staleInstance = false;
}

/** The worker's engine (one wasm instance), created on first use. Where this context can
 * start workers, scans get decode workers (cores - 1 by default). A trap stops it (engine.ts's
 * `stopped`: out of memory, or a bug) and resets the wasm instance at once; the next call
 * starts a new engine on the fresh instance: the stopped one released its stores' handles, so
 * its databases open again in the new one; calls with the old handles fail with the error
 * that stopped it. */
function engine(): Promise<Engine> {
  // A reset that failed at the stop (no memory for the fresh instance while the dead one was
  // still held) is tried again first; no engine starts on the dead instance, and the stopped
  // one stays until then (its handles keep its error).
  if (staleInstance) {
    try {
      resetInstance();
    } catch (e) {
      return Promise.reject(e);
    }
  }
  let predecessor: Engine | undefined;
  if (current?.stopped) {
    predecessor = current;
    current = undefined;
    ready = undefined;
  }
  ready ??= (async () => {
    const url = new URL('../wasm/strata_bg.wasm', import.meta.url);
    const module = (compiled ??= await WebAssembly.compileStreaming(fetch(url)).catch(async () => WebAssembly.compile(await (await fetch(url)).arrayBuffer())));
    await init({ module_or_path: module });
    const canSpawn = typeof Worker === 'function';
    const cores = (globalThis as { navigator?: { hardwareConcurrency?: number } }).navigator?.hardwareConcurrency ?? 1;
    current = new Engine(
      { Database, zipFiles } as unknown as WasmModule,
      hostFor,
      (size) => new DecodePool(() => decodePort(module), size),
      // An engine given the page's decode workers uses as many as it was given.
      pageSupplies && !askForDecodePorts ? suppliedPorts.length : canSpawn || askForDecodePorts ? Math.max(0, cores - 1) : 0,
      // The dead instance is let go at the stop (a fresh one, a new instance id): the glue's
      // finalizers then never run a collected object's `drop` in the trapped instance, and
      // its memory is not held until the next call.
      resetInstance,
      predecessor,
    );
    return current;
  })();
  return ready;
}

interface ImportFile {
  name: string;
  data: Uint8Array | Blob;
}

/** Writes files into a database folder in browser storage (OPFS or IndexedDB; the database
 * must not be open), each synced. IndexedDB commits them all in one flush at the release. */
async function importFiles(kind: StorageKind, location: string, files: ImportFile[]): Promise<number> {
  const lease = await hostFor(kind, location, undefined);
  const host = lease.host as StorageHost;
  let bytes = 0;
  try {
    const reader = new FileReaderSync();
    for (const f of files) {
      // A plain name, or a relative path inside the folder (a world's `db/000005.ldb`).
      if (typeof f?.name !== 'string' || f.name.split('/').some((part) => part === '' || part === '.' || part === '..')) {
        throw hostError('EINVAL', 'import: each file needs a relative name (no empty, . or .. parts)');
      }
      await lease.prepare?.();
      const data = f.data instanceof Uint8Array ? f.data : new Uint8Array(reader.readAsArrayBuffer(f.data));
      const slash = f.name.lastIndexOf('/');
      if (slash > 0) host.mkdir(`${location}/${f.name.slice(0, slash)}`);
      const fd = host.open(`${location}/${f.name}`, 'w');
      try {
        host.write(fd, data);
        host.sync(fd);
      } finally {
        host.close(fd);
      }
      bytes += data.length;
    }
  } finally {
    await lease.release?.();
  }
  return bytes;
}

/** A database folder's files out of browser storage (it must not be open): zipped (bytes),
 * or written file by file into `to` (subfolders created), which returns `{ files, bytes }`. */
async function exportFiles(e: Engine, kind: StorageKind, location: string, to: FileSystemDirectoryHandle | undefined): Promise<Uint8Array | { files: number; bytes: number }> {
  const lease = await hostFor(kind, location, undefined);
  const host = lease.host as OpfsPool | IdbHost;
  const prefix = `${location.replace(/\/+$/, '')}/`;
  const names: string[] = [];
  const datas: Uint8Array[] = [];
  try {
    for (const path of host.paths().sort()) {
      if (!path.startsWith(prefix)) continue;
      await lease.prepare?.();
      const fd = host.open(path, 'r');
      try {
        const data = new Uint8Array(host.size(fd));
        if (host.read(fd, 0, data) !== data.length) throw hostError('EIO', `export: ${path} ended early`);
        names.push(path.slice(prefix.length));
        datas.push(data);
      } finally {
        host.close(fd);
      }
    }
  } finally {
    await lease.release?.();
  }
  if (!to) return e.zipFiles(names, datas);
  let bytes = 0;
  for (let i = 0; i < names.length; i++) {
    const parts = names[i]!.split('/');
    let dir = to;
    for (const part of parts.slice(0, -1)) dir = await dir.getDirectoryHandle(part, { create: true });
    const fh = await dir.getFileHandle(parts[parts.length - 1]!, { create: true });
    const w = await (fh as unknown as { createWritable(): Promise<{ write(d: Uint8Array): Promise<void>; close(): Promise<void> }> }).createWritable();
    await w.write(datas[i]!);
    await w.close();
    bytes += datas[i]!.length;
  }
  return { files: names.length, bytes };
}

/** Operations that may run at once, without the queue: synchronous engine calls whose first
 * argument is an open database's handle (its lease says whether the storage needs a step).
 * Open, close, storage-level and iterator operations (their handle is the cursor's) queue. */
const DIRECT = new Set(['get', 'getMany', 'put', 'del', 'write', 'snapshot', 'releaseSnapshot', 'properties']);

export class WorkerEngine {
  private queue: Promise<unknown> = Promise.resolve();
  /** Calls queued and not yet ran. */
  private queued = 0;
  /** The engine, once loaded. */
  private loaded: Engine | undefined;

  /** Runs `op` after every call made before it has ran; resolves once what it changed is
   * committed (the next call does not wait for that: a burst shares one commit). A call
   * made while nothing is queued, on storage that needs neither a prepare nor a commit
   * (OPFS with its spares ready, memory), runs now: the same order, no promise hops (an
   * awaited put in a worker is otherwise several microtasks of queue for a microsecond of
   * engine work). */
  run(op: string, args: unknown[]): Promise<unknown> {
    const e = this.loaded;
    if (e && this.queued === 0 && DIRECT.has(op) && typeof args[0] === 'number') {
      const lease = e.lease(args[0]);
      if (lease && !lease.settle && (!lease.prepare || lease.prepared?.() === true)) {
        try {
          return Promise.resolve(dispatch(e, op, args));
        } catch (err) {
          return Promise.reject(err);
        }
      }
    }
    this.queued++;
    const ran = this.queue.then(() => this.runNow(op, args));
    const done = () => {
      this.queued--;
    };
    ran.then(done, done);
    this.queue = ran.catch(() => {});
    return ran.then(async ({ value, settled }) => {
      await settled;
      return value;
    });
  }

  private async runNow(op: string, args: unknown[]): Promise<{ value: unknown; settled?: Promise<void> }> {
    const e = await engine();
    this.loaded = e;
    if (op === 'defaultStorage') return { value: await defaultStorage() };
    if (op === 'destroy') return { value: await ((args[1] ?? 'opfs') === 'idb' ? IdbHost.destroy(args[0] as string) : destroyOpfs(args[0] as string)) };
    if (op === 'import') return { value: await importFiles((args[2] ?? 'opfs') as StorageKind, args[0] as string, args[1] as ImportFile[]) };
    if (op === 'exportBegin') {
      // The scratch store: the world's own kind when it is a browser store, else the default.
      const scratch = args[1] as { kind?: StorageKind; location: string; dir: string };
      const kind = scratch.kind === 'opfs' || scratch.kind === 'idb' ? scratch.kind : await defaultStorage();
      const extra = kind === 'opfs' ? { maxHandles: 64, scratch: true } : { scratch: true };
      return runOp(e, op, [args[0], { ...scratch, kind }, extra], true);
    }
    if (op === 'exportDiscard') {
      // Removes a finished export's scratch store (its zip); nothing there is fine.
      const kind = args[1] === 'idb' ? 'idb' : 'opfs';
      return { value: await (kind === 'idb' ? IdbHost.destroy(args[0] as string) : destroyOpfs(args[0] as string)) };
    }
    if (op === 'export') return { value: await exportFiles(e, (args[2] ?? 'opfs') as StorageKind, args[0] as string, args[1] as FileSystemDirectoryHandle | undefined) };
    return runOp(e, op, args, true);
  }
}
