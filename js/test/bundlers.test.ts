// The bundler examples (examples/vite, examples/webpack) as a user would run them: `npm ci` from
// their committed lockfiles (strata-level comes from `file:../../js` with `install-links=true`:
// packed with the same file list as `npm pack`, copied, not linked), their production build with
// the bundler's defaults, the built folder served and opened in Debian's Chromium. The page
// writes 1,000 entries to OPFS, reads them back, iterates, reopens; every figure is asserted
// exactly, and the build must have emitted the wasm byte-identical and the worker as its own
// chunk. Install and build output stays in the examples' git-ignored node_modules/ and dist/.

import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { chromium, type BrowserContext } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';

import { Crc, repoRoot, tempDir } from './helpers.js';
// @ts-expect-error: plain JS module without type declarations.
import { serveDir } from '../../scripts/serve-www.mjs';

const CHROMIUM = process.env.STRATA_CHROMIUM ?? '/usr/bin/chromium';
const pkgDir = path.join(repoRoot, 'js');
const N = 1000;
const keyOf = (i: number): string => `key-${String(i).padStart(4, '0')}`;
const valueOf = (i: number): string => `value-${i}-${'x'.repeat(i % 37)}`;

/** What the page must report, computed here independently (CRC-32C from the crc-32 package). */
function expected(): object {
  const crc = new Crc();
  let keyBytes = 0;
  let valueBytes = 0;
  const enc = new TextEncoder();
  for (let i = 0; i < N; i++) {
    const k = enc.encode(keyOf(i));
    const v = enc.encode(valueOf(i));
    crc.update(k);
    crc.update(v);
    keyBytes += k.length;
    valueBytes += v.length;
  }
  return {
    count: N,
    first: [keyOf(0), valueOf(0)],
    last: [keyOf(N - 1), valueOf(N - 1)],
    crc: crc.value,
    readBack: N,
    scan: { entries: N, keyBytes, valueBytes, crc32c: crc.value },
    reopened: N,
  };
}

function run(cmd: string, args: string[], cwd: string): number {
  const t0 = performance.now();
  try {
    execFileSync(cmd, args, { cwd, encoding: 'utf8', stdio: 'pipe', env: { ...process.env, npm_config_update_notifier: 'false' } });
  } catch (e) {
    const err = e as { stdout?: string; stderr?: string };
    throw new Error(`${cmd} ${args.join(' ')} failed in ${cwd}:\n${err.stdout ?? ''}\n${err.stderr ?? ''}`);
  }
  return Math.round(performance.now() - t0);
}

function filesUnder(dir: string): string[] {
  return (fs.readdirSync(dir, { recursive: true }) as string[])
    .filter((f) => fs.statSync(path.join(dir, f)).isFile())
    .map((f) => f.split(path.sep).join('/'))
    .sort();
}

const sha = (file: string): string => crypto.createHash('sha256').update(fs.readFileSync(file)).digest('hex');

let context: BrowserContext;
let packed: string[];

beforeAll(async () => {
  for (const f of ['dist/browser.js', 'dist/worker.js', 'wasm/strata_bg.wasm']) {
    if (!fs.existsSync(path.join(pkgDir, f))) throw new Error(`js/${f} is missing: build the package first (npm run build in js/)`);
  }
  const info = JSON.parse(execFileSync('npm', ['pack', '--dry-run', '--json'], { cwd: pkgDir, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }));
  packed = (info[0].files as Array<{ path: string }>).map((f) => f.path).sort();
  context = await chromium.launchPersistentContext(tempDir('bundlers-chromium'), {
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
});

afterAll(async () => {
  await context?.close();
});

const EXAMPLES = [
  { name: 'vite', build: ['run', 'build'], scripts: 4 },
  // webpack splits the engine's lazy import (the inline engine, reached from two places of the
  // page's module: opening inline and useDecodeWorkers) into two chunks.
  { name: 'webpack', build: ['run', 'build'], scripts: 5 },
];

describe('bundler examples', () => {
  for (const ex of EXAMPLES) {
    test(`${ex.name}: npm ci, production build, the page's exact results in Chromium over OPFS`, async () => {
      const dir = path.join(repoRoot, 'examples', ex.name);
      const lockBefore = fs.readFileSync(path.join(dir, 'package-lock.json'), 'utf8');

      const installMs = run('npm', ['ci', '--no-audit', '--no-fund'], dir);
      // The package is installed as shipped: a copy of exactly the packed files, not a link.
      const installed = path.join(dir, 'node_modules/strata-level');
      expect(fs.lstatSync(installed).isSymbolicLink()).toBe(false);
      expect(filesUnder(installed)).toEqual(packed);
      expect(fs.readFileSync(path.join(dir, 'package-lock.json'), 'utf8')).toBe(lockBefore);

      fs.rmSync(path.join(dir, 'dist'), { recursive: true, force: true });
      const buildMs = run('npm', ex.build, dir);
      const distDir = path.join(dir, 'dist');
      const out = filesUnder(distDir);

      // The wasm is emitted once, as an asset, byte-identical to the package's.
      const wasm = out.filter((f) => f.endsWith('.wasm'));
      expect(wasm).toHaveLength(1);
      expect(sha(path.join(distDir, wasm[0]!))).toBe(sha(path.join(pkgDir, 'wasm/strata_bg.wasm')));
      // The scripts: the page's (which starts the worker and the decode workers), the worker's,
      // the engine as a lazy chunk for callers that are themselves dedicated workers (engine
      // placement 'inline'), and the decode worker (its own wasm instance), emitted once
      // though both the page and the engine's worker may start it. Bundlers split these
      // differently (Vite gives the worker its own copy of the engine; webpack's worker loads
      // the lazy chunk), but the engine (the OPFS host and the wasm's URL) is never in the
      // page's script.
      const js = out.filter((f) => f.endsWith('.js'));
      expect(js).toHaveLength(ex.scripts);
      const text = Object.fromEntries(js.map((f) => [f, fs.readFileSync(path.join(distDir, f), 'utf8')]));
      const html = fs.readFileSync(path.join(distDir, 'index.html'), 'utf8');
      const pageChunk = js.filter((f) => html.includes(path.posix.basename(f)));
      expect(pageChunk).toHaveLength(1);
      const engineChunks = js.filter((f) => text[f]!.includes('createSyncAccessHandle'));
      expect(engineChunks.length).toBeGreaterThanOrEqual(1);
      expect(engineChunks).not.toContain(pageChunk[0]);
      // The wasm's URL is in the engine's chunks (webpack's page-side lazy engine is two
      // chunks, only one naming it) and the decode worker's (which compiles the module itself
      // where it cannot be sent one), never in the page's.
      const naming = js.filter((f) => text[f]!.includes(path.posix.basename(wasm[0]!)));
      const decodeChunk = js.filter((f) => text[f]!.includes('decodeRun') && !text[f]!.includes('createSyncAccessHandle'));
      expect(naming.filter((f) => !engineChunks.includes(f))).toEqual(decodeChunk);
      expect(naming.length).toBeGreaterThanOrEqual(2);
      const decodeChunks = js.filter((f) => text[f]!.includes('decodeRun') && !text[f]!.includes('createSyncAccessHandle'));
      expect(decodeChunks).toHaveLength(1);
      expect(decodeChunks).not.toContain(pageChunk[0]);
      expect(text[pageChunk[0]!]).toContain('new Worker(');
      expect(text[pageChunk[0]!]).not.toContain('createSyncAccessHandle');

      const { server, origin } = (await serveDir(distDir)) as { server: { close(): void }; origin: string };
      const page = await context.newPage();
      const problems: string[] = [];
      page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
      page.on('console', (m) => m.type() === 'error' && problems.push(`console: ${m.text()}`));
      page.on('requestfailed', (r) => problems.push(`requestfailed: ${r.url()}`));
      page.on('response', (r) => r.status() >= 400 && problems.push(`HTTP ${r.status()}: ${r.url()}`));
      try {
        const t0 = performance.now();
        await page.goto(`${origin}/`);
        await page.waitForFunction(() => document.body.dataset.result ?? document.body.dataset.error, undefined, { timeout: 60_000 });
        const pageMs = Math.round(performance.now() - t0);
        const { result, error } = await page.evaluate(() => ({ result: document.body.dataset.result, error: document.body.dataset.error }));
        expect(error).toBeUndefined();
        expect(JSON.parse(result!)).toEqual(expected());
        // The database lives in OPFS (the package's pool of sync-access-handle files).
        const opfsFiles = await page.evaluate(async () => {
          const root = await navigator.storage.getDirectory();
          const db = await (await root.getDirectoryHandle('strata')).getDirectoryHandle('strata-example');
          const names: string[] = [];
          for await (const name of (db as unknown as { keys(): AsyncIterable<string> }).keys()) names.push(name);
          return names;
        });
        expect(opfsFiles).toContain('LOCK.sah');
        expect(opfsFiles.filter((n) => /^\d+\.sah$/.test(n)).length).toBeGreaterThan(0);
        expect(problems).toEqual([]);
        const sizes = Object.fromEntries(out.map((f) => [f, fs.statSync(path.join(distDir, f)).size]));
        console.log(`${ex.name}: npm ci ${installMs} ms, build ${buildMs} ms, page ${pageMs} ms; dist ${JSON.stringify(sizes)}`);
      } finally {
        await page.close();
        server.close();
      }
    });
  }
});
