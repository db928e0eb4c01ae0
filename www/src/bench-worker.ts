// One benchmark run in a fresh dedicated worker: every asked workload, in db_bench's order,
// on one engine — Strata over OPFS (the package's browser API: its engine runs in this worker,
// with durability 'default' or, strata-opfs-relaxed, 'relaxed';
// or with strata-opfs-hop in the package's own nested worker, a message per call, or with
// strata-opfs-hop-64 there with 64 calls in flight, a message per turn) or
// IndexedDB through browser-level. Each put/get is one awaited call, as an
// application would make it. Posts `{type: 'phase', text}` as each step of a workload starts
// (the page shows where a long or stuck run is), `{type: 'engine', text}` for the package's own
// diagnostic steps (globalThis.strataTrace), `{type: 'row', row}` per workload, then
// `{type: 'done'}` or `{type: 'error', message}`.
//
// Workloads (db_bench's names): fillseq and fillrandom write `entries` keys into a fresh
// database (16-byte decimal keys, `valueSize` pseudo-random bytes); readseq reads every entry
// in order, readrandom `entries` random gets, both on the database the last fill left;
// batch writes `entries` keys in batches of `batchSize` into a fresh database; scan (Strata
// only) is DESIGN §2's scan over a world imported by the viewer.

import { BrowserLevel } from 'browser-level';
import { destroy, open, openWorld, useDecodeWorkers, type Db } from 'strata-level/browser';

import { WORKLOADS, type BenchConfig, type BenchRow, type Engine } from './bench-config.js';

interface Store {
  put(k: Uint8Array, v: Uint8Array): Promise<void>;
  get(k: Uint8Array): Promise<Uint8Array | undefined>;
  batch(ops: Array<{ type: 'put'; key: Uint8Array; value: Uint8Array }>): Promise<void>;
  /** Reads every entry in key order; returns [entries, bytes]. */
  readAll(): Promise<[number, number]>;
  close(): Promise<void>;
}

const enc = new TextEncoder();

function key(i: number): Uint8Array {
  return enc.encode(String(i).padStart(16, '0'));
}

/** Deterministic pseudo-random bytes (xorshift32), the same for every engine. */
function values(size: number, count: number, seed = 301): Uint8Array[] {
  let s = seed >>> 0 || 1;
  const out: Uint8Array[] = [];
  for (let n = 0; n < count; n++) {
    const v = new Uint8Array(size);
    for (let i = 0; i < size; i++) {
      s ^= s << 13;
      s >>>= 0;
      s ^= s >>> 17;
      s ^= s << 5;
      s >>>= 0;
      v[i] = s & 0xff;
    }
    out.push(v);
  }
  return out;
}

function shuffled(n: number, seed = 7): number[] {
  const a = Array.from({ length: n }, (_, i) => i);
  let s = seed;
  for (let i = n - 1; i > 0; i--) {
    s = (Math.imul(s, 1103515245) + 12345) >>> 0;
    const j = s % (i + 1);
    [a[i], a[j]] = [a[j]!, a[i]!];
  }
  return a;
}

async function strataStore(location: string, engine: 'inline' | 'worker', storage: 'opfs' | 'idb' = 'opfs', durability: 'default' | 'relaxed' = 'default'): Promise<Store> {
  await destroy(location, { engine, storage });
  const db: Db = await open(location, storage === 'opfs' ? { storage, engine, durability } : { storage, engine });
  return {
    put: (k, v) => db.put(k, v),
    get: async (k) => (await db.get(k)) as Uint8Array | undefined,
    batch: (ops) => db.batch(ops),
    async readAll() {
      const it = db.iterator();
      let n = 0;
      let bytes = 0;
      for (;;) {
        const b = (await it.nextv(1000)) as Array<[Uint8Array, Uint8Array]>;
        if (b.length === 0) break;
        for (const [k, v] of b) bytes += k.length + v.length;
        n += b.length;
      }
      await it.close();
      return [n, bytes];
    },
    async close() {
      await db.close();
      await destroy(location, { storage });
    },
  };
}

async function idbStore(name: string): Promise<Store> {
  const db = new BrowserLevel<Uint8Array, Uint8Array>(name, { keyEncoding: 'view', valueEncoding: 'view' });
  await db.open();
  await db.clear();
  return {
    put: (k, v) => db.put(k, v),
    get: (k) => db.get(k),
    batch: (ops) => db.batch(ops),
    async readAll() {
      const it = db.iterator();
      let n = 0;
      let bytes = 0;
      for (;;) {
        const b = await it.nextv(1000);
        if (b.length === 0) break;
        for (const [k, v] of b) bytes += k.length + v.length;
        n += b.length;
      }
      await it.close();
      return [n, bytes];
    },
    async close() {
      await db.clear();
      await db.close();
    },
  };
}

/** Runs `f`, reporting every HEARTBEAT_MS while it runs: how long, and the readahead's and
 * decode workers' counters (or that the engine did not answer them within a second), so a
 * slow or stuck scan shows where it is. */
const HEARTBEAT_MS = 5000;
async function watched<T>(what: string, world: { db: { decodeStats(): Promise<unknown> } }, report: (text: string) => void, f: () => Promise<T>): Promise<T> {
  const t0 = performance.now();
  let finished = false;
  const timer = setInterval(() => {
    const stats = Promise.race([
      world.db.decodeStats().then(
        (s) => JSON.stringify(s),
        (e: unknown) => `decodeStats failed: ${String(e)}`,
      ),
      new Promise<string>((r) => setTimeout(() => r('decodeStats: no answer in 1 s'), 1000)),
    ]);
    // Not once `f` has ended (the counters may answer after it).
    void stats.then((s) => finished || report(`${what}: still running after ${((performance.now() - t0) / 1000).toFixed(0)} s; ${s}`));
  }, HEARTBEAT_MS);
  try {
    return await f();
  } finally {
    finished = true;
    clearInterval(timer);
  }
}

/** Whether the package's diagnostic steps are posted (see `strataTrace` below). */
let tracing = false;

async function run(engine: Engine, c: BenchConfig, post: (row: BenchRow) => void, phase: (text: string) => void): Promise<void> {
  const fresh = () =>
    engine === 'indexeddb'
      ? idbStore('strata-bench')
      : engine === 'strata-idb'
        ? strataStore('bench/strata-idb', 'inline', 'idb')
        : engine === 'strata-opfs-relaxed'
          ? strataStore('bench/strata', 'inline', 'opfs', 'relaxed')
          : strataStore('bench/strata', engine === 'strata-opfs' ? 'inline' : 'worker');
  // Calls in flight for the put and get workloads: one (each awaited before the next, as an
  // application would), or 64 lanes each awaiting its own (strata-opfs-hop-64).
  const lanes = engine === 'strata-opfs-hop-64' ? 64 : 1;
  const each = async (n: number, f: (j: number) => Promise<void>) => {
    if (lanes === 1) {
      for (let j = 0; j < n; j++) await f(j);
      return;
    }
    let next = 0;
    const lane = async () => {
      while (next < n) await f(next++);
    };
    await Promise.all(Array.from({ length: lanes }, lane));
  };
  const vals = values(c.valueSize, Math.min(c.entries, 1024));
  const val = (i: number) => vals[i % vals.length]!;
  const entryBytes = 16 + c.valueSize;
  let store: Store | undefined;
  const row = (workload: string, ops: number, bytes: number, seconds: number) =>
    post({ workload, engine, ops, bytes, seconds, opsPerSec: ops / seconds, mbPerSec: bytes / 1e6 / seconds });
  const timed = async (f: () => Promise<void>) => {
    const t = performance.now();
    await f();
    return (performance.now() - t) / 1000;
  };
  try {
    for (const w of WORKLOADS) {
      if (!c.workloads.includes(w)) continue;
      phase(w);
      if (w === 'fillseq' || w === 'fillrandom') {
        await store?.close();
        store = await fresh();
        const s = store;
        const order = w === 'fillseq' ? Array.from({ length: c.entries }, (_, i) => i) : shuffled(c.entries);
        row(w, c.entries, c.entries * entryBytes, await timed(async () => {
          await each(order.length, (j) => s.put(key(order[j]!), val(order[j]!)));
        }));
      } else if (w === 'readseq' || w === 'readrandom') {
        if (!store) {
          store = await fresh();
          const s = store;
          for (let i = 0; i < c.entries; i += c.batchSize) {
            await s.batch(Array.from({ length: Math.min(c.batchSize, c.entries - i) }, (_, j) => ({ type: 'put' as const, key: key(i + j), value: val(i + j) })));
          }
        }
        const s = store;
        if (w === 'readseq') {
          let got: [number, number] = [0, 0];
          const t = await timed(async () => {
            got = await s.readAll();
          });
          if (got[0] !== c.entries) throw new Error(`${engine} readseq: ${got[0]} entries, expected ${c.entries}`);
          row(w, got[0], got[1], t);
        } else {
          const order = shuffled(c.entries, 11);
          let found = 0;
          const t = await timed(async () => {
            await each(order.length, async (j) => {
              if ((await s.get(key(order[j]!))) !== undefined) found++;
            });
          });
          if (found !== c.entries) throw new Error(`${engine} readrandom: ${found} of ${c.entries} keys found`);
          row(w, c.entries, c.entries * entryBytes, t);
        }
      } else if (w === 'batch') {
        await store?.close();
        store = await fresh();
        const s = store;
        row(w, c.entries, c.entries * entryBytes, await timed(async () => {
          for (let i = 0; i < c.entries; i += c.batchSize) {
            await s.batch(Array.from({ length: Math.min(c.batchSize, c.entries - i) }, (_, j) => ({ type: 'put' as const, key: key(i + j), value: val(i + j) })));
          }
        }));
      } else if ((w === 'scan' || w === 'scan-workers') && engine === 'strata-opfs' && c.world) {
        // The world in whichever store the page copied it to (OPFS, or IndexedDB without it).
        phase(`${w}: opening ${c.world}`);
        const world = await openWorld(c.world, w === 'scan' ? { decodeWorkers: 0 } : {});
        try {
          // One untimed scan first: the same warm caches for both, and the decode workers
          // (their wasm instances) started before the timed one.
          phase(`${w}: untimed scan`);
          tracing = true;
          try {
            await watched(`${w}: untimed scan`, world, phase, () => world.db.scan());
          } finally {
            tracing = false;
          }
          let r = { entries: 0, keyBytes: 0, valueBytes: 0, crc32c: 0 };
          phase(`${w}: timed scan`);
          const t = await timed(async () => {
            r = await watched(`${w}: timed scan`, world, phase, () => world.db.scan());
          });
          row(w, r.entries, r.keyBytes + r.valueBytes, t);
        } finally {
          phase(`${w}: closing ${c.world}`);
          await world.close();
        }
      }
    }
  } finally {
    await store?.close();
  }
}

const scope = self as unknown as { onmessage: ((ev: MessageEvent<{ engine: Engine; config: BenchConfig; decoderPorts: MessagePort[] }>) => void) | null; postMessage(m: unknown): void };
// The package's diagnostic steps (decode pool start, each step of a pass), posted before each
// synchronous step during the untimed scans (their cost stays out of the timed ones): should
// this worker's thread stall, the page holds the last one it reached.
(globalThis as { strataTrace?: (text: string) => void }).strataTrace = (text) => {
  if (tracing) scope.postMessage({ type: 'engine', text });
};
scope.onmessage = (ev) => {
  // Decode workers the page started for this engine (see bench.ts), before any scan.
  useDecodeWorkers(ev.data.decoderPorts)
    .then(() =>
      run(
        ev.data.engine,
        ev.data.config,
        (row) => scope.postMessage({ type: 'row', row }),
        (text) => scope.postMessage({ type: 'phase', text }),
      ),
    )
    .then(
      () => scope.postMessage({ type: 'done' }),
      (e: unknown) => scope.postMessage({ type: 'error', message: String((e as Error)?.message ?? e) }),
    );
};
