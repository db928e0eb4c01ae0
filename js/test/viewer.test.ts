// The world viewer (www/, built by scripts/build-www.sh and served by scripts/serve-www.mjs) in
// headless Chromium: three worlds of different eras, each loaded as a .mcworld (zipped here
// with Python's zipfile into a temp folder) and as a folder (the webkitdirectory input). The
// summary's data-* figures equal MANIFEST.tsv, the map's data-chunks equals the native CLI's
// chunk count, the canvas shows the map, a click on a known chunk lists exactly the records
// the Node API finds; hostile input shows a clear message and the page stays usable.
// Screenshots go to target/test-artifacts/viewer/.

import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';

import { openMcworld, openWorld } from '../dist/node.js';
import { cliPath, copyDir, repoRoot, tempDir, worlds, worldsDir } from './helpers.js';
// @ts-expect-error: plain JS module.
import { serveDir } from '../../scripts/serve-www.mjs';
// @ts-expect-error: plain JS module without type declarations.
import { CHROMIUM_ARGS, chromiumPss as chromiumPssOf } from '../../scripts/chromium.mjs';

/** PSS of this test's Chromium (all processes; renderers: the page and its workers). */
const chromiumPss = (): { all: number; renderer: number } | undefined => chromiumPssOf(profile) as { all: number; renderer: number } | undefined;

const CHROMIUM = process.env.STRATA_CHROMIUM ?? '/usr/bin/chromium';
// The release CLI when built (npm start builds it), else the debug one `cargo test` builds.
const releaseCli = process.env.STRATA_CLI ?? (fs.existsSync(path.join(repoRoot, 'target/release/strata')) ? path.join(repoRoot, 'target/release/strata') : cliPath);
const artifacts = path.join(repoRoot, 'target/test-artifacts/viewer');
const WORLDS = ['amulet_1_16', 'amulet_1_18_vanilla', 'mcpe_0_11_mcedit_testdb'];

let context: BrowserContext;
/** The Chromium profile folder (its processes are found by it: memory figures). */
let profile: string;
let server: { close(): void };
let origin: string;
let page: Page;
let zips: string;

/** FNV-1a over RGBA (the pages compute the same inside `page.evaluate`). */
function fnv(d: ArrayLike<number>): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < d.length; i++) h = Math.imul(h ^ d[i]!, 0x01000193) >>> 0;
  return h;
}

function zipDir(dir: string, out: string): void {
  execFileSync('python3', [
    '-c',
    `import os, sys, zipfile
src, out = sys.argv[1:3]
with zipfile.ZipFile(out, 'w', zipfile.ZIP_DEFLATED) as z:
    for root, _, files in os.walk(src):
        for f in sorted(files):
            p = os.path.join(root, f)
            z.write(p, os.path.relpath(p, src))`,
    dir,
    out,
  ]);
}

interface Shown {
  state: string;
  message: string;
  entries?: string;
  keyBytes?: string;
  valueBytes?: string;
  crc32c?: string;
  chunks?: string;
}

/** Sets files on an input and waits until the page has finished (ready or error). */
async function openWith(selector: string, files: string): Promise<Shown> {
  await page.evaluate(() => (document.body.dataset.state = 'idle'));
  await page.setInputFiles(selector, files);
  await page.waitForFunction(() => ['ready', 'error'].includes(document.body.dataset.state ?? ''), undefined, { timeout: 120_000 });
  return page.evaluate(() => {
    const s = document.getElementById('world-summary')!.dataset;
    const out: Record<string, string | undefined> = {
      state: document.body.dataset.state,
      message: document.getElementById('message')!.textContent ?? '',
      entries: s.entries,
      keyBytes: s.keyBytes,
      valueBytes: s.valueBytes,
      crc32c: s.crc32c,
      chunks: document.getElementById('map')!.dataset.chunks,
    };
    for (const k of Object.keys(out)) if (out[k] === undefined) delete out[k];
    return out as unknown as Shown;
  });
}

/** Chunk lists of the world shown that came from the kept chunk index (www/src/chunk-index),
 * once the lists of the last pass are kept. */
function chunkListsCached(): Promise<number> {
  return page.evaluate(async () => {
    const v = (window as unknown as { strataViewer: { chunkListsKept(): Promise<unknown>; chunkListsCached(): number } }).strataViewer;
    await v.chunkListsKept();
    return v.chunkListsCached();
  });
}

/** The base map the page shows: its size and the FNV-1a of its pixels. */
function shownBase(): Promise<{ width: number; height: number; fnv: number }> {
  return page.evaluate(() => {
    const p = (window as unknown as { strataViewer: { basePixels(): { width: number; height: number; rgba: Uint8ClampedArray } } }).strataViewer.basePixels();
    let h = 0x811c9dc5;
    for (let i = 0; i < p.rgba.length; i++) h = Math.imul(h ^ p.rgba[i]!, 0x01000193) >>> 0;
    return { width: p.width, height: p.height, fnv: h };
  });
}

/** Canvas pixels that are not the background colour. */
function mapPixels(): Promise<number> {
  return page.evaluate(() => {
    const c = document.getElementById('map') as HTMLCanvasElement;
    const d = c.getContext('2d')!.getImageData(0, 0, c.width, c.height).data;
    let n = 0;
    for (let i = 0; i < d.length; i += 4) if (d[i] !== 0x1a || d[i + 1] !== 0x1f || d[i + 2] !== 0x24) n++;
    return n;
  });
}

/** Clicks the middle of chunk (x, z) on the map; returns the record names listed. */
async function inspect(x: number, z: number): Promise<string[]> {
  const [cx, cy] = await page.evaluate(
    ([bx, bz]) => (window as unknown as { strataViewer: { pointOf(x: number, z: number): [number, number] } }).strataViewer.pointOf(bx!, bz!),
    [x * 16 + 8, z * 16 + 8],
  );
  await page.locator('#map').scrollIntoViewIfNeeded();
  const box = (await page.locator('#map').boundingBox())!;
  const k = box.width / (await page.evaluate(() => (document.getElementById('map') as HTMLCanvasElement).width));
  await page.mouse.click(box.x + cx * k, box.y + cy * k);
  await page.waitForSelector(`#inspector[data-chunk="0,${x},${z}"]`);
  return page.$$eval('#records li', (lis) => lis.map((li) => (li as HTMLElement).dataset.name ?? ''));
}

beforeAll(async () => {
  execFileSync('bash', [path.join(repoRoot, 'scripts/build-www.sh')], { stdio: 'inherit' });
  fs.mkdirSync(artifacts, { recursive: true });
  zips = tempDir('viewer-zips');
  for (const w of WORLDS) zipDir(path.join(worldsDir, w), path.join(zips, `${w}.mcworld`));
  // A demo world as `npm run serve` offers it: gen-world, zipped, mounted at /demo.mcworld.
  execFileSync(releaseCli, ['gen-world', path.join(zips, 'demo'), '--chunks-x', '32', '--chunks-z', '32', '--seed', '7']);
  zipDir(path.join(zips, 'demo'), path.join(zips, 'demo.mcworld'));
  const s = await serveDir(path.join(repoRoot, 'www/dist'), 0, { '/demo.mcworld': path.join(zips, 'demo.mcworld') });
  server = s.server;
  origin = s.origin;
  profile = tempDir('viewer-chromium');
  context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    viewport: { width: 1200, height: 1400 },
    args: CHROMIUM_ARGS as string[],
  });
  page = await context.newPage();
  page.on('pageerror', (e) => console.error('page error:', e));
  await page.goto(`${s.origin}/`);
  await page.waitForFunction(() => document.body.dataset.state === 'ready');
  // Pixel counts without grid lines (the map section is hidden until a world is open).
  await page.evaluate(() => {
    const grid = document.getElementById('grid') as HTMLInputElement;
    grid.checked = false;
    grid.dispatchEvent(new Event('change'));
  });
});

afterAll(async () => {
  await context?.close();
  server?.close();
});

describe('world viewer in Chromium', () => {
  test('a load asks for nothing the server lacks and logs no error', async () => {
    const tab = await context.newPage();
    const failed: string[] = [];
    const errors: string[] = [];
    tab.on('response', (r) => {
      if (r.status() >= 400) failed.push(`${r.status()} ${r.url()}`);
    });
    // (A request the page itself gave up, or one the next navigation cut, is aborted, not failed.)
    tab.on('requestfailed', (r) => {
      if (r.failure()?.errorText !== 'net::ERR_ABORTED') failed.push(`${r.failure()?.errorText} ${r.url()}`);
    });
    tab.on('console', (m) => {
      if (m.type() === 'error') errors.push(m.text());
    });
    // A browser with a window asks for /favicon.ico unless the page names its icon (headless
    // Chromium asks for none, so the test checks that each page names one in the page itself).
    const icon = () => tab.evaluate(() => document.querySelector('link[rel~="icon"]')?.getAttribute('href')?.slice(0, 18) ?? null);
    await tab.goto(`${origin}/`);
    await tab.waitForFunction(() => document.body.dataset.state === 'ready');
    const icons = [await icon()];
    await tab.goto(`${origin}/bench.html`);
    await tab.waitForLoadState('load');
    icons.push(await icon());
    await tab.close();
    expect({ failed, errors, icons }).toEqual({ failed: [], errors: [], icons: ['data:image/svg+xml', 'data:image/svg+xml'] });
  });

  for (const name of WORLDS) {
    test(name, async () => {
      const row = worlds().find((r) => r.name === name)!;
      const chunks = execFileSync(releaseCli, ['world', 'chunks', path.join(worldsDir, name)], { encoding: 'utf8' }).trim();
      const want = {
        state: 'ready',
        entries: String(row.entries),
        keyBytes: String(row.keyBytes),
        valueBytes: String(row.valueBytes),
        crc32c: String(row.crc32c),
        chunks,
      };
      // The known chunk: the first Overworld chunk, its records from the Node API.
      const w = await openWorld(path.join(worldsDir, name));
      const [x, z] = (await w.chunks(0))[0]!;
      const names = (await w.chunkRecords(0, x, z)).map((r) => r.name);
      // Every key under the chunk's 8-byte prefix (any dimension), for the key browser.
      const prefix = new Uint8Array(8);
      new DataView(prefix.buffer).setInt32(0, x, true);
      new DataView(prefix.buffer).setInt32(4, z, true);
      let end = 8;
      while (end > 0 && prefix[end - 1] === 0xff) end--;
      const upper = prefix.slice(0, end);
      upper[end - 1]! += 1;
      const underPrefix = (await w.db.iterator({ gte: prefix, lt: upper, values: false }).all()).length;
      await w.close();
      expect(names.length).toBeGreaterThan(1);

      for (const [how, selector, file] of [
        ['mcworld', '#open-mcworld', path.join(zips, `${name}.mcworld`)],
        ['folder', '#open-folder', path.join(worldsDir, name)],
      ] as const) {
        const shown = await openWith(selector, file);
        expect({ how, ...shown, message: undefined }).toEqual({ how, ...want, message: undefined });
        // A clean world shows no recovery warning.
        expect(await page.getAttribute('#recovery-warning', 'data-findings')).toBe('0');
        expect(await page.isHidden('#recovery-warning')).toBe(true);
        expect(shown.message).toBe(`${chunks} of ${chunks} chunks drawn. Click a chunk to inspect its records.`);
        const pixels = await mapPixels();
        const listed = await inspect(x, z);
        await page.screenshot({ path: path.join(artifacts, `${name}-${how}.png`), fullPage: true });
        expect(pixels).toBeGreaterThan(10_000);
        expect({ how, names: listed }).toEqual({ how, names });
        if (how === 'folder') {
          // Key browser: the player record (an NBT tree), then the chunk's hex prefix.
          await page.fill('#key-prefix', '~local_player');
          await page.click('#key-search button');
          await page.waitForSelector('#keys-section[data-keys="1"]');
          await page.click('#key-list li');
          await page.waitForSelector('#key-view .nbt');
          const hex = Array.from(prefix, (b) => b.toString(16).padStart(2, '0')).join('');
          await page.fill('#key-prefix', `0x${hex}`);
          await page.click('#key-search button');
          await page.waitForSelector(`#keys-section[data-keys="${underPrefix}"]`);
        }
      }
    });
  }

  test('?decodeWorkers=1: the chunk index goes through a decode worker (blocks handed back filtered) and the map is the Node API\'s', async () => {
    const name = 'amulet_1_18_vanilla';
    const w = await openWorld(path.join(worldsDir, name));
    const relief = await w.map({ dimension: 0, pixelsPerChunk: 8 });
    await w.close();
    await page.goto(`${origin}/?decodeWorkers=1`);
    await page.waitForFunction(() => document.body.dataset.state === 'ready'); // the demo world
    try {
      // No kept index: the page does the pass.
      await page.evaluate(
        () =>
          new Promise<void>((resolve, reject) => {
            const req = indexedDB.deleteDatabase('strata-chunk-index');
            req.onsuccess = () => resolve();
            req.onerror = () => reject(req.error);
          }),
      );
      const shown = await openWith('#open-folder', path.join(worldsDir, name));
      expect(shown.state).toBe('ready');
      expect(await shownBase()).toEqual({ width: relief.width, height: relief.height, fnv: fnv(relief.rgba) });
      // The pass once more, alone: the worker decodes some of its runs.
      type V = { strataViewer: { chunkPass(d: number): Promise<number>; decodeStats(): Promise<{ readahead: { runsByWorkers: number } | null; pool: { live: number } | null }> } };
      const stats = () => page.evaluate(() => (window as unknown as V).strataViewer.decodeStats());
      const before = (await stats())!;
      expect(await page.evaluate(() => (window as unknown as V).strataViewer.chunkPass(0))).toBe(Number(shown.chunks));
      const after = (await stats())!;
      console.log(`viewer with one decode worker, ${name}: before the pass ${JSON.stringify(before)}, after ${JSON.stringify(after)}`);
      expect(after.pool!.live).toBe(1);
      expect(after.readahead!.runsByWorkers).toBeGreaterThan(before.readahead!.runsByWorkers);
    } finally {
      await page.goto(`${origin}/`);
      await page.waitForFunction(() => document.body.dataset.state === 'ready');
      await page.evaluate(() => {
        const grid = document.getElementById('grid') as HTMLInputElement;
        grid.checked = false;
        grid.dispatchEvent(new Event('change'));
      });
    }
  });

  test('map layers: slime, biome, height, cave, surface, each with its legend (same figures as the Node API)', async () => {
    const name = 'amulet_1_18_vanilla';
    const w = await openWorld(path.join(worldsDir, name));
    // The page draws this world at 8 pixels per chunk (62,884 chunks in its rectangle: 4.0 M pixels).
    const node = async (layer: 'slime' | 'biome' | 'height', y?: number) => w.map({ dimension: 0, pixelsPerChunk: 8, layer, y });
    const [slime, biome, height] = [await node('slime'), await node('biome'), await node('height')];
    await w.close();
    expect(slime.slimeChunks).toBe(297); // numpy's MT19937 agrees (tests/map_layers.rs)
    expect((await openWith('#open-mcworld', path.join(zips, `${name}.mcworld`))).state).toBe('ready');
    const pick = async (layer: string, y?: number) => {
      // The y input shows only with the cave layer; its value is set before (as a link would).
      if (y !== undefined) await page.evaluate((v) => ((document.getElementById('y-level') as HTMLInputElement).value = String(v)), y);
      await page.selectOption('#layer', layer);
      await page.waitForSelector(`#legend[data-layer="${layer}"]`, { state: 'attached' });
      await page.waitForFunction(() => document.body.dataset.state === 'ready');
      await page.screenshot({ path: path.join(artifacts, `layer-${layer}.png`), fullPage: true });
      return page.evaluate(() => ({
        layer: document.getElementById('map')!.dataset.layer,
        slime: document.getElementById('map')!.dataset.slimeChunks,
        legend: [...document.querySelectorAll('#legend > span')].map((e) => (e as HTMLElement).dataset.biome ?? e.textContent ?? ''),
        yShown: !(document.getElementById('y-level-label') as HTMLElement).hidden,
      }));
    };
    expect(await pick('slime')).toEqual({
      layer: 'slime',
      slime: '297',
      legend: ['slime chunk (297 of 2,737 chunks; they spawn slimes below y 40 in any world)'],
      yShown: false,
    });
    const b = await pick('biome');
    expect(b.legend.slice(0, 24)).toEqual(biome.biomes.slice(0, 24).map(([id]) => String(id)));
    expect(b.legend.length).toBe(Math.min(24, biome.biomes.length) + (biome.biomes.length > 24 ? 1 : 0));
    expect((await pick('height')).legend).toEqual([`y ${height.heightMin}y ${height.heightMax}`]);
    expect(await pick('cave', -20)).toEqual({ layer: 'cave', slime: '297', legend: ['the first block at or below y -20; darker is deeper'], yShown: true });
    expect(await mapPixels()).toBeGreaterThan(10_000);
    expect((await pick('surface')).legend).toEqual([]);
    await page.selectOption('#layer', 'relief');
    await page.waitForSelector('#legend[data-layer="relief"]', { state: 'attached' });
  });

  test('a folder copied into browser storage is listed after a reload, opens, and is deleted', async () => {
    const row = worlds().find((r) => r.name === 'amulet_1_16')!;
    const want = { state: 'ready', entries: String(row.entries), keyBytes: String(row.keyBytes), valueBytes: String(row.valueBytes), crc32c: String(row.crc32c), chunks: '436' };
    const dir = path.join(worldsDir, 'amulet_1_16');
    const files = fs.readdirSync(dir, { recursive: true, withFileTypes: true }).filter((e) => e.isFile());
    const bytes = files.reduce((n, e) => n + fs.statSync(path.join(e.parentPath, e.name)).size, 0);
    await page.waitForSelector('#storage-kind[data-kind]', { state: 'attached' });
    expect(await page.$eval('#storage-kind', (k) => [(k as HTMLElement).dataset.kind, k.textContent])).toEqual(['opfs', 'OPFS']);
    await page.check('#import-opfs');
    const shown = await openWith('#open-folder', dir);
    await page.uncheck('#import-opfs');
    expect({ ...shown, message: undefined }).toEqual({ ...want, message: undefined });
    const listed = () => page.$$eval('#imported-list li', (lis) => lis.map((li) => [(li as HTMLElement).dataset.location, li.firstChild?.textContent?.split(',')[0]]));
    expect(await listed()).toEqual([['viewer/amulet_1_16', `amulet_1_16 — ${files.length} files`]]);
    expect(await page.textContent('#imported-list li')).toContain(`${bytes.toLocaleString('en')} bytes`);
    // What the origin uses and may use, and whether its storage is persistent (asked before
    // the copy; headless Chromium grants it to a persistent profile or declines: either is shown).
    await page.waitForSelector('#storage-state[data-usage]');
    const st = await page.evaluate(() => ({ ...document.getElementById('storage-state')!.dataset }));
    expect(Number(st.usage)).toBeGreaterThanOrEqual(bytes);
    expect(Number(st.quota)).toBeGreaterThan(Number(st.usage));
    expect(['true', 'false']).toContain(st.persisted);
    await page.reload();
    await page.waitForFunction(() => document.body.dataset.state === 'ready');
    expect(await listed()).toEqual([['viewer/amulet_1_16', `amulet_1_16 — ${files.length} files`]]);
    await page.evaluate(() => (document.body.dataset.state = 'idle'));
    await page.click('#imported-list li .open-imported');
    await page.waitForFunction(() => ['ready', 'error'].includes(document.body.dataset.state ?? ''));
    expect(await page.getAttribute('#world-summary', 'data-crc32c')).toBe(String(row.crc32c));
    expect(await page.getAttribute('#map', 'data-chunks')).toBe('436');
    await page.screenshot({ path: path.join(artifacts, 'amulet_1_16-opfs.png'), fullPage: true });
    await page.click('#imported-list li .delete-imported');
    await page.waitForFunction(() => document.querySelectorAll('#imported-list li').length === 0);
    expect(await page.isHidden('#imported-section')).toBe(true);
    await page.evaluate(() => {
      const grid = document.getElementById('grid') as HTMLInputElement;
      grid.checked = false;
      grid.dispatchEvent(new Event('change'));
    });
  });

  test('browser storage full during a copy: a clear message, nothing kept, the page still works', async () => {
    const dir = path.join(worldsDir, 'amulet_1_18_vanilla');
    const cdp = await context.newCDPSession(page);
    const usage = await page.evaluate(async () => (await navigator.storage.estimate()).usage ?? 0);
    // 2 MiB more than the origin uses: the world's 15 MB cannot fit.
    await cdp.send('Storage.overrideQuotaForOrigin', { origin, quotaSize: usage + 2 * 1024 * 1024 });
    let shown: Shown;
    try {
      await page.check('#import-opfs');
      shown = await openWith('#open-folder', dir);
      await page.uncheck('#import-opfs');
    } finally {
      await cdp.send('Storage.overrideQuotaForOrigin', { origin });
    }
    expect(shown.state).toBe('error');
    console.log(`copy at a full quota: ${shown.message}`);
    expect(shown.message).toBe('Browser storage is full: “amulet_1_18_vanilla” was not copied, and nothing of it was kept. Delete a world below to make room, or open it without copying.');
    // Nothing half-written is kept: not listed, and no folder left in OPFS.
    expect(await page.$$eval('#imported-list li', (lis) => lis.length)).toBe(0);
    const left = await page.evaluate(async () => {
      const root = await navigator.storage.getDirectory();
      const names: string[] = [];
      try {
        const viewer = await root.getDirectoryHandle('viewer');
        for await (const name of (viewer as unknown as { keys(): AsyncIterable<string> }).keys()) names.push(name);
      } catch {
        // no viewer folder at all
      }
      return names;
    });
    expect(left).toEqual([]);
    // The page still works: a world opens (in memory) with its exact figures.
    const row = worlds().find((r) => r.name === 'amulet_1_16')!;
    const again = await openWith('#open-mcworld', path.join(zips, 'amulet_1_16.mcworld'));
    expect([again.state, again.crc32c]).toEqual(['ready', String(row.crc32c)]);
  });

  test('the demo world offered by the server opens', async () => {
    const chunks = execFileSync(releaseCli, ['world', 'chunks', path.join(zips, 'demo')], { encoding: 'utf8' }).trim();
    expect(chunks).toBe('1024');
    const scan = JSON.parse(execFileSync(releaseCli, ['scan', '--json', path.join(zips, 'demo')], { encoding: 'utf8' })) as Record<string, number>;
    await page.evaluate(() => (document.body.dataset.state = 'idle'));
    await page.click('#open-demo');
    await page.waitForFunction(() => ['ready', 'error'].includes(document.body.dataset.state ?? ''));
    expect(await page.getAttribute('#map', 'data-chunks')).toBe(chunks);
    expect(await page.getAttribute('#world-summary', 'data-entries')).toBe(String(scan.entries));
    expect(await page.getAttribute('#world-summary', 'data-crc32c')).toBe(String(scan.crc32c));
    expect(await mapPixels()).toBeGreaterThan(10_000);
    await page.screenshot({ path: path.join(artifacts, 'demo-world.png'), fullPage: true });
  });

  test('a world whose log was cut open shows what recovery did not use', async () => {
    const dir = path.join(tempDir('viewer-torn'), 'amulet_1_16');
    copyDir(path.join(worldsDir, 'amulet_1_16'), dir);
    const db = path.join(dir, 'db');
    const log = fs.readdirSync(db).find((n) => n.endsWith('.log'))!;
    const len = fs.statSync(path.join(db, log)).size;
    fs.truncateSync(path.join(db, log), Math.floor(len / 2) + 5);
    const shown = await openWith('#open-folder', dir);
    expect(shown.state).toBe('ready');
    expect(await page.isHidden('#recovery-warning')).toBe(false);
    expect(await page.getAttribute('#recovery-warning', 'data-findings')).toBe('1');
    const text = (await page.textContent('#recovery-warning')) ?? '';
    expect(text).toContain(`${log}: `);
    expect(text).toContain('bytes from offset');
    await page.screenshot({ path: path.join(artifacts, 'recovery-warning.png'), fullPage: true });
  });

  test('the editor deletes selected chunks of a .mcworld and exports one Mojang reads back', async () => {
    const file = path.join(worldsDir, 'rbedrock_example3.mcworld');
    const original = fs.readFileSync(file);
    // The expectation, computed in Node by the same API on its own copy.
    const ref = await openMcworld(new Uint8Array(original), { writable: true });
    const chunks = await ref.chunks(0);
    const [x, z] = chunks[0]!;
    const area = `${x},${z}:${x + 2},${z + 2}`;
    const inArea = chunks.filter(([cx, cz]) => cx >= x && cx <= x + 2 && cz >= z && cz <= z + 2).length;
    const report = await ref.deleteChunks(0, area);
    const want = await ref.db.scan();
    await ref.close();
    expect(report.chunks).toBe(inArea);

    const shown = await openWith('#open-mcworld', file);
    expect(shown.state).toBe('ready');
    expect(shown.chunks).toBe(String(chunks.length));
    await chunkListsCached(); // the list is kept (an earlier test may have kept it already)
    await page.fill('#selection', area);
    await page.waitForSelector(`#map[data-selected="${inArea}"]`);
    await page.evaluate(() => (document.body.dataset.state = 'idle'));
    await page.click('#delete-chunks');
    await page.waitForSelector('#confirm-dialog[open]');
    await page.click('#confirm');
    // Staged, not written: the dry run's figures equal the Node API's real deletion.
    const staged = () =>
      page.evaluate(() => {
        const p = document.getElementById('staged')!.dataset;
        const s = document.getElementById('staged-summary')!.dataset;
        return { edits: p.edits, redo: p.redo, chunks: s.chunks, records: s.records, bytes: s.bytes, items: document.querySelectorAll('#staged-list li').length };
      });
    const one = { edits: '1', redo: '0', chunks: String(inArea), records: String(report.records), bytes: String(report.bytes), items: 1 };
    await page.waitForSelector(`#staged-summary[data-records="${report.records}"]`);
    expect(await staged()).toEqual(one);
    expect(await page.getAttribute('#world-summary', 'data-entries')).toBe(shown.entries);
    // A shift-drag on the map adds the rectangle under it to the selection (outlined).
    const before = await page.inputValue('#selection');
    await page.locator('#map').scrollIntoViewIfNeeded();
    const box = (await page.locator('#map').boundingBox())!;
    await page.keyboard.down('Shift');
    await page.mouse.move(box.x + box.width * 0.3, box.y + box.height * 0.3);
    await page.mouse.down();
    await page.mouse.move(box.x + box.width * 0.6, box.y + box.height * 0.6, { steps: 5 });
    await page.mouse.up();
    await page.keyboard.up('Shift');
    const after = await page.inputValue('#selection');
    expect(after.startsWith(`${before};`)).toBe(true);
    expect(after.slice(before.length + 1)).toMatch(/^-?\d+,-?\d+:-?\d+,-?\d+$/);
    await page.fill('#selection', area);
    // Undo, redo (button and ctrl+z / ctrl+shift+z), then save: one atomic batch.
    await page.click('#undo');
    await page.waitForSelector('#staged[data-edits="0"][data-redo="1"]');
    expect((await staged()).items).toBe(0);
    await page.click('#redo');
    await page.waitForSelector(`#staged[data-edits="1"] #staged-summary[data-records="${report.records}"]`);
    await page.click('body');
    await page.keyboard.press('Control+z');
    await page.waitForSelector('#staged[data-edits="0"]');
    await page.keyboard.press('Control+Shift+z');
    await page.waitForSelector(`#staged[data-edits="1"] #staged-summary[data-records="${report.records}"]`);
    expect(await staged()).toEqual(one);
    await page.screenshot({ path: path.join(artifacts, 'editor-staged.png'), fullPage: true });
    await page.evaluate(() => (document.body.dataset.state = 'idle'));
    await page.click('#save-edits');
    await page.waitForFunction(() => ['ready', 'error'].includes(document.body.dataset.state ?? '') && document.getElementById('world-summary')!.dataset.entries !== undefined);
    expect(await page.textContent('#message')).toContain(`Saved 1 edit: ${inArea} chunk${inArea === 1 ? '' : 's'}, ${report.records} records`);
    expect(await staged()).toEqual({ edits: '0', redo: '0', chunks: undefined, records: undefined, bytes: undefined, items: 0 });
    expect(await page.getAttribute('#world-summary', 'data-entries')).toBe(String(want.entries));
    expect(await page.getAttribute('#world-summary', 'data-crc32c')).toBe(String(want.crc32c));
    // The edited world is indexed afresh (its identity changed): never the kept list.
    expect(await chunkListsCached()).toBe(0);
    expect(await page.getAttribute('#map', 'data-chunks')).toBe(String(chunks.length - inArea));
    await page.screenshot({ path: path.join(artifacts, 'editor-deleted.png'), fullPage: true });
    const [download] = await Promise.all([page.waitForEvent('download'), page.click('#export-mcworld')]);
    expect(download.suggestedFilename()).toMatch(/\.mcworld$/);
    const out = path.join(tempDir('editor-export'), download.suggestedFilename());
    await download.saveAs(out);
    // The export, reopened in Node and read by Mojang's LevelDB: exactly the edited figures.
    const back = await openMcworld(new Uint8Array(fs.readFileSync(out)));
    expect(await back.db.scan()).toEqual(want);
    await back.close();
    const unzipped = tempDir('editor-unzipped');
    execFileSync('python3', ['-c', 'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])', out, unzipped]);
    execFileSync('python3', [path.join(repoRoot, 'tests/peers/dump_db.py'), 'amulet', path.join(unzipped, 'db'), path.join(unzipped, 'dump')]);
    const dump = fs.readFileSync(path.join(unzipped, 'dump'));
    let n = 0;
    for (let p = 0; p < dump.length; n++) {
      p += 4 + dump.readUInt32LE(p);
      p += 4 + dump.readUInt32LE(p);
    }
    expect(n).toBe(want.entries);
    // The exported file reopens in the page with the same figures; the original is untouched.
    const reopened = await openWith('#open-mcworld', out);
    expect([reopened.state, reopened.entries, reopened.crc32c]).toEqual(['ready', String(want.entries), String(want.crc32c)]);
    expect(fs.readFileSync(file).equals(original)).toBe(true);
    // The original opened again: its chunk list comes from the kept index, the same list.
    const again = await openWith('#open-mcworld', file);
    expect([again.state, again.chunks, again.entries, again.crc32c]).toEqual(['ready', String(chunks.length), shown.entries, shown.crc32c]);
    expect(await chunkListsCached()).toBe(1);
  });

  test('labels never overlap: the 20 Overworld players of a server world, at spawn, are one label with their count', async () => {
    // Drawn one over another before ("player (local)" over the others); now "spawn +20"
    // (markers/labels.ts; the placement itself is tested in marker-labels.test.ts).
    const shown = await openWith('#open-folder', path.join(worldsDir, 'bds_26_0_featherdev'));
    expect(shown.state).toBe('ready');
    expect(await page.$$eval('#player-list li', (lis) => lis.length)).toBe(20);
    expect(await page.getAttribute('#map', 'data-labels')).toBe('1');
    await page.locator('#map').screenshot({ path: path.join(artifacts, 'labels-at-spawn.png') });
  });

  test('a staged deletion counts chunks as the map does and names the stubs apart', async () => {
    // amulet_1_18_vanilla: -10,-10:10,10 holds 242 of its 2,737 chunks (Version records) and
    // 122 stubs (records but no Version record): "242 of 2737 chunks selected" on the map is
    // "242 chunks and 122 stubs" in the staged deletion, as `strata world delete-chunks` says.
    const shown = await openWith('#open-mcworld', path.join(zips, 'amulet_1_18_vanilla.mcworld'));
    expect([shown.state, shown.chunks]).toEqual(['ready', '2737']);
    await page.fill('#selection', '-10,-10:10,10');
    await page.waitForSelector('#map[data-selected="242"]');
    expect(await page.textContent('#selection-count')).toBe('242 of 2737 chunks selected');
    await page.evaluate(() => (document.body.dataset.state = 'idle'));
    await page.click('#delete-chunks');
    await page.waitForSelector('#confirm-dialog[open]');
    expect(await page.textContent('#confirm-dialog')).toContain('Stage the deletion of 242 chunks');
    await page.click('#confirm');
    await page.waitForSelector('#staged[data-edits="1"] #staged-summary[data-chunks="242"][data-stubs="122"]');
    expect(await page.textContent('#staged-summary')).toMatch(/^242 chunks and 122 stubs \(records but no Version record: not on the map\), [\d,]+ records, /);
    await page.click('#undo');
    await page.waitForSelector('#staged[data-edits="0"]');
  });

  test('the NBT editor: level.dat and a record edited as SNBT, bad text refused, the export carries the edit', async () => {
    const file = path.join(zips, 'amulet_1_16.mcworld');
    const original = fs.readFileSync(file);
    expect((await openWith('#open-mcworld', file)).state).toBe('ready');
    // level.dat: rename the world.
    await page.click('#edit-level-dat');
    await page.waitForSelector('#snbt-dialog[open][data-target="level.dat"][data-view="tree"]');
    await page.click('#snbt-view-text');
    const text = await page.inputValue('#snbt-text');
    const line = text.split('\n').find((l) => /^\s*LevelName:/.test(l))!;
    expect(line).toBeDefined();
    await page.fill('#snbt-text', text.replace(line, line.replace(/"(?:[^"\\]|\\.)*"/, '"Edited in the browser"')));
    await page.evaluate(() => (document.body.dataset.state = 'idle'));
    await page.click('#snbt-save');
    await page.waitForFunction(() => document.body.dataset.state === 'ready' && !(document.getElementById('snbt-dialog') as HTMLDialogElement).open);
    expect(await page.textContent('#message')).toMatch(/^Saved level\.dat: [\d,]+ bytes\. Export the world to keep it\.$/);
    expect(await page.textContent('#world-name')).toBe('Edited in the browser');
    // A record from the key browser: text that does not parse is refused, nothing written.
    await page.fill('#key-prefix', '~local_player');
    await page.click('#key-search button');
    await page.waitForSelector('#keys-section[data-keys="1"]');
    await page.click('#key-list li');
    await page.click('#key-view .edit-snbt');
    await page.waitForSelector('#snbt-dialog[open][data-target="record"]');
    const before = await page.getAttribute('#world-summary', 'data-crc32c');
    await page.click('#snbt-view-text');
    await page.fill('#snbt-text', '{ "Pos": [1f, 2f');
    await page.click('#snbt-save');
    await page.waitForFunction(() => (document.getElementById('snbt-error')!.textContent ?? '') !== '');
    expect(await page.textContent('#snbt-error')).toMatch(/line 1, column \d+/);
    expect(await page.evaluate(() => (document.getElementById('snbt-dialog') as HTMLDialogElement).open)).toBe(true);
    await page.click('#snbt-cancel');
    expect(await page.getAttribute('#world-summary', 'data-crc32c')).toBe(before);
    // The export holds the new name (an independent NBT reader: amulet-nbt).
    const [download] = await Promise.all([page.waitForEvent('download'), page.click('#export-mcworld')]);
    const out = path.join(tempDir('snbt-export'), download.suggestedFilename());
    await download.saveAs(out);
    expect(download.suggestedFilename()).toBe('Edited in the browser.mcworld');
    const unzipped = tempDir('snbt-unzipped');
    execFileSync('python3', ['-c', 'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])', out, unzipped]);
    const name = execFileSync(
      'python3',
      ['-c', "import sys, amulet_nbt\nd = open(sys.argv[1], 'rb').read()\nprint(amulet_nbt.load(d[8:], little_endian=True).compound['LevelName'].py_str)", path.join(unzipped, 'level.dat')],
      { encoding: 'utf8' },
    ).trim();
    expect(name).toBe('Edited in the browser');
    expect(fs.readFileSync(file).equals(original)).toBe(true);
  });

  test('the NBT tree editor: level.dat edited as typed rows (value, rename, remove, add, list element), bad input marked and not saved, text view both ways, the export holds exactly those edits', async () => {
    const file = path.join(zips, 'amulet_1_16.mcworld');
    const original = fs.readFileSync(file);
    const originalDir = tempDir('tree-original');
    execFileSync('python3', ['-c', 'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])', file, originalDir]);
    expect((await openWith('#open-mcworld', file)).state).toBe('ready');
    await page.click('#edit-level-dat');
    await page.waitForSelector('#snbt-dialog[open][data-target="level.dat"][data-view="tree"]');
    const row = (p: string) => `#snbt-tree li.nbt-node[data-path="${p}"]`;
    const value = (p: string) => `${row(p)} > .nbt-value`;
    expect(await page.getAttribute(row('0/commandblockoutput'), 'data-type')).toBe('byte');
    expect(await page.inputValue(value('0/commandblockoutput'))).toBe('1');
    await page.fill(value('0/commandblockoutput'), '0');
    await page.fill(value('0/LevelName'), 'Edited as a tree');
    // A value that does not fit its type: marked, named, and the save refused.
    await page.fill(value('0/SpawnY'), '1.5');
    expect(await page.getAttribute(value('0/SpawnY'), 'aria-invalid')).toBe('true');
    expect(await page.textContent('#snbt-error')).toBe('1 value does not fit its type: int: "1.5" is not a whole number');
    await page.click('#snbt-save');
    expect(await page.evaluate(() => (document.getElementById('snbt-dialog') as HTMLDialogElement).open)).toBe(true);
    await page.fill(value('0/SpawnY'), '70');
    expect(await page.textContent('#snbt-error')).toBe('');
    await page.fill(`${row('0/SpawnX')} > .nbt-head > .nbt-name`, 'SpawnXRenamed');
    await page.click(`${row('0/bonusChestSpawned')} > .nbt-head > .nbt-remove`);
    const addRow = `${row('0')} > .nbt-children > .nbt-add-row`;
    await page.fill(`${addRow} > .nbt-add-name`, 'addedInPage');
    await page.selectOption(`${addRow} > .nbt-add-type`, 'long');
    await page.click(`${addRow} > .nbt-add`);
    await page.fill(value('0/addedInPage'), '-5');
    await page.click(`${row('0/MinimumCompatibleClientVersion')} > .nbt-head > .nbt-toggle`);
    expect(await page.getAttribute(row('0/MinimumCompatibleClientVersion/4'), 'data-type')).toBe('int');
    await page.fill(value('0/MinimumCompatibleClientVersion/4'), '7');
    await page.locator('#snbt-dialog').screenshot({ path: path.join(artifacts, 'nbt-tree.png') });
    // The text view shows the edited tree; back to the tree, the engine parses the text again.
    await page.click('#snbt-view-text');
    const text = await page.inputValue('#snbt-text');
    expect(text).toContain('  addedInPage: -5L\n}');
    expect(text).toContain('  SpawnXRenamed: ');
    expect(text).not.toContain('bonusChestSpawned');
    await page.click('#snbt-view-tree');
    await page.waitForSelector('#snbt-dialog[data-view="tree"]');
    expect(await page.inputValue(value('0/addedInPage'))).toBe('-5');
    await page.evaluate(() => (document.body.dataset.state = 'idle'));
    await page.click('#snbt-save');
    await page.waitForFunction(() => document.body.dataset.state === 'ready' && !(document.getElementById('snbt-dialog') as HTMLDialogElement).open);
    expect(await page.textContent('#world-name')).toBe('Edited as a tree');
    const [download] = await Promise.all([page.waitForEvent('download'), page.click('#export-mcworld')]);
    const out = path.join(tempDir('tree-export'), download.suggestedFilename());
    await download.saveAs(out);
    const unzipped = tempDir('tree-unzipped');
    execFileSync('python3', ['-c', 'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])', out, unzipped]);
    const diff = execFileSync('python3', [path.join(repoRoot, 'tests/peers/nbt_diff.py'), path.join(originalDir, 'level.dat'), path.join(unzipped, 'level.dat'), '8'], { encoding: 'utf8' });
    expect(diff.split('\n').filter((l) => l !== '').sort()).toEqual(
      ['/LevelName', '/MinimumCompatibleClientVersion/4', '/SpawnX', '/SpawnXRenamed', '/SpawnY', '/addedInPage', '/bonusChestSpawned', '/commandblockoutput'].sort(),
    );
    expect(fs.readFileSync(file).equals(original)).toBe(true);
  });

  test('the view is kept in the URL: go to coordinates, reload, the same layer and centre', async () => {
    const file = path.join(zips, 'amulet_1_18_vanilla.mcworld');
    expect((await openWith('#open-mcworld', file)).state).toBe('ready');
    await page.selectOption('#layer', 'height');
    await page.waitForSelector('#legend[data-layer="height"]', { state: 'attached' });
    await page.waitForFunction(() => document.body.dataset.state === 'ready');
    await page.fill('#goto-xz', '100, -200');
    await page.press('#goto-xz', 'Enter');
    await page.waitForFunction(() => /x=100&z=-200/.test(location.hash));
    const hash = await page.evaluate(() => location.hash);
    expect(hash).toMatch(/^#dim=0&layer=height&x=100&z=-200&zoom=\d+(\.\d{1,4})?$/);
    const view = () => page.evaluate(() => (window as unknown as { strataViewer: { view(): { x: number; z: number; zoom: number } } }).strataViewer.view());
    const before = await view();
    expect([before.x, before.z]).toEqual([100, -200]);
    // A bad coordinate says how to write one and moves nothing.
    await page.fill('#goto-xz', 'north');
    await page.press('#goto-xz', 'Enter');
    expect(await page.textContent('#message')).toContain('Go to: type block coordinates');
    await page.reload();
    await page.waitForFunction(() => document.body.dataset.state === 'ready');
    expect(await page.evaluate(() => location.hash)).toBe(hash);
    expect(await page.inputValue('#layer')).toBe('height');
    await page.evaluate(() => {
      const grid = document.getElementById('grid') as HTMLInputElement;
      grid.checked = false;
      grid.dispatchEvent(new Event('change'));
    });
    expect((await openWith('#open-mcworld', file)).state).toBe('ready');
    expect(await page.getAttribute('#map', 'data-layer')).toBe('height');
    const after = await view();
    expect({ x: after.x, z: after.z, zoom: after.zoom.toPrecision(4) }).toEqual({ x: 100, z: -200, zoom: before.zoom.toPrecision(4) });
    // Back to the defaults for the tests that follow.
    await page.evaluate(() => history.replaceState(null, '', location.pathname));
    await page.selectOption('#layer', 'relief');
    await page.waitForSelector('#legend[data-layer="relief"]', { state: 'attached' });
  });

  test('entities: markers, counts per identifier; deleting one entity and one identifier in a selection are staged (undo, redo), saved in one batch as the engine computes; the export has none of them', async () => {
    const file = path.join(worldsDir, 'rbedrock_example2_2025.mcworld');
    const original = fs.readFileSync(file);
    const ref = await openMcworld(new Uint8Array(original));
    const listed = (await ref.entities(0)).entities;
    const zombies = listed.filter((e) => e.identifier === 'minecraft:zombie').length;
    expect(zombies).toBe(20); // Mojang's LevelDB + amulet-nbt count the same (tests/entities.rs)
    // One entity deleted by itself (not a zombie), then every zombie in the selection.
    const e = listed.find((x) => x.kind === 'actor' && x.identifier !== 'minecraft:zombie')!;
    const everywhere = '-100000,-100000:100000,100000';
    const dry = await ref.applyEdits(
      [
        { kind: 'entity', dimension: 0, key: e.key, root: e.root },
        { kind: 'entities', dimension: 0, areas: everywhere, identifier: 'minecraft:zombie' },
      ],
      { dryRun: true },
    );
    await ref.close();
    expect([dry.chunks, dry.entities]).toEqual([0, 21]);
    expect((await openWith('#open-mcworld', file)).state).toBe('ready');
    await page.waitForSelector(`#entities-section[data-entities="${listed.length}"]`);
    const row = (id: string) => page.locator(`#entity-table tr[data-identifier="${id}"]`);
    expect(await row('minecraft:zombie').getAttribute('data-count')).toBe('20');
    // A click on an entity's marker shows its record, and offers to delete it.
    const [cx, cy] = await page.evaluate(
      ([bx, bz]) => (window as unknown as { strataViewer: { pointOf(x: number, z: number): [number, number] } }).strataViewer.pointOf(bx!, bz!),
      [Math.floor(e.x), Math.floor(e.z)],
    );
    const k = (await page.locator('#map').boundingBox())!.width / (await page.evaluate(() => (document.getElementById('map') as HTMLCanvasElement).width));
    // Relative to the canvas at click time. (Hovering a marker once made the bar above the map
    // wrap and the map jump under the pointer; #coords no longer reflows.)
    await page.locator('#map').click({ position: { x: cx * k, y: cy * k } });
    await page.waitForSelector('#entity-view .nbt');
    const shown = await page.getAttribute('#entity-view', 'data-identifier');
    expect(shown).toBe(e.identifier);
    await page.click('#entity-view .delete-entity');
    await page.waitForSelector('#confirm-dialog[open]');
    await page.click('#confirm');
    await page.waitForSelector('#staged[data-edits="1"] #staged-summary[data-entities="1"]');
    expect(await page.getAttribute('#staged-list li', 'data-kind')).toBe('entity');
    // Every chunk selected: stage the zombies.
    await page.fill('#selection', everywhere);
    await page.dispatchEvent('#selection', 'input');
    await page.waitForSelector('#entity-table tr[data-identifier="minecraft:zombie"][data-selected="20"]');
    await row('minecraft:zombie').locator('.delete-entities').click();
    await page.waitForSelector('#confirm-dialog[open]');
    await page.click('#confirm');
    const summary = (n: number, r: typeof dry) =>
      `#staged[data-edits="${n}"] #staged-summary[data-entities="${r.entities}"][data-records="${r.records}"][data-bytes="${r.bytes}"]`;
    await page.waitForSelector(summary(2, dry));
    // Nothing written yet: undo and redo move the zombies' edit.
    expect(await page.getAttribute('#entities-section', 'data-entities')).toBe(String(listed.length));
    await page.click('#undo');
    await page.waitForSelector('#staged[data-edits="1"] #staged-summary[data-entities="1"]');
    await page.click('#redo');
    await page.waitForSelector(summary(2, dry));
    expect(await page.$$eval('#staged-list li', (lis) => lis.map((li) => (li as HTMLElement).dataset.kind))).toEqual(['entity', 'entities']);
    await page.evaluate(() => (document.body.dataset.state = 'idle'));
    await page.click('#save-edits');
    await page.waitForFunction(() => document.body.dataset.state === 'ready' && /^Saved /.test(document.getElementById('message')!.textContent ?? ''));
    expect(await page.textContent('#message')).toBe(
      `Saved 2 edits: 0 chunks, ${dry.records} records (${dry.bytes.toLocaleString('en')} bytes) deleted, 21 entities, ${dry.recordsRewritten} records rewritten. Export the world to keep it.`,
    );
    await page.waitForSelector(`#entities-section[data-entities="${listed.length - 21}"]`);
    expect(await row('minecraft:zombie').count()).toBe(0);
    await page.fill('#selection', '');
    await page.dispatchEvent('#selection', 'input');
    const [download] = await Promise.all([page.waitForEvent('download'), page.click('#export-mcworld')]);
    const out = path.join(tempDir('entities-export'), download.suggestedFilename());
    await download.saveAs(out);
    const back = await openMcworld(new Uint8Array(fs.readFileSync(out)));
    const left = (await back.entities(0)).entities;
    await back.close();
    expect(left.filter((x) => x.identifier === 'minecraft:zombie')).toEqual([]);
    expect(left.filter((x) => x.key === e.key)).toEqual([]);
    expect(left.length).toBe(listed.length - 21);
    expect(fs.readFileSync(file).equals(original)).toBe(true);
  });

  test('browser storage full during an export: a clear message, no temporary files left, the world unchanged; with room, the same export succeeds', async () => {
    const dir = path.join(worldsDir, 'amulet_1_18_vanilla');
    const row = worlds().find((r) => r.name === 'amulet_1_18_vanilla')!;
    const shown = await openWith('#open-folder', dir);
    expect([shown.state, shown.entries, shown.crc32c]).toEqual(['ready', String(row.entries), String(row.crc32c)]);
    const scratch = () =>
      page.evaluate(async () => {
        const names: string[] = [];
        try {
          const root = await (await navigator.storage.getDirectory()).getDirectoryHandle('strata');
          for await (const n of (root as unknown as { keys(): AsyncIterable<string> }).keys()) if (n.includes('strata-export')) names.push(n);
        } catch {
          // no pool folder at all
        }
        return names;
      });
    const cdp = await context.newCDPSession(page);
    // 2 MiB more than the origin uses (an earlier export's small zip included, which the
    // export drops first): a copy of the world (15 MB) and its zip cannot fit.
    const usage = await page.evaluate(async () => (await navigator.storage.estimate()).usage ?? 0);
    await cdp.send('Storage.overrideQuotaForOrigin', { origin, quotaSize: usage + 2 * 1024 * 1024 });
    try {
      await page.click('#export-mcworld');
      await page.waitForFunction(() => document.getElementById('export-progress')!.dataset.phase === 'failed');
    } finally {
      await cdp.send('Storage.overrideQuotaForOrigin', { origin });
    }
    expect(await page.textContent('#message')).toBe(
      'Browser storage is full: the export needs room for a copy of the world and its zip. Its temporary files were removed and the world is unchanged. Delete a stored world to make room, then export again.',
    );
    expect(await scratch()).toEqual([]);
    expect([await page.getAttribute('#world-summary', 'data-entries'), await page.getAttribute('#world-summary', 'data-crc32c')]).toEqual([String(row.entries), String(row.crc32c)]);
    // With room again the same export completes: the Node export's bytes.
    const ref = path.join(tempDir('quota-export-ref'), 'ref.mcworld');
    const nw = await openWorld(dir);
    await nw.exportMcworldTo({ path: ref });
    await nw.close();
    const [download] = await Promise.all([page.waitForEvent('download'), page.click('#export-mcworld')]);
    await page.waitForFunction(() => /^Exported /.test(document.getElementById('message')!.textContent ?? ''));
    const out = path.join(tempDir('quota-export'), download.suggestedFilename());
    await download.saveAs(out);
    expect(fs.readFileSync(out).equals(fs.readFileSync(ref))).toBe(true);
  });

  test('the 160,000-chunk world (gen-world 400 × 400): exact figures; first picture, close-up screens and memory recorded; the map and a close-up saved', async () => {
    const dir = path.join(tempDir('huge-world'), 'huge');
    execFileSync(releaseCli, ['gen-world', dir, '--chunks-x', '400', '--chunks-z', '400', '--seed', '7']);
    const w = await openWorld(dir);
    // The page draws 400 × 400 chunks at 4 pixels per chunk (4 Mi pixels at most): 1,600 × 1,600.
    const relief = await w.map({ dimension: 0, pixelsPerChunk: 4 });
    await w.close();
    expect([relief.width, relief.height, relief.chunksDrawn, relief.chunksFailed]).toEqual([1600, 1600, 160_000, 0]);
    let peak = { all: 0, renderer: 0 };
    const sampler = setInterval(() => {
      const m = chromiumPss();
      if (m) peak = { all: Math.max(peak.all, m.all), renderer: Math.max(peak.renderer, m.renderer) };
    }, 100);
    try {
      const shown = await openWith('#open-folder', dir);
      expect([shown.state, shown.chunks, shown.message]).toEqual(['ready', '160000', '160000 of 160000 chunks drawn. Click a chunk to inspect its records.']);
      expect(await page.getAttribute('#map', 'data-slime-chunks')).toBe(String(relief.slimeChunks));
      const times = await page.evaluate(() => (window as unknown as { strataViewer: { mapTimes(): Record<string, number> } }).strataViewer.mapTimes());
      expect(times.firstPicture).toBeLessThanOrEqual(times.mapDrawn!);
      const decoded = await page.evaluate(() => (window as unknown as { strataViewer: { decodeStats(): Promise<unknown> } }).strataViewer.decodeStats());
      type Pass = { ranges: number; byHelpers: number; timeline: Array<{ range: number; by: string }> };
      const pass = await page.evaluate(() => (window as unknown as { strataViewer: { lastPass(): Pass | undefined } }).strataViewer.lastPass());
      console.log(`160,000-chunk world, decode workers after the open: ${JSON.stringify(decoded)}; the chunk index pass shared: ${JSON.stringify(pass)}`);
      // The pass was shared with the map helper opened beside the page's engine (one on two
      // cores, more on more): ranges 4 per engine, each passed once, some by the helper.
      const cores = await page.evaluate(() => navigator.hardwareConcurrency);
      if (cores >= 2) {
        expect(pass!.ranges % 4).toBe(0);
        expect(pass!.ranges).toBeGreaterThanOrEqual(8);
        expect(pass!.timeline.map((t) => t.range).sort((a, b) => a - b)).toEqual([...Array(pass!.ranges).keys()]);
        expect(pass!.byHelpers).toBeGreaterThanOrEqual(1);
      }
      // The page's map (drawn from the relief samples of its chunk index pass) is the image
      // the Node API drew by reading every chunk, pixel for pixel.
      expect(await shownBase()).toEqual({ width: relief.width, height: relief.height, fnv: fnv(relief.rgba) });
      await page.screenshot({ path: path.join(artifacts, 'huge-relief.png'), fullPage: true });
      // Close up at three places: every chunk in view gets its block tile.
      const closeUp: number[] = [];
      for (const [bx, bz] of [[0, 0], [1200, 800], [-1500, -900]] as const) {
        const t0 = Date.now();
        await page.evaluate(([x, z]) => (window as unknown as { strataViewer: { centerOn(x: number, z: number, zoom: number): void } }).strataViewer.centerOn(x!, z!, 6), [bx, bz]);
        await page.waitForFunction(() => (window as unknown as { strataViewer: { tiles(): { missing: number } } }).strataViewer.tiles().missing === 0, undefined, { timeout: 60_000 });
        closeUp.push(Date.now() - t0);
      }
      await page.screenshot({ path: path.join(artifacts, 'huge-close-up.png'), fullPage: true });
      // Mid zoom (1 and 0.5 screen pixels per block: the base's 4 pixels per chunk magnified
      // 4 and 2 times): every tile in view drawn at 16 and 8 pixels per chunk, none failed.
      type D = { strataViewer: { centerOn(x: number, z: number, zoom: number): void; detail(): { level: number; missing: number; held: number; drawn: number; failed: number } } };
      const midZoom: string[] = [];
      for (const [bx, bz, zoom, level] of [[0, 0, 1, 16], [2000, -1000, 0.5, 8]] as const) {
        const t0 = Date.now();
        await page.evaluate(([x, z, k]) => (window as unknown as D).strataViewer.centerOn(x!, z!, k!), [bx, bz, zoom]);
        expect((await page.evaluate(() => (window as unknown as D).strataViewer.detail())).level).toBe(level);
        await page.waitForFunction(() => (window as unknown as D).strataViewer.detail().missing === 0, undefined, { timeout: 60_000 });
        const d = await page.evaluate(() => (window as unknown as D).strataViewer.detail());
        expect(d.failed).toBe(0);
        expect(d.drawn).toBeGreaterThanOrEqual(4);
        midZoom.push(`${level} px/chunk: ${Date.now() - t0} ms, ${d.drawn} tiles held`);
      }
      await page.screenshot({ path: path.join(artifacts, 'huge-mid-zoom.png'), fullPage: true });
      const mib = (n: number) => `${(n / 2 ** 20).toFixed(0)} MiB`;
      console.log(
        `160,000-chunk world in Chromium, ms from the open's start: ${JSON.stringify(times)}; close-up screens ${JSON.stringify(closeUp)} ms; mid-zoom screens ${JSON.stringify(midZoom)}; ` +
          `PSS peak: page + workers ${mib(peak.renderer)}, all of Chromium ${mib(peak.all)}`,
      );
      if (chromiumPss()) expect(peak.renderer).toBeGreaterThan(0);
      // Opened again, the world's chunk index comes from the kept one (same identity): the
      // same figures, the first picture without the pass over every block.
      expect(await chunkListsCached()).toBe(0);
      const again = await openWith('#open-folder', dir);
      expect([again.state, again.chunks, again.message]).toEqual(['ready', '160000', '160000 of 160000 chunks drawn. Click a chunk to inspect its records.']);
      expect(await page.getAttribute('#map', 'data-slime-chunks')).toBe(String(relief.slimeChunks));
      expect(await chunkListsCached()).toBe(1);
      // Drawn from the kept samples: the same pixels.
      expect(await shownBase()).toEqual({ width: relief.width, height: relief.height, fnv: fnv(relief.rgba) });
      const timesAgain = await page.evaluate(() => (window as unknown as { strataViewer: { mapTimes(): Record<string, number> } }).strataViewer.mapTimes());
      console.log(`160,000-chunk world opened again (chunk index kept): ${JSON.stringify(timesAgain)}`);
    } finally {
      clearInterval(sampler);
    }
  });

  test('players and block entities are listed: a click goes there on the map and shows the record', async () => {
    const name = 'amulet_1_18_vanilla';
    const w = await openWorld(path.join(worldsDir, name));
    const local = (await w.nbt('~local_player'))![0]!.value as { Pos: number[]; DimensionId: number };
    const { entities } = await w.entities(0);
    const nether = (await w.entities(1)).entities.length;
    await w.close();
    const counts = new Map<string, number>();
    for (const e of entities) if (e.kind === 'block entity') counts.set(e.identifier, (counts.get(e.identifier) ?? 0) + 1);
    const [identifier, count] = [...counts].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))[0]!;
    const instances = entities.filter((e) => e.kind === 'block entity' && e.identifier === identifier);
    expect(instances.length).toBe(count);
    expect((await openWith('#open-mcworld', path.join(zips, `${name}.mcworld`))).state).toBe('ready');
    const view = () => page.evaluate(() => (window as unknown as { strataViewer: { view(): { x: number; z: number; zoom: number } } }).strataViewer.view());
    // The block entity kind with the most instances: its positions, in the engine's order.
    await page.click(`#entity-table tr[data-kind="block entity"][data-identifier="${identifier}"] .show-instances`);
    const listed = await page.$$eval(`#entity-table tr.instances[data-identifier="${identifier}"] .goto-entity`, (bs) => bs.map((b) => b.textContent));
    expect(listed).toEqual(instances.slice(0, 200).map((e) => `${Math.floor(e.x)}, ${Math.floor(e.y)}, ${Math.floor(e.z)}`));
    const last = instances[Math.min(200, instances.length) - 1]!;
    await page.locator(`#entity-table tr.instances[data-identifier="${identifier}"] .goto-entity`).last().click();
    await page.waitForFunction((id) => document.getElementById('entity-view')!.dataset.identifier === id, identifier);
    const v2 = await view();
    expect([Math.abs(v2.x - Math.floor(last.x)) <= 1, Math.abs(v2.z - Math.floor(last.z)) <= 1]).toEqual([true, true]);
    // A second click on the identifier folds the list away.
    await page.click(`#entity-table tr[data-kind="block entity"][data-identifier="${identifier}"] .show-instances`);
    expect(await page.$$(`#entity-table tr.instances`)).toHaveLength(0);
    // The one player: its dimension and position, from its record.
    const [px, py, pz] = local.Pos.map(Math.floor) as [number, number, number];
    expect(await page.$$eval('#player-list li', (lis) => lis.map((li) => li.textContent))).toEqual([
      `player (local) · ${['Overworld', 'Nether', 'End'][local.DimensionId]} ${px}, ${py}, ${pz}`,
    ]);
    await page.click('#player-list .goto-player');
    await page.waitForSelector('#entity-view[data-identifier="player ~local_player"]');
    const v = await view();
    expect([Math.abs(v.x - px) <= 1, Math.abs(v.z - pz) <= 1, v.zoom >= 4]).toEqual([true, true, true]);
    // The player is in the Nether here: the map went there, and the entity list with it.
    expect([local.DimensionId, await page.inputValue('#dimension')]).toEqual([1, '1']);
    expect(await page.getAttribute('#map', 'data-chunks')).toBe('70');
    expect(await page.getAttribute('#entities-section', 'data-entities')).toBe(String(nether));
    await page.screenshot({ path: path.join(artifacts, 'entity-instances.png'), fullPage: true });
  });

  test('export streams through OPFS (53 MB world): progress, a cancel leaves nothing, the download equals the Node export and reads back in Mojang\'s LevelDB; wasm memory stays bounded', async () => {
    const dir = path.join(tempDir('export-big'), 'big');
    execFileSync(releaseCli, ['gen-world', dir, '--chunks-x', '420', '--chunks-z', '420', '--seed', '7']);
    const worldBytes = (fs.readdirSync(dir, { recursive: true, encoding: 'utf8' }) as string[]).reduce((n, f) => n + (fs.statSync(path.join(dir, f)).isFile() ? fs.statSync(path.join(dir, f)).size : 0), 0);
    // gen-world's content is fixed by its seed; its file layout (how its background
    // compactions fell) is not: the figures below come from this run's files.
    expect(worldBytes).toBeGreaterThan(53e6);
    // The reference: Node's streamed export of the same folder (equal to its in-memory one).
    const ref = path.join(tempDir('export-ref'), 'ref.mcworld');
    const nw = await openWorld(dir);
    const want = await nw.db.scan();
    const refReport = await nw.exportMcworldTo({ path: ref });
    await nw.close();
    expect(want.entries).toBe(719_901);
    expect(refReport.size).toBe(fs.statSync(ref).size);
    const shown = await openWith('#open-folder', dir);
    expect([shown.state, shown.entries, shown.crc32c]).toEqual(['ready', String(want.entries), String(want.crc32c)]);
    const memory = () => page.evaluate(() => (window as unknown as { strataViewer: { engineMemory(): Promise<number> } }).strataViewer.engineMemory());
    const opfsLeft = () =>
      page.evaluate(async () => {
        const root = await (await navigator.storage.getDirectory()).getDirectoryHandle('strata');
        const names: string[] = [];
        for await (const n of (root as unknown as { keys(): AsyncIterable<string> }).keys()) names.push(n);
        return names.filter((n) => n.includes('strata-export'));
      });
    // Progress as the page shows it: every change of #export-progress's figures.
    await page.evaluate(() => {
      const box = document.getElementById('export-progress')!;
      const log: Array<{ phase: string; done: number; total: number }> = [];
      (window as unknown as { exportLog: typeof log }).exportLog = log;
      new MutationObserver(() => {
        const d = box.dataset;
        const e = { phase: d.phase ?? '', done: Number(d.done), total: Number(d.total) };
        const l = log.at(-1);
        if (!l || l.phase !== e.phase || l.done !== e.done || l.total !== e.total) log.push(e);
      }).observe(box, { attributes: true });
    });
    const exportLog = () => page.evaluate(() => (window as unknown as { exportLog: Array<{ phase: string; done: number; total: number }> }).exportLog.splice(0));
    const before = await memory();

    // Cancelled mid-copy (64 KiB steps, so the click lands well before the end).
    await page.evaluate(() => (window as unknown as { strataViewer: { setExportStep(n: number): void } }).strataViewer.setExportStep(64 << 10));
    await page.click('#export-mcworld');
    await page.waitForFunction(() => {
      const d = document.getElementById('export-progress')!.dataset;
      return d.phase === 'copy' && Number(d.done) > 4e6;
    });
    await page.click('#export-cancel');
    await page.waitForFunction(() => /^Export cancelled/.test(document.getElementById('message')!.textContent ?? ''));
    expect(await page.textContent('#message')).toBe('Export cancelled: its temporary files were removed; the world is unchanged.');
    expect(await page.getAttribute('#export-progress', 'data-phase')).toBe('cancelled');
    const cancelled = await exportLog();
    expect(cancelled.every((e) => e.phase === 'copy' || e.phase === 'cancelled')).toBe(true);
    expect(await opfsLeft()).toEqual([]);

    // The whole export, 4 MiB steps: the download is the Node export's bytes.
    await page.evaluate(() => (window as unknown as { strataViewer: { setExportStep(n?: number): void } }).strataViewer.setExportStep(undefined));
    const t0 = Date.now();
    const [download] = await Promise.all([page.waitForEvent('download'), page.click('#export-mcworld')]);
    await page.waitForFunction(() => /^Exported /.test(document.getElementById('message')!.textContent ?? ''));
    const seconds = (Date.now() - t0) / 1000;
    expect(download.suggestedFilename()).toBe('Strata synthetic.mcworld');
    const out = path.join(tempDir('export-download'), download.suggestedFilename());
    await download.saveAs(out);
    expect(fs.readFileSync(out).equals(fs.readFileSync(ref))).toBe(true);
    expect(await page.textContent('#message')).toBe(
      `Exported “Strata synthetic.mcworld” (${refReport.size.toLocaleString('en')} bytes, ${refReport.files} files): open it with Minecraft to import it.`,
    );
    const after = await memory();
    // Progress: copy, compact, zip in order; within a phase monotone; copy ends at the world's
    // bytes (LOCK left out), the zip at its total.
    const log = await exportLog();
    const order = ['copy', 'compact', 'zip', 'done'];
    for (let i = 1; i < log.length; i++) {
      expect(order.indexOf(log[i]!.phase)).toBeGreaterThanOrEqual(order.indexOf(log[i - 1]!.phase));
      if (log[i]!.phase === log[i - 1]!.phase) expect(log[i]!.done).toBeGreaterThanOrEqual(log[i - 1]!.done);
    }
    const copyEnd = log.filter((e) => e.phase === 'copy').at(-1)!;
    expect(copyEnd).toEqual({ phase: 'copy', done: worldBytes, total: worldBytes });
    expect(log.at(-1)!.phase).toBe('done');
    expect(log.at(-1)!.done).toBe(log.at(-1)!.total);
    expect(log.some((e) => e.phase === 'zip')).toBe(true);
    // Engine memory: the in-memory export held the copy and the zip in wasm memory (about 3x
    // the world: 275 MiB more in Node for this world); the streamed one its caches and buffers.
    console.log(`streamed export in Chromium: ${seconds.toFixed(1)} s; wasm memory ${(before / 2 ** 20).toFixed(1)} -> ${(after / 2 ** 20).toFixed(1)} MiB`);
    expect(after - before).toBeLessThan(48 * 2 ** 20);
    // The zip waits in OPFS for the download until the next export.
    expect(await opfsLeft()).toEqual(['.strata-export']);
    // Mojang's LevelDB reads the download: every entry.
    const unzipped = tempDir('export-unzipped');
    execFileSync('python3', ['-c', 'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])', out, unzipped]);
    execFileSync('python3', [path.join(repoRoot, 'tests/peers/dump_db.py'), 'amulet', path.join(unzipped, 'db'), path.join(unzipped, 'dump')]);
    const dump = fs.readFileSync(path.join(unzipped, 'dump'));
    let n = 0;
    for (let p = 0; p < dump.length; n++) {
      p += 4 + dump.readUInt32LE(p);
      p += 4 + dump.readUInt32LE(p);
    }
    expect(n).toBe(want.entries);
    const back = await openMcworld(new Uint8Array(fs.readFileSync(out)));
    expect(await back.db.scan()).toEqual(want);
    await back.close();
  });

  test('save to a folder: the picked folder gets exactly the exported world; a non-empty folder is refused', async () => {
    const file = path.join(worldsDir, 'rbedrock_example3.mcworld');
    // The expectation: the Node API's export of the same world, unpacked by Python.
    const ref = await openMcworld(new Uint8Array(fs.readFileSync(file)));
    const zip = path.join(tempDir('save-folder'), 'ref.mcworld');
    fs.writeFileSync(zip, await ref.exportMcworld());
    await ref.close();
    const ref2 = JSON.parse(
      execFileSync(
        'python3',
        ['-c', 'import sys, zipfile, hashlib, json\nz = zipfile.ZipFile(sys.argv[1])\nfs = [i for i in z.infolist() if not i.is_dir()]\nprint(json.dumps({"files": {i.filename: hashlib.sha256(z.read(i)).hexdigest() for i in fs}, "bytes": sum(i.file_size for i in fs)}))', zip],
        { encoding: 'utf8' },
      ),
    ) as { files: Record<string, string>; bytes: number };
    const want = ref2.files;
    expect((await openWith('#open-mcworld', file)).state).toBe('ready');
    expect(await page.getAttribute('#save-to-folder', 'data-supported')).toBe('true');
    // The folder picker, stubbed with real OPFS folders (a headless browser shows no dialog).
    await page.evaluate(async () => {
      const root = await navigator.storage.getDirectory();
      for (const n of ['picked-empty', 'picked-busy']) await root.removeEntry(n, { recursive: true }).catch(() => {});
      const busy = await root.getDirectoryHandle('picked-busy', { create: true });
      await busy.getFileHandle('something.txt', { create: true });
      const w = window as unknown as { pickQueue: string[]; showDirectoryPicker: unknown };
      w.pickQueue = ['picked-busy', 'picked-empty'];
      w.showDirectoryPicker = async () => root.getDirectoryHandle(w.pickQueue.shift()!, { create: true });
    });
    await page.evaluate(() => (document.body.dataset.state = 'idle'));
    await page.click('#save-to-folder');
    await page.waitForFunction(() => ['ready', 'error'].includes(document.body.dataset.state ?? '') && /not empty/.test(document.getElementById('message')!.textContent ?? ''));
    expect(await page.textContent('#message')).toContain('“picked-busy” is not empty');
    await page.evaluate(() => (document.body.dataset.state = 'idle'));
    await page.click('#save-to-folder');
    await page.waitForFunction(() => document.body.dataset.state === 'ready' && /^Saved the world/.test(document.getElementById('message')!.textContent ?? ''));
    const got = await page.evaluate(async () => {
      const out: Record<string, string> = {};
      const walk = async (dir: FileSystemDirectoryHandle, prefix: string): Promise<void> => {
        for await (const [name, h] of (dir as unknown as { entries(): AsyncIterable<[string, FileSystemHandle]> }).entries()) {
          if (h.kind === 'directory') await walk(h as FileSystemDirectoryHandle, `${prefix}${name}/`);
          else {
            const data = await (await (h as FileSystemFileHandle).getFile()).arrayBuffer();
            out[`${prefix}${name}`] = [...new Uint8Array(await crypto.subtle.digest('SHA-256', data))].map((b) => b.toString(16).padStart(2, '0')).join('');
          }
        }
      };
      await walk(await (await navigator.storage.getDirectory()).getDirectoryHandle('picked-empty'), '');
      return out;
    });
    expect(got).toEqual(want);
    expect(await page.textContent('#message')).toBe(
      `Saved the world into “picked-empty”: ${Object.keys(want).length} files, ${ref2.bytes.toLocaleString('en')} bytes. Copy that folder into Minecraft's worlds folder to play it.`,
    );
  });

  test('a world with chunks a million blocks apart draws (several chunks per pixel far out)', async () => {
    const dir = path.join(tempDir('far-world'), 'far');
    fs.cpSync(path.join(worldsDir, 'amulet_1_16'), dir, { recursive: true });
    // Version records of chunks (62500, -62500) and (-62500, 62500).
    execFileSync(releaseCli, ['put', path.join(dir, 'db'), '0x24f40000dc0bffff2c', '0x28']);
    execFileSync(releaseCli, ['put', path.join(dir, 'db'), '0xdc0bffff24f400002c', '0x28']);
    const w = await openWorld(dir);
    const api = await w.map({ dimension: 0, pixelsPerChunk: 1, chunksPerPixel: 64 });
    const all = await w.chunks(0);
    const total = all.length;
    // Zoomed in on a chunk of the original world (the middle one in key order: the two far
    // chunks are first and last), its 128 × 128-chunk tile is drawn at 2 pixels per chunk:
    // every chunk of it, not one sample per 64 × 64 chunks.
    const mid = all[all.length >> 1]!;
    const [rx, rz] = [Math.floor(mid[0] / 128), Math.floor(mid[1] / 128)];
    const square = await w.map({ dimension: 0, pixelsPerChunk: 2, region: [rx * 128, rz * 128, rx * 128 + 127, rz * 128 + 127] });
    await w.close();
    expect([api.width, api.height, api.chunksPerPixel]).toEqual([1954, 1954, 64]);
    zipDir(dir, path.join(zips, 'far.mcworld'));
    const shown = await openWith('#open-mcworld', path.join(zips, 'far.mcworld'));
    expect(shown.state).toBe('ready');
    expect(shown.chunks).toBe(String(api.chunksDrawn));
    expect(shown.message).toBe(
      `${api.chunksDrawn} of ${total} chunks drawn (far out, one pixel per 64×64 chunks: zoom in for every chunk). Click a chunk to inspect its records.`,
    );
    expect(await mapPixels()).toBeGreaterThan(0);
    type V = {
      strataViewer: {
        centerOn(x: number, z: number, zoom: number): void;
        detail(): { level: number; missing: number; held: number; failed: number };
        detailPixels(level: number, rx: number, rz: number): { width: number; height: number; rgba: Uint8ClampedArray } | undefined;
      };
    };
    // Fitted, both far chunks are on screen (one base pixel covers 64 × 64 chunks: 1,024 blocks).
    const size = await page.evaluate(() => [(document.getElementById('map') as HTMLCanvasElement).width, (document.getElementById('map') as HTMLCanvasElement).height]);
    for (const [x, z] of [[62_500, -62_500], [-62_500, 62_500]]) {
      const [sx, sy] = await page.evaluate(([bx, bz]) => (window as unknown as { strataViewer: { pointOf(x: number, z: number): [number, number] } }).strataViewer.pointOf(bx!, bz!), [x! * 16, z! * 16]);
      expect(sx, `chunk ${x}, ${z}`).toBeGreaterThanOrEqual(0);
      expect(sx, `chunk ${x}, ${z}`).toBeLessThanOrEqual(size[0]!);
      expect(sy, `chunk ${x}, ${z}`).toBeGreaterThanOrEqual(0);
      expect(sy, `chunk ${x}, ${z}`).toBeLessThanOrEqual(size[1]!);
    }
    // Far out (the whole 2-million-block span on screen) no detail is asked for.
    expect(await page.evaluate(() => (window as unknown as V).strataViewer.detail())).toMatchObject({ level: 0, missing: 0, held: 0 });
    // Zooming out from there zooms out (the farthest zoom was 0.02 pixels per block: the button
    // jumped 40 times closer).
    const zoomOf = () => page.evaluate(() => (window as unknown as { strataViewer: { view(): { zoom: number } } }).strataViewer.view().zoom);
    const fitted = await zoomOf();
    expect(fitted).toBeLessThan(0.001);
    await page.click('#zoom-out');
    expect(await zoomOf()).toBeCloseTo(fitted / 1.5, 8);
    await page.evaluate(([x, z]) => (window as unknown as V).strataViewer.centerOn(x!, z!, 0.1), [mid[0] * 16 + 8, mid[1] * 16 + 8]);
    await page.waitForFunction(() => (window as unknown as V).strataViewer.detail().missing === 0, undefined, { timeout: 30_000 });
    expect((await page.evaluate(() => (window as unknown as V).strataViewer.detail())).level).toBe(2);
    const got = await page.evaluate(
      ([x, z]) => {
        const p = (window as unknown as V).strataViewer.detailPixels(2, x!, z!)!;
        let h = 0x811c9dc5;
        for (let i = 0; i < p.rgba.length; i++) h = Math.imul(h ^ p.rgba[i]!, 0x01000193) >>> 0;
        return { width: p.width, height: p.height, fnv: h };
      },
      [rx, rz],
    );
    expect(square.chunksDrawn).toBeGreaterThan(1);
    expect(got).toEqual({ width: 256, height: 256, fnv: fnv(square.rgba) });
    expect(await page.evaluate(() => (window as unknown as V).strataViewer.detail())).toMatchObject({ failed: 0 });
  });

  test('a large world (gen-world, 12,100 chunks) is drawn in bands: the pixels and figures of one whole-map call, each layer; block tiles stay bounded', async () => {
    const dir = path.join(tempDir('large-world'), 'large');
    execFileSync(releaseCli, ['gen-world', dir, '--chunks-x', '110', '--chunks-z', '110', '--seed', '11']);
    // Chunk (5, 7)'s Data3D record made undecodable: named by the page, never silently skipped.
    execFileSync(releaseCli, ['put', path.join(dir, 'db'), '0x05000000070000002b', '0x00']);
    const w = await openWorld(dir);
    expect((await w.chunks(0)).length).toBe(12_100);
    // 110 × 110 chunks at 16 pixels per chunk fit the page's 4 Mi pixels: 1,760 × 1,760.
    const layers = ['relief', 'slime', 'biome', 'height'] as const;
    const whole = new Map<string, Awaited<ReturnType<typeof w.map>>>();
    for (const layer of layers) whole.set(layer, await w.map({ dimension: 0, pixelsPerChunk: 16, layer }));
    await w.close();
    const viewer = () =>
      page.evaluate(() => {
        const v = (window as unknown as { strataViewer: { mapBands(): number; mapTimes(): Record<string, number>; tiles(): { held: number; missing: number } } }).strataViewer;
        return { bands: v.mapBands(), times: v.mapTimes(), tiles: v.tiles() };
      });
    // One map helper (the default on two cores; set so whatever the cores).
    await page.evaluate(() => (window as unknown as { strataViewer: { setHelpers(n: number | null): void } }).strataViewer.setHelpers(1));
    const shown = await openWith('#open-folder', dir);
    await page.evaluate(() => (window as unknown as { strataViewer: { setHelpers(n: number | null): void } }).strataViewer.setHelpers(null));
    const relief = whole.get('relief')!;
    expect([relief.width, relief.height, relief.chunksDrawn, relief.chunksFailed]).toEqual([1760, 1760, 12_099, 1]);
    expect(relief.failedChunks.map(([x, z]) => [x, z])).toEqual([[5, 7]]);
    expect([shown.state, shown.chunks, shown.message]).toEqual([
      'ready',
      '12099',
      `12099 of 12100 chunks drawn, 1 could not be decoded (chunk 5, 7: ${relief.failedChunks[0]![2]}). Click a chunk to inspect its records.`,
    ]);
    expect(await page.getAttribute('#map', 'data-failed')).toBe('5,7');
    const first = await viewer();
    // Bands of 37 rows (4,096 chunks) at the centre, then 74 rows each way (clamped): 3 calls.
    expect(first.bands).toBe(3);
    expect(first.times.firstPicture).toBeLessThanOrEqual(first.times.mapDrawn!);
    console.log(`large world (12,100 chunks) in Chromium, ms from the open's start: ${JSON.stringify(first.times)}`);
    expect(await shownBase()).toEqual({ width: 1760, height: 1760, fnv: fnv(relief.rgba) });
    // The map helper opened the picked folder; the next layers are drawn by it and the page's
    // engine together, with the same pixels.
    const helpers = () => page.evaluate(() => (window as unknown as { strataViewer: { mapHelpers(): { calls: number; helpers: number } } }).strataViewer.mapHelpers());
    await page.waitForFunction(() => (window as unknown as { strataViewer: { mapHelpers(): { helpers: number } } }).strataViewer.mapHelpers().helpers === 1, undefined, { timeout: 30_000 });
    // The helper opens once the page is ready (this world is too small to share its chunk
    // index pass): the first map's bands were all the page engine's (it may have drawn a tile
    // since).
    const atOpen = await helpers();
    expect(atOpen.helpers).toBe(1);
    // Its tables (under 32 MiB) were passed whole by the page's engine, not shared.
    expect(await page.evaluate(() => (window as unknown as { strataViewer: { lastPass(): unknown } }).strataViewer.lastPass())).toBeUndefined();
    expect((atOpen as { bandsAtLastMap: number }).bandsAtLastMap).toBe(0);
    for (const layer of ['slime', 'biome', 'height'] as const) {
      await page.selectOption('#layer', layer);
      await page.waitForSelector(`#legend[data-layer="${layer}"]`, { state: 'attached' });
      await page.waitForFunction(() => document.body.dataset.state === 'ready');
      const api = whole.get(layer)!;
      expect(await shownBase(), layer).toEqual({ width: 1760, height: 1760, fnv: fnv(api.rgba) });
      expect(await page.getAttribute('#map', 'data-slime-chunks'), layer).toBe(String(api.slimeChunks));
      const legend = await page.$$eval('#legend > span', (els) => els.map((e) => (e as HTMLElement).dataset.biome ?? e.textContent ?? ''));
      if (layer === 'biome') expect(legend).toEqual(api.biomes.slice(0, 24).map(([id]) => String(id)));
      if (layer === 'height') expect(legend).toEqual([`y ${api.heightMin}y ${api.heightMax}`]);
      await page.screenshot({ path: path.join(artifacts, `large-${layer}.png`), fullPage: true });
    }
    expect(whole.get('slime')!.slimeChunks).toBeGreaterThan(1000);
    // A layer picked while another map is still being drawn supersedes it: bands held back,
    // the height map started, then slime picked; released, only slime's pixels are left.
    type Hold = { strataViewer: { holdMap(on: boolean): void; mapsDrawing(): number; mapPaints(): number; mapBands(): number } };
    await page.evaluate(() => (window as unknown as Hold).strataViewer.holdMap(true));
    const paintsBefore = await page.evaluate(() => (window as unknown as Hold).strataViewer.mapPaints());
    await page.selectOption('#layer', 'height');
    await page.waitForFunction(() => (window as unknown as Hold).strataViewer.mapsDrawing() === 1);
    await page.selectOption('#layer', 'slime');
    await page.waitForFunction(() => (window as unknown as Hold).strataViewer.mapsDrawing() === 2);
    await page.evaluate(() => (window as unknown as Hold).strataViewer.holdMap(false));
    await page.waitForFunction(() => document.body.dataset.state === 'ready' && (window as unknown as Hold).strataViewer.mapsDrawing() === 0);
    // The height map stopped at once: every band painted since is slime's.
    const [paintsAfter, slimeBands] = await page.evaluate(() => [(window as unknown as Hold).strataViewer.mapPaints(), (window as unknown as Hold).strataViewer.mapBands()]);
    expect(paintsAfter! - paintsBefore).toBe(slimeBands);
    expect(await shownBase()).toEqual({ width: 1760, height: 1760, fnv: fnv(whole.get('slime')!.rgba) });
    expect([await page.getAttribute('#map', 'data-layer'), await page.getAttribute('#map', 'data-slime-chunks'), await page.getAttribute('#legend', 'data-layer')]).toEqual([
      'slime',
      String(whole.get('slime')!.slimeChunks),
      'slime',
    ]);
    expect(await page.textContent('#message')).toBe(
      `12099 of 12100 chunks drawn, 1 could not be decoded (chunk 5, 7: ${relief.failedChunks[0]![2]}). Click a chunk to inspect its records.`,
    );
    // Bands of the slime, biome and height maps (and the superseded height map's) drawn by it.
    const byHelpers = (await helpers()).calls - atOpen.calls;
    expect(byHelpers).toBeGreaterThan(0);
    await page.selectOption('#layer', 'relief');
    await page.waitForFunction(() => document.body.dataset.state === 'ready');
    // Close up, the block tiles of three places in turn, with the cache bound lowered to 150.
    await page.evaluate(() => (window as unknown as { strataViewer: { setMaxTiles(n: number): void } }).strataViewer.setMaxTiles(150));
    let most = 0;
    for (const [bx, bz] of [[0, 0], [400, 0], [400, 400]] as const) {
      await page.evaluate(([x, z]) => (window as unknown as { strataViewer: { centerOn(x: number, z: number, zoom: number): void } }).strataViewer.centerOn(x!, z!, 6), [bx, bz]);
      await page.waitForFunction(() => (window as unknown as { strataViewer: { tiles(): { missing: number } } }).strataViewer.tiles().missing === 0, undefined, { timeout: 30_000 });
      const t = (await viewer()).tiles;
      most = Math.max(most, t.held);
      expect(t.held, `at ${bx}, ${bz}`).toBeGreaterThan(40);
      expect(t.held, `at ${bx}, ${bz}`).toBeLessThanOrEqual(150);
    }
    await page.screenshot({ path: path.join(artifacts, 'large-close-up.png'), fullPage: true });
    const tileBatches = (await helpers()).calls - atOpen.calls - byHelpers;
    console.log(`large world close up: at most ${most} block tiles held (bound 150); map helper calls: ${atOpen.calls} at the open, ${byHelpers} bands, ${tileBatches} tile batches`);
    expect(tileBatches).toBeGreaterThan(0);
    await page.evaluate(() => (window as unknown as { strataViewer: { setMaxTiles(n: number): void } }).strataViewer.setMaxTiles(4096));
  });

  test('level of detail: a world whose base map is coarse gets detail tiles at the zoom\'s level, each with the pixels of the whole map drawn at that level, any layer; bounded', async () => {
    const dir = path.join(tempDir('detail-world'), 'detail');
    execFileSync(releaseCli, ['gen-world', dir, '--chunks-x', '40', '--chunks-z', '40', '--seed', '5']);
    const w = await openWorld(dir);
    const chunks = await w.chunks(0);
    expect(chunks.length).toBe(1600);
    // The engine's whole map at each level: a detail tile must be its crop.
    const whole = new Map<string, Awaited<ReturnType<typeof w.map>>>();
    for (const [layer, level] of [['relief', 16], ['relief', 4], ['height', 4], ['height', 8], ['height', 16]] as const) whole.set(`${layer}:${level}`, await w.map({ dimension: 0, pixelsPerChunk: level, layer }));
    await w.close();
    /** The whole map's pixels over tile (tx, tz) (256 / level chunks a side: 256 × 256
     * pixels), transparent outside it. */
    const crop = (img: Awaited<ReturnType<typeof w.map>>, tx: number, tz: number): number => {
      const p = img.pixelsPerChunk;
      const side = 256 / p;
      const out = new Uint8Array(256 * 256 * 4);
      for (let j = 0; j < 256; j++) {
        for (let i = 0; i < 256; i++) {
          const x = (tx * side - img.minChunkX) * p + i;
          const y = (tz * side - img.minChunkZ) * p + j;
          if (x < 0 || y < 0 || x >= img.width || y >= img.height) continue;
          out.set(img.rgba.subarray((y * img.width + x) * 4, (y * img.width + x) * 4 + 4), (j * 256 + i) * 4);
        }
      }
      return fnv(out);
    };
    type Detail = { held: number; drawn: number; failed: number; pixels: number; missing: number; level: number; calls: number };
    type V = {
      strataViewer: {
        setMaxMapPixels(n: number): void;
        setMaxDetailPixels(n: number): void;
        centerOn(x: number, z: number, zoom: number): void;
        detail(): Detail;
        detailPixels(level: number, tx: number, tz: number): { width: number; height: number; rgba: Uint8ClampedArray } | undefined;
      };
    };
    const callsBefore = await page.evaluate(() => (window as unknown as V).strataViewer.detail().calls);
    // A base map of at most 4 pixels per chunk's area: 2 pixels per chunk (80 × 80 pixels).
    await page.evaluate(() => (window as unknown as V).strataViewer.setMaxMapPixels(1600 * 4));
    try {
      const shown = await openWith('#open-folder', dir);
      expect([shown.state, shown.chunks]).toEqual(['ready', '1600']);
      const detail = () => page.evaluate(() => (window as unknown as V).strataViewer.detail());
      const [x0, z0] = [whole.get('relief:16')!.minChunkX, whole.get('relief:16')!.minChunkZ];
      // Far out (1.6 screen pixels per chunk: the base's 2 suffice) no detail is asked for.
      await page.evaluate(([x, z]) => (window as unknown as V).strataViewer.centerOn(x!, z!, 0.1), [(x0 + 20) * 16, (z0 + 20) * 16]);
      expect(await detail()).toMatchObject({ level: 0, missing: 0 });
      /** Every tile of the world at `level` (the view shows the whole world at the zooms used). */
      const tilesOf = (level: number): Array<[number, number]> => {
        const side = 256 / level;
        const out: Array<[number, number]> = [];
        for (let tz = Math.floor(z0 / side); tz <= Math.floor((z0 + 39) / side); tz++) for (let tx = Math.floor(x0 / side); tx <= Math.floor((x0 + 39) / side); tx++) out.push([tx, tz]);
        return out;
      };
      const compare = async (layer: string, level: number, zoom: number): Promise<number> => {
        // The world's centre at `zoom` screen pixels per block, then the layer (a new map keeps
        // the view: its tiles are asked for at this zoom's level from the start).
        await page.evaluate(([x, z, k]) => (window as unknown as V).strataViewer.centerOn(x!, z!, k!), [(x0 + 20) * 16, (z0 + 20) * 16, zoom]);
        if ((await page.inputValue('#layer')) !== layer) {
          await page.selectOption('#layer', layer);
          await page.waitForSelector(`#legend[data-layer="${layer}"]`, { state: 'attached' });
          await page.waitForFunction(() => document.body.dataset.state === 'ready');
        }
        await page.waitForFunction(() => (window as unknown as V).strataViewer.detail().missing === 0, undefined, { timeout: 30_000 });
        const d = await detail();
        expect([d.level, d.failed], `${layer} at zoom ${zoom}`).toEqual([level, 0]);
        const tiles = tilesOf(level);
        for (const [tx, tz] of tiles) {
          const got = await page.evaluate(
            ([l, x, z]) => {
              const p = (window as unknown as V).strataViewer.detailPixels(l!, x!, z!);
              if (!p) return undefined;
              let h = 0x811c9dc5;
              for (let i = 0; i < p.rgba.length; i++) h = Math.imul(h ^ p.rgba[i]!, 0x01000193) >>> 0;
              return { width: p.width, height: p.height, fnv: h };
            },
            [level, tx, tz],
          );
          expect(got, `${layer} level ${level} tile ${tx}, ${tz}`).toEqual({ width: 256, height: 256, fnv: crop(whole.get(`${layer}:${level}`)!, tx, tz) });
        }
        await page.screenshot({ path: path.join(artifacts, `detail-${layer}-${level}.png`), fullPage: true });
        return tiles.length;
      };
      // Relief (shaded by the northern neighbour: each tile reads the row north of it) at 16
      // and 4 pixels per chunk, height at 4, 8 and 16: every tile of the world held, equal to
      // the crop of one whole-map call at its level.
      expect(await compare('relief', 16, 0.9)).toBeGreaterThanOrEqual(4);
      expect(await compare('height', 4, 0.25)).toBeGreaterThanOrEqual(1);
      expect(await compare('relief', 4, 0.25)).toBeGreaterThanOrEqual(1);
      expect(await compare('height', 8, 0.5)).toBeGreaterThanOrEqual(1);
      // Bounded: with room for one tile of 256 × 256 pixels, the height tiles of 8 pixels per
      // chunk go as those of 16 arrive (the screen's are kept beyond the bound: they would be
      // asked for again at once). Left: a screen of level-16 tiles, at most.
      await page.evaluate(() => (window as unknown as V).strataViewer.setMaxDetailPixels(256 * 256));
      const screenTiles = await compare('height', 16, 0.9);
      const d = await detail();
      expect(d).toMatchObject({ missing: 0, failed: 0, held: screenTiles, drawn: screenTiles, pixels: screenTiles * 256 * 256 });
      console.log(`level of detail (40 × 40 chunks, base 2 px per chunk): ${d.calls - callsBefore} detail calls; ${d.held} tiles held at the bound`);
    } finally {
      await page.evaluate(() => {
        const v = (window as unknown as V).strataViewer;
        v.setMaxMapPixels(4 << 20);
        v.setMaxDetailPixels(8 << 20);
      });
    }
  });

  test('a world copied into OPFS gets map helpers too: File snapshots of its pool, read beside the page\'s engine; the bands they draw have the whole map\'s pixels', async () => {
    const dir = path.join(tempDir('opfs-helpers'), 'opfs-helped');
    execFileSync(releaseCli, ['gen-world', dir, '--chunks-x', '80', '--chunks-z', '80', '--seed', '3']);
    const w = await openWorld(dir);
    const height = await w.map({ dimension: 0, pixelsPerChunk: 16, layer: 'height' });
    const kinds = await w.summary();
    await w.close();
    type H = { strataViewer: { setHelpers(n: number | null): void; mapHelpers(): { calls: number; helpers: number }; basePixels(): { width: number; height: number; rgba: Uint8ClampedArray } } };
    await page.evaluate(() => (window as unknown as H).strataViewer.setHelpers(1));
    await page.check('#import-opfs');
    try {
      const shown = await openWith('#open-folder', dir);
      expect([shown.state, shown.chunks, shown.entries]).toEqual(['ready', '6400', String(kinds.total.count)]);
      // The helper opens File snapshots of the world's OPFS pool while the page's engine holds it.
      await page.waitForFunction(() => (window as unknown as H).strataViewer.mapHelpers().helpers === 1, undefined, { timeout: 30_000 });
      // (It may have drawn a tile of the first view already.)
      const atOpen = (await page.evaluate(() => (window as unknown as H).strataViewer.mapHelpers())).calls;
      await page.selectOption('#layer', 'height');
      await page.waitForSelector('#legend[data-layer="height"]', { state: 'attached' });
      await page.waitForFunction(() => document.body.dataset.state === 'ready');
      expect(await shownBase()).toEqual({ width: 1280, height: 1280, fnv: fnv(height.rgba) });
      const calls = (await page.evaluate(() => (window as unknown as H).strataViewer.mapHelpers())).calls - atOpen;
      expect(calls).toBeGreaterThan(0);
      // Detail tiles go to the helper too while the page's engine is busy: a coarse base (2
      // pixels per chunk) seen at 16, every tile in view drawn, none failed.
      type D = { strataViewer: { setMaxMapPixels(n: number): void; centerOn(x: number, z: number, zoom: number): void; detail(): { level: number; missing: number; drawn: number; failed: number } } };
      await page.evaluate(() => (window as unknown as D).strataViewer.setMaxMapPixels(6400 * 4));
      await page.selectOption('#layer', 'biome');
      await page.waitForSelector('#legend[data-layer="biome"]', { state: 'attached' });
      await page.waitForFunction(() => document.body.dataset.state === 'ready');
      const before = (await page.evaluate(() => (window as unknown as H).strataViewer.mapHelpers())).calls;
      await page.evaluate(([x, z]) => (window as unknown as D).strataViewer.centerOn(x!, z!, 1), [height.minChunkX * 16 + 640, height.minChunkZ * 16 + 640]);
      await page.waitForFunction(() => (window as unknown as D).strataViewer.detail().missing === 0, undefined, { timeout: 30_000 });
      const d = await page.evaluate(() => (window as unknown as D).strataViewer.detail());
      expect(d).toMatchObject({ level: 16, failed: 0 });
      expect(d.drawn).toBeGreaterThanOrEqual(4);
      const byHelper = (await page.evaluate(() => (window as unknown as H).strataViewer.mapHelpers())).calls - before;
      expect(byHelper).toBeGreaterThan(0);
      console.log(`a world in OPFS (6,400 chunks): its map helper drew ${calls} of the height map's bands and ${byHelper} of ${d.drawn} detail tiles`);
    } finally {
      await page.evaluate(() => (window as unknown as { strataViewer: { setMaxMapPixels(n: number): void } }).strataViewer.setMaxMapPixels(4 << 20));
      await page.uncheck('#import-opfs');
      await page.evaluate(() => (window as unknown as H).strataViewer.setHelpers(null));
      // This test's copy only (the earlier tests' copies are used by later ones).
      await page.click('#imported-list li[data-location="viewer/opfs-helped"] .delete-imported');
      await page.waitForFunction(() => document.querySelector('#imported-list li[data-location="viewer/opfs-helped"]') === null);
    }
  });

  test('two tabs on the same world in browser storage share it; closing the tab that runs it leaves the other working', async () => {
    const row = worlds().find((r) => r.name === 'amulet_1_16')!;
    const want = { state: 'ready', entries: String(row.entries), crc32c: String(row.crc32c), chunks: '436' };
    await page.check('#import-opfs');
    expect((await openWith('#open-folder', path.join(worldsDir, 'amulet_1_16'))).state).toBe('ready');
    await page.uncheck('#import-opfs');
    // The main tab moves on to another world (it no longer holds this one).
    expect((await openWith('#open-mcworld', path.join(zips, 'mcpe_0_11_mcedit_testdb.mcworld'))).state).toBe('ready');
    const tab = async () => {
      const p = await context.newPage();
      p.on('pageerror', (e) => console.error('page error:', e));
      await p.goto(`${origin}/`);
      await p.waitForFunction(() => document.body.dataset.state === 'ready');
      await p.click('#imported-list li[data-location="viewer/amulet_1_16"] .open-imported');
      await p.waitForFunction(() => ['ready', 'error'].includes(document.body.dataset.state ?? '') && document.getElementById('map')!.dataset.chunks !== undefined);
      return p;
    };
    const shown = (p: Page) =>
      p.evaluate(() => {
        const s = document.getElementById('world-summary')!.dataset;
        return { state: document.body.dataset.state, entries: s.entries, crc32c: s.crc32c, chunks: document.getElementById('map')!.dataset.chunks };
      });
    const first = await tab();
    const second = await tab(); // shares the world through the first tab's engine
    try {
    expect(await shown(first)).toEqual(want);
    expect(await shown(second)).toEqual(want);
    await first.close();
    // The second tab now runs the world itself: a chunk's records still open.
    const w = await openWorld(path.join(worldsDir, 'amulet_1_16'));
    const [x, z] = (await w.chunks(0))[0]!;
    const names = (await w.chunkRecords(0, x, z)).map((r) => r.name);
    await w.close();
    const [cx, cy] = await second.evaluate(
      ([bx, bz]) => (window as unknown as { strataViewer: { pointOf(x: number, z: number): [number, number] } }).strataViewer.pointOf(bx!, bz!),
      [x * 16 + 8, z * 16 + 8],
    );
    const k = (await second.locator('#map').boundingBox())!.width / (await second.evaluate(() => (document.getElementById('map') as HTMLCanvasElement).width));
    await second.locator('#map').click({ position: { x: cx * k, y: cy * k } });
    await second.waitForSelector(`#inspector[data-chunk="0,${x},${z}"]`, { timeout: 20_000 });
    expect(await second.$$eval('#records li', (lis) => lis.map((li) => (li as HTMLElement).dataset.name ?? ''))).toEqual(names);
    } finally {
      await first.close().catch(() => {});
      await second.close().catch(() => {});
      // Leave browser storage as the other tests expect it.
      await page.evaluate(() => (document.body.dataset.state = 'idle'));
      await page.click('#imported-list li[data-location="viewer/amulet_1_16"] .delete-imported');
      await page.waitForFunction(() => document.querySelector('#imported-list li[data-location="viewer/amulet_1_16"]') === null);
    }
  });

  test('a .mcworld dropped on the page opens', async () => {
    const row = worlds().find((r) => r.name === 'rbedrock_example3')!;
    const bytes = fs.readFileSync(path.join(worldsDir, 'rbedrock_example3.mcworld')).toString('base64');
    await page.evaluate(() => (document.body.dataset.state = 'idle'));
    // A real drag cannot be scripted; the page gets the same events a drop of a file makes.
    await page.evaluate((b64) => {
      const data = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
      const dt = new DataTransfer();
      dt.items.add(new File([data], 'rbedrock_example3.mcworld'));
      for (const type of ['dragover', 'drop']) {
        document.body.dispatchEvent(new DragEvent(type, { dataTransfer: dt, bubbles: true, cancelable: true }));
      }
    }, bytes);
    await page.waitForFunction(() => ['ready', 'error'].includes(document.body.dataset.state ?? ''));
    const shown = await page.evaluate(() => {
      const d = document.getElementById('world-summary')!.dataset;
      return [document.body.dataset.state, d.entries, d.keyBytes, d.valueBytes, d.crc32c, document.getElementById('map')!.dataset.chunks];
    });
    const chunks = execFileSync(releaseCli, ['world', 'chunks', path.join(worldsDir, 'rbedrock_example3.mcworld')], { encoding: 'utf8' }).trim();
    expect(shown).toEqual(['ready', ...[row.entries, row.keyBytes, row.valueBytes, row.crc32c].map(String), chunks]);
  });

  test('the benchmark page: a small run with a row for every workload and engine, copied as Markdown and JSON; a world loaded on the page and scanned with and without decode workers', async () => {
    const bench = await context.newPage();
    bench.on('pageerror', (e) => console.error('bench page error:', e));
    await bench.goto(`${origin}/bench.html?entries=400&valueSize=100&batchSize=50&auto=1`);
    await bench.waitForFunction(() => ['done', 'error'].includes(document.body.dataset.state ?? ''), undefined, { timeout: 120_000 });
    await bench.screenshot({ path: path.join(artifacts, 'bench.png'), fullPage: true });
    expect(await bench.getAttribute('body', 'data-state'), (await bench.textContent('#message')) ?? '').toBe('done');
    const rows = await bench.$$eval('#bench-results tbody tr', (trs) =>
      trs.map((tr) => [(tr as HTMLElement).dataset.workload, (tr as HTMLElement).dataset.engine, tr.children[2]!.textContent]),
    );
    const want = [];
    for (const engine of ['strata-opfs', 'indexeddb']) {
      for (const w of ['fillseq', 'readseq', 'fillrandom', 'readrandom', 'batch']) want.push([w, engine, '400']);
    }
    expect(rows).toEqual(want);
    expect(await bench.isVisible('#bench-download')).toBe(true);
    // Workloads and engines are checkboxes showing the URL's configuration.
    const boxes = (set: string) => bench.$$eval(`#${set} input`, (ins) => ins.map((i) => [(i as HTMLInputElement).value, (i as HTMLInputElement).checked]));
    expect(await boxes('cfg-workloads')).toEqual([['fillseq', true], ['readseq', true], ['fillrandom', true], ['readrandom', true], ['batch', true], ['scan', false], ['scan-workers', false]]);
    expect(await boxes('cfg-engines')).toEqual([['strata-opfs', true], ['indexeddb', true], ['strata-opfs-relaxed', false], ['strata-opfs-hop', false], ['strata-opfs-hop-64', false], ['strata-idb', false]]);
    // The results as Markdown and as JSON (what the copy buttons put on the clipboard).
    await bench.click('#bench-copy-md');
    await bench.waitForSelector('#bench-copied[data-copied="Markdown"]', { state: 'attached' });
    const md = await bench.evaluate(() => (window as unknown as { strataBenchCopied: string }).strataBenchCopied);
    expect(md.split('\n').filter((l) => /^\| (fill|read|batch)/.test(l)).length).toBe(10);
    expect(md).toContain(`${await bench.evaluate(() => navigator.hardwareConcurrency)} hardware threads`);
    await bench.click('#bench-copy-json');
    await bench.waitForSelector('#bench-copied[data-copied="JSON"]', { state: 'attached' });
    const json = JSON.parse(await bench.evaluate(() => (window as unknown as { strataBenchCopied: string }).strataBenchCopied)) as { rows: unknown[]; env: { hardwareConcurrency: number } };
    expect(json.rows.length).toBe(10);
    // A world loaded on the page itself (a .mcworld, copied into browser storage) and scanned
    // with and without decode workers.
    const row = worlds().find((r) => r.name === 'amulet_1_18_vanilla')!;
    await bench.setInputFiles('#bench-mcworld', path.join(zips, 'amulet_1_18_vanilla.mcworld'));
    await bench.waitForFunction(() => ['idle', 'error'].includes(document.body.dataset.state ?? '') && (document.getElementById('cfg-world') as HTMLSelectElement).value !== '', undefined, { timeout: 120_000 });
    expect(await bench.$eval('#cfg-world', (s) => (s as HTMLSelectElement).value)).toBe('viewer/amulet_1_18_vanilla');
    expect(new URL(bench.url()).searchParams.get('world')).toBe('viewer/amulet_1_18_vanilla');
    for (const box of await bench.$$('#cfg-workloads input')) {
      const v = await box.getAttribute('value');
      if (v === 'scan' || v === 'scan-workers') await box.check();
      else await box.uncheck();
    }
    for (const box of await bench.$$('#cfg-engines input')) {
      if ((await box.getAttribute('value')) === 'strata-opfs') await box.check();
      else await box.uncheck();
    }
    await bench.click('#run-bench');
    await bench.waitForFunction(() => ['done', 'error'].includes(document.body.dataset.state ?? ''), undefined, { timeout: 120_000 });
    expect(await bench.getAttribute('body', 'data-state'), (await bench.textContent('#message')) ?? '').toBe('done');
    const scans = await bench.$$eval('#bench-results tbody tr', (trs) => trs.map((tr) => [(tr as HTMLElement).dataset.workload, tr.children[2]!.textContent, tr.children[6]!.textContent!.endsWith('×')]));
    expect(scans).toEqual([
      ['scan', row.entries.toLocaleString('en'), false],
      ['scan-workers', row.entries.toLocaleString('en'), true],
    ]);
    await bench.screenshot({ path: path.join(artifacts, 'bench-world.png'), fullPage: true });
    await bench.close();
    // Leave browser storage as the other tests expect it: the viewer deletes the copy.
    await page.reload();
    await page.waitForFunction(() => document.body.dataset.state === 'ready');
    await page.click('#imported-list li[data-location="viewer/amulet_1_18_vanilla"] .delete-imported');
    await page.waitForFunction(() => document.querySelector('#imported-list li[data-location="viewer/amulet_1_18_vanilla"]') === null);
  });

  test('hostile input shows a clear message and the page stays usable', async () => {
    const dir = tempDir('viewer-hostile');
    const bomb = path.join(dir, 'bomb.mcworld');
    execFileSync('python3', [
      '-c',
      `import sys, zipfile
with zipfile.ZipFile(sys.argv[1], 'w', zipfile.ZIP_DEFLATED) as z:
    z.writestr('level.dat', b'\\0' * 16)
    z.writestr('db/CURRENT', b'MANIFEST-000001\\n')
    z.writestr('db/000005.ldb', b'\\0' * (64 << 20))`,
      bomb,
    ]);
    const whole = fs.readFileSync(path.join(zips, 'amulet_1_16.mcworld'));
    const truncated = path.join(dir, 'truncated.mcworld');
    fs.writeFileSync(truncated, whole.subarray(0, whole.length >> 1));
    const notWorld = path.join(dir, 'not-a-world');
    fs.mkdirSync(path.join(notWorld, 'notes'), { recursive: true });
    fs.writeFileSync(path.join(notWorld, 'levelname.txt'), 'My world');
    fs.writeFileSync(path.join(notWorld, 'notes', 'readme.txt'), 'no level.dat here');
    const damaged = path.join(dir, 'damaged');
    fs.cpSync(path.join(worldsDir, 'amulet_1_16'), damaged, { recursive: true });
    const ldb = path.join(damaged, 'db', fs.readdirSync(path.join(damaged, 'db')).find((f) => f.endsWith('.ldb'))!);
    fs.chmodSync(ldb, 0o644);
    const table = fs.readFileSync(ldb);
    const mid = table.length >> 1;
    for (let i = 0; i < 4096; i++) table[mid + i] = (i * 37 + 11) & 0xff;
    fs.writeFileSync(ldb, table);

    const cases = [
      ['zip-bomb', '#open-mcworld', bomb, '“bomb.mcworld” was refused: it looks like a zip bomb (mcworld: db/000005.ldb inflates more than 200× its compressed size).'],
      ['truncated', '#open-mcworld', truncated, '“truncated.mcworld” is not a readable .mcworld: the zip is truncated or damaged ('],
      ['no-level-dat', '#open-folder', notWorld, 'The folder “not-a-world” is not a Bedrock world: it holds no level.dat and no db/ folder.'],
      ["damaged-table", '#open-folder', damaged, "The world's database is damaged in 000005.ldb at offset "],
    ] as const;
    for (const [label, selector, file, text] of cases) {
      const shown = await openWith(selector, file);
      expect({ label, state: shown.state, entries: shown.entries, kind: await page.getAttribute('#message', 'data-kind') }).toEqual({
        label,
        state: 'error',
        entries: undefined,
        kind: 'error',
      });
      expect(shown.message.startsWith(text), `${label}: ${shown.message}`).toBe(true);
      await page.screenshot({ path: path.join(artifacts, `error-${label}.png`), fullPage: true });
    }
    // Still usable: a good world opens after all of them.
    const again = await openWith('#open-mcworld', path.join(zips, 'mcpe_0_11_mcedit_testdb.mcworld'));
    expect([again.state, again.entries, again.chunks]).toEqual(['ready', '561', '256']);
  });
  test('a long open is cancelled (the worker is terminated) and the next world opens exactly', async () => {
    await page.evaluate(() => (document.body.dataset.state = 'idle'));
    await page.setInputFiles('#open-folder', path.join(worldsDir, 'amulet_1_18_vanilla'));
    await page.waitForSelector('#cancel-work', { state: 'visible' });
    expect(await page.getAttribute('body', 'data-state')).toBe('loading');
    await page.click('#cancel-work');
    await page.waitForFunction(() => document.body.dataset.state === 'ready');
    expect(await page.textContent('#message')).toBe('Cancelled opening the folder “amulet_1_18_vanilla”. The engine was restarted; open a world to continue.');
    expect(await page.isHidden('#cancel-work')).toBe(true);
    expect(await page.getAttribute('#world-summary', 'data-entries')).toBe(null);
    await page.screenshot({ path: path.join(artifacts, 'cancelled.png'), fullPage: true });
    const row = worlds().find((r) => r.name === 'amulet_1_16')!;
    expect([row.entries, row.keyBytes, row.valueBytes, row.crc32c].map(Number)).toEqual([4174, 39805, 7276412, 2053941786]);
    const shown = await openWith('#open-folder', path.join(worldsDir, 'amulet_1_16'));
    expect([shown.state, shown.entries, shown.keyBytes, shown.valueBytes, shown.crc32c]).toEqual(['ready', '4174', '39805', '7276412', '2053941786']);
  });

  test('a .mcworld copied into browser storage is listed after a reload, reopens after a cancel, and is deleted', async () => {
    const row = worlds().find((r) => r.name === 'rbedrock_example3')!;
    expect([row.entries, row.keyBytes, row.valueBytes, row.crc32c].map(Number)).toEqual([376, 3820, 647082, 2277159318]);
    const want = ['ready', '376', '3820', '647082', '2277159318'];
    const figures = (s: Shown) => [s.state, s.entries, s.keyBytes, s.valueBytes, s.crc32c];
    const readFigures = () =>
      page.evaluate(() => {
        const d = document.getElementById('world-summary')!.dataset;
        return [document.body.dataset.state, d.entries, d.keyBytes, d.valueBytes, d.crc32c];
      });
    const listed = () => page.$$eval('#imported-list li', (lis) => lis.map((li) => (li as HTMLElement).dataset.location));
    // The copies the editor tests made to edit worlds are listed, this world's among them
    // (rbedrock_example3, edited): a new copy of the same world gets a location of its own.
    const edited = await listed();
    expect(edited).toContain('viewer/rbedrock_example3');
    await page.check('#import-opfs');
    const shown = await openWith('#open-mcworld', path.join(worldsDir, 'rbedrock_example3.mcworld'));
    await page.uncheck('#import-opfs');
    expect(figures(shown), shown.message).toEqual(want);
    const location = 'viewer/rbedrock_example3-2';
    expect((await listed()).sort()).toEqual([...edited, location].sort());
    // The others go; this copy stays.
    for (const other of edited) {
      await page.click(`#imported-list li[data-location="${other}"] .delete-imported`);
      await page.waitForFunction((l) => !document.querySelector(`#imported-list li[data-location="${l}"]`), other);
    }
    expect(await listed()).toEqual([location]);
    await page.reload();
    await page.waitForFunction(() => document.body.dataset.state === 'ready');
    expect(await listed()).toEqual([location]);
    await page.evaluate(() => (document.body.dataset.state = 'idle'));
    await page.click('#imported-list li .open-imported');
    await page.waitForFunction(() => ['ready', 'error'].includes(document.body.dataset.state ?? ''));
    expect(await readFigures()).toEqual(want);
    // Cancel while the OPFS world is open in the worker (its sync handles held), then reopen.
    const cancelled = await page.evaluate(
      () =>
        new Promise<string>((resolve) => {
          const msg = document.getElementById('message')!;
          const obs = new MutationObserver(() => {
            if (!msg.textContent?.startsWith('Reading')) return;
            obs.disconnect();
            (document.getElementById('cancel-work') as HTMLButtonElement).click();
            resolve(msg.textContent ?? '');
          });
          obs.observe(msg, { childList: true, characterData: true, subtree: true });
          (document.querySelector('#imported-list li .open-imported') as HTMLButtonElement).click();
        }),
    );
    expect(cancelled).toBe('Cancelled opening “rbedrock_example3” (browser storage). The engine was restarted; open a world to continue.');
    await page.evaluate(() => (document.body.dataset.state = 'idle'));
    await page.click('#imported-list li .open-imported');
    await page.waitForFunction(() => ['ready', 'error'].includes(document.body.dataset.state ?? ''));
    expect(await readFigures(), (await page.textContent('#message')) ?? '').toEqual(want);
    await page.screenshot({ path: path.join(artifacts, 'rbedrock_example3-mcworld-opfs.png'), fullPage: true });
    // Timing-dependent, so only reported: how often the reopen met the dead worker's lock.
    console.log('OPFS LEVEL_LOCKED retries after the cancel:', await page.evaluate(() => (window as unknown as { strataViewer: { lockRetries(): number } }).strataViewer.lockRetries()));
    // A zip bomb is refused by the OPFS import's unzip too, with the same message, nothing kept.
    const bomb = path.join(tempDir('viewer-opfs-bomb'), 'bomb.mcworld');
    execFileSync('python3', ['-c', `import sys, zipfile
with zipfile.ZipFile(sys.argv[1], 'w', zipfile.ZIP_DEFLATED) as z:
    z.writestr('level.dat', b'\\0' * 16)
    z.writestr('db/CURRENT', b'MANIFEST-000001\\n')
    z.writestr('db/000005.ldb', b'\\0' * (64 << 20))`, bomb]);
    await page.check('#import-opfs');
    const refused = await openWith('#open-mcworld', bomb);
    await page.uncheck('#import-opfs');
    expect([refused.state, refused.message]).toEqual(['error', '“bomb.mcworld” was refused: it looks like a zip bomb (mcworld: db/000005.ldb inflates more than 200× its compressed size).']);
    expect(await listed()).toEqual([location]);
    await page.click('#imported-list li .delete-imported');
    await page.waitForFunction(() => document.querySelectorAll('#imported-list li').length === 0);
  });
});
