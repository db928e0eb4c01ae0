// A dedicated worker of the page that uses the package itself (browser-placement.test.ts): the
// engine runs here, in this worker, with no message per call. Answers one message
// `{ run: name, args }` with `{ ok, value }` or `{ ok: false, error }`; `{ decoderPorts }` first
// hands its engine the decode workers the page started.

import { open, destroy, engineInfo, importIntoOpfs, useDecodeWorkers } from '/pkg/dist/browser.js';
import { OpfsPool } from '/pkg/dist/opfs-host.js';
import { conformance } from '/test/shared/conformance.mjs';
import { inflight } from '/test/shared/inflight.mjs';

const enc = new TextEncoder();
const key = (i) => enc.encode(String(i).padStart(16, '0'));
function value(i) {
  const v = new Uint8Array(100);
  let x = (i + 1) * 2654435761;
  for (let j = 0; j < v.length; j++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    v[j] = x & 255;
  }
  return v;
}

async function fetchDb(name) {
  const names = await (await fetch(`/worlds-list/${name}`)).json();
  const out = [];
  // A few requests at a time (thousands at once exhaust the browser's sockets).
  for (let i = 0; i < names.length; i += 16) {
    const part = names.slice(i, i + 16);
    out.push(...(await Promise.all(part.map(async (n) => ({ name: n, data: new Uint8Array(await (await fetch(`/worlds/${name}/db/${n}`)).arrayBuffer()) })))));
  }
  return out;
}

async function sahFiles(location) {
  let dir = await (await navigator.storage.getDirectory()).getDirectoryHandle('strata');
  dir = await dir.getDirectoryHandle(location);
  let n = 0;
  for await (const name of dir.keys()) if (/^\d+\.sah$/.test(name)) n++;
  return n;
}

/** Tells the page how far a call got (`strataTest.lastStep`). */
const step = (progress) => self.postMessage({ progress });

const tests = {
  /** Overwrites keys and compacts (parked tables removed: journaled, deleted by the NEXT
   * call's prepare), then returns at once: the page kills this worker before another call. */
  async compactAndStop(max) {
    step('opening');
    const db = await open('many', { maxHandles: max, profile: 'google' });
    step('open');
    const ops = [];
    for (let i = 20000; i < 40000; i++) ops.push({ type: 'put', key: String(i).padStart(16, '0'), value: `w${i}` });
    for (let i = 0; i < ops.length; i += 1000) await db.batch(ops.slice(i, i + 1000));
    step('written');
    await db.compactRange();
    step('compacted');
    const st = OpfsPool.stats('many');
    self.postMessage({ ok: true, value: { pending: st.pending, files: st.files } });
    await new Promise(() => {}); // never closes: the worker is killed
  },
  /** After a crash: open, scan, and what is on disk. */
  async reopenMany(max) {
    step('opening');
    const db = await open('many', { maxHandles: max, profile: 'google' });
    step('open');
    const scan = await db.scan();
    step('scanned');
    const st = OpfsPool.stats('many');
    await db.close();
    step('closed');
    return { scan, files: st.files, spares: st.spares, pending: st.pending, sahFiles: await sahFiles('many') };
  },
  /** A database of ~1,500 tables under a bound of `max` handles: imported, scanned, written
   * and compacted (parked tables removed), reopened. Handle counts checked at every step. */
  async manyTables(name, max) {
    const files = await fetchDb(name);
    await destroy('many');
    await importIntoOpfs('many', files);
    const peak = { open: 0 };
    const seen = () => {
      const st = OpfsPool.stats('many');
      if (st) peak.open = Math.max(peak.open, st.open);
      return st;
    };
    let db = await open('many', { maxHandles: max, profile: 'google' });
    const atOpen = seen();
    const first = await db.scan();
    seen();
    // Random reads across parked tables.
    let found = 0;
    for (let i = 0; i < 2000; i++) {
      const k = String((i * 7919) % 170000).padStart(16, '0');
      if ((await db.get(k)) !== undefined) found++;
      if (i % 100 === 0) seen();
    }
    // Overwrite a stretch of keys and compact: parked tables are replaced and removed.
    const ops = [];
    for (let i = 0; i < 20000; i++) ops.push({ type: 'put', key: String(i).padStart(16, '0'), value: `v${i}` });
    for (let i = 0; i < ops.length; i += 1000) {
      await db.batch(ops.slice(i, i + 1000));
      seen();
    }
    await db.compactRange();
    seen();
    const second = await db.scan();
    const afterCompaction = seen();
    await db.close();
    db = await open('many', { maxHandles: max, profile: 'google' });
    const reopened = seen();
    const third = await db.scan();
    await db.get('x'); // one more call: its prepare() deletes what the scan left pending
    const last = seen();
    await db.close();
    const onDisk = await sahFiles('many');
    return { files: files.length, first, found, second, third, atOpen, afterCompaction, reopened, last, peak: peak.open, sahFiles: onDisk };
  },

  placement() {
    return { auto: engineInfo().placement, forced: engineInfo('worker').placement };
  },
  async conformance() {
    await destroy('inline-conformance');
    return conformance(open, 'inline-conformance', { storage: 'opfs' });
  },
  async inflight() {
    await destroy('inline-inflight');
    return inflight(open, 'inline-inflight', { storage: 'opfs' });
  },
  /** Durability 'relaxed': n awaited puts, the end of a task, a synced put, then 100 more
   * acknowledged puts, and this worker stops answering (the page kills it mid-task). */
  async relaxedThenStop(n) {
    await destroy('inline-relaxed');
    const db = await open('inline-relaxed', { durability: 'relaxed' });
    const t = performance.now();
    for (let i = 0; i < n; i++) await db.put(key(i), value(i));
    const putsPerSecond = Math.round(n / ((performance.now() - t) / 1000));
    await new Promise((r) => setTimeout(r, 10));
    await db.put('synced', 'yes', { sync: true });
    for (let i = n; i < n + 100; i++) await db.put(key(i), value(i));
    self.postMessage({ ok: true, value: { putsPerSecond } });
    await new Promise(() => {}); // never closes: the worker is killed
  },
  /** After the kill: what of relaxedThenStop's puts is there (exact values, in a prefix). */
  async reopenRelaxed(n) {
    const db = await open('inline-relaxed', { durability: 'relaxed' });
    let first = 0;
    let tail = 0;
    let bad = 0;
    let holes = 0;
    for (let i = 0; i < n + 100; i++) {
      const v = await db.get(key(i));
      if (v && (v.length !== 100 || v.some((b, j) => b !== value(i)[j]))) bad++;
      if (i < n) first += v ? 1 : 0;
      else if (v) {
        if (tail !== i - n) holes++;
        tail++;
      }
    }
    const synced = new TextDecoder().decode(await db.get('synced'));
    await db.close();
    await destroy('inline-relaxed');
    return { first, tail, bad, holes, synced };
  },
  /** Every put and get awaited one by one, as an application makes them: counts and rates. */
  async awaited(n, storage = 'opfs', durability = 'default') {
    if (storage === 'opfs') await destroy('inline-awaited');
    const db = await open('inline-awaited', storage === 'opfs' ? { storage, durability } : { storage });
    let t = performance.now();
    for (let i = 0; i < n; i++) await db.put(key(i), value(i));
    const putSeconds = (performance.now() - t) / 1000;
    let x = 12345;
    let found = 0;
    let bad = 0;
    t = performance.now();
    for (let i = 0; i < n; i++) {
      x = (x * 1103515245 + 12345) >>> 0;
      const k = x % n;
      const v = await db.get(key(k));
      if (v) found++;
      if (!v || v.length !== 100 || v[0] !== value(k)[0] || v[99] !== value(k)[99]) bad++;
    }
    const getSeconds = (performance.now() - t) / 1000;
    await db.put('synced', 'yes', { sync: true });
    await db.close();
    return { found, bad, putsPerSecond: Math.round(n / putSeconds), getsPerSecond: Math.round(n / getSeconds) };
  },
  /** The same database through the package's worker: LEVEL_LOCKED while the inline one holds it? */
  async forcedWorker() {
    const db = await open('inline-forced', { storage: 'mem', engine: 'worker' });
    await db.put('a', 'b');
    const v = new TextDecoder().decode(await db.get('a'));
    await db.close();
    return { value: v, info: engineInfo('worker') };
  },
};

let supplied = Promise.resolve();
self.onmessage = async (ev) => {
  if (ev.data.decoderPorts) {
    // Decode workers the page started (placement.mjs), taken by this engine's scans.
    supplied = useDecodeWorkers(ev.data.decoderPorts);
    return;
  }
  await supplied;
  try {
    self.postMessage({ ok: true, value: await tests[ev.data.run](...(ev.data.args ?? [])) });
  } catch (e) {
    self.postMessage({ ok: false, error: { code: e?.code, message: String(e?.message ?? e) } });
  }
};
