// OPFS with a bounded number of open sync access handles (Safari allows about 250 per page):
// a database of about 1,500 tables (written natively by the CLI) imported into OPFS and opened
// with `maxHandles: 64` in Chromium: every entry read back exactly (the CLI's figures), the
// handles open never above the bound at any step, tables parked (read through File snapshots),
// a compaction that removes parked tables (journal, then deleted from OPFS), and a reopen with
// the same figures and no stray files.

import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';

import { cliPath, repoRoot, tempDir } from './helpers.js';
// @ts-expect-error: plain JS module.
import { serve } from './browser/server.mjs';

const CHROMIUM = process.env.STRATA_CHROMIUM ?? '/usr/bin/chromium';
const releaseCli = path.join(repoRoot, 'target/release/strata');
const cli = fs.existsSync(releaseCli) ? releaseCli : cliPath;
let context: BrowserContext;
let server: { close(): void };
let page: Page;
let root: string;

beforeAll(async () => {
  // ~1,500 tables of about 4 KiB (deterministic seeds: the same database every time).
  root = tempDir('many-tables');
  const db = path.join(root, 'many', 'db');
  execFileSync(cli, ['bench', '--benchmarks=fillrandom,compact', '--num=170000', '--value_size=100', '--max_file_size=4096', '--write_buffer_size=8388608', `--db=${db}`, '--json']);
  const s = await serve({ pkgDir: path.resolve('.'), worldsDir: root });
  server = s.server;
  context = await chromium.launchPersistentContext(tempDir('chromium-handles'), {
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  page = await context.newPage();
  page.on('pageerror', (e) => console.error('page error:', e));
  await page.goto(`${s.origin}/test/browser/placement.html`);
  await page.waitForFunction(() => document.title === 'ready');
}, 300_000);

afterAll(async () => {
  await context?.close();
  server?.close();
});

describe('OPFS with bounded handles', () => {
  test('1,500 tables under 64 handles: exact figures, never above the bound, compaction and reopen', async () => {
    const dbDir = path.join(root, 'many', 'db');
    const files = fs.readdirSync(dbDir).length;
    expect(files).toBeGreaterThan(1400);
    const native = JSON.parse(execFileSync(cli, ['scan', '--json', dbDir], { encoding: 'utf8' })) as Record<string, number>;
    const want = { entries: native.entries, keyBytes: native.key_bytes, valueBytes: native.value_bytes, crc32c: native.crc32c };
    expect(want).toEqual({ entries: 107_432, keyBytes: 1_718_912, valueBytes: 10_743_200, crc32c: 1_922_736_875 });
    // Of keys 0..19,999 (overwritten below), how many the database already holds.
    const { open } = (await import('../dist/node.js')) as typeof import('../dist/node.js');
    const ro = await open(dbDir, { readOnly: true });
    let present = 0;
    for (let i = 0; i < 20_000; i++) if ((await ro.get(String(i).padStart(16, '0'))) !== undefined) present++;
    await ro.close();
    const r = (await page.evaluate(
      ([max]) => (window as unknown as { strataTest: { inWorker(n: string, ...a: unknown[]): Promise<unknown> } }).strataTest.inWorker('manyTables', 'many', max),
      [64],
    )) as {
      files: number;
      first: object;
      found: number;
      second: { entries: number };
      third: object;
      atOpen: Stats;
      afterCompaction: Stats;
      reopened: Stats;
      last: Stats;
      peak: number;
      sahFiles: number;
    };
    console.log(`bounded handles: ${JSON.stringify({ atOpen: r.atOpen, afterCompaction: r.afterCompaction, reopened: r.reopened, last: r.last, peak: r.peak, sahFiles: r.sahFiles })}`);
    expect(r.files).toBe(files);
    expect(r.first).toEqual(want);
    expect(r.atOpen.maxHandles).toBe(64);
    expect(r.atOpen.parked).toBeGreaterThan(1300);
    expect(r.peak).toBeLessThanOrEqual(64);
    expect(r.second.entries).toBe(want.entries + 20_000 - present);
    expect(r.third).toEqual(r.second);
    expect(r.reopened.open).toBeLessThanOrEqual(64);
    // No stray files: on disk exactly the named files and the spares.
    expect(r.last.pending).toBe(0);
    expect(r.sahFiles).toBe(r.last.files + r.last.spares);

    // A crash between a compaction that removed parked tables and their deletion: the journal
    // names them, and the next open deletes them (the engine never sees them again).
    const call = <T>(name: string, ...args: unknown[]) =>
      page.evaluate(
        ([n, a]) => (window as unknown as { strataTest: Record<string, (...x: unknown[]) => Promise<unknown>> }).strataTest[n as string]!(...(a as unknown[])),
        [name, args] as const,
      ) as Promise<T>;
    const stopped = await call<{ pending: number; files: number }>('inWorker', 'compactAndStop', 64);
    expect(stopped.pending).toBeGreaterThan(0);
    expect(await call('killWorker')).toBe('killed');
    let after: { scan: { entries: number }; files: number; spares: number; pending: number; sahFiles: number } | undefined;
    for (let attempt = 0; attempt < 50 && !after; attempt++) {
      try {
        after = await call('inWorker', 'reopenMany', 64);
      } catch (e) {
        // The killed worker's handles are released asynchronously: LEVEL_LOCKED for a moment.
        if (!String(e).includes('LEVEL_LOCKED') && !String(e).includes('open in another')) throw e;
        await call('killWorker');
        await new Promise((res) => setTimeout(res, 200));
      }
    }
    const keys20k40k = (await (async () => {
      const { open } = (await import('../dist/node.js')) as typeof import('../dist/node.js');
      const ro = await open(dbDir, { readOnly: true });
      let n = 0;
      for (let i = 20_000; i < 40_000; i++) if ((await ro.get(String(i).padStart(16, '0'))) !== undefined) n++;
      await ro.close();
      return n;
    })());
    expect(after!.scan.entries).toBe(r.second.entries + 20_000 - keys20k40k);
    expect(after!.files).toBe(stopped.files);
    expect(after!.pending).toBe(0);
    expect(after!.sahFiles).toBe(after!.files + after!.spares);
  });
});

interface Stats {
  open: number;
  files: number;
  parked: number;
  spares: number;
  pending: number;
  maxHandles: number;
}
