// Running out of wasm memory (every database of an instance shares its 4 GiB), through the
// Node package, with real allocations (no hook):
// - a write the memtable cannot make room for fails alone with kind OutOfMemory, before its
//   log has it, and the database goes on;
// - a call that traps the instance (a value too large to copy in: `unreachable`) stops the
//   engine: that call and every later one on its databases fail with kind EngineStopped, never
//   a bare RuntimeError or a call into half-changed memory; the dead instance is let go at
//   the stop (its memory, its objects' finalizers); closing them works; an open starts a
//   new engine, where both databases (one never closed) open again with every write they
//   acknowledged.
// Each of the two writes copies 1.5 GiB or more into wasm memory; the file runs alone in its
// fork (vitest.config.ts: forks, no file parallelism).

import fs from 'node:fs';
import path from 'node:path';
import { expect, test } from 'vitest';

import { getEngine, NodeFsHost, open, StrataError } from '../dist/node.js';
import { tempDir } from './helpers.js';

const GiB = 2 ** 30;

/** The error `p` rejects with (failing the test if it resolves). */
async function rejection(p: Promise<unknown>): Promise<StrataError> {
  try {
    await p;
  } catch (e) {
    expect(e).toBeInstanceOf(StrataError);
    return e as StrataError;
  }
  throw new Error('expected a rejection');
}

test('out of wasm memory: one write fails alone, a trap stops the engine, an open starts a new one', async () => {
  const dir = tempDir('oom');
  const a = await open(path.join(dir, 'a'));
  const b = await open(path.join(dir, 'b'));
  // A third through the caller's own host (its locks are the caller's to abandon).
  const host = new NodeFsHost();
  const c = await open(path.join(dir, 'c'), { storage: 'host', host });
  await a.put('a1', 'one');
  await b.put('b1', 'two');
  await c.put('c1', 'three');
  const snap = await c.snapshot();
  // A fourth with a scan in flight when the trap comes: 32 MiB in tables, scanned in 256 KiB
  // steps with a decode worker, so the scan is waiting between steps.
  const d = await open(path.join(dir, 'd'), { decodeWorkers: 1 });
  const value = new Uint8Array(1024).map((_, i) => (i * 7919) % 251);
  for (let i = 0; i < 32; i++) {
    await d.batch(Array.from({ length: 1024 }, (_, j) => ({ type: 'put' as const, key: `d${String(i * 1024 + j).padStart(6, '0')}`, value })));
  }
  await d.compactRange();

  // 1.5 GiB: copied in (1.5), framed as a batch (3), then the memtable's 1.5 more passes 4 GiB.
  const big = new Uint8Array(1.5 * GiB);
  big[0] = 1;
  const oom = await rejection(a.put('too-big', big));
  expect(oom.code).toBe('LEVEL_IO_ERROR');
  expect(oom.kind).toBe('OutOfMemory');
  expect(oom.message).toMatch(/memtable's values could not grow by 1610612736 bytes/);
  // Refused whole, the database writable, the instance alive.
  expect(getEngine().stopped).toBeUndefined();
  await a.put('a2', 'after the refused write');
  expect(new TextDecoder().decode((await a.get('a1')) as Uint8Array)).toBe('one');
  expect(await a.get('too-big')).toBeUndefined();

  // 3.5 GiB cannot be copied into the instance at all: wasm-bindgen's allocation aborts, a trap.
  const huge = new Uint8Array(3.5 * GiB);
  const stoppedBy = getEngine();
  expect(stoppedBy.memoryBytes()).toBeGreaterThan(2 * GiB);
  const scan = d.scan();
  const trap = await rejection(b.put('too-big', huge));
  expect(trap.code).toBe('LEVEL_IO_ERROR');
  expect(trap.kind).toBe('EngineStopped');
  expect(trap.message).toMatch(/^Strata's WebAssembly engine stopped \(unreachable\): out of memory/);
  expect(trap.cause).toBeInstanceOf(WebAssembly.RuntimeError);
  expect(stoppedBy.stopped).toBe(trap);
  // The dead instance was let go at the stop (over 3 GiB in it): the memory figure is a fresh
  // instance's, and its objects' finalizers (wasm-bindgen's, per instance id) can no longer
  // run a `drop` in it.
  expect(stoppedBy.memoryBytes()).toBeLessThan(64 * 2 ** 20);
  // Every database of the stopped engine answers with the same error, nothing runs in it.
  for (const call of [() => a.get('a1'), () => b.get('b1'), () => a.put('a3', 'x'), () => b.properties()]) {
    expect(await rejection(call())).toBe(trap);
  }
  // The scan stops at its next step with the same error, its cursor never freed into the
  // instance that will replace the dead one.
  expect(await rejection(scan)).toBe(trap);
  await d.close();
  await a.close(); // released what it could; `b` is left open, its lock held by the dead engine
  await snap.release(); // releasing after the stop does nothing, and does not fail
  await c.close();

  // A new instance: its memory starts over, and both databases open again with their writes.
  const a2 = await open(path.join(dir, 'a'));
  const engine = getEngine();
  expect(engine).not.toBe(stoppedBy);
  expect(engine.stopped).toBeUndefined();
  expect(engine.memoryBytes()).toBeLessThan(64 * 2 ** 20);
  const b2 = await open(path.join(dir, 'b'));
  const text = async (db: typeof a2, key: string) => new TextDecoder().decode((await db.get(key)) as Uint8Array);
  expect(await text(a2, 'a1')).toBe('one');
  expect(await text(a2, 'a2')).toBe('after the refused write');
  expect(await a2.get('too-big')).toBeUndefined();
  expect(await text(b2, 'b1')).toBe('two');
  expect(await b2.get('too-big')).toBeUndefined();
  // The old handle still fails with the error that stopped its engine, and closes quietly.
  expect(await rejection(b.get('b1'))).toBe(trap);
  await b.close();
  await b2.put('b2', 'in the new engine');
  const c2 = await open(path.join(dir, 'c'), { storage: 'host', host });
  expect(await text(c2, 'c1')).toBe('three');
  const d2 = await open(path.join(dir, 'd'), { decodeWorkers: 1 });
  expect((await d2.scan()).entries).toBe(32 * 1024);
  await d2.close();
  await a2.close();
  await b2.close();
  await c2.close();
  // No lock owner files left behind: the dead engine's locks were released.
  for (const name of ['a', 'b', 'c']) {
    expect(fs.readdirSync(path.join(dir, name)).filter((f) => f.startsWith('LOCK'))).toEqual(['LOCK']);
  }
});
