#!/usr/bin/env node
// The benchmark page (www/bench.html) in headless Chromium, run for real: Debian's chromium
// launched through playwright-core with the recipe of js/test/viewer.test.ts (never a
// downloaded browser), www/dist served by scripts/serve-www.mjs on 127.0.0.1. First the viewer
// copies a shared world into OPFS (for the scan workload, Strata only), then /bench.html runs
// every workload on both engines (Strata over OPFS, IndexedDB via browser-level), each in a
// fresh worker. The results table (#bench-results rows with data-workload/data-engine) is read,
// and the page's own JSON (exact figures, browser, hardware concurrency) kept beside it:
// bench/results/browser-<UTC date>.json and .md (ops/s per workload per engine, ratio).
//
//   node bench/browser.mjs [--entries 20000] [--value-size 100] [--batch-size 100]
//                          [--world amulet_1_18_vanilla | --world-dir DIR | --no-world]
//                          [--workloads fillseq,…,scan,scan-workers] [--engines strata-opfs,…]
// --world-dir: any world or LevelDB folder (e.g. bench/scan.sh's 1 GB world in
// ~/.cache/strata/bedrock-1g). With a world, the same folder is also scanned by strata-level in
// Node (bench/node/scan.mjs, default decode workers, best of 2) in the same run, and the report
// gives the browser's scan throughput as a share of Node's.
// --profile DIR keeps Chromium's profile there (made if missing) instead of a fresh temporary
// one, and serves on a fixed port (--port, default 47813: the same origin every run): a world
// the viewer already copied into that profile's OPFS is used as it is (found by the folder's
// name: a different folder of the same name needs another profile).
// Env: STRATA_CHROMIUM (default /usr/bin/chromium), STRATA_WORLDS (default ../shared/worlds).

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
const { CHROMIUM_ARGS } = await import(path.join(repo, 'scripts/chromium.mjs'));

const args = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 && args[i + 1] !== undefined ? args[i + 1] : dflt;
};
const entries = Number(opt('entries', '20000'));
const valueSize = Number(opt('value-size', '100'));
const batchSize = Number(opt('batch-size', '100'));
const worldDirArg = opt('world-dir', undefined);
const keptProfile = opt('profile', undefined);
const worldName = args.includes('--no-world') ? undefined : worldDirArg ? path.basename(path.resolve(worldDirArg)) : opt('world', 'amulet_1_18_vanilla');
// Debian's Chromium; on macOS the installed Google Chrome or Chromium app.
const CHROMIUM =
  process.env.STRATA_CHROMIUM ??
  (process.platform === 'darwin'
    ? ['/Applications/Google Chrome.app/Contents/MacOS/Google Chrome', '/Applications/Chromium.app/Contents/MacOS/Chromium'].find((p) => fs.existsSync(p)) ??
      '/Applications/Google Chrome.app/Contents/MacOS/Google Chrome'
    : '/usr/bin/chromium');
const worldsDir = process.env.STRATA_WORLDS ?? path.resolve(repo, '../shared/worlds');
// strata-opfs: the engine in the benchmark's worker itself (strata-opfs-relaxed: with durability
// 'relaxed'); strata-opfs-hop: in the package's
// worker, a message per call (what a page's main thread gets); strata-opfs-hop-64: the same with
// 64 calls in flight (a message per turn); strata-idb: the engine in the
// benchmark's worker over the IndexedDB store (the fallback without OPFS sync access handles).
const pick = (all, name) => {
  const want = opt(name, undefined)?.split(',');
  if (!want) return all;
  const bad = want.filter((w) => !all.includes(w));
  if (bad.length) throw new Error(`--${name}: unknown ${bad.join(', ')} (known: ${all.join(', ')})`);
  return all.filter((w) => want.includes(w));
};
const ENGINES = pick(['strata-opfs', 'indexeddb', 'strata-opfs-relaxed', 'strata-opfs-hop', 'strata-opfs-hop-64', 'strata-idb'], 'engines');
const WORLD_WORKLOADS = ['scan', 'scan-workers'].filter(() => worldName);
const WORKLOADS = pick(['fillseq', 'readseq', 'fillrandom', 'readrandom', 'batch', ...WORLD_WORKLOADS], 'workloads');
// The world is copied and scanned only for the scan workloads, which run on strata-opfs alone.
const scanning = WORKLOADS.some((w) => WORLD_WORKLOADS.includes(w));
if (scanning && !ENGINES.includes('strata-opfs')) throw new Error('the scan workloads run on strata-opfs: add it to --engines');

execFileSync('bash', [path.join(repo, 'scripts/build-www.sh')], { stdio: ['ignore', 'inherit', 'inherit'] });
const worldDir = worldName ? (worldDirArg ? path.resolve(worldDirArg) : path.join(worldsDir, worldName)) : undefined;
// The same world scanned by strata-level in Node, best of 2 (the reference for the browser's scan).
let nodeScan = null;
if (worldDir && scanning) {
  const runs = [0, 1].map(() => JSON.parse(execFileSync('node', [path.join(repo, 'bench/node/scan.mjs'), path.join(worldDir, fs.existsSync(path.join(worldDir, 'db')) ? 'db' : '')], { encoding: 'utf8' }).trim().split('\n').pop()));
  // The scan alone (the page times a scan of a world already open, as here).
  for (const r of runs) r.scan_seconds = +(r.seconds - r.open_seconds).toFixed(4);
  nodeScan = runs.reduce((a, b) => (b.scan_seconds < a.scan_seconds ? b : a));
  console.log(`== Node (strata-level, default decode workers): ${nodeScan.entries} entries scanned in ${nodeScan.scan_seconds} s (best of 2: ${runs.map((r) => r.scan_seconds).join(', ')})`);
}
const browserVersion = execFileSync(CHROMIUM, ['--version'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
// A kept profile needs the same origin every run (OPFS and the viewer's list are per origin).
const { server, origin } = await serveDir(path.join(repo, 'www/dist'), Number(opt('port', keptProfile ? '47813' : '0')));
if (keptProfile) fs.mkdirSync(keptProfile, { recursive: true });
const profile = keptProfile ? path.resolve(keptProfile) : fs.mkdtempSync(path.join(os.tmpdir(), 'strata-bench-chromium-'));
const context = await chromium.launchPersistentContext(profile, {
  executablePath: CHROMIUM,
  headless: true,
  viewport: { width: 1200, height: 1400 },
  args: CHROMIUM_ARGS,
});

try {
  const page = await context.newPage();
  page.on('pageerror', (e) => console.error('page error:', e));
  let world;
  if (worldName && scanning) {
    await page.goto(`${origin}/`);
    await page.waitForFunction(() => document.body.dataset.state === 'ready');
    const kept = keptProfile
      ? await page.$$eval('#imported-list li', (lis, name) => lis.find((li) => (li.textContent ?? '').startsWith(`${name} —`))?.dataset.location, worldName)
      : undefined;
    if (kept) {
      world = { name: worldName, location: kept, entries: null, importAndOpenSeconds: null };
      console.log(`== ${worldName}: already in the kept profile's OPFS as ${kept}`);
    }
  }
  if (worldName && scanning && !world) {
    // The viewer's "copy into browser storage (OPFS)", as a player would do it.
    const dir = worldDir;
    await page.check('#import-opfs');
    await page.evaluate(() => (document.body.dataset.state = 'idle'));
    const t0 = performance.now();
    await page.setInputFiles('#open-folder', dir);
    await page.waitForFunction(() => ['ready', 'error'].includes(document.body.dataset.state ?? ''), undefined, { timeout: 600_000 });
    const state = await page.getAttribute('body', 'data-state');
    if (state !== 'ready') throw new Error(`importing ${worldName} into OPFS failed: ${await page.textContent('#message')}`);
    const location = await page.getAttribute('#imported-list li', 'data-location');
    world = { name: worldName, location, entries: Number(await page.getAttribute('#world-summary', 'data-entries')), importAndOpenSeconds: (performance.now() - t0) / 1000 };
    console.log(`== ${worldName} imported into OPFS as ${location} (${world.entries} entries, import + open + map ${world.importAndOpenSeconds.toFixed(1)} s)`);
  }
  const q = new URLSearchParams({ entries: String(entries), valueSize: String(valueSize), batchSize: String(batchSize), workloads: WORKLOADS.join(','), engines: ENGINES.join(','), auto: '1' });
  if (world) q.set('world', world.location);
  const url = `/bench.html?${q}`;
  console.log(`== ${url}`);
  await page.goto(`${origin}${url}`);
  await page.waitForFunction(() => ['done', 'error'].includes(document.body.dataset.state ?? ''), undefined, { timeout: 1_800_000, polling: 1000 });
  if ((await page.getAttribute('body', 'data-state')) !== 'done') throw new Error(`the run failed: ${await page.textContent('#message')}`);
  const table = await page.$$eval('#bench-results tbody tr', (trs) =>
    trs.map((tr) => ({ workload: tr.dataset.workload, engine: tr.dataset.engine, cells: [...tr.children].map((td) => td.textContent ?? '') })),
  );
  const pageJson = await page.evaluate(async () => (await fetch(document.getElementById('bench-download').href)).json());
  fs.mkdirSync(path.join(repo, 'target/bench'), { recursive: true });
  await page.screenshot({ path: path.join(repo, 'target/bench/browser.png'), fullPage: true });

  const rows = pageJson.rows;
  const ops = (w, e) => rows.find((r) => r.workload === w && r.engine === e)?.opsPerSec;
  for (const w of WORKLOADS) {
    for (const e of WORLD_WORKLOADS.includes(w) ? ['strata-opfs'] : ENGINES) {
      if (!table.some((r) => r.workload === w && r.engine === e) || ops(w, e) === undefined) throw new Error(`no result for ${w} on ${e}`);
    }
  }
  if (world) {
    // The scan read the whole imported world: its entry count equals MANIFEST.tsv's.
    // (A folder outside the shared worlds: Node's scan of it is the reference.)
    const manifest = path.join(worldsDir, 'MANIFEST.tsv');
    const tsv = !worldDirArg && fs.existsSync(manifest) ? fs.readFileSync(manifest, 'utf8').trim().split('\n').map((l) => l.split('\t')) : undefined;
    const want = tsv ? Number(tsv.find((f) => f[tsv[0].indexOf('name')] === world.name)?.[tsv[0].indexOf('entries')]) : nodeScan?.entries;
    for (const w of WORLD_WORKLOADS.filter((x) => WORKLOADS.includes(x))) {
      const got = rows.find((r) => r.workload === w).ops;
      if (got !== want || (world.entries !== null && world.entries !== want)) throw new Error(`${w} of ${world.name}: ${got} entries (viewer ${world.entries}), ${tsv ? 'MANIFEST.tsv' : "Node's scan"} says ${want}`);
    }
  }
  const summary = WORKLOADS.map((w) => {
    const s = ops(w, 'strata-opfs');
    const i = ops(w, 'indexeddb');
    const r = ops(w, 'strata-opfs-relaxed');
    const h = ops(w, 'strata-opfs-hop');
    const h64 = ops(w, 'strata-opfs-hop-64');
    const d = ops(w, 'strata-idb');
    return { workload: w, strataOpsPerSec: s, strataRelaxedOpsPerSec: r ?? null, strataHopOpsPerSec: h ?? null, strataHop64OpsPerSec: h64 ?? null, strataIdbOpsPerSec: d ?? null, indexeddbOpsPerSec: i ?? null, ratio: i && s ? s / i : null, idbRatio: i && d ? d / i : null };
  });
  const date = new Date().toISOString().slice(0, 10);
  const out = {
    date: new Date().toISOString(),
    browser: browserVersion,
    userAgent: pageJson.env.userAgent,
    hardwareConcurrency: pageJson.env.hardwareConcurrency,
    host: { cpus: os.cpus()[0]?.model, cores: os.cpus().length, platform: `${os.platform()} ${os.release()}` },
    url,
    config: pageJson.config,
    world: world ?? null,
    nodeScan,
    summary,
    rows,
    table,
  };
  const resultsDir = process.env.STRATA_BENCH_SAVE === '1' ? 'bench/results' : (process.env.STRATA_RESULTS_DIR ?? 'target/bench-results');
  fs.mkdirSync(path.join(repo, resultsDir), { recursive: true });
  const base = freeStem(path.join(repo, resultsDir, `browser-${date}`));
  fs.writeFileSync(`${base}.json`, `${JSON.stringify(out, null, 2)}\n`);
  const fmt = (n, d = 0) => (n === null || n === undefined ? '—' : n.toLocaleString('en', { maximumFractionDigits: d, minimumFractionDigits: d }));
  const md = [
    `# Browser benchmark, ${date} (bench/browser.mjs)`,
    '',
    `${browserVersion}, headless (playwright-core), ${pageJson.env.hardwareConcurrency} hardware threads; ${out.host.cpus}. `,
    `${entries.toLocaleString('en')} entries, ${valueSize}-byte values, batches of ${batchSize}; each engine in a fresh worker; one run.`,
    world ? `scan: ${world.name} (${(world.entries ?? nodeScan?.entries ?? 0).toLocaleString('en')} entries) copied into OPFS by the viewer; Strata only (IndexedDB has no such world).` : '',
    ...(nodeScan
      ? WORLD_WORKLOADS.filter((w) => ops(w, 'strata-opfs') !== undefined).map((w) => {
          const nodeRate = nodeScan.entries / nodeScan.scan_seconds;
          const mode = w === 'scan' ? 'without decode workers' : 'with its default decode workers';
          return `${w} in Chromium (${mode}): ${fmt(ops(w, 'strata-opfs'))} entries/s; the same folder in Node (strata-level, default decode workers, the scan of the open world, best of 2 processes): ${fmt(nodeRate)} entries/s (${nodeScan.scan_seconds} s): Chromium at ${fmt((100 * ops(w, 'strata-opfs')) / nodeRate, 1)}% of Node. `;
        })
      : []),
    '',
    '| workload | Strata (OPFS, engine in the caller\'s worker) ops/s | Strata (OPFS, in the caller\'s worker, durability relaxed) ops/s | Strata (OPFS, a message per call) ops/s | Strata (OPFS, 64 calls in flight, a message per turn) ops/s | Strata (IndexedDB store, in the caller\'s worker) ops/s | IndexedDB (browser-level) ops/s | ratio Strata OPFS / IndexedDB | ratio Strata IndexedDB store / IndexedDB |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...summary.map((s) => `| ${s.workload} | ${fmt(s.strataOpsPerSec)} | ${fmt(s.strataRelaxedOpsPerSec)} | ${fmt(s.strataHopOpsPerSec)} | ${fmt(s.strataHop64OpsPerSec)} | ${fmt(s.strataIdbOpsPerSec)} | ${fmt(s.indexeddbOpsPerSec)} | ${s.ratio === null ? '—' : `${fmt(s.ratio, 2)}×`} | ${s.idbRatio === null ? '—' : `${fmt(s.idbRatio, 2)}×`} |`),
    '',
    `Page: \`${url}\`. Raw rows (ops, bytes, seconds, MB/s) in browser-${date}.json.`,
    '',
  ].filter((l, i, a) => l !== '' || a[i - 1] !== '');
  fs.writeFileSync(`${base}.md`, `${md.join('\n')}\n`);
  console.log(md.join('\n'));
  console.log(`== wrote ${path.relative(repo, base)}.json and .md`);
} finally {
  await context.close();
  server.close();
  if (!keptProfile) fs.rmSync(profile, { recursive: true, force: true });
}

/** `stem`, or `stem-2`, `-3`, … when saving and a report of that name is there: a second saved
 * run on one day never overwrites the first (bench/results_dir.sh's result_base). */
function freeStem(stem) {
  if (process.env.STRATA_BENCH_SAVE !== '1') return stem;
  let candidate = stem;
  for (let n = 2; fs.existsSync(`${candidate}.json`) || fs.existsSync(`${candidate}.md`); n++) candidate = `${stem}-${n}`;
  return candidate;
}
