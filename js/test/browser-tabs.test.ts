// One OPFS database shared by several tabs (js/src/tabs.ts), in Chromium and Firefox: one tab
// runs the engine, the others forward their calls. Model checks with exact counts:
// - 100 leader changes among three sharers writing at once: every acknowledged write is there;
// - three real tabs writing at once, the leader's tab closed mid-write: the others carry on
//   (a call in flight when it closed rejects with LEVEL_CONNECTION_LOST and is retried), and
//   every write acknowledged in any tab, the closed one's included, is there; over OPFS and
//   over the IndexedDB store (the one WebKit gets);
// - an engine slower to open than the leader wait (a large database, a loaded machine): the
//   tabs wait while the opener says it is opening; with nobody opening, an open fails in time;
// - every tab reloaded at once mid-write: the reopened tabs find every acknowledged write;
// - iterators and snapshots die with the leader whose engine held them (a later use rejects
//   with LEVEL_CONNECTION_LOST instead of reaching the next leader's engine, whose ids could
//   name its own); a sharer gone with some open (closed or crashed tab) has them freed.

import fs from 'node:fs';
import path from 'node:path';
import { chromium } from 'playwright-core';
import puppeteer from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';

import { tempDir, worldsDir } from './helpers.js';
// @ts-expect-error: plain JS module.
import { serve } from './browser/server.mjs';

const CHROMIUM = process.env.STRATA_CHROMIUM ?? '/usr/bin/chromium';
const FIREFOX = process.env.STRATA_FIREFOX ?? '/usr/bin/firefox-esr';

/** A browser as the test needs it: new tabs, evaluate, close a tab. */
interface Tab {
  run<T>(fn: string, ...args: unknown[]): Promise<T>;
  /** Reloads the page (its workers and open databases go) and waits until it is ready. */
  reload(): Promise<void>;
  close(): Promise<void>;
}
interface Driver {
  newTab(): Promise<Tab>;
  close(): Promise<void>;
}

let server: { close(): void };
let origin: string;

beforeAll(async () => {
  const s = await serve({ pkgDir: path.resolve('.'), worldsDir });
  server = s.server;
  origin = s.origin;
});
afterAll(() => server?.close());

async function chromiumDriver(): Promise<Driver> {
  const context = await chromium.launchPersistentContext(tempDir('chromium-tabs'), {
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  return {
    async newTab() {
      const p = await context.newPage();
      p.on('pageerror', (e) => console.error('page error:', e));
      await p.goto(`${origin}/test/browser/page.html`);
      await p.waitForFunction(() => document.title === 'ready');
      return {
        run: <T>(fn: string, ...args: unknown[]) =>
          p.evaluate(([n, a]) => (window as unknown as { strataTest: Record<string, (...x: unknown[]) => Promise<unknown>> }).strataTest[n as string]!(...(a as unknown[])), [fn, args] as const) as Promise<T>,
        reload: async () => {
          await p.reload();
          await p.waitForFunction(() => document.title === 'ready');
        },
        close: () => p.close(),
      };
    },
    close: () => context.close(),
  };
}

async function firefoxDriver(): Promise<Driver> {
  const browser = await puppeteer.launch({ browser: 'firefox', executablePath: FIREFOX, headless: true, userDataDir: tempDir('firefox-tabs') });
  return {
    async newTab() {
      const p = await browser.newPage();
      p.on('pageerror', (e) => console.error('firefox page error:', e));
      await p.goto(`${origin}/test/browser/page.html`);
      await p.waitForFunction(() => document.title === 'ready');
      return {
        run: <T>(fn: string, ...args: unknown[]) =>
          p.evaluate((n, a) => (window as unknown as { strataTest: Record<string, (...x: unknown[]) => Promise<unknown>> }).strataTest[n]!(...a), fn, args) as Promise<T>,
        reload: async () => {
          await p.reload();
          await p.waitForFunction(() => document.title === 'ready');
        },
        close: () => p.close(),
      };
    },
    close: () => browser.close(),
  };
}

const drivers: Array<[string, () => Promise<Driver>, boolean]> = [
  ['Chromium', chromiumDriver, true],
  ['Firefox', firefoxDriver, fs.existsSync(FIREFOX)],
];

for (const [name, make, available] of drivers) {
  describe.skipIf(!available)(`a database shared by tabs (${name})`, () => {
    let driver: Driver;
    beforeAll(async () => {
      driver = await make();
    }, 120_000);
    afterAll(async () => {
      await driver?.close();
    });

    test('a shared open of a missing database fails with the engine\'s code, at once', async () => {
      const tab = await driver.newTab();
      const t0 = Date.now();
      expect(await tab.run('openCode', 'shared-missing', { createIfMissing: false })).toBe('LEVEL_NOT_FOUND');
      expect(Date.now() - t0).toBeLessThan(5000);
      await tab.close();
    });

    test('an engine slower to open than the leader wait: the opener and a sharer that joined meanwhile both open; an opener that answers only when asked, or closed mid-open, is waited for; nobody opening still fails within the bound', async () => {
      const tab = await driver.newTab();
      expect(await tab.run('slowLeader', 400, 2500, 4000)).toEqual({
        first: 'leads',
        second: 'follows',
        secondGets: 'answer',
        secondAfterOpenMs: true,
        stuck: 'LEVEL_CONNECTION_LOST: no tab could run the database within N s (none was opening it)',
        stuckWithinBound: true,
        closedMidOpen: { thirdGets: 'answer', thirdLeads: true },
        askedGets: 'fake get',
        askedAgain: true,
      });
      await tab.close();
    });

    test("the leader's worker terminated: its handle rejects, the database opens again at once", async () => {
      const tab = await driver.newTab();
      expect(await tab.run('leaderWorkerKilled')).toEqual({ wasLeading: true, oldCode: 'LEVEL_DATABASE_NOT_OPEN', value: '1', fast: true });
      await tab.close();
    });

    test('100 leader changes among three sharers writing at once: every acknowledged write is there', async () => {
      const tab = await driver.newTab();
      const r = await tab.run<{ acked: number; present: number; wrong: number; changes: number; lostCalls: number; led: number }>('leaderChanges', 100);
      console.log(`${name}, 100 leader changes: ${JSON.stringify(r)}`);
      expect(r.changes).toBe(100);
      expect(r.acked).toBeGreaterThan(300);
      expect(r.present).toBe(r.acked);
      expect(r.wrong).toBe(0);
      await tab.close();
    });

    for (const storage of ['opfs', 'idb'] as const) {
      test(`three tabs writing at once; the leader's tab closes mid-write; nothing acknowledged is lost (${storage})`, async () => {
        const tabs = [await driver.newTab(), await driver.newTab(), await driver.newTab()];
        // The first tab to open leads.
        await tabs[0]!.run('tabWrite', 't0', 1, storage);
        const writes = tabs.map((t, i) => t.run<number>('tabWrite', `t${i}`, 3000, storage).catch((e: unknown) => String(e)));
        await new Promise((r) => setTimeout(r, 300));
        const leaderState = await tabs[0]!.run<{ acked: number; keys: string[]; info: Array<{ leading: boolean }> }>('tabState');
        expect(leaderState.info.some((t) => t.leading)).toBe(true);
        // Keys the leader's tab had acknowledged when it closed (the very keys: its first
        // write, t0-000000, is written twice, so a count would name one key too many).
        const closedKeys = leaderState.keys;
        await tabs[0]!.close();
        const done = await Promise.all(writes.slice(1));
        expect(done).toEqual([3000, 3000]);
        const keys = [...closedKeys];
        for (const i of [1, 2]) for (let k = 0; k < 3000; k++) keys.push(`t${i}-${String(k).padStart(6, '0')}`);
        const check = await tabs[1]!.run<{ present: number; all: number }>('tabCheck', keys, storage);
        console.log(`${name} (${storage}), leader tab closed after ${closedKeys.length} of its writes: ${JSON.stringify(check)}`);
        expect(check.present).toBe(keys.length);
        expect(check.all).toBeGreaterThanOrEqual(keys.length);
        const states = await Promise.all([tabs[1]!.run<{ info: Array<{ leading: boolean }> }>('tabState'), tabs[2]!.run<{ info: Array<{ leading: boolean }> }>('tabState')]);
        expect(states.filter((s) => s.info.some((t) => t.leading)).length).toBe(1);
        await tabs[1]!.close();
        await tabs[2]!.close();
      });
    }

    test("iterators and snapshots die with their leader: a use after it went says so and never reaches the next leader's own", async () => {
      const [a, b] = [await driver.newTab(), await driver.newTab()];
      expect(await a.run('staleLead', 'shared-stale')).toBe(true);
      expect(await b.run('staleFollow', 'shared-stale')).toEqual({ leading: false, first: ['a00', 'old'] });
      const closedAt = Date.now();
      await a.close();
      const { ledAt, ...r } = await b.run<{ ledAt: number } & Record<string, unknown>>('staleAfter');
      // The target is a takeover within a second: reported here, bounded loosely (a
      // timing is measured, not asserted, on shared machines; 5 s would be a hang).
      console.log(`${name}, the other tab led ${ledAt - closedAt} ms after the leader's tab was closed; then: ${JSON.stringify(r)}`);
      expect(ledAt - closedAt).toBeLessThan(5000);
      expect(r).toEqual({
        leading: true,
        mineFirst: ['z0', 'zz'],
        oldSeek: { code: 'LEVEL_CONNECTION_LOST' },
        oldNext: { code: 'LEVEL_CONNECTION_LOST' },
        oldSnapGet: { code: 'LEVEL_CONNECTION_LOST' },
        oldSnapIterator: { code: 'LEVEL_CONNECTION_LOST' },
        oldClose: { value: undefined },
        oldRelease: { value: undefined },
        mineSnapGet: 'new',
        propsOpen: { snapshots: 1, iterators: 1 },
        mineRest: [],
        propsAfter: { snapshots: 0, iterators: 0 },
      });
      await b.close();
    });

    test('a sharer that goes with a snapshot and an iterator open: the leader frees them (closed or crashed tab)', async () => {
      const lead = await driver.newTab();
      expect(await lead.run('holdLead', 'shared-held')).toBe(true);
      // A tab that closes its database without releasing its snapshot.
      const tidy = await driver.newTab();
      expect(await tidy.run('followAndHold', 'shared-held', true)).toEqual({ leading: false, first: ['k', 'v'] });
      // Its iterator was closed by the close, its snapshot released on the way out: at once,
      // not by the leader's reaper (asked without waiting).
      expect(await lead.run('leadHeld', 'shared-held')).toMatchObject({ heldForOthers: 0, snapshots: 0, iterators: 0 });
      // A tab that goes with both open (closed by the browser: no code of its own runs).
      const gone = await driver.newTab();
      expect(await gone.run('followAndHold', 'shared-held', false)).toEqual({ leading: false, first: ['k', 'v'] });
      expect(await lead.run('leadHeld', 'shared-held')).toMatchObject({ heldForOthers: 2, snapshots: 1, iterators: 1 });
      await gone.close();
      const after = await lead.run<{ heldForOthers: number; snapshots: number; iterators: number; waitedMs: number }>('leadHeld', 'shared-held', 0);
      console.log(`${name}, a sharer's tab closed with a snapshot and an iterator open: freed after ${after.waitedMs} ms`);
      expect(after).toMatchObject({ heldForOthers: 0, snapshots: 0, iterators: 0 });
      await tidy.close();
      await lead.close();
    });

    test('every tab reloaded at once mid-write: the reopened tabs find everything acknowledged before', async () => {
      const tabs = [await driver.newTab(), await driver.newTab(), await driver.newTab()];
      await tabs[0]!.run('tabWrite', 'r0', 1);
      const writes = tabs.map((t, i) => t.run<number>('tabWrite', `r${i}`, 100_000).catch(() => 'reloaded'));
      // What each tab had acknowledged, read just before all of them go at once: read until
      // every tab has acknowledged some (not after a fixed sleep: on a loaded machine 500 ms
      // may see fewer), at most for a minute.
      let acked: Array<{ acked: number; keys: string[] }> = [];
      for (const t0 = Date.now(); Date.now() - t0 < 60_000; ) {
        acked = await Promise.all(tabs.map((t) => t.run<{ acked: number; keys: string[] }>('tabState')));
        if (acked.every((a) => a.keys.length >= 11)) break;
        await new Promise((r) => setTimeout(r, 50));
      }
      await Promise.all(tabs.map((t) => t.reload()));
      expect(await Promise.all(writes)).toEqual(['reloaded', 'reloaded', 'reloaded']);
      const keys = [...new Set(acked.flatMap((a) => a.keys))];
      const checks = await Promise.all(tabs.map((t) => t.run<{ present: number; all: number }>('tabCheck', keys)));
      console.log(`${name}, all tabs reloaded after ${acked.map((a) => a.keys.length).join(' + ')} acknowledged writes: ${JSON.stringify(checks)}`);
      expect(keys.length).toBeGreaterThan(30);
      for (const c of checks) {
        expect(c.present).toBe(keys.length);
        expect(c.all).toBeGreaterThanOrEqual(keys.length);
      }
      const states = await Promise.all(tabs.map((t) => t.run<{ info: Array<{ leading: boolean }> }>('tabState')));
      expect(states.filter((s) => s.info.some((t) => t.leading)).length).toBe(1);
      for (const t of tabs) await t.close();
    });
  });
}
