// The world viewer in WebKit (Debian's WebKitGTK: WebKitWebDriver + MiniBrowser under a
// virtual X display, driven by npm selenium-webdriver; never a downloaded browser):
// `.mcworld`s of three eras of worlds open with exactly the MANIFEST's figures (entries, key
// and value bytes, CRC-32C) and the CLI's chunk counts (the viewer opens a .mcworld in the
// engine's memory: no OPFS needed). Also records what WebKit's OPFS does in an automation
// session: the first OPFS operation fails with UnknownError. Skipped, loudly, where
// WebKitWebDriver or xvfb-run is missing (scripts/setup.sh installs both).

import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { Builder, By, type WebDriver } from 'selenium-webdriver';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';

import { cliPath, repoRoot, tempDir, worlds, worldsDir } from './helpers.js';
// @ts-expect-error: plain JS module without type declarations.
import { serveDir } from '../../scripts/serve-www.mjs';

const DRIVER = '/usr/bin/WebKitWebDriver';
const MINIBROWSER = ['/usr/lib/x86_64-linux-gnu/webkit2gtk-4.1/MiniBrowser', '/usr/lib/aarch64-linux-gnu/webkit2gtk-4.1/MiniBrowser'].find((p) => fs.existsSync(p));
const haveXvfb = (() => {
  try {
    execFileSync('sh', ['-c', 'command -v xvfb-run'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();
const available = fs.existsSync(DRIVER) && MINIBROWSER !== undefined && haveXvfb;
if (!available) console.warn('!!! SKIPPED: WebKit (WebKitWebDriver, MiniBrowser, xvfb-run) not installed: the viewer in WebKit');
const releaseCli = fs.existsSync(path.join(repoRoot, 'target/release/strata')) ? path.join(repoRoot, 'target/release/strata') : cliPath;
const WORLDS = ['amulet_1_16', 'amulet_1_18_vanilla', 'mcpe_0_11_mcedit_testdb'];

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = net.createServer();
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
  });
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
    const port = await freePort();
    driverProc = spawn('xvfb-run', ['-a', DRIVER, `--port=${port}`], { stdio: 'ignore', detached: true });
    const caps = {
      browserName: 'MiniBrowser',
      'webkitgtk:browserOptions': { binary: MINIBROWSER, args: ['--automation', '--features=+FileSystem,+StorageAPI'] },
    };
    let lastError: unknown;
    for (let attempt = 0; attempt < 40 && !d; attempt++) {
      try {
        d = await new Builder().usingServer(`http://127.0.0.1:${port}`).withCapabilities(caps).build();
      } catch (e) {
        lastError = e;
        await new Promise((r) => setTimeout(r, 250));
      }
    }
    if (!d) throw lastError;
    await d.get(`${origin}/`);
    await d.wait(async () => (await d.executeScript('return document.body.dataset.state')) === 'ready', 60_000);
  }, 300_000);

  afterAll(async () => {
    await d?.quit().catch(() => {});
    if (driverProc?.pid) {
      try {
        process.kill(-driverProc.pid, 'SIGTERM'); // xvfb-run, its X server and the driver
      } catch {
        // already gone
      }
    }
    server?.close();
  });

  async function openMcworld(file: string): Promise<Record<string, string | null>> {
    await d.executeScript("document.body.dataset.state = 'idle'");
    await d.findElement(By.id('open-mcworld')).sendKeys(file);
    await d.wait(async () => ['ready', 'error'].includes(String(await d.executeScript('return document.body.dataset.state'))), 120_000);
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

  test("OPFS in WebKit's automation session fails with UnknownError (recorded: the IndexedDB fallback is still to build)", async () => {
    const probe = (await d.executeAsyncScript(`const done = arguments[arguments.length - 1];
      (async () => { try { const r = await navigator.storage.getDirectory(); await r.getFileHandle('probe', { create: true }); done('works'); }
        catch (e) { done(e.name); } })();`)) as string;
    console.log(`WebKit OPFS in automation: ${probe}`);
    expect(probe).toBe('UnknownError'); // WebKitGTK 2.50 (Debian 12); the IndexedDB fallback is not built yet
  });
});
