// The decode pool's start, deterministically with stand-in workers and a stand-in database
// (the real workers: decode-workers.test.ts, and the browsers' suites): a pass begins only
// once every worker said it is ready or went away, so no worker is starting while the engine's
// thread makes synchronous storage calls (the Firefox stall, decode-pool.ts); a worker that
// never says so is terminated at the bound and the pass decodes alone; one whose instance
// failed is dropped at once; runs go only to ready workers. `globalThis.strataTrace` receives
// the pool's and the pass's steps in order.

import { afterEach, expect, test } from 'vitest';

import { DecodePool, RUNS_PER_WORKER, type DecodeMessage, type DecodePort, type DecodeRequest } from '../dist/decode-pool.js';
import { Engine, type HostLease, type WasmModule } from '../dist/engine.js';

/** `runs` runs as `Database.lendRuns` packs them, ids from `first`: one 4-byte block each. */
function packRuns(first: number, runs: number): Uint8Array {
  const each = 18 + 4 + 4 + 4;
  const out = new Uint8Array(4 + runs * each);
  const view = new DataView(out.buffer);
  view.setUint32(0, runs, true);
  for (let i = 0; i < runs; i++) {
    const at = 4 + i * each;
    view.setFloat64(at, first + i, true); // id; verify, filter, max stay 0
    view.setUint32(at + 14, 1, true); // one block
    view.setUint32(at + 18, 4, true); // of 4 bytes
    view.setUint32(at + 22, 4, true); // raw bytes
  }
  return out;
}

/** A stand-in database whose pass takes `steps` steps and lends every run asked for. */
class PassDb {
  calls: string[] = [];
  delivered: number[] = [];
  /** Called with each step's number, before the step. */
  onStep: (n: number) => void = () => {};
  private nextRun = 1;
  constructor(readonly steps: number) {}
  scanCursor(): object {
    this.calls.push('scanCursor');
    let n = 0;
    return {
      step: () => {
        this.calls.push('step');
        this.onStep(n + 1);
        return ++n >= this.steps;
      },
      figures: () => [n, this.delivered.length],
      free: () => void this.calls.push('free'),
    };
  }
  /** The whole pass at once (no decode workers). */
  scan(): number[] {
    this.calls.push('scan');
    return [this.steps, 0];
  }
  lendRuns(max: number): Uint8Array {
    this.calls.push(`lendRuns ${max}`);
    const first = this.nextRun;
    this.nextRun += max;
    return packRuns(first, max);
  }
  deliverRun(id: number): void {
    this.delivered.push(id);
  }
  abandonRun(id: number): void {
    this.calls.push(`abandon ${id}`);
  }
  maintenance(): boolean {
    return false;
  }
  readaheadStats(): string {
    return 'null';
  }
  close(): void {}
  free(): void {}
}

/** A stand-in worker: says ready when told (or never), answers every request at once. */
class FakeWorker implements DecodePort {
  readonly announcesReady = true;
  posted: number[] = [];
  terminated = false;
  private onMessage: (m: DecodeMessage) => void = () => {};
  listen(onMessage: (m: DecodeMessage) => void): void {
    this.onMessage = onMessage;
  }
  post(msg: DecodeRequest): void {
    this.posted.push(msg.id);
    queueMicrotask(() => this.onMessage({ id: msg.id, ok: true, packed: new Uint8Array(4) }));
  }
  say(m: DecodeMessage): void {
    this.onMessage(m);
  }
  terminate(): void {
    this.terminated = true;
  }
}

const trace: string[] = [];
(globalThis as { strataTrace?: (t: string) => void }).strataTrace = (t) => void trace.push(t);
afterEach(() => void (trace.length = 0));

function engineWith(db: PassDb, workers: FakeWorker[], boundMs: number): Engine {
  const module = { Database: { open: () => db, memoryBytes: () => 0 } } as unknown as WasmModule;
  const hosts = (): HostLease => ({ host: undefined });
  let i = 0;
  return new Engine(module, hosts, (size) => new DecodePool(() => workers[i++]!, size, boundMs), workers.length);
}

const tick = () => new Promise((r) => setTimeout(r, 5));

/** An engine with one stand-in worker (start bound `boundMs`) and a database of `steps` steps. */
async function oneWorker(steps: number, boundMs: number) {
  const db = new PassDb(steps);
  const w = new FakeWorker();
  const engine = engineWith(db, [w], boundMs);
  const h = await engine.open('mem', 'db', {});
  const poolStats = () => (JSON.parse(engine.decodeStats(h) as string) as { pool: Record<string, number> }).pool;
  return { db, w, engine, h, poolStats };
}

test('a pass begins only when its worker said it is ready; its runs go there; the steps are traced in order', async () => {
  const { db, w, engine, h, poolStats } = await oneWorker(4, 60_000);
  const scan = engine.scan(h) as Promise<number[]>;
  for (let i = 0; i < 4; i++) await tick();
  expect(db.calls).toEqual([]); // nothing synchronous while the worker starts
  expect(trace).toEqual(['decode pool: starting 1 worker(s), 0 started by the page']);
  w.say({ ready: true });
  expect((await scan)[0]).toBe(4);
  await tick();
  // Every step lent a full worker's worth (each answered before the next step), all delivered.
  expect(w.posted).toEqual(Array.from({ length: 4 * RUNS_PER_WORKER }, (_, i) => i + 1));
  expect(db.delivered.sort((a, b) => a - b)).toEqual(w.posted);
  expect(db.calls.slice(0, 3)).toEqual(['scanCursor', `lendRuns ${RUNS_PER_WORKER}`, 'step']);
  expect(db.calls.at(-1)).toBe('free');
  expect(trace[0]).toBe('decode pool: starting 1 worker(s), 0 started by the page');
  expect(trace[1]).toMatch(/^decode pool started in \d+ ms: 1 of 1 ready$/);
  expect(trace.slice(2, 5)).toEqual([`pass step 1: 0 run(s) in flight, lending ${RUNS_PER_WORKER}`, 'pass step 1: stepping', 'pass step 1: yield']);
  expect(trace.at(-1)).toBe('pass step 4: stepping');
  expect(poolStats()).toMatchObject({ live: 1, sent: w.posted.length, answered: w.posted.length, failed: 0, workersLost: 0, late: 0 });
  expect(poolStats().startMs).toBeGreaterThanOrEqual(15); // four 5 ms ticks (timers may fire a little early)
  await engine.close(h);
});

test('a worker that never says it is ready is terminated at the bound; the pass decodes alone, and later passes without waiting', async () => {
  const { db, w, engine, h, poolStats } = await oneWorker(3, 50);
  expect(await (engine.scan(h) as Promise<number[]>)).toEqual([3, 0]);
  expect(w.terminated).toBe(true);
  expect(w.posted).toEqual([]);
  expect(db.calls).toEqual(['scanCursor', 'step', 'step', 'step', 'free']); // nothing lent
  expect(trace[1]).toMatch(/^decode pool started in \d+ ms: 0 of 1 ready$/);
  expect(poolStats()).toMatchObject({ live: 0, sent: 0, workersLost: 1, late: 1 });
  expect(poolStats().startMs).toBeGreaterThanOrEqual(40);
  // No new pool after one none of whose workers started: the next scan neither waits nor
  // starts a worker; it runs whole, as without decode workers.
  db.calls = [];
  expect(engine.scan(h)).toEqual([3, 0]);
  expect(db.calls).toEqual(['scan']);
  await engine.close(h);
});

test('a database closed while its pool starts: the pass fails LEVEL_DATABASE_NOT_OPEN without touching it', async () => {
  const { db, w, engine, h } = await oneWorker(3, 60_000);
  const scan = engine.scan(h) as Promise<number[]>;
  await tick();
  await engine.close(h);
  w.say({ ready: true });
  await expect(scan).rejects.toMatchObject({ code: 'LEVEL_DATABASE_NOT_OPEN' });
  expect(db.calls).toEqual([]);
});

test('a worker whose instance failed is dropped at once; of two workers, only the ready one gets runs', async () => {
  const failed = new DecodePool(() => new FakeWorker(), 1, 60_000);
  const t0 = Date.now();
  (failed as unknown as { members: Array<{ port: FakeWorker }> }).members[0]!.port.say({ ready: false, error: 'no memory' });
  await failed.started;
  expect(Date.now() - t0).toBeLessThan(1000);
  expect(failed.stats).toMatchObject({ workersLost: 1, late: 0 });
  expect(failed.live).toBe(0);
  // A member dropped is ended too (a page-started worker would otherwise live on).
  expect((failed as unknown as { members: Array<{ port: FakeWorker }> }).members[0]!.port.terminated).toBe(true);

  const workers = [new FakeWorker(), new FakeWorker()];
  let i = 0;
  const pool = new DecodePool(() => workers[i++]!, 2, 60_000);
  workers[1]!.say({ ready: true });
  expect(pool.capacity).toBe(RUNS_PER_WORKER); // the starting one takes none
  const answers = await Promise.all([1, 2, 3].map(() => pool.decode(new Uint8Array(4), new Uint32Array([4]), false, 0)));
  expect(answers.map((a) => a.ok)).toEqual([true, true, true]);
  expect(workers[0]!.posted).toEqual([]);
  expect(workers[1]!.posted).toEqual([1, 2, 3]);
  let started = false;
  void pool.started.then(() => (started = true));
  await tick();
  expect(started).toBe(false);
  workers[0]!.say({ ready: true });
  await pool.started;
  expect(pool.capacity).toBe(2 * RUNS_PER_WORKER);
  // close() settles a start still waiting (no pass waits out the bound on a closed pool).
  const closing = new DecodePool(() => new FakeWorker(), 1, 60_000);
  closing.close();
  await closing.started;
  expect(closing.stats.late).toBe(0);
  pool.close();
});

test('a worker that says a request reached it unreadable: every run in flight there fails at once and the pass decodes them; later requests still go to it', async () => {
  /** Holds its requests unanswered until told. */
  class HoldingWorker extends FakeWorker {
    hold = true;
    override post(msg: DecodeRequest): void {
      if (!this.hold) return super.post(msg);
      this.posted.push(msg.id);
    }
  }
  const w = new HoldingWorker();
  const pool = new DecodePool(() => w, 1, 60_000);
  w.say({ ready: true });
  await pool.started;
  const answers = [1, 2].map(() => pool.decode(new Uint8Array(4), new Uint32Array([4]), false, 0));
  expect(w.posted).toEqual([1, 2]);
  w.say({ unreadable: true });
  expect(await Promise.all(answers)).toEqual([
    { id: 1, ok: false, error: 'a request reached the decode worker unreadable' },
    { id: 2, ok: false, error: 'a request reached the decode worker unreadable' },
  ]);
  // A late answer to a failed request is ignored; the worker takes the next ones.
  w.say({ id: 1, ok: true, packed: new Uint8Array(4) });
  w.hold = false;
  expect((await pool.decode(new Uint8Array(4), new Uint32Array([4]), false, 0)).ok).toBe(true);
  expect(pool.stats).toMatchObject({ sent: 3, answered: 1, failed: 2, unreadable: 1, workersLost: 0 });
  expect(pool.live).toBe(1);

  // In a pass: the runs in flight there are abandoned (the cursor decodes them itself), and the
  // next step lends again (the runs never answered no longer take the worker's room).
  const db = new PassDb(4);
  const held = new HoldingWorker();
  db.onStep = (n) => {
    if (n !== 2) return;
    held.say({ unreadable: true });
    held.hold = false;
  };
  const engine = engineWith(db, [held], 60_000);
  const h = await engine.open('mem', 'db', {});
  const scan = engine.scan(h) as Promise<number[]>;
  held.say({ ready: true });
  const figures = await scan;
  const runs = (from: number) => Array.from({ length: RUNS_PER_WORKER }, (_, i) => from + i);
  expect(db.calls.filter((c) => c.startsWith('abandon'))).toEqual(runs(1).map((id) => `abandon ${id}`));
  // Step 2 lends nothing (its room still taken), steps 3 and 4 a full worker's worth each.
  expect(db.calls.filter((c) => c.startsWith('lendRuns') || c === 'step')).toEqual([
    `lendRuns ${RUNS_PER_WORKER}`, 'step', 'step', `lendRuns ${RUNS_PER_WORKER}`, 'step', `lendRuns ${RUNS_PER_WORKER}`, 'step',
  ]);
  await tick();
  expect(held.posted).toEqual([...runs(1), ...runs(RUNS_PER_WORKER + 1), ...runs(2 * RUNS_PER_WORKER + 1)]);
  expect(db.delivered.sort((a, b) => a - b)).toEqual([...runs(RUNS_PER_WORKER + 1), ...runs(2 * RUNS_PER_WORKER + 1)]);
  expect(figures[0]).toBe(4);
  await engine.close(h);
  pool.close();
});
