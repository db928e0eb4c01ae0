// The browser entry point: the same `Db` API, with the engine in a dedicated worker (OPFS
// sync access handles and FileReaderSync exist only there). Calls become messages; byte
// arguments and results are transferred. One worker serves every database of the page and
// lives as long as the page (in-memory databases live in it).

import { Db, type Link, type OpenOptions } from './db.js';
import { engineOptions } from './engine.js';
import { StrataError, invalidArgument, toStrataError, type ErrorShape } from './errors.js';
import { openMcworldVia, openWorldVia, type World, type WorldOpenOptions } from './world.js';

export * from './db.js';
export { StrataError, type ErrorCode } from './errors.js';
export type { BatchOp, Encoding, Input } from './codec.js';
export type { EngineOptions, StorageKind } from './engine.js';
export * from './world.js';

interface Reply {
  id: number;
  ok: boolean;
  value?: unknown;
  error?: ErrorShape;
}

class WorkerLink implements Link {
  private readonly pending = new Map<number, { resolve(v: unknown): void; reject(e: unknown): void }>();
  private nextId = 1;
  private dead: StrataError | undefined;
  users = 0;

  constructor(readonly worker: Worker) {
    worker.onmessage = (ev: MessageEvent<Reply>) => {
      const p = this.pending.get(ev.data.id);
      if (!p) return;
      this.pending.delete(ev.data.id);
      if (ev.data.ok) p.resolve(ev.data.value);
      else p.reject(toStrataError(ev.data.error));
    };
    worker.onerror = (ev: ErrorEvent) => {
      const err = new StrataError('LEVEL_IO_ERROR', `worker failed: ${ev.message}`);
      for (const p of this.pending.values()) p.reject(err);
      this.pending.clear();
    };
  }

  call(op: string, args: unknown[], transfer: ArrayBuffer[] = []): Promise<unknown> {
    if (this.dead) return Promise.reject(this.dead);
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.worker.postMessage({ id, op, args }, transfer);
    });
  }

  /** Ends the worker at once, even mid-call; pending and later calls reject with `err`. */
  terminate(err: StrataError): void {
    this.worker.terminate();
    this.dead = err;
    for (const p of this.pending.values()) p.reject(err);
    this.pending.clear();
  }

  release(): void {
    // The worker stays up for the page's life: in-memory databases live in it.
    this.users -= 1;
  }
}

let shared: WorkerLink | undefined;

function link(): WorkerLink {
  shared ??= new WorkerLink(new Worker(new URL('./worker.js', import.meta.url), { type: 'module', name: 'strata' }));
  return shared;
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
  return true;
}

/** Opens (by default creating) a database. Default storage: OPFS. */
export async function open(location: string, options: OpenOptions = {}): Promise<Db> {
  if (typeof location !== 'string' || location === '') throw invalidArgument('location must be a non-empty string');
  if (typeof options !== 'object' || options === null) throw invalidArgument('options must be an object');
  const kind = options.storage ?? 'opfs';
  if (kind === 'host') throw invalidArgument("storage 'host' is only available in Node (a host cannot cross into the worker)");
  // A picked folder is always read-only.
  const opts = engineOptions(kind === 'files' ? { ...options, readOnly: true } : options);
  const l = link();
  l.users += 1;
  try {
    const handle = (await l.call('open', [kind, location, opts, options.files])) as number;
    return new Db(l, handle, location, options);
  } catch (e) {
    l.release();
    throw toStrataError(e);
  }
}

/** Deletes an OPFS database (it must be closed). */
export async function destroy(location: string): Promise<void> {
  const l = link();
  l.users += 1;
  try {
    await l.call('destroy', [location]);
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
): Promise<number> {
  if (!Array.isArray(files)) throw invalidArgument('files must be an array');
  const l = link();
  l.users += 1;
  try {
    return (await l.call('import', [location, files])) as number;
  } catch (e) {
    throw toStrataError(e);
  } finally {
    l.release();
  }
}

/** Opens the Bedrock world in folder `location` in the worker, read-only unless
 * `{ writable: true }`. Default storage:
 * OPFS; `storage: 'files'` with `files` opens a picked folder in place. */
export async function openWorld(location: string, options: WorldOpenOptions = {}): Promise<World> {
  const l = link();
  l.users += 1;
  return openWorldVia(l, location, options, 'opfs');
}

/** Opens a `.mcworld` (the zip's bytes), unpacked into the worker's memory; `writable` edits
 * that in-memory copy (save it with `exportMcworld()`). */
export async function openMcworld(zip: Uint8Array, options: { writable?: boolean } = {}): Promise<World> {
  const l = link();
  l.users += 1;
  return openMcworldVia(l, zip, options);
}
