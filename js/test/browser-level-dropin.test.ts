// `strata-level/browser-level` (the drop-in for npm browser-level) in headless Chromium
// (Debian's, driven by playwright-core), as an app would use it: a page importing BrowserLevel,
// bundled by Vite with its defaults (which also emits the package's worker and wasm), served
// from 127.0.0.1. Open, put/get/del, batch, iterators with a range and a limit, close and
// reopen, two databases kept apart by name and by `prefix`, a sublevel, and the static
// `destroy`; every value is asserted exactly. (browser-level's own suite runs against it in
// bench/peer-suites/run.sh browser-level.)

import fs from 'node:fs';
import path from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, expect, test } from 'vitest';

import { repoRoot, tempDir } from './helpers.js';
// @ts-expect-error: plain JS module without type declarations.
import { serveDir } from '../../scripts/serve-www.mjs';

const CHROMIUM = process.env.STRATA_CHROMIUM ?? '/usr/bin/chromium';
const pkgDir = path.join(repoRoot, 'js');

// The page's module: every scenario returns plain data (strings, arrays) for exact assertions.
const ENTRY = `
import { BrowserLevel } from ${JSON.stringify(path.join(pkgDir, 'dist/browser-level.js'))};

const pad = (i) => String(i).padStart(2, '0');

window.dropin = {
  async basics() {
    const db = new BrowserLevel('alpha');
    const out = { before: db.status, location: db.location, namePrefix: db.namePrefix, type: db.type, version: db.version };
    await db.open();
    out.after = db.status;
    await db.put('a', 'one');
    out.got = await db.get('a');
    out.missing = await db.get('nope');
    out.has = [await db.has('a'), await db.has('nope')];
    out.many = await db.getMany(['a', 'nope']);
    out.view = Array.from(await db.get('a', { valueEncoding: 'view' }));
    await db.del('a');
    out.afterDel = await db.get('a');
    await db.batch([
      ...Array.from({ length: 10 }, (_, i) => ({ type: 'put', key: 'k' + pad(i + 1), value: 'v' + pad(i + 1) })),
      { type: 'del', key: 'k05' },
    ]);
    await db.batch().put('k11', 'v11').del('k10').write();
    out.keys = await db.keys().all();
    out.range = await db.iterator({ gte: 'k03', lt: 'k09', limit: 3 }).all();
    out.reverse = await db.iterator({ lte: 'k08', gt: 'k02', reverse: true, limit: 2 }).all();
    out.values = await db.values({ gt: 'k08' }).all();
    const it = db.iterator({ gte: 'k02' });
    out.next = [await it.next(), await it.next()];
    it.seek('k09');
    out.seeked = await it.next();
    await it.close();
    await db.put('obj', { n: 1, s: 'x' }, { valueEncoding: 'json' });
    out.json = await db.get('obj', { valueEncoding: 'json' });
    await db.del('obj');
    await db.close();
    out.closed = db.status;
    return out;
  },

  async reopen() {
    const db = new BrowserLevel('alpha');
    await db.open();
    const out = { keys: await db.keys().all(), k01: await db.get('k01') };
    await db.close();
    await db.open(); // the same instance, again
    out.again = await db.get('k11');
    await db.close();
    return out;
  },

  async apart() {
    const alpha = new BrowserLevel('alpha');
    const beta = new BrowserLevel('beta');
    const custom = new BrowserLevel('alpha', { prefix: 'custom-' });
    await beta.put('k01', 'beta');
    await custom.put('k01', 'custom');
    const out = {
      prefixes: [alpha.namePrefix, custom.namePrefix],
      alpha: await alpha.get('k01'),
      beta: await beta.get('k01'),
      custom: await custom.get('k01'),
      betaKeys: await beta.keys().all(),
      customKeys: await custom.keys().all(),
    };
    await Promise.all([alpha.close(), beta.close(), custom.close()]);
    return out;
  },

  // prefix '' + 'level-js-alpha' names the same database as the default prefix + 'alpha'.
  async emptyPrefixSame() {
    const empty = new BrowserLevel('level-js-alpha', { prefix: '' });
    const out = { k01: await empty.get('k01'), count: (await empty.keys().all()).length };
    await empty.close();
    return out;
  },

  async sublevelAndDestroy() {
    const db = new BrowserLevel('gamma');
    const sub = db.sublevel('sub');
    await sub.put('s', '1');
    const out = { subKeys: await sub.keys().all(), rootKeys: await db.keys().all(), path: sub.path() };
    await db.close();
    await BrowserLevel.destroy('gamma');
    const again = new BrowserLevel('gamma');
    out.afterDestroy = await again.keys().all();
    await again.close();
    const c = new BrowserLevel('delta', { prefix: 'custom-' });
    await c.put('x', 'y');
    await c.close();
    await BrowserLevel.destroy('delta', 'custom-');
    const c2 = new BrowserLevel('delta', { prefix: 'custom-' });
    out.afterCustomDestroy = await c2.get('x');
    await c2.close();
    return out;
  },
};
document.title = 'ready';
`;

// abstract-level (under browser-level and this drop-in alike) does `require('events')`, which
// browsers lack and Vite does not polyfill: strata-level depends on npm `events`, so the page
// builds with Vite's defaults and no alias.

let browser: Browser;
let server: { close(): void };
let page: Page;

beforeAll(async () => {
  for (const f of ['dist/browser-level.js', 'dist/worker.js', 'wasm/strata_bg.wasm']) {
    if (!fs.existsSync(path.join(pkgDir, f))) throw new Error(`js/${f} is missing: build the package first (scripts/build-wasm.sh)`);
  }
  const root = tempDir('browser-level-dropin');
  fs.writeFileSync(path.join(root, 'index.html'), '<!doctype html>\n<meta charset="utf-8">\n<title>loading</title>\n<script type="module" src="./entry.js"></script>\n');
  fs.writeFileSync(path.join(root, 'entry.js'), ENTRY);
  const { build } = await import('vite');
  await build({
    configFile: false,
    root,
    logLevel: 'error',
    build: { outDir: path.join(root, 'dist'), minify: false },
  });
  const s = (await serveDir(path.join(root, 'dist'))) as { server: { close(): void }; origin: string };
  server = s.server;
  browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox', '--disable-gpu'] });
  page = await (await browser.newContext()).newPage();
  page.on('pageerror', (e) => console.error('page error:', e));
  await page.goto(`${s.origin}/`);
  await page.waitForFunction(() => document.title === 'ready');
}, 60_000);

afterAll(async () => {
  await browser?.close();
  server?.close();
});

function run<T>(fn: string): Promise<T> {
  return page.evaluate((name) => (window as unknown as { dropin: Record<string, () => Promise<unknown>> }).dropin[name]!(), fn) as Promise<T>;
}

const kv = (i: number): [string, string] => [`k${String(i).padStart(2, '0')}`, `v${String(i).padStart(2, '0')}`];
const KEYS = ['k01', 'k02', 'k03', 'k04', 'k06', 'k07', 'k08', 'k09', 'k11'];

test('open, put/get/del, batch, iterators with a range and a limit, close', async () => {
  expect(await run('basics')).toEqual({
    before: 'opening',
    location: 'alpha',
    namePrefix: 'level-js-',
    type: 'browser-level',
    version: 1,
    after: 'open',
    got: 'one',
    missing: undefined,
    has: [true, false],
    many: ['one', undefined],
    view: [111, 110, 101],
    afterDel: undefined,
    keys: KEYS,
    range: [kv(3), kv(4), kv(6)],
    reverse: [kv(8), kv(7)],
    values: ['v09', 'v11'],
    next: [kv(2), kv(3)],
    seeked: kv(9),
    json: { n: 1, s: 'x' },
    closed: 'closed',
  });
}, 30_000);

test('closed and reopened (a new instance and the same one): the same data', async () => {
  expect(await run('reopen')).toEqual({ keys: KEYS, k01: 'v01', again: 'v11' });
}, 20_000);

test('databases of different names, and of different prefixes, are kept apart', async () => {
  expect(await run('apart')).toEqual({
    prefixes: ['level-js-', 'custom-'],
    alpha: 'v01',
    beta: 'beta',
    custom: 'custom',
    betaKeys: ['k01'],
    customKeys: ['k01'],
  });
  expect(await run('emptyPrefixSame')).toEqual({ k01: 'v01', count: KEYS.length });
}, 20_000);

test('a sublevel, and BrowserLevel.destroy with the default and a custom prefix', async () => {
  expect(await run('sublevelAndDestroy')).toEqual({
    subKeys: ['s'],
    rootKeys: ['!sub!s'],
    path: ['sub'],
    afterDestroy: [],
    afterCustomDestroy: undefined,
  });
}, 20_000);
