// Test functions run inside the page by browser.test.ts (through playwright's evaluate), and by
// the Firefox and WebKit suites (puppeteer, WebDriver). Each returns plain data that the Node
// side asserts exactly. `exportWorld`/`exportAbort` run the streamed `.mcworld` export
// (World.exportMcworldTo) on a whole shared world folder imported into OPFS or IndexedDB and
// report what is left of its scratch store (`.strata-export`) in browser storage.

import { open, importIntoOpfs, destroy, exportFromOpfs, tabInfo, isLeading, terminateWorker, defaultStorage, openWorld, opfsFiles, EXPORT_SCRATCH } from '/pkg/dist/browser.js';
import { conformance } from '/test/shared/conformance.mjs';
import { inflight } from '/test/shared/inflight.mjs';

/* global CRC32C, CRC32 */

async function figures(db) {
  let entries = 0;
  let keyBytes = 0;
  let valueBytes = 0;
  let crc = 0;
  const it = db.iterator();
  for (;;) {
    const batch = await it.nextv(1000);
    if (batch.length === 0) break;
    for (const [k, v] of batch) {
      crc = CRC32C.buf(k, crc);
      crc = CRC32C.buf(v, crc);
      keyBytes += k.length;
      valueBytes += v.length;
    }
    entries += batch.length;
  }
  await it.close();
  return { entries, keyBytes, valueBytes, crc32c: crc >>> 0 };
}

/** opfsFiles on a pool written here slot by slot (opfs-host.ts's layout: a 4 KiB header of
 * magic "STR1", generation f64, path length u32, path, FNV-1a of all that): what an open takes
 * is what a snapshot takes. Returns each path with its bytes as text. */
async function craftedSnapshot() {
  const location = 'crafted-pool';
  await destroy(location);
  let dir = await (await navigator.storage.getDirectory()).getDirectoryHandle('strata', { create: true });
  dir = await dir.getDirectoryHandle(location, { create: true });
  const slot = async (name, path, gen, body, torn = false) => {
    const h = new Uint8Array(4096);
    const view = new DataView(h.buffer);
    if (path !== null) {
      const p = new TextEncoder().encode(path);
      view.setUint32(0, 0x53_54_52_31, true);
      view.setFloat64(4, gen, true);
      view.setUint32(12, p.length, true);
      h.set(p, 16);
      let f = 0x811c9dc5;
      for (const b of h.subarray(0, 16 + p.length)) f = Math.imul(f ^ b, 0x01000193) >>> 0;
      view.setUint32(16 + p.length, torn ? f ^ 1 : f, true);
    }
    const w = await (await dir.getFileHandle(name, { create: true })).createWritable();
    await w.write(h);
    await w.write(new TextEncoder().encode(body));
    await w.close();
  };
  await slot('0.sah', `${location}/CURRENT`, 1, 'MANIFEST-000002\n');
  await slot('1.sah', `${location}/000005.ldb`, 2, 'older name of 000005.ldb');
  await slot('2.sah', `${location}/000005.ldb`, 3, 'newer name of 000005.ldb');
  await slot('3.sah', `${location}/000007.ldb`, 4, 'removed: named in the journal');
  await slot('4.sah', null, 0, '');
  await slot('5.sah', `${location}/000009.ldb`, 5, 'torn header', true);
  await slot('6.sah', `${location}/000011.log`, 6, 'journal names another generation');
  // A journal-named slot that would have won its path: the older one is kept, as at open.
  await slot('7.sah', `${location}/000013.ldb`, 7, 'older name of 000013.ldb');
  await slot('8.sah', `${location}/000013.ldb`, 8, 'newer name, removed');
  // Equal generations: the higher slot number wins (10 after 9, though "10.sah" < "9.sah").
  await slot('9.sah', `${location}/MANIFEST-000002`, 9, 'slot 9');
  await slot('10.sah', `${location}/MANIFEST-000002`, 9, 'slot 10');
  const j = await (await dir.getFileHandle('free.jnl', { create: true })).createWritable();
  await j.write(new TextEncoder().encode('3.sah 4\n6.sah 5\n8.sah 8\n'));
  await j.close();
  const files = await opfsFiles(location);
  const out = await Promise.all(files.map(async (f) => [f.path, await f.file.text()]));
  await destroy(location);
  return out;
}

async function fetchWorld(name) {
  const names = await (await fetch(`/worlds-list/${name}`)).json();
  return Promise.all(
    names.map(async (n) => ({ name: n, data: new Uint8Array(await (await fetch(`/worlds/${name}/db/${n}`)).arrayBuffer()) })),
  );
}

/** Every file of a shared world folder (level.dat, db/…), named relative to it. */
async function fetchWorldTree(name) {
  const names = await (await fetch(`/worlds-tree/${name}`)).json();
  return Promise.all(
    names.map(async (n) => ({ name: n, data: new Uint8Array(await (await fetch(`/worlds/${name}/${n}`)).arrayBuffer()) })),
  );
}

/** What is left in browser storage of the streamed export's scratch store: OPFS, the files
 * of its pool folder `strata/.strata-export` (null when the folder is gone); IndexedDB, the
 * keys of `strata-files` under `.strata-export` (file and folder records, and the number of
 * 4 KiB chunk records). */
async function scratchLeft(storage) {
  if (storage === 'opfs') {
    const root = await navigator.storage.getDirectory();
    let dir;
    try {
      dir = await (await root.getDirectoryHandle('strata')).getDirectoryHandle(encodeURIComponent(EXPORT_SCRATCH));
    } catch (e) {
      if (e.name === 'NotFoundError') return null;
      throw e;
    }
    const names = [];
    for await (const n of dir.keys()) names.push(n);
    return names.sort();
  }
  const db = await new Promise((resolve, reject) => {
    const r = indexedDB.open('strata-files');
    r.onsuccess = () => resolve(r.result);
    r.onerror = () => reject(r.error);
  });
  try {
    const tx = db.transaction(['files', 'chunks'], 'readonly');
    const req = (r) => new Promise((resolve, reject) => {
      r.onsuccess = () => resolve(r.result);
      r.onerror = () => reject(r.error);
    });
    const [files, chunks] = await Promise.all([
      req(tx.objectStore('files').getAllKeys(IDBKeyRange.bound(EXPORT_SCRATCH, `${EXPORT_SCRATCH}\uffff`))),
      req(tx.objectStore('chunks').count(IDBKeyRange.bound([EXPORT_SCRATCH], [`${EXPORT_SCRATCH}\uffff`]))),
    ]);
    return { files: files.sort(), chunks };
  } finally {
    db.close();
  }
}

const hex = (buf) => [...new Uint8Array(buf)].map((b) => b.toString(16).padStart(2, '0')).join('');

/** The zip behind an export's Blob: size, CRC-32, SHA-256 (crypto.subtle). */
async function zipFigures(blob) {
  const bytes = new Uint8Array(await blob.arrayBuffer());
  return { size: bytes.length, crc32: CRC32.buf(bytes) >>> 0, sha256: hex(await crypto.subtle.digest('SHA-256', bytes)) };
}

const quotaKey = (i) => `q-${String(i).padStart(6, '0')}`;
function quotaValue(i) {
  const v = new Uint8Array(4096);
  let x = (i + 1) * 2654435761;
  for (let j = 0; j < v.length; j++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    v[j] = x & 255;
  }
  return v;
}

window.strataTest = {
  /** Copies a shared world into OPFS, opens it there, and iterates everything. */
  async opfsWorld(name) {
    const location = `worlds/${name}`;
    await destroy(location);
    const bytes = await importIntoOpfs(location, await fetchWorld(name));
    const db = await open(location, { profile: 'bedrock' });
    const result = await figures(db);
    const scan = await db.scan();
    const decode = await db.decodeStats();
    await db.close();
    return { bytes, ...result, scan, decodedByWorkers: decode.readahead?.runsByWorkers ?? null, decodeWorkers: decode.pool?.live ?? 0, decodeWorkersByPage: decode.pool?.byPage ?? 0, pool: decode.pool };
  },

  /** A database in OPFS scanned with two decode workers whose script the server refuses
   * (shared/decoders-gone.ts, for the Chromium and Firefox suites): the page reports each
   * failed worker to the engine (`decoderGone`), whose pool drops it at once and scans alone.
   * The scan's figures, the iterator's, the pool's. */
  async decodersGone() {
    const location = 'decoders-gone';
    await destroy(location);
    const db = await open(location, { decodeWorkers: 2 });
    for (let b = 0; b < 6; b++) {
      const ops = [];
      for (let i = b * 500; i < (b + 1) * 500; i++) {
        ops.push({ type: 'put', key: `k${String(i).padStart(5, '0')}`, value: `${i} `.repeat(500).slice(0, 1000) });
      }
      await db.batch(ops);
    }
    await db.compactRange();
    const started = performance.now();
    const scan = await db.scan();
    const scanMs = performance.now() - started;
    const iterated = await figures(db);
    const decode = await db.decodeStats();
    await db.close();
    await destroy(location);
    return { scan, iterated, scanMs, pool: decode.pool };
  },

  /** A database in OPFS shared as `File` snapshots (opfsFiles) while this page's engine holds
   * it read-only, as the viewer shares a world with its map helpers: a second database opened
   * on the snapshots (storage `files`) reads exactly the same entries. */
  async opfsSnapshot() {
    const location = 'snapshot-db';
    await destroy(location);
    // Small memtables: several tables, compactions (files removed), a log with entries.
    const w = await open(location, { writeBufferSize: 64 * 1024 });
    for (let i = 0; i < 6000; i += 500) {
      const ops = [];
      for (let j = i; j < i + 500; j++) ops.push({ type: 'put', key: `key${String(j).padStart(5, '0')}`, value: `value ${j} `.repeat(8) });
      await w.batch(ops);
    }
    const dels = [];
    for (let j = 0; j < 6000; j += 7) dels.push({ type: 'del', key: `key${String(j).padStart(5, '0')}` });
    await w.batch(dels);
    await w.close();
    const held = await open(location, { readOnly: true });
    const files = await opfsFiles(location);
    const copy = await open(location, { storage: 'files', files, readOnly: true });
    const fromPool = await figures(held);
    const fromSnapshots = await figures(copy);
    await copy.close();
    await held.close();
    let missing = 'none';
    try {
      await opfsFiles('no-such-db');
    } catch (e) {
      missing = e.code;
    }
    await destroy(location);
    const kinds = {};
    for (const f of files) {
      const kind = f.path.startsWith(`${location}/`) ? f.path.slice(location.length + 1).replace(/\d+/, 'N') : `outside: ${f.path}`;
      kinds[kind] = (kinds[kind] ?? 0) + 1;
    }
    return { kinds, fromPool, fromSnapshots, missing, crafted: await craftedSnapshot() };
  },

  /** Opens the folder picked into #picker read-only, in place. */
  async pickedWorld() {
    const files = [...document.getElementById('picker').files].map((file) => ({ path: file.webkitRelativePath, file }));
    const top = files[0].path.split('/')[0];
    const db = await open(`${top}/db`, { storage: 'files', files });
    const result = await figures(db);
    let writeError = 'none';
    try {
      await db.put('k', 'v');
    } catch (e) {
      writeError = e.code;
    }
    await db.close();
    // A file cache of nothing (one window kept at a time) reads the same figures; a bad size is
    // refused.
    const small = await open(`${top}/db`, { storage: 'files', files, fileCacheBytes: 0 });
    const uncached = await figures(small);
    await small.close();
    let badCache = 'none';
    try {
      await open(`${top}/db`, { storage: 'files', files, fileCacheBytes: -1 });
    } catch (e) {
      badCache = e.code;
    }
    return { files: files.length, ...result, writeError, uncachedSame: JSON.stringify(uncached) === JSON.stringify(result), badCache };
  },

  /** The same, with the picked files built in the page (browsers whose automation cannot
   * hand a folder to a webkitdirectory input): File objects with the paths a picker gives. */
  async pickedWorldBuilt(name) {
    const files = (await fetchWorld(name)).map(({ name: n, data }) => ({ path: `${name}/db/${n}`, file: new File([data], n) }));
    const db = await open(`${name}/db`, { storage: 'files', files });
    const result = await figures(db);
    let writeError = 'none';
    try {
      await db.put('k', 'v');
    } catch (e) {
      writeError = e.code;
    }
    await db.close();
    return { files: files.length, ...result, writeError };
  },

  /** importIntoOpfs, then exportFromOpfs as a zip and into another OPFS folder: the zip
   * (base64, checked in Node) and which files came back byte-exact. */
  async exportRoundTrip(name) {
    const location = `export/${name}`;
    await destroy(location);
    const files = await fetchWorld(name);
    await importIntoOpfs(location, files);
    const zip = await exportFromOpfs(location);
    const root = await navigator.storage.getDirectory();
    await root.removeEntry('export-out', { recursive: true }).catch(() => {});
    const out = await root.getDirectoryHandle('export-out', { create: true });
    const wrote = await exportFromOpfs(location, { to: out });
    const differ = [];
    for (const f of files) {
      const got = new Uint8Array(await (await (await out.getFileHandle(f.name)).getFile()).arrayBuffer());
      if (got.length !== f.data.length || got.some((b, i) => b !== f.data[i])) differ.push(f.name);
    }
    let listed = 0;
    for await (const _ of out.keys()) listed++;
    // The database still opens in place after the export.
    const db = await open(location, { profile: 'bedrock' });
    const after = await db.scan();
    await db.close();
    let bin = '';
    for (let i = 0; i < zip.length; i += 0x8000) bin += String.fromCharCode(...zip.subarray(i, i + 0x8000));
    return { zip: btoa(bin), wrote, differ, listed, count: files.length, after };
  },

  /** The streamed export of a whole shared world folder copied into `storage` ('opfs' or
   * 'idb') at `export-worlds/<name>`, opened read-only with openWorld: the zip's figures, every
   * progress event, the report, the scratch store before and after discard(), and the world's
   * figures afterwards (it stays open through the export). */
  async exportWorld(name, storage, stepBytes) {
    const location = `export-worlds/${name}`;
    await destroy(location, { storage });
    const imported = await importIntoOpfs(location, await fetchWorldTree(name), { storage });
    const w = await openWorld(location, { storage });
    const events = [];
    const t0 = performance.now();
    const r = await w.exportMcworldTo({ stepBytes, onProgress: (p) => events.push({ ...p }) });
    const exportMs = Math.round(performance.now() - t0);
    const zip = await zipFigures(r.file);
    const before = await scratchLeft(storage);
    await r.discard();
    const after = await scratchLeft(storage);
    // The Blob once its file is gone: an OPFS file's own File, or an in-memory copy.
    const afterDiscard = await r.file.arrayBuffer().then(
      (b) => `readable: ${b.byteLength} bytes`,
      (e) => `${e.name}: ${e.message}`,
    );
    const scan = await w.db.scan();
    const summary = await w.summary();
    await w.close();
    return {
      imported,
      dbStorage: w.db.storage,
      report: { files: r.files, bytes: r.bytes, size: r.size, path: r.path ?? null },
      blob: { isBlob: r.file instanceof Blob, size: r.file.size, type: r.file.type },
      zip,
      events,
      exportMs,
      scratchBeforeDiscard: before,
      scratchAfterDiscard: after,
      blobAfterDiscard: afterDiscard,
      scan,
      chunks: summary.chunks,
    };
  },

  /** The world copied in as by exportWorld, then its export aborted (AbortController) at the
   * `at`-th progress event of `phase` (counted from 1): the rejection, the phases seen, what is
   * left of the scratch store, the world's figures on the open world and after closing and
   * opening it again, and a whole export after it (its zip's figures), discarded after the
   * world is closed. */
  async exportAbort(name, storage, stepBytes, phase, at) {
    const location = `export-worlds/${name}`;
    const ms = {};
    let t = performance.now();
    const lap = (what) => {
      const now = performance.now();
      ms[what] = Math.round(now - t);
      t = now;
    };
    await destroy(location, { storage });
    await importIntoOpfs(location, await fetchWorldTree(name), { storage });
    lap('import');
    const w = await openWorld(location, { storage });
    lap('open');
    const ac = new AbortController();
    const seen = [];
    let inPhase = 0;
    const error = await w
      .exportMcworldTo({
        stepBytes,
        signal: ac.signal,
        onProgress: (p) => {
          seen.push(p.phase);
          if (p.phase === phase && ++inPhase === at) ac.abort();
        },
      })
      .then(
        () => null,
        (e) => ({ name: e.name, code: e.code ?? null, isDOMException: e instanceof DOMException, isReason: e === ac.signal.reason }),
      );
    lap('aborted');
    const left = await scratchLeft(storage);
    const scanOpen = await w.db.scan();
    await w.close();
    lap('scan, close');
    const again = await openWorld(location, { storage });
    lap('reopen');
    const scanReopened = await again.db.scan();
    const summary = await again.summary();
    const r = await again.exportMcworldTo({ stepBytes });
    lap('export');
    const zip = await zipFigures(r.file);
    // discard() after the world is closed (a page keeps the zip until it is downloaded).
    await again.close();
    const discardError = await r.discard().then(
      () => null,
      (e) => `${e.code ?? e.name}: ${e.message}`,
    );
    lap('discard');
    const leftAfterExport = await scratchLeft(storage);
    await destroy(location, { storage });
    lap('destroy');
    return { error, seen, left, scanOpen, scanReopened, chunks: summary.chunks, zip, discardError, leftAfterExport, ms };
  },

  /** Opens the world exportWorld stored, and keeps it open: this tab leads it. */
  async holdWorld(name, storage) {
    window.heldWorld = await openWorld(`export-worlds/${name}`, { storage });
    return tabInfo(`world-ro:${storage === 'opfs' ? '' : `${storage}:`}export-worlds/${name}`).map((t) => t.leading);
  },

  /** The leader's view of the held world: what it holds for other tabs. */
  async heldWorldInfo(name, storage) {
    return tabInfo(`world-ro:${storage === 'opfs' ? '' : `${storage}:`}export-worlds/${name}`).map((t) => ({ leading: t.leading, served: t.served > 0, heldForOthers: t.heldForOthers }));
  },

  async releaseWorld(name, storage) {
    await window.heldWorld.close();
    window.heldWorld = undefined;
    await destroy(`export-worlds/${name}`, { storage });
  },

  /** From a tab that follows (another tab holds the world): the export runs in the leader's
   * engine and the zip's Blob comes back over the BroadcastChannel. Its figures, the event
   * count, whether this tab led, and the scratch store after discard(). */
  async exportFollowing(name, storage, stepBytes) {
    const w = await openWorld(`export-worlds/${name}`, { storage });
    const leading = tabInfo(`world-ro:${storage === 'opfs' ? '' : `${storage}:`}export-worlds/${name}`).map((t) => t.leading);
    const events = [];
    const r = await w.exportMcworldTo({ stepBytes, onProgress: (p) => events.push({ ...p }) });
    const zip = await zipFigures(r.file);
    await r.discard();
    const left = await scratchLeft(storage);
    const scan = await w.db.scan();
    await w.close();
    return { leading, events, zip, left, scan };
  },

  async conformance(storage) {
    const location = `conformance-${storage}`;
    if (storage !== 'mem') await destroy(location, { storage });
    return conformance(open, location, { storage });
  },

  async inflight(storage) {
    const location = `inflight-${storage}`;
    if (storage !== 'mem') await destroy(location, { storage });
    return inflight(open, location, { storage });
  },

  /** The storage a database gets when none is named, and what `db.storage` reports. */
  async storageInfo() {
    const db = await open('storage-info');
    const reported = db.storage;
    await db.close();
    await destroy('storage-info');
    return { defaultStorage: await defaultStorage(), reported };
  },

  async storageUsage() {
    return (await navigator.storage.estimate()).usage;
  },

  /** Synced 4 KiB incompressible puts into OPFS (opened by quotaOpen) until the browser
   * refuses one (the test lowers the origin's quota first); returns how many were acknowledged and the error. */
  async quotaOpen(storage, durability, writeBufferSize = 64 * 1024) {
    await destroy('quota', { storage });
    window.quotaStorage = storage;
    window.quotaDurability = durability;
    window.quotaDb = await open('quota', { writeBufferSize, storage, ...(durability ? { durability } : {}) });
    return (await navigator.storage.estimate()).usage;
  },

  /** `sync` false: unsynced puts (with durability 'relaxed', gathered). After the refusal, a
   * put and a get of the first key: how each ended (`after`). */
  async quotaFill(max = 20000, sync = true) {
    const db = window.quotaDb;
    let acked = 0;
    let error;
    for (; acked < max; acked++) {
      try {
        await db.put(quotaKey(acked), quotaValue(acked), { sync });
      } catch (e) {
        error = { code: e.code, kind: e.kind, message: e.message };
        break;
      }
    }
    const after = [];
    if (error) {
      for (const f of [() => db.put('after', 'x'), () => db.get(quotaKey(0))]) {
        try {
          await f();
          after.push('ok');
        } catch (e) {
          after.push(`${e.code}/${e.kind}`);
        }
      }
    }
    let closeCode = 'closed';
    try {
      await db.close();
    } catch (e) {
      closeCode = e.code;
    }
    return { acked, error, after, closeCode };
  },

  /** Reopens the quota database: every acknowledged put is there with its bytes. `readOnly`
   * where the quota is still exhausted (a writable open flushes the log into a table). */
  async quotaCheck(acked, readOnly = false) {
    const db = await open('quota', { readOnly, storage: window.quotaStorage, ...(window.quotaDurability ? { durability: window.quotaDurability } : {}) });
    let entries = 0;
    let mismatches = 0;
    for await (const [k, v] of db.iterator()) {
      const i = Number(new TextDecoder().decode(k).slice(2));
      const want = quotaValue(i);
      if (i >= acked + 1 || v.length !== want.length || v.some((b, j) => b !== want[j])) mismatches++;
      entries++;
    }
    let present = 0;
    // The longest run of acknowledged keys present from the first: equal to `present` when
    // what is missing is a tail (no hole).
    let prefix = 0;
    for (let i = 0; i < acked; i++) {
      if ((await db.get(quotaKey(i))) !== undefined) {
        present++;
        if (prefix === i) prefix++;
      }
    }
    const after = await db.get('after');
    await db.close();
    await destroy('quota', { storage: window.quotaStorage });
    return { entries, present, prefix, mismatches, after: after === undefined ? null : 'present' };
  },

  /** With the quota nearly exhausted (after quotaFill): fills the rest with a plain file but
   * `leave` bytes (quota-filler.mjs), then opens a new database `location` there. Returns the
   * filler's size and the open's error. */
  async quotaFullOpen(leave, location) {
    const filler = new Worker('/test/browser/quota-filler.mjs', { type: 'module' });
    const filled = await new Promise((resolve, reject) => {
      filler.onmessage = (e) => resolve(e.data);
      filler.onerror = (e) => reject(new Error(`quota filler: ${e.message}`));
      filler.postMessage(leave);
    });
    filler.terminate();
    let error;
    try {
      const db = await open(location);
      await db.close();
    } catch (e) {
      error = { code: e.code, kind: e.kind, message: e.message };
    }
    return { filled, error };
  },

  /** How many entries a database holds (opened writable, then closed). */
  async entriesIn(location) {
    const db = await open(location);
    const n = (await db.iterator().all()).length;
    await db.close();
    return n;
  },

  /** A trap in the worker's wasm instance, made for real (no hook). A message to the worker
   * cannot carry 2 GiB, so the instance's memory is filled first: `fills` values of `fillBytes`
   * held by the OPFS database's memtable (a 1 GiB write buffer), then a put of `trapBytes`,
   * whose copy in and batch framing (before the memtable's reservation, which would fail
   * gracefully) pass the instance's 4 GiB. That call and every later one on the worker's
   * databases (OPFS and IndexedDB, an iterator) fail with EngineStopped; closing them works;
   * the next open resets the instance and starts a new engine, where both databases open
   * (their handles were released) with every write acknowledged before the trap. */
  async engineTrap(fills, fillBytes, trapBytes) {
    await destroy('trap-opfs', { storage: 'opfs' });
    await destroy('trap-idb', { storage: 'idb' });
    const options = { storage: 'opfs', valueEncoding: 'utf8', writeBufferSize: 2 ** 30 };
    const a = await open('trap-opfs', options);
    const b = await open('trap-idb', { storage: 'idb', valueEncoding: 'utf8' });
    for (let i = 0; i < 100; i++) await a.put(`a${i}`, `one-${i}`);
    await b.batch(Array.from({ length: 100 }, (_, i) => ({ type: 'put', key: `b${i}`, value: `two-${i}` })));
    for (let i = 0; i < fills; i++) await a.put(`fill${i}`, new Uint8Array(fillBytes).fill(i + 1));
    await a.put('synced', 'yes', { sync: true });
    const it = a.iterator({ keyEncoding: 'utf8', values: false });
    const firstKey = (await it.next())[0];
    const outcome = async (f) => {
      try {
        await f();
        return 'resolved';
      } catch (e) {
        return `${e.code}/${e.kind}`;
      }
    };
    let trap;
    try {
      await a.put('too-big', new Uint8Array(trapBytes));
      trap = 'resolved';
    } catch (e) {
      trap = { code: e.code, kind: e.kind, message: e.message };
    }
    const after = {
      getA: await outcome(() => a.get('a1')),
      putB: await outcome(() => b.put('b-late', 'x')),
      // (its first next() fetched every key ahead: a seek asks the engine again)
      seek: await outcome(async () => {
        await it.seek('a5');
        await it.next();
      }),
    };
    await it.close();
    await a.close();
    await b.close();
    const a2 = await open('trap-opfs', { ...options, createIfMissing: false });
    const b2 = await open('trap-idb', { storage: 'idb', valueEncoding: 'utf8', createIfMissing: false });
    const keysA = (await a2.iterator({ keyEncoding: 'utf8', values: false }).all()).map(([k]) => k);
    const entriesB = await b2.iterator({ keyEncoding: 'utf8' }).all();
    // Each fill value whole: its length, and how many of its bytes differ from its fill.
    const filled = [];
    for (let i = 0; i < fills; i++) {
      const v = await a2.get(`fill${i}`, { valueEncoding: 'view' });
      let wrong = 0;
      for (let j = 0; j < v.length; j++) if (v[j] !== i + 1) wrong++;
      filled.push([v.length, wrong]);
    }
    await a2.put('after', 'the trap');
    const got = { a42: await a2.get('a42'), synced: await a2.get('synced'), after: await a2.get('after'), tooBig: await a2.get('too-big') };
    await a2.close();
    await b2.close();
    await destroy('trap-opfs', { storage: 'opfs' });
    await destroy('trap-idb', { storage: 'idb' });
    return { firstKey, trap, after, keysA: keysA.length, got, filled, b: { count: entriesB.length, b99: entriesB.find(([k]) => k === 'b99')?.[1] } };
  },

  /** First half of the reload test: write and close. */
  async writeForReload(storage) {
    await destroy('persist', { storage });
    const db = await open('persist', { storage });
    const ops = [];
    for (let i = 0; i < 3000; i++) ops.push({ type: 'put', key: `key${String(i).padStart(5, '0')}`, value: `value-${i}`.repeat(10) });
    await db.batch(ops);
    await db.flush();
    await db.put('last', 'synced', { sync: true });
    await db.close();
    return ops.length + 1;
  },

  /** Second half, after a page reload. */
  async readAfterReload(storage) {
    const db = await open('persist', { createIfMissing: false, valueEncoding: 'utf8', storage });
    const all = await db.iterator({ keyEncoding: 'utf8', valueEncoding: 'utf8' }).all();
    const sample = await db.get('key01234');
    const last = await db.get('last');
    await db.close();
    return { count: all.length, first: all[0], sample, last };
  },

  /** Three sharers of one database in this page (each its own link, as three tabs would be):
   * writers on all three at once while the leader closes and rejoins `changes` times. Every
   * acknowledged write must be there at the end; a call that saw the leader go retries. */
  async leaderChanges(changes) {
    const location = 'shared-model';
    await destroy(location);
    const dbs = await Promise.all([0, 1, 2].map(() => open(location)));
    const acked = new Map();
    let lostCalls = 0;
    let stop = false;
    const writer = async (w) => {
      for (let i = 0; !stop; i++) {
        const key = `w${w}-${String(i).padStart(6, '0')}`;
        for (;;) {
          try {
            await dbs[w].put(key, `v${w}-${i}`);
            acked.set(key, `v${w}-${i}`);
            break;
          } catch (e) {
            if (e.code === 'LEVEL_CONNECTION_LOST') { lostCalls++; continue; }
            if (e.code === 'LEVEL_DATABASE_NOT_OPEN') { await new Promise((r) => setTimeout(r, 5)); continue; }
            throw e;
          }
        }
      }
    };
    const writers = [0, 1, 2].map((w) => writer(w));
    const leads = [];
    for (let c = 0; c < changes; c++) {
      await new Promise((r) => setTimeout(r, 10));
      let leader = -1;
      for (let tries = 0; tries < 2000 && leader < 0; tries++) {
        leader = dbs.findIndex((d) => isLeading(d));
        if (leader < 0) await new Promise((r) => setTimeout(r, 5));
      }
      if (leader < 0) throw new Error('no sharer leads');
      leads.push(leader);
      // The leader leaves (its Db closed) and comes back as a follower.
      const old = dbs[leader];
      dbs[leader] = await open(location);
      await old.close();
    }
    stop = true;
    await Promise.all(writers);
    const check = await open(location);
    let present = 0;
    let wrong = 0;
    for (const [k, v] of acked) {
      const got = await check.get(k, { valueEncoding: 'utf8' });
      if (got === undefined) continue;
      present++;
      if (got !== v) wrong++;
    }
    const led = tabInfo(location).reduce((n, t) => n + t.led, 0);
    await Promise.all([...dbs, check].map((d) => d.close()));
    return { acked: acked.size, present, wrong, changes: leads.length, lostCalls, led };
  },

  /** The worker of a leading sharer is terminated: the old handle says so, and the database
   * opens again at once (the dead leader stepped down). */
  async leaderWorkerKilled() {
    const location = 'shared-killed';
    const db = await open(location);
    await db.put('a', '1', { sync: true });
    const wasLeading = isLeading(db);
    terminateWorker('test');
    let oldCode = 'none';
    try {
      await db.get('a');
    } catch (e) {
      oldCode = e.code;
    }
    const t0 = performance.now();
    const again = await open(location);
    const value = await again.get('a', { valueEncoding: 'utf8' });
    const reopenMs = performance.now() - t0;
    await again.close();
    return { wasLeading, oldCode, value, fast: reopenMs < 5000 };
  },

  /** Cross-tab: write `n` keys here (this tab's prefix) on the shared database, recording
   * every acknowledged key; a call that saw the leader go is retried. */
  async tabWrite(prefix, n, storage) {
    window.tabLocation = storage ? `shared-tabs-${storage}` : 'shared-tabs';
    window.sharedDb ??= await open(window.tabLocation, { storage });
    window.acked ??= [];
    for (let i = 0; i < n; i++) {
      const key = `${prefix}-${String(i).padStart(6, '0')}`;
      for (;;) {
        try {
          await window.sharedDb.put(key, `value-${key}`);
          window.acked.push(key);
          break;
        } catch (e) {
          if (e.code !== 'LEVEL_CONNECTION_LOST') throw e;
        }
      }
    }
    return window.acked.length;
  },

  /** Iterators and snapshots across a leader change (two real tabs, each its own engine).
   * `lead`: this tab opens `location` afresh and writes a00..a09 = old. */
  async staleLead(location) {
    await destroy(location);
    window.staleDb = await open(location, { valueEncoding: 'utf8', keyEncoding: 'utf8' });
    for (let i = 0; i < 10; i++) await window.staleDb.put(`a0${i}`, 'old');
    return isLeading(window.staleDb);
  },

  /** `follow`: this tab joins, takes a snapshot and an iterator on the leader's engine, reads
   * one entry, then overwrites a00..a09 = new. */
  async staleFollow(location) {
    const db = (window.staleDb = await open(location, { valueEncoding: 'utf8', keyEncoding: 'utf8' }));
    window.staleSnap = await db.snapshot();
    window.staleIt = db.iterator({ gte: 'a', lt: 'b' });
    const first = await window.staleIt.next();
    // One more, never read: nothing buffered, its first read goes to the engine.
    window.staleUnread = db.iterator({ gte: 'a', lt: 'b' });
    for (let i = 0; i < 10; i++) await db.put(`a0${i}`, 'new');
    return { leading: isLeading(db), first };
  },

  /** After the leader's tab closed, this tab leads with its own engine, where it opens an
   * iterator and a snapshot of its own first (the engine's ids for them are the ones the old
   * engine gave). The old iterator and snapshot must say they died, never reach these. */
  async staleAfter() {
    const db = window.staleDb;
    for (let i = 0; i < 400 && !isLeading(db); i++) await new Promise((r) => setTimeout(r, 5));
    const ledAt = Date.now();
    const code = async (fn) => {
      try {
        return { value: await fn() };
      } catch (e) {
        return { code: e.code };
      }
    };
    await db.put('z0', 'zz');
    const mineSnap = await db.snapshot();
    const mineIt = db.iterator({ gte: 'z' });
    const mineFirst = await mineIt.next();
    const out = {
      leading: isLeading(db),
      mineFirst,
      oldSeek: await code(() => window.staleIt.seek('a05')),
      oldNext: await code(() => window.staleUnread.nextv(10)),
      oldSnapGet: await code(() => db.get('a00', { snapshot: window.staleSnap })),
      oldSnapIterator: await code(() => db.iterator({ snapshot: window.staleSnap }).all()),
      oldClose: await code(() => window.staleIt.close()),
      oldRelease: await code(() => window.staleSnap.release()),
      mineSnapGet: await db.get('a00', { snapshot: mineSnap }),
      propsOpen: await db.properties(),
      mineRest: await mineIt.all(),
    };
    await mineIt.close();
    await mineSnap.release();
    const p = await db.properties();
    out.propsAfter = { snapshots: p.snapshots, iterators: p.iterators };
    out.propsOpen = { snapshots: out.propsOpen.snapshots, iterators: out.propsOpen.iterators };
    await db.close();
    return { ...out, ledAt };
  },

  /** This tab leads `location` (fresh). */
  async holdLead(location) {
    await destroy(location);
    window.leadDb = await open(location, { valueEncoding: 'utf8' });
    await window.leadDb.put('k', 'v');
    return isLeading(window.leadDb);
  },

  /** This tab follows `location` and opens a snapshot and an iterator on the leader's engine;
   * with `close`, it then closes its database without releasing the snapshot. */
  async followAndHold(location, close) {
    const db = await open(location, { keyEncoding: 'utf8', valueEncoding: 'utf8' });
    window.heldSnap = await db.snapshot();
    window.heldIt = db.iterator();
    const first = await window.heldIt.next();
    if (close) await db.close();
    return { leading: isLeading(db), first };
  },

  /** The leader's view: what it holds for other tabs, and its engine's open snapshots and
   * iterators; with `waitFor`, polls (up to 15 s) until it holds that many for others. */
  async leadHeld(location, waitFor) {
    const t0 = performance.now();
    const held = () => tabInfo(location).reduce((n, t) => n + t.heldForOthers, 0);
    if (waitFor !== undefined) while (held() !== waitFor && performance.now() - t0 < 15_000) await new Promise((r) => setTimeout(r, 50));
    let p = await window.leadDb.properties();
    // The engine's releases follow the bookkeeping asynchronously: with nothing held, wait
    // (within the same bound) until the engine has freed the snapshots and iterators too.
    while (waitFor === 0 && held() === 0 && p.snapshots + p.iterators > 0 && performance.now() - t0 < 15_000) {
      await new Promise((r) => setTimeout(r, 50));
      p = await window.leadDb.properties();
    }
    return { heldForOthers: held(), snapshots: p.snapshots, iterators: p.iterators, waitedMs: Math.round(performance.now() - t0) };
  },

  tabState() {
    return { acked: window.acked?.length ?? 0, keys: [...new Set(window.acked ?? [])], info: tabInfo(window.tabLocation ?? 'shared-tabs') };
  },

  async tabCheck(keys, storage) {
    window.tabLocation = storage ? `shared-tabs-${storage}` : 'shared-tabs';
    window.sharedDb ??= await open(window.tabLocation, { storage });
    let present = 0;
    for (const k of keys) if ((await window.sharedDb.get(k, { valueEncoding: 'utf8' })) === `value-${k}`) present++;
    const all = (await window.sharedDb.iterator({ keys: true, values: false }).all()).length;
    return { present, all };
  },

  /** Opens `persist` and keeps it open (for the cross-tab lock test). */
  async holdOpen(storage) {
    window.held = await open('persist', { storage });
    return 'held';
  },

  async openCode(location, options) {
    try {
      const db = await open(location, options);
      await db.close();
      return 'opened';
    } catch (e) {
      return e.code;
    }
  },

  /** Sharers whose engine takes `openMs` to open, longer than the leader wait (`waitMs`): the
   * opener and a sharer that joined while it opened both get the database (the opener says
   * it is opening); with the lock held outside the sharing (nobody opening), an open fails
   * within the bound; an opener that answers only when asked keeps a sharer waiting past the
   * silence bound (`silenceMs`). Fake engines: only the sharing is under test. */
  async slowLeader(waitMs, silenceMs, openMs) {
    const { TabLink } = await import('/pkg/dist/tabs.js');
    const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
    const engine = (ms) => async () => {
      await sleep(ms);
      return { link: { call: async (op) => (op === 'get' ? 'answer' : undefined) }, handle: 1 };
    };
    const was = [TabLink.leaderWaitMs, TabLink.openingSilenceMs];
    TabLink.leaderWaitMs = waitMs;
    TabLink.openingSilenceMs = silenceMs;
    try {
      const t0 = performance.now();
      const first = TabLink.open('slow-open', engine(openMs));
      await sleep(50);
      const second = TabLink.open('slow-open', engine(openMs));
      let secondAt = 0;
      void second.finally(() => (secondAt = performance.now() - t0)).catch(() => {});
      const [a, b] = await Promise.allSettled([first, second]);
      const out = { first: a.status === 'fulfilled' ? (a.value.leading ? 'leads' : 'follows') : a.reason.message, second: b.status === 'fulfilled' ? (b.value.leading ? 'leads' : 'follows') : b.reason.message };
      out.secondGets = b.status === 'fulfilled' ? await b.value.call('get', [0, 'k']) : null;
      // The follower's open resolved only once the opener led.
      out.secondAfterOpenMs = secondAt >= openMs;
      for (const s of [a, b]) if (s.status === 'fulfilled') await s.value.call('close', []);
      let release;
      const held = new Promise((r) => (release = r));
      await new Promise((granted) => navigator.locks.request('strata-db:stuck-open', () => (granted(), held)));
      const t1 = performance.now();
      out.stuck = await TabLink.open('stuck-open', engine(0)).then(
        (t) => (t.call('close', []), 'opened'),
        (e) => `${e.code}: ${e.message.replace(/within [\d.]+ s/, 'within N s')}`,
      );
      const stuckMs = performance.now() - t1;
      out.stuckWithinBound = stuckMs >= waitMs && stuckMs < waitMs + 2000;
      release();

      // A sharer closed while it opens (it got the lock in a handover): the others wait for
      // its open to be undone, and the next one leads.
      const a2 = await TabLink.open('closed-mid-open', engine(0));
      const b2 = await TabLink.open('closed-mid-open', engine(openMs));
      const c2 = await TabLink.open('closed-mid-open', engine(0));
      await a2.call('close', []);
      const cGets = c2.call('get', [0, 'k']).catch((e) => e.message);
      await sleep(500);
      await b2.call('close', []);
      out.closedMidOpen = { thirdGets: await cGets, thirdLeads: c2.leading };
      await c2.call('close', []);

      // An opener that says so only when asked (its timers throttled, as in a hidden tab): the
      // sharer keeps asking, so it waits past the silence bound and gets the leader's answer.
      const ch = new BroadcastChannel('strata-db:asked-open');
      let asks = 0;
      let fakeLeads = false;
      let releaseFake;
      const fakeHeld = new Promise((r) => (releaseFake = r));
      await new Promise((granted) => navigator.locks.request('strata-db:asked-open', () => (granted(), fakeHeld)));
      ch.onmessage = ({ data: m }) => {
        if (m.t === 'hello') {
          asks++;
          ch.postMessage(fakeLeads ? { t: 'leader', id: 'fake' } : { t: 'opening', id: 'fake' });
        } else if (m.t === 'call' && m.leader === 'fake') ch.postMessage({ t: 'reply', to: m.from, id: m.id, ok: true, value: `fake ${m.op}` });
      };
      setTimeout(() => {
        fakeLeads = true;
        ch.postMessage({ t: 'leader', id: 'fake' });
      }, openMs);
      try {
        const t = await TabLink.open('asked-open', engine(0));
        out.askedGets = await t.call('get', [0, 'k']);
        await t.call('close', []);
      } catch (e) {
        out.askedGets = e.message;
      }
      out.askedAgain = asks >= 2;
      releaseFake();
      ch.close();
      return out;
    } finally {
      [TabLink.leaderWaitMs, TabLink.openingSilenceMs] = was;
    }
  },

  /** Two opens of one database in the same worker. */
  async sameWorkerLock() {
    const db = await open('lock-same', { shared: false });
    const second = await this.openCode('lock-same', { shared: false });
    await db.close();
    const third = await this.openCode('lock-same', { shared: false });
    return { second, third };
  },

  /** Bad input through the worker: the worker survives and the codes are documented. */
  async badInput() {
    const db = await open('bad', { storage: 'mem' });
    const codes = {};
    const tryCode = async (name, fn) => {
      try {
        await fn();
        codes[name] = 'none';
      } catch (e) {
        codes[name] = e.code;
      }
    };
    await tryCode('putNumber', () => db.put(1, 'v'));
    await tryCode('badBatch', () => db.batch([{ type: 'x', key: 'k' }]));
    await tryCode('badOption', () => open('bad2', { storage: 'mem', compression: 'lz4' }));
    await tryCode('notFound', () => open('no-such-db', { createIfMissing: false }));
    await db.put('still', 'alive');
    codes.alive = new TextDecoder().decode(await db.get('still'));
    await db.close();
    await tryCode('closed', () => db.get('still'));
    return codes;
  },
};

document.title = 'ready';
