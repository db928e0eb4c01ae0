// The world viewer in Firefox (Debian's firefox-esr, driven by puppeteer-core over WebDriver
// BiDi; never a downloaded browser): `.mcworld`s of three eras of worlds open with exactly the
// MANIFEST's figures (entries, key and value bytes, CRC-32C) and the CLI's chunk counts, the map
// draws every chunk, and the demo world and hostile input behave as in Chromium. Skipped, loudly,
// where Firefox is not installed (scripts/setup.sh installs it).

import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import puppeteer, { type Browser, type Page } from 'puppeteer-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';

import { cliPath, repoRoot, tempDir, worlds, worldsDir } from './helpers.js';
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

describe.skipIf(!haveFirefox)('world viewer in Firefox', () => {
  beforeAll(async () => {
    execFileSync('bash', [path.join(repoRoot, 'scripts/build-www.sh')], { stdio: 'inherit' });
    fs.mkdirSync(artifacts, { recursive: true });
    zips = tempDir('firefox-zips');
    for (const w of WORLDS) zipDir(path.join(worldsDir, w), path.join(zips, `${w}.mcworld`));
    const s = await serveDir(path.join(repoRoot, 'www/dist'), 0, {});
    server = s.server;
    browser = await puppeteer.launch({
      browser: 'firefox',
      executablePath: FIREFOX,
      headless: true,
      userDataDir: tempDir('firefox-profile'),
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
    expect(shown.message.length).toBeGreaterThan(10);
    const again = await openMcworld(path.join(zips, 'amulet_1_16.mcworld'));
    expect(again.state).toBe('ready');
  });
});
