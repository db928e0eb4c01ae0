// The engine's stop after a trap, deterministically, with a stand-in for the wasm module (the
// real trap is js/test/out-of-memory.test.ts): what the stopped engine still answers, what it
// never touches again (no call and no `free()` into its dead instance), and how an engine made
// after it (the browser worker's path: one link, engines replaced under it) answers the old
// handles with the old error and never hands one of them out again.

import { expect, test } from 'vitest';

import { Engine, type HostLease, type WasmModule } from '../dist/engine.js';
import { StrataError } from '../dist/errors.js';

/** A stand-in database: a map; `put` of a value longer than 8 bytes traps as wasm does. */
class FakeDb {
  readonly data = new Map<string, Uint8Array>();
  calls: string[] = [];
  trapInMaintenance = false;
  constructor(readonly log: string[]) {}
  put(key: Uint8Array, value: Uint8Array): void {
    this.calls.push('put');
    if (value.length > 8) throw new WebAssembly.RuntimeError('unreachable');
    this.data.set(new TextDecoder().decode(key), value);
  }
  get(key: Uint8Array): Uint8Array | undefined {
    this.calls.push('get');
    return this.data.get(new TextDecoder().decode(key));
  }
  releaseSnapshot(): void {
    this.calls.push('releaseSnapshot');
  }
  maintenance(): boolean {
    this.calls.push('maintenance');
    if (this.trapInMaintenance) throw new WebAssembly.RuntimeError('unreachable');
    return false;
  }
  close(): void {
    this.calls.push('close');
  }
  free(): void {
    this.calls.push('free');
  }
}

function fakeModule(dbs: FakeDb[], log: string[]): WasmModule {
  return {
    Database: {
      open: () => {
        const db = new FakeDb(log);
        dbs.push(db);
        return db;
      },
      memoryBytes: () => 1234,
    },
  } as unknown as WasmModule;
}

const bytes = (s: string) => new TextEncoder().encode(s);
const tick = () => new Promise((r) => setTimeout(r, 5));

test('a trap stops the engine; a successor answers the old handles with its error', async () => {
  const log: string[] = [];
  const dbs: FakeDb[] = [];
  const released: string[] = [];
  let stops = 0;
  const hosts = (_kind: string, location: string): HostLease => ({ host: undefined, release: () => void released.push(location) });
  const first = new Engine(fakeModule(dbs, log), hosts, undefined, 0, () => void stops++);
  const h1 = await first.open('mem', 'one', {});
  const h2 = await first.open('mem', 'two', {});
  first.put(h1, bytes('k'), bytes('v'), false);
  expect(first.get(h1, bytes('k'), undefined, true)).toEqual(bytes('v'));

  // The trap: a StrataError, never the RuntimeError; leases released once, onStop once.
  let trap: StrataError | undefined;
  try {
    first.put(h2, bytes('k'), bytes('123456789'), false);
  } catch (e) {
    trap = e as StrataError;
  }
  expect(trap).toBeInstanceOf(StrataError);
  expect(trap!.code).toBe('LEVEL_IO_ERROR');
  expect(trap!.kind).toBe('EngineStopped');
  expect(trap!.cause).toBeInstanceOf(WebAssembly.RuntimeError);
  expect(first.stopped).toBe(trap);
  expect(released.sort()).toEqual(['one', 'two']);
  expect(stops).toBe(1);

  // Nothing more reaches the dead instance: every operation fails with the same error...
  const before = dbs.map((d) => d.calls.length);
  expect(() => first.get(h1, bytes('k'), undefined, true)).toThrow(trap);
  expect(() => first.put(h1, bytes('k'), bytes('v'), false)).toThrow(trap);
  await expect((async () => first.open('mem', 'three', {}))()).rejects.toBe(trap);
  // ...but what releases the caller's resources answers, doing nothing.
  first.releaseSnapshot(h1, 1);
  first.closeIterator(99);
  await first.close(h1);
  await first.close(h2);
  expect(first.memoryBytes()).toBe(1234);
  expect(dbs.map((d) => d.calls.length)).toEqual(before); // no close, no free, no call at all
  expect(dbs.length).toBe(2);
  await tick(); // no idle maintenance runs in a stopped engine either
  expect(dbs.map((d) => d.calls.length)).toEqual(before);

  // A successor (the worker's next engine): new handles above every old one; the old ones
  // fail with the error that stopped their engine, unknown new ones with "not open".
  const second = new Engine(fakeModule(dbs, log), hosts, undefined, 0, undefined, first);
  const h3 = await second.open('mem', 'one', {});
  expect(h3).toBeGreaterThan(h2);
  second.put(h3, bytes('k'), bytes('v2'), false);
  expect(second.get(h3, bytes('k'), undefined, true)).toEqual(bytes('v2'));
  expect(() => second.get(h1, bytes('k'), undefined, true)).toThrow(trap);
  expect(() => second.nextv(h2, 1, 1, true, true)).toThrow(trap);
  let notOpen: unknown;
  try {
    second.get(h3 + 1000, bytes('k'), undefined, true);
  } catch (e) {
    notOpen = e;
  }
  expect((notOpen as StrataError).code).toBe('LEVEL_DATABASE_NOT_OPEN');
  expect(second.stopped).toBeUndefined();

  // A trap in idle maintenance stops the engine too (no caller to tell: the next call says it).
  await second.close(h3);
  const h4 = await second.open('mem', 'four', {});
  const db4 = dbs[dbs.length - 1]!;
  db4.trapInMaintenance = true;
  second.put(h4, bytes('x'), bytes('y'), false); // schedules maintenance
  await tick();
  expect(second.stopped?.kind).toBe('EngineStopped');
  expect(() => second.get(h4, bytes('x'), undefined, true)).toThrow(second.stopped!);
  expect(db4.calls.filter((c) => c === 'free').length).toBe(0);
});
