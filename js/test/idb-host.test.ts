// The IndexedDB store (src/idb-host.ts) in Node, over fake-indexeddb, through the same engine
// path as in browsers (runOp: settle after each operation): a write is committed before its
// promise resolves; after a crash (the host abandoned without a flush) the database is exactly
// the state after some operation at or past the last acknowledged one (a model over a random
// workload with memtable flushes, compactions, and bursts sharing commits); a failed commit is
// sticky and loses nothing acknowledged; locks (release() resolves once the Web Lock is free),
// destroy (files and folder records, also of a store holding only folders), file operations
// across flushes, and a real world stored there read back with MANIFEST figures.
// The browsers' own IndexedDB runs the same store in browser.test.ts (Chromium) and
// webkit.test.ts (WebKit, where it is the default).

import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { IDBFactory } from 'fake-indexeddb';
import 'fake-indexeddb/auto';
import { describe, expect, test } from 'vitest';

import { Db, getEngine } from '../dist/node.js';
import { Engine, engineOptions, type HostLease, type WasmModule } from '../dist/engine.js';
import { toStrataError } from '../dist/errors.js';
import { IdbHost } from '../dist/idb-host.js';
import { LocalLink } from '../dist/local-link.js';
import { Database } from '../wasm/strata.js';
import { worlds, worldsDir, worldTest } from './helpers.js';

getEngine(); // compiles the wasm module once

interface Store {
  idb: IDBFactory;
  hosts: IdbHost[];
  engine: Engine;
}

function store(): Store {
  const s: Store = { idb: new IDBFactory(), hosts: [], engine: undefined as unknown as Engine };
  s.engine = new Engine({ Database } as unknown as WasmModule, async (_kind, location): Promise<HostLease> => {
    const host = await IdbHost.open(location, { indexedDB: s.idb, locks: null });
    s.hosts.push(host);
    return { host, settle: () => host.settle(), release: () => host.release() };
  });
  return s;
}

async function openIn(s: Store, location: string, options: Record<string, unknown> = {}): Promise<Db> {
  const handle = await s.engine.open('idb', location, engineOptions(options)).catch((e: unknown) => {
    throw toStrataError(e);
  });
  return new Db(new LocalLink(s.engine), handle, location, { ...options, storage: 'idb' });
}

/** A crash: the host goes without flushing (IndexedDB keeps its last commit); the engine's
 * database is dropped (its closing writes fail on the abandoned host). */
async function crash(s: Store, db: Db): Promise<void> {
  s.hosts.at(-1)!.abandon();
  await db.close().catch(() => {});
}

async function contents(db: Db): Promise<Array<[string, string]>> {
  const all = await db.iterator({ keyEncoding: 'utf8', valueEncoding: 'utf8' }).all();
  return all as Array<[string, string]>;
}

async function codeOf(p: Promise<unknown>): Promise<string> {
  try {
    await p;
    return 'none';
  } catch (e) {
    const err = e as { code: string; kind?: string };
    return err.kind ? `${err.code}/${err.kind}` : err.code;
  }
}

describe('IndexedDB store', () => {
  test('a synced write is committed before it resolves; close and reopen keep everything', async () => {
    const s = store();
    const db = await openIn(s, 'persist');
    const ops = [];
    for (let i = 0; i < 3000; i++) ops.push({ type: 'put' as const, key: `key${String(i).padStart(5, '0')}`, value: `value-${i}`.repeat(10) });
    await db.batch(ops);
    await db.put('last', 'synced', { sync: true });
    const host = s.hosts[0]!;
    expect(host.pendingChanges).toBe(false);
    await crash(s, db);
    const again = await openIn(s, 'persist', { createIfMissing: false });
    const all = await contents(again);
    expect(all.length).toBe(3001);
    expect(all[0]).toEqual(['key00000', 'value-0'.repeat(10)]);
    expect(all.at(-1)).toEqual(['last', 'synced']);
    await again.put('after', 'close');
    await again.close();
    const third = await openIn(s, 'persist', { createIfMissing: false });
    expect((await third.scan()).entries).toBe(3002);
    expect(third.storage).toBe('idb');
    await third.close();
  });

  test('crashes at random points recover exactly the state after an operation at or past the last acknowledged one', async () => {
    const s = store();
    let rng = 0x2545f491;
    const rand = (n: number): number => {
      rng ^= rng << 13;
      rng ^= rng >>> 17;
      rng ^= rng << 5;
      return (rng >>> 0) % n;
    };
    const options = { writeBufferSize: 64 * 1024, maxFileSize: 64 * 1024 };
    let model = new Map<string, string>();
    let db = await openIn(s, 'model', options);
    const stats = { ops: 0, synced: 0, crashes: 0, burstOps: 0, recoveredAtLastAcked: 0, recoveredLater: 0, flushes: 0, compactions: 0 };
    for (let round = 0; round < 8; round++) {
      // States after each operation of this round (index 0: before any).
      const states: string[] = [JSON.stringify([...model].sort())];
      let lastSynced = 0;
      const n = 150 + rand(150);
      for (let i = 0; i < n; i++) {
        const r = rand(100);
        const key = `k${String(rand(400)).padStart(4, '0')}`;
        const sync = rand(5) === 0;
        if (r < 60) {
          const value = `${round}-${i}-`.repeat(1 + rand(80));
          await db.put(key, value, { sync });
          model.set(key, value);
        } else if (r < 80) {
          await db.del(key, { sync });
          model.delete(key);
        } else if (r < 93) {
          const ops = [];
          for (let j = 0; j < 1 + rand(10); j++) {
            const k = `k${String(rand(400)).padStart(4, '0')}`;
            if (rand(3) === 0) {
              ops.push({ type: 'del' as const, key: k });
              model.delete(k);
            } else {
              const v = `b${round}-${i}-${j}`.repeat(1 + rand(30));
              ops.push({ type: 'put' as const, key: k, value: v });
              model.set(k, v);
            }
          }
          await db.batch(ops, { sync });
        } else if (r < 97) {
          await db.flush();
          stats.flushes++;
        } else {
          await db.compactRange();
          stats.compactions++;
        }
        stats.ops++;
        states.push(JSON.stringify([...model].sort()));
        if (sync) {
          stats.synced++;
          lastSynced = states.length - 1;
        }
      }
      // Every operation so far was acknowledged. Then a burst of puts not awaited one by one
      // (they share commits); the crash comes once some of them were acknowledged.
      let lastAcked = states.length - 1;
      const burst = [];
      for (let i = 0; i < 5 + rand(40); i++) {
        const key = `k${String(rand(400)).padStart(4, '0')}`;
        const value = `burst${round}-${i}`;
        const index = states.length;
        burst.push(db.put(key, value, { sync: rand(4) === 0 }).then(() => (lastAcked = Math.max(lastAcked, index))));
        model.set(key, value);
        states.push(JSON.stringify([...model].sort()));
        stats.burstOps++;
      }
      await Promise.race(burst);
      const ackedAtCrash = lastAcked;
      await crash(s, db);
      await Promise.allSettled(burst);
      stats.crashes++;
      db = await openIn(s, 'model', options);
      const got = JSON.stringify(await contents(db));
      const at = states.indexOf(got, ackedAtCrash);
      expect(at, `round ${round}: recovered state is no state at or after operation ${ackedAtCrash} (the last acknowledged; synced: ${lastSynced})`).toBeGreaterThanOrEqual(ackedAtCrash);
      if (at === ackedAtCrash) stats.recoveredAtLastAcked++;
      else stats.recoveredLater++;
      model = new Map(JSON.parse(got) as Array<[string, string]>);
    }
    await db.close();
    console.log(`IndexedDB crash model: ${JSON.stringify(stats)}`);
    expect(stats.crashes).toBe(8);
    expect(stats.synced).toBeGreaterThan(50);
  });

  test('a commit IndexedDB refuses (quota) fails that write and every later one; the last commit survives', async () => {
    const s = store();
    const db = await openIn(s, 'quota');
    await db.put('a', '1', { sync: true });
    const host = s.hosts[0]!;
    const idb = (host as unknown as { db: IDBDatabase }).db;
    const real = idb.transaction.bind(idb);
    let refuse = true;
    idb.transaction = ((names: string[], mode: IDBTransactionMode, opts?: IDBTransactionOptions) => {
      const tx = real(names, mode, opts);
      if (mode === 'readwrite' && refuse) {
        refuse = false;
        Object.defineProperty(tx, 'error', { get: () => new DOMException('quota exceeded (test)', 'QuotaExceededError') });
        queueMicrotask(() => tx.abort());
      }
      return tx;
    }) as typeof idb.transaction;
    expect(await codeOf(db.put('b', '2', { sync: true }))).toBe('LEVEL_IO_ERROR/NoSpace');
    expect(await codeOf(db.put('c', '3'))).toBe('LEVEL_IO_ERROR/NoSpace');
    expect(new TextDecoder().decode(await db.get('a'))).toBe('1');
    await crash(s, db);
    const again = await openIn(s, 'quota', { createIfMissing: false });
    expect(await contents(again)).toEqual([['a', '1']]);
    await again.close();
  });

  test('one open per database; destroy removes exactly its files', async () => {
    const s = store();
    const a = await openIn(s, 'lock-a');
    await a.put('x', 'y', { sync: true });
    expect(await codeOf(openIn(s, 'lock-a'))).toBe('LEVEL_LOCKED');
    const b = await openIn(s, 'lock-b');
    await b.put('z', 'w');
    await b.close();
    await a.close();
    await IdbHost.destroy('lock-a', { indexedDB: s.idb, locks: null });
    expect(await codeOf(openIn(s, 'lock-a', { createIfMissing: false }))).toBe('LEVEL_NOT_FOUND/NotFound');
    const kept = await openIn(s, 'lock-b', { createIfMissing: false });
    expect(await contents(kept)).toEqual([['z', 'w']]);
    await kept.close();
    // Nothing of lock-a is left in IndexedDB (lock-b's files are).
    const host = await IdbHost.open('lock-a', { indexedDB: s.idb, locks: null });
    expect(host.paths()).toEqual([]);
    host.abandon();
  });

  test('destroy removes folder records too, also of a store holding only folders (an aborted export leaves those)', async () => {
    const idb = new IDBFactory();
    const records = async (): Promise<string[]> => {
      const db = await new Promise<IDBDatabase>((resolve, reject) => {
        const r = idb.open('strata-files');
        r.onsuccess = () => resolve(r.result);
        r.onerror = () => reject(r.error);
      });
      const keys = await new Promise<IDBValidKey[]>((resolve, reject) => {
        const r = db.transaction('files').objectStore('files').getAllKeys();
        r.onsuccess = () => resolve(r.result);
        r.onerror = () => reject(r.error);
      });
      db.close();
      return (keys as string[]).sort();
    };
    // Folders only (the files were removed, as an export's cancel removes them).
    let h = await IdbHost.open('dirs', { indexedDB: idb, locks: null });
    h.mkdir('dirs');
    h.mkdir('dirs/export/world/db');
    const fd = h.open('dirs/export/x', 'w');
    h.write(fd, new Uint8Array(5000));
    h.close(fd);
    await h.flush();
    h.remove('dirs/export/x');
    await h.release();
    // Another store beside it keeps its records.
    h = await IdbHost.open('other', { indexedDB: idb, locks: null });
    h.mkdir('other/sub');
    await h.release();
    expect(await records()).toEqual(['dirs', 'dirs/export', 'dirs/export/world', 'dirs/export/world/db', 'other', 'other/sub']);
    await IdbHost.destroy('dirs', { indexedDB: idb, locks: null });
    expect(await records()).toEqual(['other', 'other/sub']);
    h = await IdbHost.open('dirs', { indexedDB: idb, locks: null });
    expect([h.exists('dirs'), h.exists('dirs/export'), h.paths()]).toEqual([false, false, []]);
    h.abandon();
  });

  test("release() resolves once the store's Web Lock is free: a destroy or an open right after it is not LEVEL_LOCKED", async () => {
    // Web Locks as browsers run them: a lock is released in a later task after its callback's
    // promise settles, and request() resolves only after that (its documented contract). The
    // browsers' own: an aborted export's scratch store destroyed at once (browser-*.test.ts).
    const held = new Set<string>();
    const locks = {
      request(name: string, _options: { ifAvailable: boolean }, cb: (lock: unknown) => Promise<void>): Promise<void> {
        if (held.has(name)) return cb(null);
        held.add(name);
        return (async () => {
          try {
            await cb({ name });
          } finally {
            await new Promise((r) => setTimeout(r, 5));
            held.delete(name);
          }
        })();
      },
    };
    const idb = new IDBFactory();
    const h = await IdbHost.open('scratch', { indexedDB: idb, locks });
    held.add('strata-idb:busy'); // another tab holds it
    await expect(IdbHost.open('busy', { indexedDB: idb, locks })).rejects.toMatchObject({ code: 'ELOCKED', message: 'busy is open in another worker or tab' });
    const fd = h.open('scratch/zip', 'w');
    h.write(fd, new Uint8Array(10_000));
    h.close(fd);
    await h.release();
    // As an export's cancel does: its store released, then destroyed at once.
    expect(held.has('strata-idb:scratch')).toBe(false);
    await IdbHost.destroy('scratch', { indexedDB: idb, locks });
    const again = await IdbHost.open('scratch', { indexedDB: idb, locks });
    expect(again.paths()).toEqual([]);
    await again.release();
  });

  test('file operations across flushes: rename, shrink by rewrite, remove and recreate, append, folders', async () => {
    const idb = new IDBFactory();
    const bytes = (n: number, seed: number): Uint8Array => Uint8Array.from({ length: n }, (_, i) => (i * 31 + seed) & 255);
    const write = (h: IdbHost, p: string, mode: 'w' | 'a', data: Uint8Array): void => {
      const fd = h.open(p, mode);
      h.write(fd, data);
      h.close(fd);
    };
    const digest = (b: Uint8Array): string => `${b.length} bytes, sha256 ${createHash('sha256').update(b).digest('hex')}`;
    const read = (h: IdbHost, p: string): string => {
      const fd = h.open(p, 'r');
      const buf = new Uint8Array(h.size(fd));
      expect(h.read(fd, 0, buf)).toBe(buf.length);
      h.close(fd);
      return digest(buf);
    };
    let h = await IdbHost.open('ops', { indexedDB: idb, locks: null });
    h.mkdir('ops/sub/deeper');
    write(h, 'ops/big', 'w', bytes(200_000, 1)); // 4 chunks
    write(h, 'ops/moved', 'w', bytes(70_000, 2));
    write(h, 'ops/gone', 'w', bytes(10, 3));
    write(h, 'ops/sub/log', 'w', bytes(100, 4));
    await h.flush();
    h.rename('ops/moved', 'ops/sub/target'); // flushed before: every chunk must follow it
    write(h, 'ops/big', 'w', bytes(1000, 5)); // the old chunks 1..3 must not come back
    h.remove('ops/gone');
    write(h, 'ops/sub/log', 'a', bytes(100_000, 6));
    await h.flush();
    write(h, 'ops/gone', 'w', bytes(5, 7));
    await h.flush();
    h.abandon();
    h = await IdbHost.open('ops', { indexedDB: idb, locks: null });
    expect(h.paths().sort()).toEqual(['ops/big', 'ops/gone', 'ops/sub/log', 'ops/sub/target']);
    expect(h.list('ops').sort()).toEqual(['big', 'gone', 'sub']);
    expect(h.list('ops/sub').sort()).toEqual(['deeper', 'log', 'target']);
    expect(h.exists('ops/sub/deeper')).toBe(true);
    expect(read(h, 'ops/sub/target')).toBe(digest(bytes(70_000, 2)));
    expect(read(h, 'ops/big')).toBe(digest(bytes(1000, 5)));
    expect(read(h, 'ops/gone')).toBe(digest(bytes(5, 7)));
    expect(read(h, 'ops/sub/log')).toBe(digest(Uint8Array.from([...bytes(100, 4), ...bytes(100_000, 6)])));
    expect(h.stats.bytes).toBe(0);
    h.abandon();
  });

  worldTest('a real world stored in IndexedDB opens with the MANIFEST figures', async () => {
    const s = store();
    const name = 'amulet_1_18_vanilla';
    const row = worlds().find((w) => w.name === name)!;
    const dir = path.join(worldsDir, name);
    const host = await IdbHost.open(`w/${name}`, { indexedDB: s.idb, locks: null });
    const put = (rel: string): void => {
      const fd = host.open(`w/${name}/${rel}`, 'w');
      host.write(fd, fs.readFileSync(path.join(dir, rel)));
      host.sync(fd);
      host.close(fd);
    };
    host.mkdir(`w/${name}/db`);
    put('level.dat');
    for (const f of fs.readdirSync(path.join(dir, 'db'))) put(`db/${f}`);
    await host.release();
    const handle = await s.engine.openWorld('idb', `w/${name}`, engineOptions({ readOnly: true, profile: 'bedrock' }));
    const db = new Db(new LocalLink(s.engine), handle, `w/${name}`, { storage: 'idb' });
    expect(await db.scan()).toEqual({ entries: row.entries, keyBytes: row.keyBytes, valueBytes: row.valueBytes, crc32c: row.crc32c });
    await db.close();
  });
});
