// The package in WebKit (Debian's WebKitGTK MiniBrowser through WebKitWebDriver, test/
// webkit-driver.ts), where OPFS has no usable sync access handles (WebKitGTK 2.50: its
// automation sessions answer any OPFS call with UnknownError; outside automation, with a
// persistent data directory, createSyncAccessHandle() is NotSupportedError "Backend does not
// support this operation"): databases go to IndexedDB by default (src/idb-host.ts). The same
// page and checks as the Chromium and Firefox suites: which storage is chosen, conformance and
// the in-flight model (IndexedDB and mem), reload persistence, locks and bad input, 100 leader
// changes among three sharers with every acknowledged write present, and shared worlds stored
// in browser storage read back with the MANIFEST figures. The session has WebKit's AccessHandle
// feature on, so the choice goes through the probe (a real failed createSyncAccessHandle), not
// only through a missing method.

import fs from 'node:fs';
import path from 'node:path';
import type { WebDriver } from 'selenium-webdriver';
import type { ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';

import { worlds, worldsDir, worldTest } from './helpers.js';
import { available, startWebKit, stopWebKit } from './webkit-driver.js';
// @ts-expect-error: plain JS module.
import { serve } from './browser/server.mjs';
import { BAD_INPUT, INFLIGHT } from './shared/expected.js';

if (!available) console.warn('!!! SKIPPED: WebKit (WebKitWebDriver, MiniBrowser, xvfb-run) not installed: the package in WebKit');

/** Worlds small enough to copy into IndexedDB quickly in WebKit (every era: 0.11 to 1.18). */
const WORLDS = ['mcpe_0_11_mcedit_testdb', 'bedrock_provider_mctestdb', 'amulet_1_16', 'amulet_1_18_vanilla'];

describe.skipIf(!available)('the package in WebKit', () => {
  let d: WebDriver;
  let driverProc: ChildProcess;
  let server: { close(): void };
  let origin: string;

  async function load(): Promise<void> {
    await d.get(`${origin}/test/browser/page.html`);
    await d.wait(async () => (await d.getTitle()) === 'ready', 60_000);
  }

  async function run<T>(fn: string, ...args: unknown[]): Promise<T> {
    const r = (await d.executeAsyncScript(
      `const done = arguments[arguments.length - 1];
       const [name, args] = [arguments[0], arguments[1]];
       window.strataTest[name](...args).then((v) => done({ ok: true, v }), (e) => done({ ok: false, e: String((e && e.code ? e.code + ': ' : '') + (e && e.stack || e)) }));`,
      fn,
      args,
    )) as { ok: boolean; v?: T; e?: string };
    if (!r.ok) throw new Error(`${fn} in WebKit: ${r.e}`);
    return r.v as T;
  }

  beforeAll(async () => {
    const s = await serve({ pkgDir: path.resolve('.'), worldsDir });
    server = s.server;
    origin = s.origin;
    ({ d, driverProc } = await startWebKit(['+FileSystem', '+StorageAPI', '+AccessHandle']));
    await load();
  }, 300_000);

  afterAll(async () => {
    await stopWebKit(d, driverProc);
    server?.close();
  });

  test('databases go to IndexedDB by default, and say so', async () => {
    expect(await run<object>('storageInfo')).toEqual({ defaultStorage: 'idb', reported: 'idb' });
  });

  test('conformance on IndexedDB and mem', async () => {
    expect(await run<number>('conformance', 'idb')).toBe(27);
    expect(await run<number>('conformance', 'mem')).toBe(27);
  });

  test('many promises in flight agree with a model (IndexedDB and mem)', async () => {
    const expected = INFLIGHT;
    expect(await run<object>('inflight', 'idb')).toEqual(expected);
    expect(await run<object>('inflight', 'mem')).toEqual(expected);
  });

  test('entries survive a page reload (default storage)', async () => {
    expect(await run<number>('writeForReload')).toBe(3001);
    await d.navigate().refresh();
    await d.wait(async () => (await d.getTitle()) === 'ready', 60_000);
    expect(await run<object>('readAfterReload')).toEqual({
      count: 3001,
      first: ['key00000', 'value-0'.repeat(10)],
      sample: 'value-1234'.repeat(10),
      last: 'synced',
    });
  });

  test('locks within one worker, and bad input', async () => {
    expect(await run<object>('sameWorkerLock')).toEqual({ second: 'LEVEL_LOCKED', third: 'opened' });
    expect(await run<object>('badInput')).toEqual(BAD_INPUT);
  });

  test('100 leader changes among three sharers writing at once: every acknowledged write is there', async () => {
    const r = await run<{ acked: number; present: number; wrong: number; changes: number; lostCalls: number; led: number }>('leaderChanges', 100);
    console.log(`WebKit, 100 leader changes over IndexedDB: ${JSON.stringify(r)}`);
    expect(r.changes).toBe(100);
    expect(r.acked).toBeGreaterThan(300);
    expect(r.present).toBe(r.acked);
    expect(r.wrong).toBe(0);
  });

  worldTest('shared worlds copied into browser storage (IndexedDB here) give the manifest figures', async () => {
    for (const name of WORLDS) {
      const w = worlds().find((r) => r.name === name)!;
      const r = await run<{ bytes: number; entries: number; keyBytes: number; valueBytes: number; crc32c: number; scan: object }>('opfsWorld', w.name);
      const dbDir = path.join(worldsDir, w.name, 'db');
      const size = fs.readdirSync(dbDir).reduce((n, f) => n + fs.statSync(path.join(dbDir, f)).size, 0);
      const want = { entries: w.entries, keyBytes: w.keyBytes, valueBytes: w.valueBytes, crc32c: w.crc32c };
      expect({ world: w.name, bytes: r.bytes, entries: r.entries, keyBytes: r.keyBytes, valueBytes: r.valueBytes, crc32c: r.crc32c }).toEqual({ world: w.name, bytes: size, ...want });
      expect(r.scan).toEqual(want);
    }
  });
});
