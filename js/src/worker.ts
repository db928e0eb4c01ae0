// The browser worker: runs the engine (wasm) next to its synchronous storage (OPFS handles,
// FileReaderSync) and answers `{id, op, args}` messages from browser.ts one at a time, in
// arrival order. Byte results are transferred, not copied. Errors travel as `{code, message}`.

import init, { Database } from '../wasm/strata.js';
import { Engine, type HostLease, type StorageKind, type WasmModule } from './engine.js';
import { toErrorShape } from './errors.js';
import { FilePickerHost } from './file-picker-host.js';
import { hostError } from './host.js';
import { dispatch } from './local-link.js';
import { OpfsPool, destroyOpfs } from './opfs-host.js';

interface Request {
  id: number;
  op: string;
  args: unknown[];
}

const scope = self as unknown as {
  onmessage: ((ev: MessageEvent<Request>) => void) | null;
  postMessage(msg: unknown, transfer?: Transferable[]): void;
};

async function hostFor(kind: StorageKind, location: string, extra: unknown): Promise<HostLease> {
  switch (kind) {
    case 'mem':
      return { host: undefined };
    case 'opfs': {
      const pool = await OpfsPool.open(location);
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

const ready: Promise<Engine> = init({ module_or_path: new URL('../wasm/strata_bg.wasm', import.meta.url) }).then(
  () => new Engine({ Database } as unknown as WasmModule, hostFor),
);

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

let queue: Promise<void> = Promise.resolve();

async function handle(req: Request): Promise<void> {
  try {
    const engine = await ready;
    let value: unknown;
    if (req.op === 'destroy') {
      value = await destroyOpfs(req.args[0] as string);
    } else if (req.op === 'import') {
      value = await importFiles(req.args[0] as string, req.args[1] as ImportFile[]);
    } else {
      if (req.op !== 'open' && req.op !== 'openWorld' && typeof req.args[0] === 'number') {
        // A close goes ahead even when the storage cannot prepare (e.g. out of quota): it is
        // what releases the database.
        const prepared = engine.prepare(req.args[0]);
        await (req.op === 'close' ? prepared.catch(() => {}) : prepared);
      }
      value = await dispatch(engine, req.op, req.args);
    }
    const transfer: Transferable[] = [];
    if (value instanceof Uint8Array && value.byteOffset === 0 && value.byteLength === value.buffer.byteLength) {
      transfer.push(value.buffer);
    }
    scope.postMessage({ id: req.id, ok: true, value }, transfer);
  } catch (e) {
    scope.postMessage({ id: req.id, ok: false, error: toErrorShape(e) });
  }
}

scope.onmessage = (ev: MessageEvent<Request>) => {
  queue = queue.then(() => handle(ev.data));
};
