// The world viewer in WebKit (Debian's WebKitGTK: WebKitWebDriver + MiniBrowser under a
// virtual X display, driven by npm selenium-webdriver; never a downloaded browser):
// `.mcworld`s of three eras of worlds open with exactly the MANIFEST's figures (entries, key
// and value bytes, CRC-32C) and the CLI's chunk counts (the viewer opens a .mcworld in the
// engine's memory: no OPFS needed). Also records what WebKit's OPFS does in an automation
// session: the first OPFS operation fails with UnknownError (so the package stores databases
// in IndexedDB there: browser-webkit.test.ts). Skipped, loudly, where
// WebKitWebDriver or xvfb-run is missing (scripts/setup.sh installs both).

import { execFileSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { By, type WebDriver } from 'selenium-webdriver';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';

import { cliPath, OPEN_BAR_HITS, repoRoot, tempDir, worlds, worldsDir } from './helpers.js';
import { available, startWebKit, stopWebKit } from './webkit-driver.js';
// @ts-expect-error: plain JS module without type declarations.
import { serveDir } from '../../scripts/serve-www.mjs';

if (!available) console.warn('!!! SKIPPED: WebKit (WebKitWebDriver, MiniBrowser, xvfb-run) not installed: the viewer in WebKit');
const releaseCli = fs.existsSync(path.join(repoRoot, 'target/release/strata')) ? path.join(repoRoot, 'target/release/strata') : cliPath;

const WORLDS = ['amulet_1_16', 'amulet_1_18_vanilla', 'mcpe_0_11_mcedit_testdb'];

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

describe.skipIf(!available)('world viewer in WebKit', () => {
  let driverProc: ChildProcess;
  let d: WebDriver;
  let server: { close(): void };
  let origin: string;
  let zips: string;

  beforeAll(async () => {
    execFileSync('bash', [path.join(repoRoot, 'scripts/build-www.sh')], { stdio: 'inherit' });
    zips = tempDir('webkit-zips');
    for (const w of WORLDS) zipDir(path.join(worldsDir, w), path.join(zips, `${w}.mcworld`));
    const s = await serveDir(path.join(repoRoot, 'www/dist'), 0, {});
    server = s.server;
    origin = s.origin;
    ({ d, driverProc } = await startWebKit(['+FileSystem', '+StorageAPI']));
    await d.get(`${origin}/`);
    await d.wait(async () => (await d.executeScript('return document.body.dataset.state')) === 'ready', 60_000);
  }, 300_000);

  afterAll(async () => {
    await stopWebKit(d, driverProc);
    server?.close();
  });

  /** Waits for the page to settle (ready or error); a wait that runs out says where the page stood. */
  async function settled(what: string): Promise<void> {
    try {
      await d.wait(async () => ['ready', 'error'].includes(String(await d.executeScript('return document.body.dataset.state'))), 120_000);
    } catch (e) {
      const where = await d.executeScript("return document.body.dataset.state + ': ' + document.getElementById('message').textContent").catch(() => '?');
      throw new Error(`${what}: the page did not finish in 120 s (${String(where)}): ${String(e)}`);
    }
  }

  async function openMcworld(file: string): Promise<Record<string, string | null>> {
    await d.executeScript("document.body.dataset.state = 'idle'");
    await d.findElement(By.id('open-mcworld')).sendKeys(file);
    await settled(file);
    return (await d.executeScript(`const s = document.getElementById('world-summary').dataset;
      return { state: document.body.dataset.state, message: document.getElementById('message').textContent, entries: s.entries ?? null,
        keyBytes: s.keyBytes ?? null, valueBytes: s.valueBytes ?? null, crc32c: s.crc32c ?? null, chunks: document.getElementById('map').dataset.chunks ?? null };`)) as Record<string, string | null>;
  }

  for (const name of WORLDS) {
    test(`${name} (.mcworld)`, async () => {
      const row = worlds().find((r) => r.name === name)!;
      const chunks = execFileSync(releaseCli, ['world', 'chunks', path.join(worldsDir, name)], { encoding: 'utf8' }).trim();
      const shown = await openMcworld(path.join(zips, `${name}.mcworld`));
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
    });
  }

  test('a .mcworld copied into browser storage (IndexedDB in WebKit) is listed after a reload, opens, and is deleted', async () => {
    const name = 'amulet_1_16';
    const row = worlds().find((r) => r.name === name)!;
    const chunks = execFileSync(releaseCli, ['world', 'chunks', path.join(worldsDir, name)], { encoding: 'utf8' }).trim();
    await d.wait(async () => (await d.executeScript("return document.getElementById('storage-kind').dataset.kind ?? null")) !== null, 30_000);
    expect(await d.executeScript("const k = document.getElementById('storage-kind'); return [k.dataset.kind, k.textContent]")).toEqual(['idb', 'IndexedDB']);
    // Each control of the open bar takes its own clicks: the element at its centre is itself (a
    // 0x0 file input once had a box over the checkbox there, so a real click opened the picker).
    const hits = (await d.executeScript(`return ${OPEN_BAR_HITS}`)) as [string, string | null][];
    expect(hits.map(([id]) => id)).toEqual(expect.arrayContaining(['open-folder-button', 'open-mcworld-button', 'import-opfs']));
    expect(hits.filter(([id, at]) => id !== at)).toEqual([]);
    const copy = d.findElement(By.id('import-opfs'));
    await copy.click();
    expect(await copy.isSelected()).toBe(true);
    const shown = await openMcworld(path.join(zips, `${name}.mcworld`));
    await copy.click();
    expect(await copy.isSelected()).toBe(false);
    expect({ state: shown.state, crc32c: shown.crc32c, chunks: shown.chunks }).toEqual({ state: 'ready', crc32c: String(row.crc32c), chunks });
    const listed = async () =>
      (await d.executeScript(`return [...document.querySelectorAll('#imported-list li')].map((li) => li.dataset.location)`)) as string[];
    expect(await listed()).toEqual([`viewer/${name}`]);
    await d.navigate().refresh();
    await d.wait(async () => (await d.executeScript('return document.body.dataset.state')) === 'ready', 60_000);
    expect(await listed()).toEqual([`viewer/${name}`]);
    // WebDriver clicks where the button was when found: let the page's late text settle first.
    await d.wait(async () => (await d.executeScript("return document.getElementById('storage-state').dataset.persisted ?? null")) !== null, 30_000);
    await d.executeScript("document.body.dataset.state = 'idle'");
    await d.findElement(By.css('#imported-list li .open-imported')).click();
    await settled(`reopening viewer/${name}`);
    const reopened = (await d.executeScript(`return { state: document.body.dataset.state, message: document.getElementById('message').textContent,
      entries: document.getElementById('world-summary').dataset.entries, crc32c: document.getElementById('world-summary').dataset.crc32c,
      chunks: document.getElementById('map').dataset.chunks }`)) as Record<string, string>;
    expect(reopened).toEqual({ state: 'ready', message: reopened.message, entries: String(row.entries), crc32c: String(row.crc32c), chunks });
    const artifacts = path.join(repoRoot, 'target/test-artifacts/webkit');
    fs.mkdirSync(artifacts, { recursive: true });
    fs.writeFileSync(path.join(artifacts, 'amulet_1_16-idb.png'), await d.takeScreenshot(), 'base64');
    await d.findElement(By.css('#imported-list li .delete-imported')).click();
    await d.wait(async () => (await listed()).length === 0, 30_000);
  });

  test("OPFS in WebKit's automation session fails with UnknownError (why the package's default storage here is IndexedDB)", async () => {
    const probe = (await d.executeAsyncScript(`const done = arguments[arguments.length - 1];
      (async () => { try { const r = await navigator.storage.getDirectory(); await r.getFileHandle('probe', { create: true }); done('works'); }
        catch (e) { done(e.name); } })();`)) as string;
    console.log(`WebKit OPFS in automation: ${probe}`);
    expect(probe).toBe('UnknownError'); // WebKitGTK 2.50 (Debian 12); browser-webkit.test.ts runs the package over IndexedDB
  });
});
