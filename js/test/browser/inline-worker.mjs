// A dedicated worker of the page that uses the package itself (browser-placement.test.ts): the
// engine runs here, in this worker, with no message per call. Answers one message
// `{ run: name, args }` with `{ ok, value }` or `{ ok: false, error }`.

import { open, destroy, engineInfo } from '/pkg/dist/browser.js';
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

const tests = {
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
  /** Every put and get awaited one by one, as an application makes them: counts and rates. */
  async awaited(n, storage = 'opfs') {
    if (storage === 'opfs') await destroy('inline-awaited');
    const db = await open('inline-awaited', { storage });
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

self.onmessage = async (ev) => {
  try {
    self.postMessage({ ok: true, value: await tests[ev.data.run](...(ev.data.args ?? [])) });
  } catch (e) {
    self.postMessage({ ok: false, error: { code: e?.code, message: String(e?.message ?? e) } });
  }
};
