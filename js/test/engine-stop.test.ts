// The engine's stop after a trap, deterministically, with a stand-in for the wasm module (the
// real trap is js/test/out-of-memory.test.ts): what the stopped engine still answers, what it
// never touches again (no call and no `free()` into its dead instance), and how an engine made
// after it (the browser worker's path: one link, engines replaced under it) answers the old
// handles with the old error and never hands one of them out again.

import { expect, test } from 'vitest';

import { DecodePool, type DecodeAnswer, type DecodePort } from '../dist/decode-pool.js';
import { Engine, type HostLease, type WasmModule } from '../dist/engine.js';
import { StrataError } from '../dist/errors.js';
import { fence } from '../dist/instance-fence.js';

/** A stand-in streamed export: records its calls. */
class FakeExport {
  calls: string[] = [];
  step(): boolean {
    this.calls.push('step');
    return false;
  }
  progress(): object {
    this.calls.push('progress');
    return { phase: 'compact', done: 0, total: 1, files: 0, bytes: 0 };
  }
  cancel(): void {
    this.calls.push('cancel');
  }
  free(): void {
    this.calls.push('free');
  }
}

/** One run as `Database.lendRuns` packs it: id 1, no verify, no filter, one block of 4 bytes. */
function oneLentRun(): Uint8Array {
  const out = new Uint8Array(34);
  const view = new DataView(out.buffer);
  view.setUint32(0, 1, true); // runs
  view.setFloat64(4, 1, true); // id
  // verify (12), filter (13): 0; max (14): 0
  view.setUint32(18, 1, true); // blocks
  view.setUint32(22, 4, true); // the block's size
  view.setUint32(26, 4, true); // raw bytes
  return out;
}

/** A stand-in database: a map; `put` of a value longer than 8 bytes traps as wasm does, and so
 * does the delivery of a decoded run. */
class FakeDb {
  readonly data = new Map<string, Uint8Array>();
  calls: string[] = [];
  trapInMaintenance = false;
  exports: FakeExport[] = [];
  private lent = false;
  constructor(readonly log: string[]) {}
  exportBegin(): FakeExport {
    this.calls.push('exportBegin');
    const x = new FakeExport();
    this.exports.push(x);
    return x;
  }
  scanCursor(): object {
    this.calls.push('scanCursor');
    let steps = 0;
    return {
      step: () => {
        this.calls.push('cursor.step');
        return ++steps > 1000; // ends only if the delivery never comes
      },
      figures: () => [0],
      free: () => void this.calls.push('cursor.free'),
    };
  }
  lendRuns(): Uint8Array {
    this.calls.push('lendRuns');
    if (this.lent) return new Uint8Array(4);
    this.lent = true;
    return oneLentRun();
  }
  deliverRun(): void {
    this.calls.push('deliverRun');
    throw new WebAssembly.RuntimeError('unreachable');
  }
  abandonRun(): void {
    this.calls.push('abandonRun');
  }
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

test('the fence: after the stop no call and no free() reaches the instance, through any object it made', () => {
  let stop: Error | undefined;
  const failures: unknown[] = [];
  const gate = {
    stopped: () => stop,
    failure: (e: unknown) => {
      failures.push(e);
      if (e instanceof WebAssembly.RuntimeError) stop ??= new Error('stopped');
      return stop ?? e;
    },
  };
  const calls: string[] = [];
  const made: Thing[] = [];
  class Thing {
    constructor(readonly name: string) {
      made.push(this);
    }
    child(): Thing {
      calls.push(`${this.name}.child`);
      return new Thing(`${this.name}/c`);
    }
    /** True when `t` arrives as the object this module made, not its fence. */
    owns(t: Thing): boolean {
      calls.push(`${this.name}.owns`);
      return made.includes(t);
    }
    fail(trap: boolean): void {
      calls.push(`${this.name}.fail`);
      throw trap ? new WebAssembly.RuntimeError('unreachable') : new Error('bad input');
    }
    free(): void {
      calls.push(`${this.name}.free`);
    }
  }
  // wasm-bindgen makes Symbol.dispose an alias of free where the runtime has it.
  const dispose = (Symbol as { dispose?: symbol }).dispose;
  if (dispose) (Thing.prototype as unknown as Record<symbol, unknown>)[dispose] = Thing.prototype.free;
  const module = fence({ make: () => new Thing('a'), memoryBytes: () => 7 }, gate, new Set(['memoryBytes']));
  const a = module.make();
  expect(made.length).toBe(1);
  expect(made.includes(a)).toBe(false); // handed out fenced
  const c = a.child();
  expect(made.includes(c)).toBe(false); // and so is what its methods return
  expect(c.name).toBe('a/c');
  expect(a.owns(c)).toBe(true); // arguments reach the module unfenced
  expect(() => c.fail(false)).toThrow('bad input'); // an error is not a trap: nothing stops
  expect(stop).toBeUndefined();
  const early = c.child; // taken before the stop, called after it
  let thrown: unknown;
  try {
    a.fail(true);
  } catch (e) {
    thrown = e;
  }
  expect(stop).toBeInstanceOf(Error);
  expect(thrown).toBe(stop);
  expect(failures.length).toBe(2);
  const before = [...calls];
  expect(() => a.child()).toThrow(stop!);
  expect(() => early()).toThrow(stop!);
  expect(() => module.make()).toThrow(stop!);
  expect(a.free()).toBeUndefined();
  c.free();
  if (dispose) expect((c as unknown as Record<symbol, () => unknown>)[dispose]!()).toBeUndefined();
  expect(module.memoryBytes()).toBe(7);
  expect(calls).toEqual(before);
  expect(calls).toEqual(['a.child', 'a.owns', 'a/c.fail', 'a.fail']);
});

test('a trap delivering a decode worker\'s run stops the engine and fails the scan; nothing more reaches the instance', async () => {
  const dbs: FakeDb[] = [];
  const port = (): DecodePort => {
    let answer: (a: DecodeAnswer) => void = () => {};
    return {
      post: (msg) => queueMicrotask(() => answer({ id: msg.id, ok: true, packed: new Uint8Array([1]) })),
      listen: (onAnswer) => void (answer = onAnswer),
      terminate: () => {},
    };
  };
  const hosts = (): HostLease => ({ host: undefined });
  const engine = new Engine(fakeModule(dbs, []), hosts, (size) => new DecodePool(port, size), 1);
  const h = await engine.open('mem', 'scan', {});
  const db = dbs[0]!;
  await expect(engine.scan(h) as Promise<number[]>).rejects.toMatchObject({ code: 'LEVEL_IO_ERROR', kind: 'EngineStopped' });
  expect(engine.stopped?.kind).toBe('EngineStopped');
  // The pass stopped at its first step after the delivery; its cursor was not freed into
  // the dead instance, and nothing else was called there.
  const delivered = db.calls.indexOf('deliverRun');
  expect(delivered).toBeGreaterThan(0);
  expect(db.calls.slice(delivered)).toEqual(['deliverRun']);
  expect(db.calls.filter((c) => c === 'cursor.step').length).toBeLessThan(1000);
  expect(db.calls).not.toContain('cursor.free');
});

test('an export waiting on its storage when the engine stops never calls its dead instance again', async () => {
  const dbs: FakeDb[] = [];
  let hold: Promise<void> | undefined;
  const released: string[] = [];
  const hosts = (_kind: string, location: string): HostLease => ({
    host: undefined,
    prepare: () => hold ?? Promise.resolve(),
    release: () => void released.push(location),
  });
  const engine = new Engine(fakeModule(dbs, []), hosts, undefined, 0);
  const h = await engine.open('mem', 'world', {});
  const eh = await engine.exportBegin(h, { kind: 'mem', location: 'scratch', dir: 'x' });
  const db = dbs[0]!;
  const exp = db.exports[0]!;
  let go = () => {};
  hold = new Promise<void>((r) => (go = r));
  const stepping = engine.exportStep(eh, 1024);
  let trap: unknown;
  try {
    engine.put(h, bytes('k'), bytes('123456789'), false);
  } catch (e) {
    trap = e;
  }
  expect((trap as StrataError).kind).toBe('EngineStopped');
  const dbCalls = [...db.calls];
  const expCalls = [...exp.calls];
  expect(expCalls).toEqual(['progress']); // the put asked whether the export was copying
  go();
  await expect(stepping).rejects.toBe(trap);
  await engine.exportCancel(eh);
  await engine.close(h);
  expect(exp.calls).toEqual(expCalls); // no step, no cancel, no free
  expect(db.calls).toEqual(dbCalls);
  expect(released.sort()).toEqual(['scratch', 'world']);
});

test("the home's clean-up failing at the stop (the instance reset: no memory) never replaces the stop error, in a call or in idle maintenance", async () => {
  const dbs: FakeDb[] = [];
  let resets = 0;
  const failingReset = () => {
    resets++;
    throw new RangeError('WebAssembly.Instance(): Out of memory');
  };
  const hosts = (): HostLease => ({ host: undefined });
  // In a call: the caller gets the stop error.
  const first = new Engine(fakeModule(dbs, []), hosts, undefined, 0, failingReset);
  const h1 = await first.open('mem', 'one', {});
  let trap: unknown;
  try {
    first.put(h1, bytes('k'), bytes('123456789'), false);
  } catch (e) {
    trap = e;
  }
  expect((trap as StrataError).kind).toBe('EngineStopped');
  expect(first.stopped).toBe(trap);
  expect(resets).toBe(1);
  expect(() => first.get(h1, bytes('k'), undefined, true)).toThrow(trap as Error);
  // In idle maintenance (no caller): no unhandled rejection (vitest fails the run on one).
  const second = new Engine(fakeModule(dbs, []), hosts, undefined, 0, failingReset);
  const h2 = await second.open('mem', 'two', {});
  dbs[dbs.length - 1]!.trapInMaintenance = true;
  second.put(h2, bytes('x'), bytes('y'), false);
  await tick();
  expect(second.stopped?.kind).toBe('EngineStopped');
  expect(resets).toBe(2);
});
