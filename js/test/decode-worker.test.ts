// The browser decode worker's replies (decode-worker.ts), with a stand-in `self`, a stand-in
// port and a stand-in wasm glue: a message that cannot be read before any module arrived makes
// the worker compile the module itself and say `{ ready }` (Firefox does not deliver a module
// between workers); one after that is answered `{ unreadable }`, so the pool fails what it has
// in flight there; requests are answered by id. Both for a worker the page started (messages
// on its port) and one the engine's worker started (messages straight to it).

import { beforeEach, expect, test, vi } from 'vitest';

const calls: string[] = [];
vi.mock('../wasm/strata.js', () => ({
  default: (arg?: { module_or_path?: unknown }) => {
    calls.push(arg === undefined ? 'init from the glue URL' : 'init with the module sent');
    return Promise.resolve();
  },
  decodeRun: (raw: Uint8Array) => {
    calls.push(`decodeRun ${raw.length}`);
    return new Uint8Array([raw.length]);
  },
}));

interface Scope {
  onmessage: ((ev: { data: unknown }) => void) | null;
  onmessageerror: (() => void) | null;
  posted: unknown[];
  postMessage(m: unknown): void;
  close(): void;
}

let scope: Scope;

/** A fresh copy of the worker module on a fresh stand-in `self`. */
async function loadWorker(): Promise<void> {
  calls.length = 0;
  scope = { onmessage: null, onmessageerror: null, posted: [], postMessage: (m) => void scope.posted.push(m), close: () => {} };
  (globalThis as { self?: unknown }).self = scope;
  vi.resetModules();
  await import('../dist/decode-worker.js');
}

const settle = () => new Promise((r) => setTimeout(r, 0));
const request = (id: number, bytes: number) => ({ id, raw: new Uint8Array(bytes), sizes: new Uint32Array([bytes]), verify: false, max: 0, filter: 0 });

beforeEach(loadWorker);

test('started by the page: an unreadable first message compiles the module here; later ones are answered { unreadable }; requests by id', async () => {
  const port = { onmessage: null as ((ev: { data: unknown }) => void) | null, onmessageerror: null as (() => void) | null, posted: [] as unknown[], postMessage: (m: unknown) => void port.posted.push(m) };
  scope.onmessage!({ data: { port } });
  port.onmessageerror!(); // the module did not arrive readable
  await settle();
  expect(calls).toEqual(['init from the glue URL']);
  expect(port.posted).toEqual([{ ready: true }]);
  port.onmessageerror!(); // a request did not arrive readable
  port.onmessage!({ data: request(7, 3) });
  await settle();
  expect(port.posted).toEqual([{ ready: true }, { unreadable: true }, { id: 7, ok: true, packed: new Uint8Array([3]) }]);
  expect(calls).toEqual(['init from the glue URL', 'decodeRun 3']);
  expect(scope.posted).toEqual([]); // everything went over the port
});

test('started by the engine: the module sent is used; an unreadable request is answered { unreadable } to the engine', async () => {
  scope.onmessage!({ data: { module: {} } });
  await settle();
  expect(calls).toEqual(['init with the module sent']);
  scope.onmessageerror!();
  scope.onmessage!({ data: request(2, 5) });
  await settle();
  expect(scope.posted).toEqual([{ ready: true }, { unreadable: true }, { id: 2, ok: true, packed: new Uint8Array([5]) }]);
});

test('started by the engine, its module unreadable: the worker compiles it from the glue URL and says ready', async () => {
  scope.onmessageerror!();
  await settle();
  expect(calls).toEqual(['init from the glue URL']);
  expect(scope.posted).toEqual([{ ready: true }]);
});
