// The Node entry point: the engine runs in this process (wasm), files through node:fs.

import fs from 'node:fs';
import os from 'node:os';
import { Worker } from 'node:worker_threads';

import { initSync, Database, __wbg_reset_state } from '../wasm/strata.js';
import { Db, type OpenOptions } from './db.js';
import { DecodePool, type DecodePort } from './decode-pool.js';
import { Engine, engineOptions, type HostLease, type StorageKind, type WasmModule } from './engine.js';
import { invalidArgument, toStrataError } from './errors.js';
import { LocalLink } from './local-link.js';
import { NodeFsHost } from './node-fs-host.js';
import { openMcworldVia, openWorldVia, type World, type WorldOpenOptions } from './world.js';

export * from './db.js';
export { StrataError, type ErrorCode } from './errors.js';
export type { BatchOp, Encoding, Input } from './codec.js';
export type { StorageHost } from './host.js';
export { NodeFsHost } from './node-fs-host.js';
import type { StorageHost } from './host.js';
export type { EngineOptions, StorageKind } from './engine.js';
export * from './world.js';
export * from './snbt-tree.js';

let engine: Engine | undefined;
let compiled: WebAssembly.Module | undefined;

/** The process-wide engine (the wasm module is compiled once, on first use). When a trap
 * stops it (engine.ts's `stopped`: out of memory, or a bug), its stores are released
 * (`NodeFsHost.abandon`) and the wasm instance is reset right away (`stopInstance`); the next
 * call starts a new engine on the fresh instance, where the databases the dead one held open
 * again, their logs recovering what they had acknowledged. */
export function getEngine(): Engine {
  // A reset that failed at the stop (no memory for the fresh instance while the dead one was
  // still held) is tried again first, and no engine starts before it succeeds: its error goes
  // to the caller, the stopped engine stays (its handles keep its error), the next call tries
  // again.
  if (staleInstance) stopInstance();
  let predecessor: Engine | undefined;
  if (engine?.stopped) {
    predecessor = engine;
    engine = undefined;
  }
  if (engine === undefined) {
    const module = (compiled ??= new WebAssembly.Module(fs.readFileSync(new URL('../wasm/strata_bg.wasm', import.meta.url))));
    initSync({ module });
    const host = new NodeFsHost();
    engine = new Engine(
      { Database } as unknown as WasmModule,
      (kind: StorageKind, _location: string, extra: unknown): HostLease => {
        if (kind === 'fs') return { host, removeDir: (p) => fs.rmSync(p, { recursive: true, force: true }) };
        if (kind === 'mem') return { host: undefined };
        // A caller's host that can abandon (a NodeFsHost or one derived from it) lets go of
        // the dead instance's descriptors and locks when the engine stops.
        if (kind === 'host') return { host: extra as StorageHost, abandon: () => (extra as { abandon?: () => void }).abandon?.() };
        throw invalidArgument(`storage '${kind}' is only available in browsers`);
      },
      (size) => new DecodePool(() => nodeDecodePort(module), size),
      Math.max(0, (os.availableParallelism?.() ?? os.cpus().length) - 1),
      () => {
        staleInstance = true;
        try {
          host.abandon();
        } finally {
          stopInstance();
        }
      },
      predecessor,
    );
  }
  return engine;
}

/** Lets go of a stopped engine's wasm instance at once: wasm-bindgen's reset makes a fresh
 * instance and a new instance id, and the glue's finalizers run a collected object's `drop`
 * only in the instance that made it. Without it, until the next engine started, collecting a
 * database the stopped engine dropped ran `Db::drop` in the trapped instance (its memory in
 * an unknown state, its descriptors closed and their numbers perhaps reused), and the dead
 * instance's memory (up to 4 GiB) stayed held. */
function stopInstance(): void {
  staleInstance = true;
  __wbg_reset_state();
  staleInstance = false;
}

/** Set from a stop until the instance was reset: no engine may start on the dead instance. */
let staleInstance = false;

/** A decode worker thread (decode-worker-node.ts); it does not keep the process alive. */
function nodeDecodePort(module: WebAssembly.Module): DecodePort {
  const w = new Worker(new URL('./decode-worker-node.js', import.meta.url), { workerData: { module } });
  return {
    post: (msg, transfer) => w.postMessage(msg, transfer),
    listen(onAnswer, onGone) {
      w.on('message', onAnswer);
      // An answer that arrives unreadable cannot be matched to its request: the worker is
      // dropped, so every request in flight there settles (the passes decode those runs).
      w.on('messageerror', () => onGone('an unreadable message'));
      w.on('error', (e) => onGone(String(e)));
      w.on('exit', (code) => onGone(`exited with ${code}`));
      w.unref(); // after the listeners (adding a 'message' listener refs the worker again)
    },
    terminate: () => void w.terminate(),
    announcesReady: true,
  };
}

const HOST_METHODS = ['open', 'read', 'write', 'sync', 'size', 'close', 'exists', 'fileSize', 'list', 'remove', 'rename', 'mkdir', 'lock', 'unlock', 'syncDir'] as const;

function checkHost(host: unknown): asserts host is StorageHost {
  if (typeof host !== 'object' || host === null) throw invalidArgument("storage 'host' needs a host object in options.host");
  const missing = HOST_METHODS.filter((m) => typeof (host as Record<string, unknown>)[m] !== 'function');
  if (missing.length > 0) throw invalidArgument(`options.host lacks ${missing.join(', ')}`);
}

/** Opens (by default creating) the database in folder `location`. */
export async function open(location: string, options: OpenOptions = {}): Promise<Db> {
  if (typeof location !== 'string' || location === '') throw invalidArgument('location must be a non-empty string');
  if (typeof options !== 'object' || options === null) throw invalidArgument('options must be an object');
  const kind = options.storage ?? 'fs';
  if (kind === 'host') checkHost(options.host);
  const e = getEngine();
  try {
    const handle = await e.open(kind, location, engineOptions(options), options.host);
    return new Db(new LocalLink(e), handle, location, { ...options, storage: kind });
  } catch (err) {
    throw toStrataError(err);
  }
}

/** Opens the Bedrock world in folder `location` (level.dat + db/, or a bare db folder),
 * read-only unless `{ writable: true }` (then the World's edit methods work). */
export async function openWorld(location: string, options: WorldOpenOptions = {}): Promise<World> {
  return openWorldVia(new LocalLink(getEngine()), location, options, 'fs');
}

/** Opens a `.mcworld` (the zip's bytes), unpacked into the engine's memory; `writable` edits
 * that in-memory copy (save it with `exportMcworld()`). */
export async function openMcworld(zip: Uint8Array, options: { writable?: boolean; decodeWorkers?: number } = {}): Promise<World> {
  return openMcworldVia(new LocalLink(getEngine()), zip, options);
}
