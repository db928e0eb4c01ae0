// Node benchmarks for the npm package, side by side with the native Node peers in one run:
//
//   node bench/node/bench.mjs --world DIR [--num N] [--out FILE.json]
//
// 1. Bedrock scan (DESIGN.md §2) of world DIR (a LevelDB folder written by Mojang's LevelDB):
//    - strata-level (wasm) `db.scan()`: the whole workload inside the engine;
//    - strata-level (wasm) iterating in JS with `nextv(1000)`, CRC-32C in JS;
//    - leveldb-zlib (Mojang's LevelDB as a Node addon) iterating in JS, CRC-32C in JS;
//    - classic-level (Google's LevelDB) iterating in JS over the same entries rewritten in
//      Google's format (Snappy), made once beside the world copy;
//    - the native `strata scan` binary (target/release/strata), for the wasm/native ratio.
//    Peers that open read-write get a copy (LevelDB writes to any folder it opens). All give
//    identical figures or the run fails.
// 2. db_bench-style fillrandom / readrandom / readseq (N entries, 16-byte keys, 100-byte
//    values, one awaited call per operation) through strata-level and classic-level.
// Writes the figures as JSON (--out) and prints a markdown table.

import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, '../..');
const { open } = await import(path.join(repo, 'js/dist/node.js'));
const { ClassicLevel } = require('classic-level');
// leveldb-zlib ships one prebuilt addon (linux-x64); elsewhere (a Mac) npm builds it from source,
// and where that failed the run says so and goes on without it.
let LevelDB = null;
try {
  ({ LevelDB } = require('leveldb-zlib')); // loads the native addon, or throws
} catch (e) {
  LevelDB = null;
  console.log(`!!! leveldb-zlib unavailable on ${process.platform}-${process.arch} (${String(e.message ?? e).split('\n')[0]}): its rows are skipped`);
}
const CRC32C = require('crc-32/crc32c');

const args = process.argv.slice(2);
const opt = (name, def) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : def;
};
const world = path.resolve(opt('world', ''));
const num = Number(opt('num', '1000000'));
const out = opt('out', '');
if (!fs.existsSync(path.join(world, 'CURRENT'))) {
  console.error('bench/node: --world must be a LevelDB folder (with CURRENT)');
  process.exit(2);
}

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'strata-node-bench-'));
process.on('exit', () => fs.rmSync(tmp, { recursive: true, force: true }));

/** A copy a writer may change: table files hard-linked (LevelDB never rewrites them). */
function copyForWriter(src, dst) {
  fs.mkdirSync(dst, { recursive: true });
  for (const name of fs.readdirSync(src)) {
    if (name === 'LOCK' || name.endsWith('.owner')) continue;
    const from = path.join(src, name);
    if (name.endsWith('.ldb') || name.endsWith('.sst')) fs.linkSync(from, path.join(dst, name));
    else fs.copyFileSync(from, path.join(dst, name));
  }
}

async function timed(fn) {
  const t0 = process.hrtime.bigint();
  const result = await fn();
  return { seconds: Number(process.hrtime.bigint() - t0) / 1e9, result };
}

function figures() {
  return { entries: 0, keyBytes: 0, valueBytes: 0, crc: 0 };
}
function add(f, k, v) {
  f.entries++;
  f.keyBytes += k.length;
  f.valueBytes += v.length;
  f.crc = CRC32C.buf(v, CRC32C.buf(k, f.crc));
}
const done = (f) => ({ entries: f.entries, keyBytes: f.keyBytes, valueBytes: f.valueBytes, crc32c: f.crc >>> 0 });

/** The scan's figures from an iterator with `nextv` (strata-level and classic-level alike). */
async function iterateFigures(iter) {
  const f = figures();
  for (;;) {
    const batch = await iter.nextv(1000);
    if (batch.length === 0) break;
    for (const [k, v] of batch) add(f, k, v);
  }
  await iter.close();
  return done(f);
}

const rows = [];
const record = (workload, engine, seconds, extra = {}) => {
  rows.push({ workload, engine, seconds: Number(seconds.toFixed(3)), ...extra });
  console.error(`[bench/node] ${workload} ${engine}: ${seconds.toFixed(3)} s`);
};

// ------------------------------------------------------------------------------------------
// 1. Scan.
const native = path.join(repo, 'target/release/strata');
const nat = await timed(() => JSON.parse(execFileSync(native, ['scan', '--json', world], { encoding: 'utf8' })));
const want = { entries: nat.result.entries, keyBytes: nat.result.key_bytes, valueBytes: nat.result.value_bytes, crc32c: nat.result.crc32c };
record('scan', 'strata native (CLI, 1 thread)', nat.seconds, want);

const check = (name, got) => {
  if (JSON.stringify(got) !== JSON.stringify(want)) {
    throw new Error(`${name} disagrees: ${JSON.stringify(got)} vs ${JSON.stringify(want)}`);
  }
};

const nat0 = await timed(() => JSON.parse(execFileSync(native, ['scan', '--json', '--readahead-threads', '0', world], { encoding: 'utf8' })));
record('scan', 'strata native (CLI, --readahead-threads 0: decoding on the reading thread)', nat0.seconds);
const cores = os.availableParallelism?.() ?? os.cpus().length;
for (const decodeWorkers of [...new Set([1, cores - 1])].filter((n) => n > 0)) {
  const db = await open(world, { readOnly: true, profile: 'bedrock', decodeWorkers });
  await db.scan(); // starts the workers (their wasm instances) before the timed run
  const s = await timed(() => db.scan());
  check(`strata-level scan with ${decodeWorkers} decode workers`, s.result);
  const stats = await db.decodeStats();
  record('scan', `strata-level wasm, db.scan() with ${decodeWorkers} decode worker${decodeWorkers > 1 ? 's' : ''}`, s.seconds, { decode: stats.readahead });
  await db.close();
}
{
  const db = await open(world, { readOnly: true, profile: 'bedrock', decodeWorkers: 0 });
  const s = await timed(() => db.scan());
  check('strata-level scan', s.result);
  record('scan', 'strata-level wasm, db.scan() (decodeWorkers 0)', s.seconds);
  const it = await timed(() => iterateFigures(db.iterator({ fillCache: false })));
  check('strata-level iterate', it.result);
  record('scan', 'strata-level wasm, iterate in JS', it.seconds);
  await db.close();
}

if (LevelDB) {
  const copy = path.join(tmp, 'mojang');
  copyForWriter(world, copy);
  const db = new LevelDB(copy, { createIfMissing: false });
  await db.open();
  const r = await timed(async () => {
    const f = figures();
    for await (const [k, v] of db.getIterator({ keyAsBuffer: true, valueAsBuffer: true, fillCache: false })) add(f, k, v);
    return done(f);
  });
  check('leveldb-zlib', r.result);
  record('scan', 'leveldb-zlib (Mojang LevelDB addon), iterate in JS', r.seconds);
  await db.close();
}

{
  // The same entries in Google's format (Snappy), written by classic-level.
  const gdir = path.join(tmp, 'google');
  const src = await open(world, { readOnly: true });
  const g = new ClassicLevel(gdir, { keyEncoding: 'view', valueEncoding: 'view' });
  await g.open();
  const iter = src.iterator({ fillCache: false });
  for (;;) {
    const batch = await iter.nextv(1000);
    if (batch.length === 0) break;
    await g.batch(batch.map(([key, value]) => ({ type: 'put', key, value })));
  }
  await iter.close();
  await src.close();
  await g.compactRange(new Uint8Array(0), new Uint8Array(64).fill(255));
  const r = await timed(() => iterateFigures(g.iterator({ fillCache: false })));
  check('classic-level', r.result);
  record('scan', 'classic-level (Google LevelDB addon, Snappy copy), iterate in JS', r.seconds);
  await g.close();
  // Strata on the very same Google-format copy.
  const sdb = await open(gdir, { readOnly: true });
  const s2 = await timed(() => iterateFigures(sdb.iterator({ fillCache: false })));
  check('strata-level on the Google copy', s2.result);
  record('scan', 'strata-level wasm on the Snappy copy, iterate in JS', s2.seconds);
  await sdb.close();
}

// ------------------------------------------------------------------------------------------
// 2. db_bench-style workloads.
function keyOf(i) {
  return new TextEncoder().encode(String(i).padStart(16, '0'));
}
function shuffled(n, seed) {
  const a = Array.from({ length: n }, (_, i) => i);
  let s = seed >>> 0;
  for (let i = n - 1; i > 0; i--) {
    s = (Math.imul(s, 1103515245) + 12345) >>> 0;
    const j = s % (i + 1);
    [a[i], a[j]] = [a[j], a[i]];
  }
  return a;
}
const value = new Uint8Array(100).map((_, i) => (i * 7 + 13) & 0xff);
const order = shuffled(num, 301);
const reads = shuffled(num, 7);
const keys = order.map(keyOf);
const readKeys = reads.map(keyOf);

async function dbBench(name, db) {
  const fill = await timed(async () => {
    for (const k of keys) await db.put(k, value);
  });
  record('fillrandom', name, fill.seconds, { opsPerSec: Math.round(num / fill.seconds) });
  const rr = await timed(async () => {
    let found = 0;
    for (const k of readKeys) if ((await db.get(k)) !== undefined) found++;
    return found;
  });
  if (rr.result !== num) throw new Error(`${name} readrandom found ${rr.result} of ${num}`);
  record('readrandom', name, rr.seconds, { opsPerSec: Math.round(num / rr.seconds) });
  const rs = await timed(async () => {
    let n = 0;
    const it = db.iterator();
    for (;;) {
      const batch = await it.nextv(1000);
      if (batch.length === 0) break;
      n += batch.length;
    }
    await it.close();
    return n;
  });
  if (rs.result !== num) throw new Error(`${name} readseq saw ${rs.result} of ${num}`);
  record('readseq', name, rs.seconds, { opsPerSec: Math.round(num / rs.seconds) });
}

{
  const db = await open(path.join(tmp, 'strata-dbbench'), { profile: 'google' });
  await dbBench('strata-level wasm', db);
  await db.close();
  const c = new ClassicLevel(path.join(tmp, 'classic-dbbench'), { keyEncoding: 'view', valueEncoding: 'view' });
  await c.open();
  await dbBench('classic-level', c);
  await c.close();
}

const wasmBytes = fs.statSync(path.join(repo, 'js/wasm/strata_bg.wasm')).size;
const report = { date: new Date().toISOString(), node: process.version, world, num, figures: want, wasmBytes, rows };
if (out) fs.writeFileSync(out, `${JSON.stringify(report, null, 2)}\n`);
console.log('| workload | engine | seconds | ops/s |');
console.log('|---|---|---:|---:|');
for (const r of rows) console.log(`| ${r.workload} | ${r.engine} | ${r.seconds} | ${r.opsPerSec ?? ''} |`);
