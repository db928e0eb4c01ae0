// The world viewer in Firefox (Debian's firefox-esr, driven by puppeteer-core over WebDriver
// BiDi; never a downloaded browser): `.mcworld`s of three eras of worlds open with exactly the
// MANIFEST's figures (entries, key and value bytes, CRC-32C) and the CLI's chunk counts, the map
// draws every chunk, and the demo world and hostile input behave as in Chromium. The benchmark
// page (www/bench.html) as viewer.test.ts runs it in Chromium: a small run with a row for every
// workload × engine, the Markdown/JSON copy (Firefox lets the page write the clipboard on the
// click and read it back: the very text is checked), and a .mcworld loaded on the page scanned
// with and without decode workers (entries and key + value bytes of MANIFEST.tsv). Screenshots
// go to target/test-artifacts/firefox/. Skipped, loudly, where Firefox is not installed
// (scripts/setup.sh installs it).

import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import puppeteer, { type Browser, type Page } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';

import { cliPath, OPEN_BAR_HITS, repoRoot, tempDir, worlds, worldsDir } from './helpers.js';
// @ts-expect-error: plain JS module without type declarations.
import { serveDir } from '../../scripts/serve-www.mjs';

const FIREFOX = process.env.STRATA_FIREFOX ?? '/usr/bin/firefox-esr';
const haveFirefox = fs.existsSync(FIREFOX);
if (!haveFirefox) console.warn(`!!! SKIPPED: Firefox not found at ${FIREFOX} (set STRATA_FIREFOX)`);
const releaseCli = fs.existsSync(path.join(repoRoot, 'target/release/strata')) ? path.join(repoRoot, 'target/release/strata') : cliPath;
const artifacts = path.join(repoRoot, 'target/test-artifacts/firefox');
const WORLDS = ['amulet_1_16', 'amulet_1_18_vanilla', 'mcpe_0_11_mcedit_testdb'];

let browser: Browser;
let page: Page;
let server: { close(): void };
let origin: string;
let zips: string;

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

async function openMcworld(file: string): Promise<Record<string, string | undefined>> {
  await page.evaluate(() => (document.body.dataset.state = 'idle'));
  const input = (await page.$('#open-mcworld'))!;
  await (input as unknown as { uploadFile(p: string): Promise<void> }).uploadFile(file);
  await page.waitForFunction(() => ['ready', 'error'].includes(document.body.dataset.state ?? ''), { timeout: 120_000 });
  return page.evaluate(() => {
    const s = document.getElementById('world-summary')!.dataset;
    return {
      state: document.body.dataset.state,
      message: document.getElementById('message')!.textContent ?? '',
      entries: s.entries,
      keyBytes: s.keyBytes,
      valueBytes: s.valueBytes,
      crc32c: s.crc32c,
      chunks: document.getElementById('map')!.dataset.chunks,
    };
  });
}

/** Waits for the benchmark page's run to end ('done' or 'error'); past 120 s, fails with where
 * the run was: the page's state, message, the steps its engines' workers reported and the
 * package's last diagnostic steps there (decode pool, pass steps). */
async function benchEnded(bench: Page): Promise<void> {
  try {
    await bench.waitForFunction(() => ['done', 'error'].includes(document.body.dataset.state ?? ''), { timeout: 120_000 });
  } catch (e) {
    const where = await bench
      .evaluate(() => JSON.stringify({ state: document.body.dataset.state, message: document.getElementById('message')?.textContent, trace: (window as unknown as { strataBenchTrace?: unknown }).strataBenchTrace, engine: (window as unknown as { strataBenchEngineTrace?: unknown[] }).strataBenchEngineTrace?.slice(-40) }))
      .catch((err: unknown) => `(the page did not answer: ${String(err)})`);
    throw new Error(`the benchmark run did not end in 120 s: ${where}`, { cause: e });
  }
}

describe.skipIf(!haveFirefox)('world viewer in Firefox', () => {
  beforeAll(async () => {
    execFileSync('bash', [path.join(repoRoot, 'scripts/build-www.sh')], { stdio: 'inherit' });
    fs.mkdirSync(artifacts, { recursive: true });
    zips = tempDir('firefox-zips');
    for (const w of WORLDS) zipDir(path.join(worldsDir, w), path.join(zips, `${w}.mcworld`));
    const s = await serveDir(path.join(repoRoot, 'www/dist'), 0, {});
    server = s.server;
    origin = s.origin;
    browser = await puppeteer.launch({
      browser: 'firefox',
      executablePath: FIREFOX,
      headless: true,
      userDataDir: tempDir('firefox-profile'),
      // Reading the clipboard back (the benchmark page's copy) without the click's transient
      // activation, which a slow machine could outlast: Mozilla's own tests use this pref.
      extraPrefsFirefox: { 'dom.events.testing.asyncClipboard': true },
    });
    page = await browser.newPage();
    await page.setViewport({ width: 1200, height: 1400 });
    page.on('pageerror', (e) => console.error('firefox page error:', e));
    await page.goto(`${s.origin}/`);
    await page.waitForFunction(() => document.body.dataset.state === 'ready');
  }, 300_000);

  afterAll(async () => {
    await browser?.close();
    server?.close();
  });

  for (const name of WORLDS) {
    test(`${name} (.mcworld)`, async () => {
      const row = worlds().find((r) => r.name === name)!;
      const chunks = execFileSync(releaseCli, ['world', 'chunks', path.join(worldsDir, name)], { encoding: 'utf8' }).trim();
      const shown = await openMcworld(path.join(zips, `${name}.mcworld`));
      await page.screenshot({ path: path.join(artifacts, `${name}.png`) as `${string}.png`, fullPage: true });
      expect({ ...shown, message: undefined }).toEqual({
        state: 'ready',
        message: undefined,
        entries: String(row.entries),
        keyBytes: String(row.keyBytes),
        valueBytes: String(row.valueBytes),
        crc32c: String(row.crc32c),
        chunks,
      });
      expect(shown.message).toBe(`${chunks} of ${chunks} chunks drawn. Click a chunk to inspect its records.`);
      // The editor counts the same chunks (nothing selected yet).
      expect(await page.$eval('#selection-count', (e) => e.textContent)).toBe(`0 of ${chunks} chunks selected`);
    });
  }

  test('each control of the open bar takes its own clicks; the storage checkbox is clicked for real', async () => {
    const hits = (await page.evaluate(OPEN_BAR_HITS)) as [string, string | null][];
    expect(hits.map(([id]) => id)).toEqual(expect.arrayContaining(['open-folder-button', 'open-mcworld-button', 'import-opfs']));
    expect(hits.filter(([id, at]) => id !== at)).toEqual([]);
    const checked = () => page.$eval('#import-opfs', (e) => (e as HTMLInputElement).checked);
    await page.click('#import-opfs');
    expect(await checked()).toBe(true);
    await page.click('#import-opfs');
    expect(await checked()).toBe(false);
  });

  test('saving to a folder says why Firefox cannot and points to the download', async () => {
    await openMcworld(path.join(zips, 'amulet_1_16.mcworld'));
    expect(await page.$eval('#save-to-folder', (e) => (e as HTMLElement).dataset.supported)).toBe('false');
    await page.click('#save-to-folder');
    await page.waitForFunction(() => /cannot write to a folder/.test(document.getElementById('message')!.textContent ?? ''));
    expect(await page.$eval('#message', (e) => e.textContent)).toContain('Use “Export .mcworld”');
  });

  test('a file that is not a world gives a clear message, and the page stays usable', async () => {
    const bad = path.join(tempDir('firefox-bad'), 'not-a-world.mcworld');
    fs.writeFileSync(bad, 'this is not a zip archive');
    const shown = await openMcworld(bad);
    expect(shown.state).toBe('error');
    expect(shown.message!.length).toBeGreaterThan(10);
    const again = await openMcworld(path.join(zips, 'amulet_1_16.mcworld'));
    expect(again.state).toBe('ready');
  });
  test('the benchmark page: a small run with a row for every workload and engine, copied as Markdown and JSON; a world loaded on the page and scanned with and without decode workers', async () => {
    const t0 = Date.now();
    const bench = await browser.newPage();
    await bench.setViewport({ width: 1200, height: 1400 });
    bench.on('pageerror', (e) => console.error('firefox bench page error:', e));
    const state = () => bench.evaluate(() => document.body.dataset.state);
    const messageText = () => bench.$eval('#message', (e) => e.textContent ?? '');
    await bench.goto(`${origin}/bench.html?entries=400&valueSize=100&batchSize=50&auto=1`);
    await benchEnded(bench);
    await bench.screenshot({ path: path.join(artifacts, 'bench.png') as `${string}.png`, fullPage: true });
    expect(await state(), await messageText()).toBe('done');
    const rows = await bench.$$eval('#bench-results tbody tr', (trs) =>
      trs.map((tr) => [(tr as HTMLElement).dataset.workload, (tr as HTMLElement).dataset.engine, tr.children[2]!.textContent]),
    );
    const want = [];
    for (const engine of ['strata-opfs', 'indexeddb']) {
      for (const w of ['fillseq', 'readseq', 'fillrandom', 'readrandom', 'batch']) want.push([w, engine, '400']);
    }
    expect(rows).toEqual(want);
    expect(await bench.$eval('#bench-export', (e) => (e as HTMLElement).hidden)).toBe(false);
    // Workloads and engines are checkboxes showing the URL's configuration.
    const boxes = (set: string) => bench.$$eval(`#${set} input`, (ins) => ins.map((i) => [(i as HTMLInputElement).value, (i as HTMLInputElement).checked]));
    expect(await boxes('cfg-workloads')).toEqual([['fillseq', true], ['readseq', true], ['fillrandom', true], ['readrandom', true], ['batch', true], ['scan', false], ['scan-workers', false]]);
    expect(await boxes('cfg-engines')).toEqual([['strata-opfs', true], ['indexeddb', true], ['strata-opfs-relaxed', false], ['strata-opfs-hop', false], ['strata-opfs-hop-64', false], ['strata-idb', false]]);
    // The results as Markdown and as JSON: what the copy buttons put on the clipboard.
    const threads = await bench.evaluate(() => navigator.hardwareConcurrency);
    await bench.click('#bench-copy-md');
    await bench.waitForSelector('#bench-copied[data-copied="Markdown"]');
    const md = await bench.evaluate(() => (window as unknown as { strataBenchCopied: string }).strataBenchCopied);
    expect(md.split('\n').filter((l) => /^\| (fill|read|batch)/.test(l)).length).toBe(10);
    expect(md).toContain(`${threads} hardware threads`);
    // Firefox lets the page write the clipboard on the click, and read it back (same origin,
    // within the click's transient activation): what the page copied is on the clipboard.
    expect(await bench.$eval('#bench-copied', (e) => e.textContent)).toBe('Markdown copied.');
    expect(await bench.evaluate(() => navigator.clipboard.readText())).toBe(md);
    await bench.click('#bench-copy-json');
    await bench.waitForSelector('#bench-copied[data-copied="JSON"]');
    const jsonText = await bench.evaluate(() => (window as unknown as { strataBenchCopied: string }).strataBenchCopied);
    const json = JSON.parse(jsonText) as { rows: Array<{ workload: string; engine: string; ops: number }>; env: { hardwareConcurrency: number } };
    expect(json.rows.map((r) => [r.workload, r.engine, String(r.ops)])).toEqual(want);
    expect(json.env.hardwareConcurrency).toBe(threads);
    expect(await bench.$eval('#bench-copied', (e) => e.textContent)).toBe('JSON copied.');
    expect(await bench.evaluate(() => navigator.clipboard.readText())).toBe(jsonText);
    // A world loaded on the page itself (a .mcworld, copied into browser storage) and scanned
    // with and without decode workers.
    const row = worlds().find((r) => r.name === 'amulet_1_18_vanilla')!;
    const input = (await bench.$('#bench-mcworld'))!;
    await (input as unknown as { uploadFile(p: string): Promise<void> }).uploadFile(path.join(zips, 'amulet_1_18_vanilla.mcworld'));
    await bench.waitForFunction(() => ['idle', 'error'].includes(document.body.dataset.state ?? '') && (document.getElementById('cfg-world') as HTMLSelectElement).value !== '', {
      timeout: 120_000,
    });
    expect(await bench.$eval('#cfg-world', (s) => (s as HTMLSelectElement).value)).toBe('viewer/amulet_1_18_vanilla');
    expect(new URL(bench.url()).searchParams.get('world')).toBe('viewer/amulet_1_18_vanilla');
    // Only the two scans, on Strata over OPFS (clicked as a user would).
    for (const [set, on] of [
      ['cfg-workloads', ['scan', 'scan-workers']],
      ['cfg-engines', ['strata-opfs']],
    ] as const) {
      for (const box of await bench.$$(`#${set} input`)) {
        const [value, checked] = await box.evaluate((i) => [(i as HTMLInputElement).value, (i as HTMLInputElement).checked] as const);
        if (checked !== (on as readonly string[]).includes(value)) await box.click();
      }
    }
    expect(await boxes('cfg-workloads')).toEqual([['fillseq', false], ['readseq', false], ['fillrandom', false], ['readrandom', false], ['batch', false], ['scan', true], ['scan-workers', true]]);
    expect(await boxes('cfg-engines')).toEqual([['strata-opfs', true], ['indexeddb', false], ['strata-opfs-relaxed', false], ['strata-opfs-hop', false], ['strata-opfs-hop-64', false], ['strata-idb', false]]);
    // A real click, once the page is idle with the world chosen (the world list and message
    // change while it loads: a pointer click then could land on what moved under it). The run
    // must start at once (a lost click fails here, not as a hang) and end in 'done' or 'error'.
    await bench.waitForFunction(() => document.body.dataset.state === 'idle');
    await bench.click('#run-bench');
    await bench.waitForFunction(() => document.body.dataset.state !== 'idle', { timeout: 10_000 });
    await benchEnded(bench);
    expect(await state(), await messageText()).toBe('done');
    const scans = await bench.$$eval('#bench-results tbody tr', (trs) =>
      trs.map((tr) => [(tr as HTMLElement).dataset.workload, (tr as HTMLElement).dataset.engine, tr.children[2]!.textContent, tr.children[6]!.textContent!.endsWith('×')]),
    );
    expect(scans).toEqual([
      ['scan', 'strata-opfs', row.entries.toLocaleString('en'), false],
      ['scan-workers', 'strata-opfs', row.entries.toLocaleString('en'), true],
    ]);
    // The scans' exact figures as copied: entries, and key + value bytes (MANIFEST.tsv's).
    await bench.click('#bench-copy-json');
    await bench.waitForFunction(() => (window as unknown as { strataBenchCopied: string }).strataBenchCopied.includes('"scan-workers"'));
    const scanned = (JSON.parse(await bench.evaluate(() => (window as unknown as { strataBenchCopied: string }).strataBenchCopied)) as { rows: Array<{ workload: string; ops: number; bytes: number }> }).rows;
    expect(scanned.map((r) => [r.workload, r.ops, r.bytes])).toEqual([
      ['scan', row.entries, row.keyBytes + row.valueBytes],
      ['scan-workers', row.entries, row.keyBytes + row.valueBytes],
    ]);
    // The scan with decode workers used workers the page started (none started from the
    // benchmark's worker: that can block it in Firefox under WebDriver BiDi), began only once
    // its pool started (every worker's instance up), and each pass step was reported before it
    // ran.
    const steps = (await bench.evaluate(() => (window as unknown as { strataBenchEngineTrace: Array<[number, string, string]> }).strataBenchEngineTrace)).map((t) => t[2]);
    const workers = threads - 1;
    expect(steps[0]).toBe(`decode pool: starting ${workers} worker(s), ${workers} started by the page`);
    expect(steps[1]).toMatch(new RegExp(`^decode pool started in \\d+ ms: ${workers} of ${workers} ready$`));
    expect(steps[2]).toBe(`pass step 1: 0 run(s) in flight, lending ${3 * workers}`);
    expect(steps[3]).toBe('pass step 1: stepping');
    expect(steps.filter((s) => s.startsWith('decode pool'))).toHaveLength(2); // one pool for both scans
    expect(steps.filter((s) => s === 'pass step 1: stepping')).toHaveLength(1); // traced: the untimed scan only
    await bench.screenshot({ path: path.join(artifacts, 'bench-world.png') as `${string}.png`, fullPage: true });
    await bench.close();
    // Leave browser storage as the other tests expect it: the viewer deletes the copy.
    await page.reload();
    await page.waitForFunction(() => document.body.dataset.state === 'ready');
    await page.click('#imported-list li[data-location="viewer/amulet_1_18_vanilla"] .delete-imported');
    await page.waitForFunction(() => document.querySelector('#imported-list li[data-location="viewer/amulet_1_18_vanilla"]') === null);
    console.log(`Firefox, the benchmark page: ${rows.length} rows, then a world scan of ${row.entries} entries twice, in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  });
});
