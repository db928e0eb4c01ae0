// Decode workers in Node (js/src/decode-pool.ts, worker_threads; the engine's external
// readahead, src/table/readahead.rs): scans whose runs of compressed blocks are inflated by
// workers give exactly the figures of the engine decoding alone, on every shared world and on
// a generated zlib database; a worker terminated mid-scan costs nothing but time (exact
// figures); a damaged block is reported exactly as without workers. Chunk lists with relief
// samples go through the workers too, each block handed back with only the records the pass
// reads: the same lists and samples as the engine alone, and a scan interleaved with such a
// list on the same engine still gets every entry.

import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, test } from 'vitest';

import { open, openWorld } from '../dist/node.js';
import { tempDir, worlds, worldsDir, worldTest } from './helpers.js';

/** A database of `n` entries in zlib tables (random-ish values that still compress). */
async function generated(n: number): Promise<string> {
  const dir = path.join(tempDir('decode'), 'db');
  const db = await open(dir, { compression: 'zlib', profile: 'bedrock', writeBufferSize: 4 * 1024 * 1024 });
  let x = 12345;
  for (let i = 0; i < n; i += 1000) {
    const ops = [];
    for (let j = i; j < i + 1000 && j < n; j++) {
      x = (Math.imul(x, 1103515245) + 12345) >>> 0;
      ops.push({ type: 'put' as const, key: `key-${String(j).padStart(8, '0')}`, value: `${x.toString(36)}-`.repeat(20 + (x % 30)) });
    }
    await db.batch(ops);
  }
  await db.compactRange();
  await db.close();
  return dir;
}

describe('decode workers (Node)', () => {
  worldTest('every shared world: the same figures with 2, 1 and 0 decode workers; workers did decode', async () => {
    let byWorkers = 0;
    for (const w of worlds()) {
      const want = { entries: w.entries, keyBytes: w.keyBytes, valueBytes: w.valueBytes, crc32c: w.crc32c };
      for (const decodeWorkers of [2, 1, 0]) {
        const db = await open(path.join(worldsDir, w.name, 'db'), { readOnly: true, profile: 'bedrock', decodeWorkers });
        expect({ world: w.name, decodeWorkers, ...(await db.scan()) }).toEqual({ world: w.name, decodeWorkers, ...want });
        const stats = await db.decodeStats();
        if (decodeWorkers === 0) expect(stats.readahead).toBeNull();
        else byWorkers += stats.readahead!.runsByWorkers!;
        await db.close();
      }
    }
    console.log(`decode workers: ${byWorkers} runs decoded by workers over every shared world`);
    expect(byWorkers).toBeGreaterThan(100);
  });

  worldTest('every shared world: chunk lists with relief samples through decode workers give the engine\'s own lists and samples', async () => {
    let byWorkers = 0;
    let chunks = 0;
    for (const w of worlds()) {
      const got: Array<Array<[number, number, string]>> = [];
      for (const decodeWorkers of [1, 0]) {
        const world = await openWorld(path.join(worldsDir, w.name), { decodeWorkers });
        const dims: Array<[number, number, string]> = [];
        for (const dim of [0, 1, 2]) {
          const list = await world.chunks(dim, { reliefSamples: true });
          const samples = await world.reliefSamples(dim);
          dims.push([dim, list.length, `${JSON.stringify(list)} ${samples ? Buffer.from(samples).toString('base64') : 'none'}`]);
        }
        if (decodeWorkers > 0) byWorkers += (await world.db.decodeStats()).readahead!.runsByWorkers!;
        else chunks += dims.reduce((n, d) => n + d[1], 0);
        await world.close();
        got.push(dims);
      }
      expect(got[0], w.name).toEqual(got[1]);
    }
    console.log(`decode workers: ${byWorkers} runs of chunk-list passes decoded by workers; ${chunks} chunks over every shared world`);
    expect(byWorkers).toBeGreaterThan(50);
    // Keys of Version records (tags 44, 118) in dimensions 0-2, counted with Mojang's LevelDB
    // (amulet-leveldb) over the 16 shared worlds (bds_26_0_featherdev: 5,186).
    expect(chunks).toBe(10_846);
  });

  worldTest('a scan and a chunk list interleaved on one engine with decode workers: every entry for the scan, the exact list', async () => {
    const w = worlds().reduce((a, b) => (b.valueBytes > a.valueBytes ? b : a));
    const alone = await openWorld(path.join(worldsDir, w.name), { decodeWorkers: 0 });
    const want = await alone.chunks(0, { reliefSamples: true });
    await alone.close();
    const world = await openWorld(path.join(worldsDir, w.name), { decodeWorkers: 1 });
    try {
      for (let round = 0; round < 3; round++) {
        const [scan, list] = await Promise.all([world.db.scan(), world.chunks(0, { reliefSamples: true })]);
        expect({ entries: scan.entries, keyBytes: scan.keyBytes, valueBytes: scan.valueBytes, crc32c: scan.crc32c }).toEqual({ entries: w.entries, keyBytes: w.keyBytes, valueBytes: w.valueBytes, crc32c: w.crc32c });
        expect(list).toEqual(want);
      }
      const stats = (await world.db.decodeStats()).readahead!;
      console.log(`interleaved on ${w.name}: ${JSON.stringify(stats)}`);
      expect(stats.runsByWorkers).toBeGreaterThan(10);
    } finally {
      await world.close();
    }
  });

  test('a worker terminated mid-scan: the scan finishes with exact figures', async () => {
    const dir = await generated(200_000);
    const plain = await open(dir, { decodeWorkers: 0 });
    const want = await plain.scan();
    await plain.close();
    expect(want.entries).toBe(200_000);

    // The interleaving is forced (decode-pool.ts, strataPassGate), never raced. Until the
    // worker is terminated, each step of the pass is held until every run lent so far was
    // answered, so at the next step's gate the runs in flight are exactly the ones just lent,
    // to two idle workers: alternately, worker 0 first. At the first step after the first that
    // lent any, worker 0 is terminated with its share of them in flight (answers are messages:
    // none arrives while the gate runs); the cursor decodes those runs itself.
    const db = await open(dir, { decodeWorkers: 2 });
    type Stats = Awaited<ReturnType<typeof db.decodeStats>>;
    // The pool is the engine's, shared with the passes of the tests before: its counters are
    // read as differences from here.
    await db.scan(); // starts the pool (both workers ready) before the forced pass
    const base = (await db.decodeStats()).pool!;
    const readBase = (await db.decodeStats()).readahead!.runsByWorkers!;
    let atTermination: Stats | undefined;
    let inflightThen = 0;
    const g = globalThis as { strataPassGate?: (step: number) => Promise<void> | void };
    g.strataPassGate = async (step) => {
      if (atTermination) return;
      let s = await db.decodeStats();
      const inflight = s.pool!.sent - s.pool!.answered - s.pool!.failed;
      if (step > 1 && inflight > 0 && s.pool!.answered > base.answered) {
        atTermination = s;
        inflightThen = inflight;
        await db.terminateDecodeWorker(0);
        return;
      }
      while (s.pool!.answered + s.pool!.failed < s.pool!.sent) {
        await new Promise((r) => setImmediate(r));
        s = await db.decodeStats();
      }
    };
    let got;
    try {
      got = await db.scan();
    } finally {
      delete g.strataPassGate;
    }
    expect(got).toEqual(want);
    const after = await db.decodeStats();
    console.log(`worker terminated with ${inflightThen} run(s) in flight at ${JSON.stringify(atTermination)}; after the scan ${JSON.stringify(after)}`);
    const held = atTermination!;
    expect(held).toBeDefined();
    // The workers had decoded runs before (the first window, at least 3).
    expect(held.readahead!.runsByWorkers! - readBase).toBeGreaterThanOrEqual(3);
    expect(held.pool!.failed - base.failed).toBe(0);
    // Worker 0's share of the runs in flight failed with it (the cursor decoded them); the
    // survivor decoded the rest of the scan.
    expect(inflightThen).toBeGreaterThan(0);
    expect(after.pool!.workersLost - base.workersLost).toBe(1);
    expect(after.pool!.failed - base.failed).toBe(Math.ceil(inflightThen / 2));
    expect(after.readahead!.runsByWorkers).toBeGreaterThan(held.readahead!.runsByWorkers!);
    // Every request settles (decode-pool.ts): runs the cursor reached before the survivor's
    // answer came were decoded by the cursor; their answers still arrive, after the scan.
    let settled = after.pool!;
    for (let i = 0; settled.answered + settled.failed < settled.sent && i < 100_000; i++) {
      await new Promise((r) => setImmediate(r));
      settled = (await db.decodeStats()).pool!;
    }
    expect(settled.answered + settled.failed).toBe(settled.sent);
    expect(settled.failed - base.failed).toBe(Math.ceil(inflightThen / 2));
    // The next scan runs with the surviving worker, exactly.
    expect(await db.scan()).toEqual(want);
    await db.close();
  });

  test('a damaged block: the same error with and without decode workers', async () => {
    const dir = await generated(50_000);
    const table = fs.readdirSync(dir).find((f) => f.endsWith('.ldb'))!;
    const bytes = fs.readFileSync(path.join(dir, table));
    bytes[1000] ^= 0xff;
    fs.writeFileSync(path.join(dir, table), bytes);
    const errorOf = async (decodeWorkers: number) => {
      const db = await open(dir, { decodeWorkers, readOnly: true });
      try {
        await db.scan();
        return 'none';
      } catch (e) {
        const err = e as { code: string; message: string; file?: string; offset?: number };
        return JSON.stringify({ code: err.code, message: err.message, file: err.file, offset: err.offset });
      } finally {
        await db.close();
      }
    };
    const alone = await errorOf(0);
    expect(alone).toMatch(/LEVEL_CORRUPTION/);
    expect(await errorOf(1)).toBe(alone);
  });
});
