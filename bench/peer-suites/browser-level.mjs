// The browser half of bench/peer-suites/run.sh: runs browser-level's OWN suite (test/index.js:
// abstract-level's shared suite, then test/custom-test.js) in Chromium, once on the original
// browser-level and once on Strata's drop-in (js/dist/browser-level.js), and prints both tallies.
// Called by run.sh, which has made two copies of the checkout (WORK/original, WORK/strata, each
// with the checkout's devDependencies as node_modules); only those copies are changed:
//
//   node bench/peer-suites/browser-level.mjs WORK STRATA_ROOT OUT
//
// Each copy is bundled with Vite (from Strata's js/node_modules: an app build, its root the copy,
// tape's Node built-ins mapped to the browserify shims its devDependencies bring: stream,
// path, process, buffer, events, util; abstract-level deduped so the suite and the database
// share one copy, as npm would install them). In the Strata copy the package root (`..` in the
// tests) is an index.js re-exporting Strata's BrowserLevel, so Vite also bundles Strata's worker
// and wasm. The bundle is served from 127.0.0.1 and opened in Chromium ($CHROMIUM, default
// /usr/bin/chromium) through playwright-core (Strata's js/node_modules); tape's output is read
// from the console until its summary. Full output: OUT/browser-level-{original,strata}.tap.
// $SUITE_TIMEOUT: seconds per run (default 900).

import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';

const [work, strata, outDir] = process.argv.slice(2);
if (!work || !strata || !outDir) {
  console.error('usage: node browser-level.mjs WORK STRATA_ROOT OUT');
  process.exit(2);
}
const CHROMIUM = process.env.CHROMIUM ?? '/usr/bin/chromium';
const TIMEOUT_MS = Number(process.env.SUITE_TIMEOUT ?? 900) * 1000;
const jsDir = path.join(strata, 'js');
const fromJs = createRequire(path.join(jsDir, 'package.json'));
const { build } = await import(pathToFileURL(path.join(jsDir, 'node_modules/vite/dist/node/index.js')).href);
const { chromium } = fromJs('playwright-core');
const { serveDir } = await import(pathToFileURL(path.join(strata, 'scripts/serve-www.mjs')).href);

/** Writes the page, its entry and (for Strata) the package root into the copy DIR. */
function prepare(dir, variant) {
  fs.writeFileSync(
    path.join(dir, 'peer-page.html'),
    '<!doctype html>\n<meta charset="utf-8">\n<title>browser-level suite</title>\n<script type="module" src="./peer-entry.js"></script>\n',
  );
  // Node's globals for tape and the suite (airtap's browserify gives them), set before
  // the tests' modules run (ES modules are evaluated in import order).
  fs.writeFileSync(
    path.join(dir, 'peer-globals.js'),
    "import process from 'process';\nimport { Buffer } from 'buffer';\nglobalThis.process = process;\nglobalThis.Buffer = Buffer;\nglobalThis.global = globalThis;\n",
  );
  fs.writeFileSync(path.join(dir, 'peer-entry.js'), "import './peer-globals.js';\nimport './test/index.js';\n");
  if (variant === 'strata') {
    fs.writeFileSync(
      path.join(dir, 'index.js'),
      `'use strict'\n// Strata's drop-in in place of browser-level (written by bench/peer-suites/browser-level.mjs).\nmodule.exports = require(${JSON.stringify(path.join(jsDir, 'dist/browser-level.js'))})\n`,
    );
  }
}

async function bundle(dir, outputDir) {
  const mods = path.join(dir, 'node_modules');
  const shim = (name, file) => {
    const p = path.join(mods, file);
    return fs.existsSync(p) ? [{ find: new RegExp(`^(node:)?${name}$`), replacement: p }] : [];
  };
  await build({
    configFile: false,
    root: dir,
    // Vite's cache in the copy's own folder, never in node_modules (which may be the checkout's).
    cacheDir: path.join(dir, '.vite-cache'),
    logLevel: 'warn',
    resolve: {
      alias: [
        ...shim('stream', 'stream-browserify/index.js'),
        ...shim('path', 'path-browserify/index.js'),
        ...shim('process', 'process/browser.js'),
        ...shim('buffer', 'buffer/index.js'),
        ...shim('events', 'events/events.js'),
        ...shim('util', 'util/util.js'),
      ],
      dedupe: ['abstract-level'],
    },
    // tape reads __dirname when an assertion fails (browserify defines it per module).
    define: { 'process.env.NODE_DEBUG': 'undefined', __dirname: JSON.stringify('/') },
    worker: { format: 'es' },
    build: {
      outDir: outputDir,
      emptyOutDir: true,
      minify: false,
      target: 'es2022',
      modulePreload: false,
      reportCompressedSize: false,
      rollupOptions: { input: path.join(dir, 'peer-page.html') },
    },
  });
}

/** Runs the built page; resolves to tape's output lines. */
async function runPage(browser, outputDir, tapFile) {
  const { server, origin } = await serveDir(outputDir);
  const context = await browser.newContext();
  const page = await context.newPage();
  const lines = [];
  const tap = fs.createWriteStream(tapFile);
  let done;
  const finished = new Promise((resolve) => (done = resolve));
  let sawPass = false;
  page.on('console', (msg) => {
    for (const line of msg.text().split('\n')) {
      lines.push(line);
      tap.write(line + '\n');
      if (/^# pass /.test(line)) sawPass = true;
      if (sawPass && /^# (ok|fail )/.test(line)) setTimeout(done, 200); // "# fail N" follows "# pass N"
    }
  });
  page.on('pageerror', (e) => {
    const line = `# page error: ${String(e?.stack ?? e).split('\n')[0]}`;
    lines.push(line);
    tap.write(line + '\n');
  });
  const t0 = Date.now();
  await page.goto(`${origin}/peer-page.html`);
  const timer = setTimeout(() => {
    lines.push(`# timeout: no summary after ${TIMEOUT_MS / 1000} s`);
    tap.write(lines.at(-1) + '\n');
    done();
  }, TIMEOUT_MS);
  await finished;
  clearTimeout(timer);
  const line = `# wall time: ${Math.round((Date.now() - t0) / 1000)} s`;
  lines.push(line);
  tap.write(line + '\n');
  await new Promise((r) => tap.end(r));
  await context.close();
  server.close();
  return lines;
}

/** The names of the tests test/custom-test.js defines (tape names them; the file does not). */
function customNames(dir) {
  const text = fs.readFileSync(path.join(dir, 'test/custom-test.js'), 'utf8');
  return new Set([...text.matchAll(/\btest\(\s*'([^']+)'/g)].map((m) => m[1]));
}

/** Tallies per file: tests of custom-test.js by name, the rest the shared suite's. */
function tally(lines, custom) {
  const rows = { 'test/index.js (abstract-level suite)': { pass: 0, fail: 0 }, 'test/custom-test.js': { pass: 0, fail: 0 } };
  const failing = [];
  let current = '';
  let summary = null;
  for (const line of lines) {
    if (line.startsWith('# ') && !/^# (tests|pass|fail|ok|page error|timeout|wall time)\b/.test(line)) current = line.slice(2);
    const row = custom.has(current) ? rows['test/custom-test.js'] : rows['test/index.js (abstract-level suite)'];
    if (/^ok \d+/.test(line)) row.pass += 1;
    if (/^not ok \d+/.test(line)) {
      row.fail += 1;
      failing.push(`[${current}] ${line}`);
    }
    const m = /^# (pass|fail) +(\d+)/.exec(line);
    if (m) (summary ??= { pass: 0, fail: 0 })[m[1]] = Number(m[2]);
  }
  const errors = lines.filter((l) => /^# (page error|timeout)/.test(l));
  return { rows, failing, summary, errors };
}

const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox', '--disable-gpu'] });
const results = {};
try {
  for (const variant of ['original', 'strata']) {
    const dir = path.join(work, variant);
    prepare(dir, variant);
    const built = path.join(work, `www-${variant}`);
    await bundle(dir, built);
    const lines = await runPage(browser, built, path.join(outDir, `browser-level-${variant}.tap`));
    results[variant] = tally(lines, customNames(dir));
  }
} finally {
  await browser.close();
}

const version = JSON.parse(fs.readFileSync(path.join(work, 'original/package.json'), 'utf8')).version;
const cell = (r) => `${r.pass}/${r.fail}`;
console.log(`${'file: pass/fail'.padEnd(42)} ${'original'.padStart(14)} ${'strata'.padStart(14)}`);
for (const name of Object.keys(results.original.rows)) {
  console.log(`${name.padEnd(42)} ${cell(results.original.rows[name]).padStart(14)} ${cell(results.strata.rows[name]).padStart(14)}`);
}
console.log(`\nbrowser-level ${version} in ${CHROMIUM}:`);
for (const v of ['original', 'strata']) {
  const s = results[v].summary;
  const txt = s ? `pass ${s.pass}, fail ${s.fail}, total ${s.pass + s.fail}` : 'no summary (the run died first)';
  console.log(`  ${v.padEnd(9)} tape's summary: ${txt}`);
}
for (const v of ['original', 'strata']) {
  const r = results[v];
  if (r.failing.length || r.errors.length) {
    console.log(`  failing on ${v}:`);
    for (const f of [...r.failing, ...r.errors]) console.log(`    ${f}`);
  }
}
