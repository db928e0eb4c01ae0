// A decode worker in browsers: its own instance of the engine's wasm module (compiled once by
// the engine's worker and sent as the first message; compiled here where that message cannot
// arrive), inflating the runs of compressed blocks a
// scan lends out (decode-pool.ts). Started by the page (browser.ts `startDecodeWorkers`: its
// first message is `{ port }`, the channel to the engine, and `{ stop }` there closes it) or by
// the engine's worker itself (messages come straight from it). Says `{ ready }` once its
// instance is up (or could not be made: `{ ready: false, error }`), then answers every request:
// decoded blocks, or an error; a request that arrives unreadable (`messageerror`, its id lost)
// gets `{ unreadable: true }`, so the pool fails what it has in flight here instead of
// waiting for an answer that cannot come.

import init, { decodeRun } from '../wasm/strata.js';
import type { DecodeRequest } from './decode-pool.js';

type Incoming = DecodeRequest | { module: WebAssembly.Module } | { stop: true } | { port: MessagePort };
type Reply = (msg: unknown, transfer?: Transferable[]) => void;

const scope = self as unknown as {
  onmessage: ((ev: MessageEvent<Incoming>) => void) | null;
  onmessageerror: ((ev: MessageEvent) => void) | null;
  postMessage(msg: unknown, transfer?: Transferable[]): void;
  close(): void;
};

let ready: Promise<unknown> | undefined;

/** Says whether the instance started. */
function start(instance: Promise<unknown>, reply: Reply): void {
  ready = instance;
  ready.then(
    () => reply({ ready: true }),
    (e: unknown) => reply({ ready: false, error: String((e as Error)?.message ?? e) }),
  );
}

function handle(m: Incoming, reply: Reply): void {
  if ('stop' in m) {
    scope.close();
    return;
  }
  if ('port' in m) return;
  if ('module' in m) {
    start(init({ module_or_path: m.module }), reply);
    return;
  }
  void (async () => {
    try {
      await ready;
      const packed = decodeRun(m.raw, m.sizes, m.verify, m.max, m.filter);
      reply({ id: m.id, ok: true, packed }, [packed.buffer as ArrayBuffer]);
    } catch (e) {
      reply({ id: m.id, ok: false, error: String((e as Error)?.message ?? e) });
    }
  })();
}

scope.onmessage = (ev) => {
  const m = ev.data;
  if ('port' in m) {
    const port = m.port;
    const reply: Reply = (msg, transfer) => port.postMessage(msg, transfer ?? []);
    port.onmessage = (e: MessageEvent<Incoming>) => handle(e.data, reply);
    // Firefox (153 ESR) does not deliver a compiled module from the engine's worker over a
    // MessagePort (the message fails to deserialize here): this worker then compiles the
    // engine's module itself, from the glue's own URL. Later, an unreadable request is
    // answered `{ unreadable }` (see `unreadable`).
    port.onmessageerror = () => unreadable(reply);
    return;
  }
  handle(m, (msg, transfer) => scope.postMessage(msg, transfer));
};
// Messages straight from the engine's worker (one that started this worker itself): an
// unreadable module is compiled here too, rather than the worker being dropped at the bound.
scope.onmessageerror = () => unreadable((msg) => scope.postMessage(msg));

/** A message that could not be read: the module (none arrived yet) or a request. */
function unreadable(reply: Reply): void {
  if (ready === undefined) start(init(), reply);
  else reply({ unreadable: true });
}
