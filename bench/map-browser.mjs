#!/usr/bin/env node
// The viewer's map on a large world, in headless Chromium (Debian's, through playwright-core,
// the recipe of bench/browser.mjs): a world folder is opened as a player would (the folder
// picker), and the page's messages are sampled with their times: the world open, the first
// picture, the map finished, a close-up screen of block tiles. Browser memory is the sum of
// the proportional set size of Chromium's processes, sampled throughout.
//
//   node bench/map-browser.mjs WORLD_DIR [--layer relief] [--switch-layer surface] [--helpers N] [--sample-ms 100] [--json OUT.json]
// Env: STRATA_CHROMIUM (default /usr/bin/chromium).

import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(path.join(repo, 'js/package.json'));
const { chromium } = require('playwright-core');
const { serveDir } = await import(path.join(repo, 'scripts/serve-www.mjs'));
const { CHROMIUM_ARGS, chromiumPss } = await import(path.join(repo, 'scripts/chromium.mjs'));

const args = process.argv.slice(2);
const worldDir = args[0];
if (!worldDir || !fs.existsSync(path.join(worldDir, 'db'))) {
  console.error('usage: node bench/map-browser.mjs WORLD_DIR [--layer relief]');
  process.exit(2);
}
const opt = (name, dflt) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 && args[i + 1] !== undefined ? args[i + 1] : dflt;
};
const layer = opt('layer', 'relief');
const CHROMIUM = process.env.STRATA_CHROMIUM ?? '/usr/bin/chromium';

execFileSync('bash', [path.join(repo, 'scripts/build-www.sh')], { stdio: ['ignore', 'inherit', 'inherit'] });
const { server, origin } = await serveDir(path.join(repo, 'www/dist'), 0);
const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'strata-map-chromium-'));
const context = await chromium.launchPersistentContext(profile, {
  executablePath: CHROMIUM,
  headless: true,
  viewport: { width: 1200, height: 1000 },
  args: CHROMIUM_ARGS,
});
const peak = { all: 0, renderer: 0 };
// The memory sampler reads every Chromium process's smaps_rollup: its own cost (reported) is
// CPU the page does not get on a 2-core machine. `--sample-ms 0` turns it off (no peak).
const sampleMs = Number(opt('sample-ms', '100'));
const samplerCost = { samples: 0, ms: 0 };
const sampler =
  sampleMs > 0
    ? setInterval(() => {
        const s0 = performance.now();
        const m = (chromiumPss(profile) ?? { all: 0, renderer: 0 });
        samplerCost.samples += 1;
        samplerCost.ms += performance.now() - s0;
        peak.all = Math.max(peak.all, m.all);
        peak.renderer = Math.max(peak.renderer, m.renderer);
      }, sampleMs)
    : undefined;
try {
  const page = await context.newPage();
  page.on('pageerror', (e) => console.error('page error:', e));
  const helpersArg = opt('helpers', undefined);
  const helpersWanted = helpersArg === undefined ? 1 : Number(helpersArg);
  await page.goto(`${origin}/${helpersArg === undefined ? '' : `?helpers=${helpersArg}`}#layer=${layer}`);
  await page.waitForFunction(() => document.body.dataset.state === 'ready');
  const idle = (chromiumPss(profile) ?? { all: 0, renderer: 0 });
  await page.evaluate(() => {
    const log = [];
    window.__log = log;
    const t0 = performance.now();
    const m = document.getElementById('message');
    new MutationObserver(() => log.push([performance.now() - t0, m.textContent])).observe(m, { childList: true, characterData: true, subtree: true });
    const map = document.getElementById('map');
    new MutationObserver(() => log.push([performance.now() - t0, `map ${map.width}x${map.height} chunks=${map.dataset.chunks ?? ''}`])).observe(map, { attributes: true });
    document.body.dataset.state = 'idle';
  });
  const t0 = Date.now();
  await page.setInputFiles('#open-folder', worldDir);
  await page.waitForFunction(() => ['ready', 'error'].includes(document.body.dataset.state ?? ''), undefined, { timeout: 600_000 });
  const total = (Date.now() - t0) / 1000;
  const peakAtReady = { ...peak };
  const log = await page.evaluate(() => window.__log);
  const times = await page.evaluate(() => window.strataViewer.mapTimes());
  for (const [t, what] of log) console.log(`${(t / 1000).toFixed(2).padStart(7)} s  ${String(what).slice(0, 140)}`);
  const pass = await page.evaluate(() => window.strataViewer.lastPass());
  console.log(`milestones (ms from the open's start): ${JSON.stringify(times)}`);
  console.log(`chunk index pass: ${pass ? `${pass.ranges} ranges, ${pass.byHelpers} by map helpers: ${pass.timeline.map((t) => `${t.range} ${t.by} ${t.start}-${t.end}`).join(', ')} ms` : 'whole, on the page\'s engine'}`);
  console.log(`memory sampler: every ${sampleMs} ms, ${samplerCost.samples} samples took ${samplerCost.ms.toFixed(0)} ms of the test process until ready`);
  const mib = (n) => `${(n / 2 ** 20).toFixed(0)} MiB`;
  const after = (chromiumPss(profile) ?? { all: 0, renderer: 0 });
  console.log(
    `open to ready: ${total.toFixed(2)} s; Chromium PSS (all processes) idle ${mib(idle.all)}, peak ${mib(peak.all)}, ready ${mib(after.all)}; ` +
      `page + workers (renderer processes) idle ${mib(idle.renderer)}, peak ${mib(peak.renderer)}, ready ${mib(after.renderer)}`,
  );
  // A full screen of close-up block tiles (relief and surface show them), three places in turn.
  const closeUp = [];
  if (layer === 'relief' || layer === 'surface') {
    for (const [bx, bz] of [[0, 0], [1200, 800], [-1500, -900]]) {
      const c0 = Date.now();
      await page.evaluate(([x, z]) => window.strataViewer.centerOn(x, z, 6), [bx, bz]);
      await page.waitForFunction(() => window.strataViewer.tiles().missing === 0, undefined, { timeout: 120_000 });
      const t = await page.evaluate(() => window.strataViewer.tiles());
      closeUp.push({ at: [bx, bz], ms: Date.now() - c0, tilesHeld: t.held });
    }
    console.log(`close-up screens (zoom 6 px/block): ${JSON.stringify(closeUp)}`);
  }
  // Another layer once the page is ready: drawn by the page's engine and the map helpers
  // (?helpers=N; they open the picked folder with the world).
  let switched;
  const switchTo = opt('switch-layer', undefined);
  if (switchTo) {
    await page.waitForFunction((n) => window.strataViewer.mapHelpers().helpers >= n, helpersWanted, { timeout: 30_000 });
    const s0 = Date.now();
    await page.selectOption('#layer', switchTo);
    await page.waitForSelector(`#legend[data-layer="${switchTo}"]`, { state: 'attached', timeout: 600_000 });
    await page.waitForFunction(() => document.body.dataset.state === 'ready', undefined, { timeout: 600_000 });
    switched = { layer: switchTo, ms: Date.now() - s0, helpers: await page.evaluate(() => window.strataViewer.mapHelpers()) };
    console.log(`then ${switchTo}: ${switched.ms} ms with ${switched.helpers.helpers} map helpers (${switched.helpers.calls} calls answered by them)`);
  }
  await page.screenshot({ path: path.join(os.tmpdir(), `map-${layer}.png`) });
  const out = opt('json', undefined);
  if (out) {
    const chunks = Number(await page.getAttribute('#map', 'data-chunks'));
    const bands = await page.evaluate(() => window.strataViewer.mapBands());
    const browser = execFileSync(CHROMIUM, ['--version'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    fs.writeFileSync(out, JSON.stringify({ world: worldDir, layer, browser, chunks, bands, times, closeUp, switched, openToReadySeconds: total, pass, pss: { idle, peakAtReady, peak, ready: after }, sampler: { everyMs: sampleMs, ...samplerCost } }, null, 2));
  }
} finally {
  if (sampler) clearInterval(sampler);
  await context.close();
  server.close();
}
