// A decode worker in Node (worker_threads): its own instance of the engine's wasm module
// (compiled once by the parent and passed in `workerData`), inflating the runs of compressed
// blocks a scan lends out (decode-pool.ts). Says `{ ready: true }` once its instance is up, then
// answers every request: decoded blocks, or an error; `{ unreadable: true }` for one that
// arrived unreadable (its id lost), so the pool fails what it has in flight here.

import { parentPort, workerData } from 'node:worker_threads';

import { decodeRun, initSync } from '../wasm/strata.js';
import type { DecodeRequest } from './decode-pool.js';

initSync({ module: (workerData as { module: WebAssembly.Module }).module });

const port = parentPort!;
port.postMessage({ ready: true });
port.on('message', (m: DecodeRequest) => {
  try {
    const packed = decodeRun(m.raw, m.sizes, m.verify, m.max, m.filter);
    port.postMessage({ id: m.id, ok: true, packed }, [packed.buffer as ArrayBuffer]);
  } catch (e) {
    port.postMessage({ id: m.id, ok: false, error: String((e as Error)?.message ?? e) });
  }
});
port.on('messageerror', () => port.postMessage({ unreadable: true }));
