// A decode worker in browsers (a dedicated worker started by the engine's worker): its own
// instance of the engine's wasm module (compiled once by the engine's worker and sent as the
// first message), inflating the runs of compressed blocks a scan lends out (decode-pool.ts).
// Says `{ ready }` once its instance is up (or could not be made: `{ ready: false, error }`),
// then answers every request: decoded blocks, or an error.

import init, { decodeRun } from '../wasm/strata.js';
import type { DecodeRequest } from './decode-pool.js';

const scope = self as unknown as {
  onmessage: ((ev: MessageEvent<DecodeRequest | { module: WebAssembly.Module }>) => void) | null;
  postMessage(msg: unknown, transfer?: Transferable[]): void;
};

let ready: Promise<unknown> | undefined;

scope.onmessage = (ev) => {
  const m = ev.data;
  if ('module' in m) {
    ready = init({ module_or_path: m.module });
    ready.then(
      () => scope.postMessage({ ready: true }),
      (e: unknown) => scope.postMessage({ ready: false, error: String((e as Error)?.message ?? e) }),
    );
    return;
  }
  void (async () => {
    try {
      await ready;
      const packed = decodeRun(m.raw, m.sizes, m.verify, m.max, m.filter);
      scope.postMessage({ id: m.id, ok: true, packed }, [packed.buffer as ArrayBuffer]);
    } catch (e) {
      scope.postMessage({ id: m.id, ok: false, error: String((e as Error)?.message ?? e) });
    }
  })();
};
