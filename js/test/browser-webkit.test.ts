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
// only through a missing method. The streamed .mcworld export (World.exportMcworldTo) of whole
// shared worlds (amulet_1_16, mcpe_0_11_mcedit_testdb) stored in IndexedDB, its scratch store
// the IndexedDB store .strata-export: the zip equals Node's export of the same folder byte for
// byte (size, CRC-32, SHA-256 pinned in shared/export-expected.ts) with the same progress
// events; discard() (also after the world closed) leaves no record under .strata-export; an
// abort mid-copy or mid-zip rejects with the signal's AbortError and leaves none; a sharer that
// follows exports through the leader's engine.

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
import {
  expectBrowserAbort,
  expectBrowserExport,
  NO_SCRATCH,
  nodeExport,
  progressSummary,
  type BrowserAbort,
  type BrowserExport,
  type ExportEvent,
  type NodeExport,
  type ZipFigures,
} from './shared/export-expected.js';

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

  /** Worlds of two eras exported whole (level.dat, icon, db/): 1.16 and 0.11 (LegacyTerrain). */
  const EXPORT_WORLDS = ['amulet_1_16', 'mcpe_0_11_mcedit_testdb'];
  /** 256 KiB steps: many progress events even for these few-MB worlds. */
  const STEP = 256 << 10;
  const refs = new Map<string, Promise<NodeExport>>();
  const ref = (name: string) => refs.get(name) ?? (refs.set(name, nodeExport(name, STEP)), refs.get(name)!);

  worldTest("exportMcworldTo of whole worlds in IndexedDB (the scratch store '.strata-export' there too): Node's zip byte for byte, its progress events, nothing left after discard()", async () => {
    for (const name of EXPORT_WORLDS) {
      const want = await ref(name);
      const got = await run<BrowserExport>('exportWorld', name, 'idb', STEP);
      const s = progressSummary(got.events);
      console.log(
        `WebKit idb export of ${name}: ${got.zip.size} B, CRC-32 ${got.zip.crc32.toString(16)}, SHA-256 ${got.zip.sha256.slice(0, 16)}…, ` +
          `${got.events.length} events ${JSON.stringify(s.perPhase)}, ${got.exportMs} ms; scratch before discard: ${Array.isArray(got.scratchBeforeDiscard) ? `${got.scratchBeforeDiscard.length} OPFS entries` : JSON.stringify(got.scratchBeforeDiscard)}`,
      );
      expectBrowserExport(name, 'idb', got, want);
    }
  });

  worldTest("exportMcworldTo from a sharer that follows (a second open in the page): the leader's engine exports, the zip's Blob comes back over the BroadcastChannel", async () => {
    const name = 'amulet_1_16';
    const want = await ref(name);
    await run<BrowserExport>('exportWorld', name, 'idb', STEP); // stores the world
    expect(await run<boolean[]>('holdWorld', name, 'idb')).toEqual([true]);
    const got = await run<{ leading: boolean[]; events: ExportEvent[]; zip: ZipFigures; left: unknown; scan: object }>('exportFollowing', name, 'idb', STEP);
    // Both sharers of the page are listed: the holder leads, the exporter followed.
    expect(got).toEqual({ leading: [true, false], events: want.events, zip: want.zip, left: NO_SCRATCH.idb, scan: want.scan });
    expect(await run<object>('heldWorldInfo', name, 'idb')).toEqual([{ leading: true, served: true, heldForOthers: 0 }]);
    await run<void>('releaseWorld', name, 'idb');
  });

  worldTest('an aborted exportMcworldTo (mid-copy, mid-zip) rejects with AbortError and leaves no scratch records; the world keeps its figures', async () => {
    for (const [name, phase, at] of [
      ['amulet_1_16', 'copy', 3],
      ['mcpe_0_11_mcedit_testdb', 'zip', 1],
    ] as const) {
      const got = await run<BrowserAbort>('exportAbort', name, 'idb', STEP, phase, at);
      console.log(`WebKit idb, ${name} aborted at ${phase} #${at}: ms ${JSON.stringify(got.ms)}`);
      expectBrowserAbort(name, 'idb', got, await ref(name), phase, at);
    }
  });
});
