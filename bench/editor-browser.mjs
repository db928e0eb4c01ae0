#!/usr/bin/env node
// The world editor's benchmark in the browser (issue 17): for each world, in Debian's headless
// Chromium (playwright-core, scripts/chromium.mjs flags), through the package's browser entry
// point on its test page (js/test/browser/page.html, served by js/test/browser/server.mjs):
// copy the world into OPFS (importIntoOpfs), open it writable, prune the Overworld to a quarter
// (its chunks from the north-west corner to their median x and z, as bench/prune.sh), compact,
// export a .mcworld (the streamed export: copy, compact, zip in browser storage). The same
// prune, compaction and export run natively (target/release/strata) on a copy of the world in
// the same run; both pruned worlds must hold the same figures (entries, CRC-32C) or the run
// fails. Prints a table and writes bench/results/editor-browser-<UTC date>.{json,md} when
// STRATA_BENCH_SAVE=1 (else target/bench-results).
//
//   node bench/editor-browser.mjs [--world DIR ...]
// Default worlds: the largest shared world (amulet_1_18_vanilla) and the 250,000-entry demo
// world of `npm start` (~/.cache/strata/bedrock-250000) when it exists.
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
const { serve } = await import(path.join(repo, 'js/test/browser/server.mjs'));
const { CHROMIUM_ARGS } = await import(path.join(repo, 'scripts/chromium.mjs'));
const { openWorld } = await import(path.join(repo, 'js/dist/node.js'));

const CHROMIUM = process.env.STRATA_CHROMIUM ?? '/usr/bin/chromium';
const cli = path.join(repo, 'target/release/strata');
const args = process.argv.slice(2);
const worlds = [];
for (let i = 0; i < args.length; i++) if (args[i] === '--world') worlds.push(path.resolve(args[++i]));
if (worlds.length === 0) {
  worlds.push(path.join(process.env.STRATA_WORLDS ?? path.join(repo, '../shared/worlds'), 'amulet_1_18_vanilla'));
  const demo = path.join(process.env.STRATA_BENCH_CACHE ?? path.join(os.homedir(), '.cache/strata'), 'bedrock-250000');
  if (fs.existsSync(demo)) worlds.push(demo);
  else console.log(`!!! the 250,000-entry demo world is not at ${demo} (npm start makes it): measured without it`);
}
for (const w of worlds) if (!fs.existsSync(w)) throw new Error(`no world at ${w}`);
if (!fs.existsSync(cli)) execFileSync('cargo', ['build', '--release', '--bin', 'strata'], { cwd: repo, stdio: 'inherit' });

const secs = (t0) => Number(process.hrtime.bigint() - t0) / 1e9;
const treeBytes = (dir) =>
  fs
    .readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((f) => fs.statSync(path.join(dir, f)).isFile())
    .reduce((n, f) => n + fs.statSync(path.join(dir, f)).size, 0);
/** The db folder of a world (a Bedrock world folder or a bare db). */
const dbOf = (dir) => (fs.existsSync(path.join(dir, 'db', 'CURRENT')) ? path.join(dir, 'db') : dir);

/** The keep selection: the Overworld's chunks from the north-west corner to their median. */
function quarter(chunks) {
  const xs = chunks.map((c) => c[0]).sort((a, b) => a - b);
  const zs = chunks.map((c) => c[1]).sort((a, b) => a - b);
  const med = (v) => v[Math.floor((v.length - 1) / 2)];
  return `${xs[0]},${zs[0]}:${med(xs)},${med(zs)}`;
}

async function native(dir) {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'strata-editor-bench-'));
  const copy = path.join(tmp, 'w');
  fs.cpSync(dir, copy, { recursive: true });
  const w = await openWorld(copy);
  const chunks = await w.chunks(0);
  await w.close();
  const keep = quarter(chunks);
  let t0 = process.hrtime.bigint();
  execFileSync(cli, ['world', 'prune', copy, '--dimension', '0', '--keep', keep], { encoding: 'utf8' });
  const prune = secs(t0);
  t0 = process.hrtime.bigint();
  execFileSync(cli, ['compact', dbOf(copy)], { encoding: 'utf8' });
  const compact = secs(t0);
  const out = path.join(tmp, 'w.mcworld');
  t0 = process.hrtime.bigint();
  execFileSync(cli, ['world', 'export', copy, '--out', out], { encoding: 'utf8' });
  const exp = secs(t0);
  const scan = JSON.parse(execFileSync(cli, ['scan', '--json', dbOf(copy)], { encoding: 'utf8' }));
  const r = { keep, chunks: chunks.length, prune_s: prune, compact_s: compact, export_s: exp, mcworld_bytes: fs.statSync(out).size, entries: scan.entries, crc32c: scan.crc32c };
  fs.rmSync(tmp, { recursive: true, force: true });
  return r;
}

const results = [];
for (const dir of worlds) {
  const name = path.basename(dir);
  const nat = await native(dir);
  const { server, origin } = await serve({ pkgDir: path.join(repo, 'js'), worldsDir: path.dirname(dir) });
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'strata-editor-chromium-'));
  const context = await chromium.launchPersistentContext(profile, { executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS });
  try {
    const page = await context.newPage();
    await page.goto(`${origin}/test/browser/page.html`);
    await page.waitForFunction(() => document.title === 'ready');
    const b = await page.evaluate(
      async ([world, keep]) => {
        const { importIntoOpfs, openWorld, destroy } = await import('/pkg/dist/browser.js');
        const names = await (await fetch(`/worlds-tree/${world}`)).json();
        const files = await Promise.all(names.map(async (n) => ({ name: n, data: new File([await (await fetch(`/worlds/${world}/${n}`)).blob()], n.split('/').pop()) })));
        const location = `bench-editor/${world}`;
        await destroy(location).catch(() => {});
        let t0 = performance.now();
        const bytes = await importIntoOpfs(location, files);
        const copy = (performance.now() - t0) / 1000;
        const w = await openWorld(location, { writable: true, storage: 'opfs' });
        t0 = performance.now();
        const pruned = await w.prune(0, keep);
        const prune = (performance.now() - t0) / 1000;
        t0 = performance.now();
        await w.db.compactRange();
        const compact = (performance.now() - t0) / 1000;
        t0 = performance.now();
        const exported = await w.exportMcworldTo();
        const exp = (performance.now() - t0) / 1000;
        const size = exported.file.size;
        await exported.discard();
        const scan = await w.db.scan();
        await w.close();
        await destroy(location);
        return { copy_s: copy, copied_bytes: bytes, prune_s: prune, compact_s: compact, export_s: exp, mcworld_bytes: size, chunks_deleted: pruned.chunks, chunks_left: pruned.chunksLeft, entries: scan.entries, crc32c: scan.crc32c };
      },
      [name, nat.keep],
    );
    if (b.entries !== nat.entries || b.crc32c !== nat.crc32c) throw new Error(`${name}: the browser's pruned world (${b.entries} entries, CRC ${b.crc32c}) differs from the CLI's (${nat.entries}, ${nat.crc32c})`);
    results.push({ world: name, original_bytes: treeBytes(dir), keep: nat.keep, chromium: b, native: nat });
  } finally {
    await context.close();
    server.close();
    fs.rmSync(profile, { recursive: true, force: true });
  }
}

const f = (s) => s.toFixed(3);
const lines = [
  `# The world editor in Chromium (${new Date().toISOString().slice(0, 10)}, ${os.cpus().length} cores, one run)`,
  '',
  'Copy into OPFS, prune the Overworld to a quarter, compact, export (streamed through OPFS); the same prune, compaction and export by the native CLI on a copy. Both pruned worlds hold the same entries and CRC-32C.',
  '',
  '| world | original bytes | copy into OPFS s | prune s (browser / native) | compact s (browser / native) | export s (browser / native) | .mcworld bytes (browser / native) | entries after |',
  '|---|---:|---:|---:|---:|---:|---:|---:|',
  ...results.map(
    (r) =>
      `| ${r.world} | ${r.original_bytes.toLocaleString('en')} | ${f(r.chromium.copy_s)} | ${f(r.chromium.prune_s)} / ${f(r.native.prune_s)} | ${f(r.chromium.compact_s)} / ${f(r.native.compact_s)} | ${f(r.chromium.export_s)} / ${f(r.native.export_s)} | ${r.chromium.mcworld_bytes.toLocaleString('en')} / ${r.native.mcworld_bytes.toLocaleString('en')} | ${r.chromium.entries.toLocaleString('en')} |`,
  ),
  '',
];
console.log(lines.join('\n'));
const dirOut = process.env.STRATA_BENCH_SAVE === '1' ? path.join(repo, 'bench/results') : path.join(repo, 'target/bench-results');
fs.mkdirSync(dirOut, { recursive: true });
const stem = freeStem(path.join(dirOut, `editor-browser-${new Date().toISOString().slice(0, 10)}`));
fs.writeFileSync(`${stem}.json`, `${JSON.stringify(results, null, 2)}\n`);
fs.writeFileSync(`${stem}.md`, lines.join('\n'));
console.log(`written: ${stem}.{json,md}`);

/** `stem`, or `stem-2`, `-3`, … when saving and a report of that name is there: a second saved
 * run on one day never overwrites the first (bench/results_dir.sh's result_base). */
function freeStem(stem) {
  if (process.env.STRATA_BENCH_SAVE !== '1') return stem;
  let candidate = stem;
  for (let n = 2; fs.existsSync(`${candidate}.json`) || fs.existsSync(`${candidate}.md`); n++) candidate = `${stem}-${n}`;
  return candidate;
}
