// The engine where its storage is: a dedicated worker (OPFS sync access handles and
// FileReaderSync exist only there). `WorkerEngine.run(op, args)` runs one named operation:
// it prepares the database's storage (OPFS handles are opened asynchronously, between engine
// calls), then calls the synchronous wasm engine. Calls run one at a time in the order they
// were made (`run` chains them), so an engine call never sees storage prepared for another.
// Used by worker.ts (the package's own worker, answering messages) and by browser.ts directly
// when the caller is itself a dedicated worker (no message hop per call).

import init, { Database, zipFiles } from '../wasm/strata.js';
import { Engine, type HostLease, type StorageKind, type WasmModule } from './engine.js';
import { FilePickerHost } from './file-picker-host.js';
import { hostError } from './host.js';
import { dispatch } from './local-link.js';
import { OpfsPool, destroyOpfs, type OpfsOptions } from './opfs-host.js';

async function hostFor(kind: StorageKind, location: string, extra: unknown): Promise<HostLease> {
  switch (kind) {
    case 'mem':
      return { host: undefined };
    case 'opfs': {
      const pool = await OpfsPool.open(location, (extra ?? {}) as OpfsOptions);
      return { host: pool, prepare: () => pool.prepare(), release: () => pool.release() };
    }
    case 'files': {
      const files = extra as ReadonlyArray<{ path: string; file: Blob }> | undefined;
      if (!Array.isArray(files)) throw hostError('EINVAL', "storage 'files' needs the picked files");
      return { host: new FilePickerHost(files) };
    }
    default:
      throw hostError('EINVAL', `storage '${kind}' is not available in a browser worker`);
  }
}

let ready: Promise<Engine> | undefined;

/** The worker's one engine (one wasm instance), created on first use. */
function engine(): Promise<Engine> {
  ready ??= init({ module_or_path: new URL('../wasm/strata_bg.wasm', import.meta.url) }).then(
    () => new Engine({ Database } as unknown as WasmModule, hostFor),
  );
  return ready;
}

interface ImportFile {
  name: string;
  data: Uint8Array | Blob;
}

/** Writes files into an OPFS database folder (which must not be open), each synced. */
async function importFiles(location: string, files: ImportFile[]): Promise<number> {
  const pool = await OpfsPool.open(location);
  let bytes = 0;
  try {
    const reader = new FileReaderSync();
    for (const f of files) {
      // A plain name, or a relative path inside the folder (a world's `db/000005.ldb`).
      if (typeof f?.name !== 'string' || f.name.split('/').some((part) => part === '' || part === '.' || part === '..')) {
        throw hostError('EINVAL', 'import: each file needs a relative name (no empty, . or .. parts)');
      }
      await pool.prepare();
      const data = f.data instanceof Uint8Array ? f.data : new Uint8Array(reader.readAsArrayBuffer(f.data));
      const fd = pool.open(`${location}/${f.name}`, 'w');
      try {
        pool.write(fd, data);
        pool.sync(fd);
      } finally {
        pool.close(fd);
      }
      bytes += data.length;
    }
  } finally {
    await pool.release();
  }
  return bytes;
}

/** A database folder's files out of OPFS (it must not be open): zipped (bytes), or written
 * file by file into `to` (subfolders created), which returns `{ files, bytes }`. */
async function exportFiles(location: string, to: FileSystemDirectoryHandle | undefined): Promise<Uint8Array | { files: number; bytes: number }> {
  const pool = await OpfsPool.open(location);
  const prefix = `${location.replace(/\/+$/, '')}/`;
  const names: string[] = [];
  const datas: Uint8Array[] = [];
  try {
    for (const path of pool.paths().sort()) {
      if (!path.startsWith(prefix)) continue;
      await pool.prepare();
      const fd = pool.open(path, 'r');
      try {
        const data = new Uint8Array(pool.size(fd));
        if (pool.read(fd, 0, data) !== data.length) throw hostError('EIO', `export: ${path} ended early`);
        names.push(path.slice(prefix.length));
        datas.push(data);
      } finally {
        pool.close(fd);
      }
    }
  } finally {
    await pool.release();
  }
  if (!to) return zipFiles(names, datas as unknown as never);
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

export class WorkerEngine {
  private queue: Promise<unknown> = Promise.resolve();

  /** Runs `op` after every call made before it has finished. */
  run(op: string, args: unknown[]): Promise<unknown> {
    const result = this.queue.then(() => this.runNow(op, args));
    this.queue = result.catch(() => {});
    return result;
  }

  private async runNow(op: string, args: unknown[]): Promise<unknown> {
    const e = await engine();
    if (op === 'destroy') return destroyOpfs(args[0] as string);
    if (op === 'import') return importFiles(args[0] as string, args[1] as ImportFile[]);
    if (op === 'export') return exportFiles(args[0] as string, args[1] as FileSystemDirectoryHandle | undefined);
    if (op !== 'open' && op !== 'openWorld' && typeof args[0] === 'number') {
      // A close goes ahead even when the storage cannot prepare (e.g. out of quota): it is
      // what releases the database.
      const prepared = e.prepare(args[0]);
      await (op === 'close' ? prepared.catch(() => {}) : prepared);
    }
    return dispatch(e, op, args);
  }
}
