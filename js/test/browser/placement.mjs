// Test functions for browser-placement.test.ts, run in the page: calls coalesced into one
// message per turn of the event loop, errors within a coalesced turn, and a dedicated worker
// running the engine itself (inline-worker.mjs).

import { open, destroy, engineInfo, startDecodeWorkers } from '/pkg/dist/browser.js';

const dec = new TextDecoder();
let worker;
/** The dedicated worker's decode workers, started here (the package's startDecodeWorkers). */
let decoders;
/** The last step the worker reported (`{ progress }` messages), for a test whose call hangs. */
let lastStep = 'none';

function inWorker(run, ...args) {
  if (!worker) {
    worker = new Worker('/test/browser/inline-worker.mjs', { type: 'module' });
    // Its scans' decode workers come from this page: one started from the worker can block it
    // in Firefox under WebDriver BiDi (worker-engine.ts).
    decoders = startDecodeWorkers();
    worker.postMessage({ decoderPorts: decoders.ports }, decoders.ports);
  }
  lastStep = `${run}: sent`;
  return new Promise((resolve, reject) => {
    worker.onmessage = (ev) => {
      if (ev.data.progress) {
        lastStep = `${run}: ${ev.data.progress}`;
        return;
      }
      lastStep = `${run}: answered`;
      if (ev.data.ok) resolve(ev.data.value);
      else reject(Object.assign(new Error(ev.data.error.message), ev.data.error));
    };
    // A worker that fails outside a call's try (its module, an uncaught error) or sends what
    // cannot be read fails the call instead of leaving it waiting.
    worker.onerror = (e) => {
      lastStep = `${run}: worker error`;
      reject(new Error(`the worker failed during ${run}: ${e.message ?? e}`));
    };
    worker.onmessageerror = () => reject(new Error(`a message of the worker could not be read during ${run}`));
    worker.postMessage({ run, args });
  });
}

const key = (i) => `k${String(i).padStart(6, '0')}`;

window.strataTest = {
  inWorker,
  /** The last step the dedicated worker reported. */
  lastStep() {
    return lastStep;
  },
  /** Ends the dedicated worker at once (a crash, as far as its storage can tell). */
  killWorker() {
    worker?.terminate();
    worker = undefined;
    decoders?.terminate();
    decoders = undefined;
    return 'killed';
  },

  /** 1,000 puts issued in one turn, then 1,000 gets: messages sent for each burst. */
  async coalesce() {
    const db = await open('coalesce', { storage: 'mem' });
    const g0 = (await db.properties()).writeGroups;
    const m0 = engineInfo().messages;
    await Promise.all(Array.from({ length: 1000 }, (_, i) => db.put(key(i), `v${i}`)));
    const m1 = engineInfo().messages;
    const values = await Promise.all(Array.from({ length: 1000 }, (_, i) => db.get(key(i))));
    const m2 = engineInfo().messages;
    // The burst of puts crossed in one message and was committed as one write group (one log
    // record).
    const putGroups = (await db.properties()).writeGroups - g0;
    const bad = values.filter((v, i) => dec.decode(v) !== `v${i}`).length;
    // A turn with a call the engine refuses (a released snapshot) among good ones: only that
    // call fails.
    const snap = await db.snapshot();
    await snap.release();
    const results = await Promise.allSettled([
      db.put('x', '1'),
      db.get('x', { snapshot: snap }),
      db.get('x'),
      db.del(key(0)),
      db.get(key(0)),
    ]);
    const settled = results.map((r) => (r.status === 'fulfilled' ? (r.value instanceof Uint8Array ? dec.decode(r.value) : r.value ?? null) : r.reason.code));
    // Groups end at a change of sync flag and at any other call: put, put, del | synced put |
    // get | put, put = 3 groups for 6 writes, each read back as written.
    const g1 = (await db.properties()).writeGroups;
    const mixed = await Promise.all([
      db.put('m1', 'a'),
      db.put('m2', 'b'),
      db.del(key(1)),
      db.put('m3', 'c', { sync: true }),
      db.get('m2'),
      db.put('m4', 'd'),
      db.put('m2', 'e'),
    ]);
    const mixedGroups = (await db.properties()).writeGroups - g1;
    const readBack = await Promise.all(['m1', 'm2', 'm3', 'm4', key(1)].map(async (k) => {
      const v = await db.get(k);
      return v === undefined ? null : dec.decode(v);
    }));
    await db.close();
    return {
      placement: engineInfo().placement,
      putMessages: m1 - m0,
      getMessages: m2 - m1,
      putGroups,
      bad,
      settled,
      mixedGroups,
      mixedGet: dec.decode(mixed[4]),
      readBack,
    };
  },

  /** Puts from the main thread: awaited one by one, and 64 in flight (rates, for the note). */
  async rates(n) {
    await destroy('rates');
    const db = await open('rates');
    const v = new Uint8Array(100).fill(7);
    let t = performance.now();
    for (let i = 0; i < n; i++) await db.put(key(i), v);
    const awaited = n / ((performance.now() - t) / 1000);
    let next = 0;
    const g0 = (await db.properties()).writeGroups;
    t = performance.now();
    await Promise.all(
      Array.from({ length: 64 }, async () => {
        while (next < n) await db.put(key(next++), v);
      }),
    );
    const inflight64 = n / ((performance.now() - t) / 1000);
    const groups64 = (await db.properties()).writeGroups - g0;
    let count = 0;
    for await (const _ of db.iterator()) count++;
    await db.close();
    return { count, awaited: Math.round(awaited), inflight64: Math.round(inflight64), groups64 };
  },

  /** The page opens, through the package's worker, what the inline worker wrote. */
  async readInlineDb() {
    const db = await open('inline-awaited');
    let count = 0;
    for await (const _ of db.iterator()) count++;
    const synced = dec.decode(await db.get('synced'));
    await db.close();
    return { count, synced };
  },

  async inlineOnMainThread() {
    try {
      await open('x', { storage: 'mem', engine: 'inline' });
      return 'opened';
    } catch (e) {
      return e.code;
    }
  },
};
document.title = 'ready';
