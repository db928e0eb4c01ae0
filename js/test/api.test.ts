// The package's API in Node: backend conformance (mem and node:fs), interop with the native
// CLI and with Google's LevelDB (classic-level), and bad input giving documented error codes.

import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { ClassicLevel } from 'classic-level';
import { describe, expect, test } from 'vitest';

import { open } from '../dist/node.js';
import { cli, copyDir, Crc, tempDir, worlds, worldsDir, worldTest } from './helpers.js';
// @ts-expect-error: plain JS module shared with the browser test.
import { conformance } from './shared/conformance.mjs';

async function codeOf(p: Promise<unknown> | (() => unknown)): Promise<string> {
  try {
    await (typeof p === 'function' ? p() : p);
  } catch (e) {
    return (e as { code: string }).code;
  }
  return 'no error';
}

describe('storage conformance', () => {
  test('mem', async () => {
    const checks = await conformance(open, 'conformance-mem', { storage: 'mem' });
    expect(checks).toBe(27);
  });
  test('node:fs', async () => {
    const dir = path.join(tempDir('conf'), 'db');
    const checks = await conformance(open, dir, {});
    expect(checks).toBe(27);
    expect(fs.readdirSync(dir).filter((n) => n.endsWith('.ldb')).length).toBeGreaterThan(0);
    expect(fs.existsSync(path.join(dir, 'LOCK.owner'))).toBe(false);
  });
});

describe('properties count what is held open', () => {
  test('snapshots not released and iterators not closed', async () => {
    const db = await open('held', { storage: 'mem' });
    await db.put('a', '1');
    const held = async () => {
      const p = await db.properties();
      return [p.snapshots, p.iterators];
    };
    expect(await held()).toEqual([0, 0]);
    const s1 = await db.snapshot();
    const s2 = await db.snapshot();
    const it = db.iterator();
    expect(await it.next()).toBeDefined();
    expect(await held()).toEqual([2, 1]);
    await s1.release();
    await it.close();
    expect(await held()).toEqual([1, 0]);
    await s2.release();
    expect(await held()).toEqual([0, 0]);
    await db.close();
  });
});

describe('interop', () => {
  test('a database written from Node opens in the native CLI', async () => {
    const dir = path.join(tempDir('node2cli'), 'db');
    const db = await open(dir, { profile: 'bedrock' });
    const crc = new Crc();
    let keyBytes = 0;
    let valueBytes = 0;
    const ops = [];
    for (let i = 0; i < 20000; i++) {
      const k = `key-${String(i).padStart(6, '0')}`;
      const v = `value ${i} `.repeat(1 + (i % 13));
      ops.push({ type: 'put' as const, key: k, value: v });
    }
    await db.batch(ops);
    await db.flush();
    await db.put('zzz-in-log', 'only in the log');
    await db.close();
    // The same figures, computed here from what was written, in key order.
    const all = [...ops.map((o) => [o.key, o.value]), ['zzz-in-log', 'only in the log']].sort((a, b) =>
      a[0]! < b[0]! ? -1 : 1,
    );
    const enc = new TextEncoder();
    for (const [k, v] of all) {
      const kb = enc.encode(k);
      const vb = enc.encode(v);
      crc.update(kb);
      crc.update(vb);
      keyBytes += kb.length;
      valueBytes += vb.length;
    }
    const scan = JSON.parse(cli('scan', '--json', dir));
    expect(scan).toEqual({ entries: 20001, key_bytes: keyBytes, value_bytes: valueBytes, crc32c: crc.value });
    expect(cli('get', dir, 'key-000123').trim()).toBe('value 123 '.repeat(1 + (123 % 13)).trim());
  });

  test('a database written by the native CLI opens in Node', async () => {
    const dir = path.join(tempDir('cli2node'), 'db');
    cli('put', dir, 'alpha', 'one');
    cli('put', dir, 'beta', 'two');
    cli('delete', dir, 'alpha');
    cli('compact', dir);
    cli('put', dir, 'gamma', 'three');
    const db = await open(dir, { valueEncoding: 'utf8', keyEncoding: 'utf8' });
    expect(await db.iterator().all()).toEqual([
      ['beta', 'two'],
      ['gamma', 'three'],
    ]);
    await db.close();
  });

  test("Google's LevelDB (classic-level) and Strata read each other's databases", async () => {
    const root = tempDir('classic');
    // classic-level writes (Snappy), Strata reads.
    const g = new ClassicLevel(path.join(root, 'google'), { valueEncoding: 'utf8' });
    const expected: Array<[string, string]> = [];
    for (let i = 0; i < 5000; i++) expected.push([`g${String(i).padStart(5, '0')}`, `v${i}`.repeat(20)]);
    await g.batch(expected.map(([key, value]) => ({ type: 'put' as const, key, value })));
    await g.del('g00007');
    await g.compactRange('g', 'h');
    await g.put('g99999', 'last');
    await g.close();
    const want = expected.filter(([k]) => k !== 'g00007');
    want.push(['g99999', 'last']);
    let db = await open(path.join(root, 'google'), { keyEncoding: 'utf8', valueEncoding: 'utf8' });
    expect(await db.iterator().all()).toEqual(want);
    await db.close();

    // Strata writes (Google profile, Snappy), classic-level reads.
    db = await open(path.join(root, 'strata'), { profile: 'google' });
    await db.batch(want.map(([key, value]) => ({ type: 'put' as const, key, value })));
    await db.compactRange();
    await db.put('tail', 'in the log');
    await db.close();
    const c = new ClassicLevel(path.join(root, 'strata'), { valueEncoding: 'utf8' });
    const seen: Array<[string, string]> = [];
    for await (const [k, v] of c.iterator()) seen.push([k, v]);
    await c.close();
    expect(seen).toEqual([...want, ['tail', 'in the log']]);
  });
});

describe('compactions copy the blocks of large values', () => {
  test("large values Google's LevelDB (classic-level) stored are copied, and read back by it", async () => {
    // 400 puts over 300 keys in a scattered order, 5,000 to 19,999 bytes each, held in the
    // memtable: classic-level then writes them all into one table, each value alone in a
    // Snappy block.
    const dir = path.join(tempDir('copied'), 'google');
    const g = new ClassicLevel(dir, { valueEncoding: 'utf8', writeBufferSize: 64 << 20 });
    const model = new Map<string, string>();
    for (let i = 0; i < 400; i++) {
      const key = `key${String((i * 7919) % 300).padStart(4, '0')}`;
      const value = `${i} google line `.repeat(2000).slice(0, 5000 + ((i * 131) % 15000));
      await g.put(key, value);
      model.set(key, value);
    }
    await g.compactRange('key', 'kez');
    await g.close();
    expect(model.size).toBe(300);

    const db = await open(dir, { keyEncoding: 'utf8', valueEncoding: 'utf8' });
    expect((await db.properties()).filesPerLevel.reduce((a, b) => a + b, 0)).toBe(1);
    // Small values at both ends: the compaction merging Strata's table with Google's copies
    // each value Google stored (the 100 older versions dropped) but the two overwritten and
    // key0001, which follows the small key0000 into its block.
    for (const key of ['key0000', 'key0299']) {
      await db.put(key, 'small');
      model.set(key, 'small');
    }
    await db.compactRange();
    expect((await db.properties()).blocksCopied).toBe(297);
    const want = [...model.entries()].sort(([a], [b]) => (a < b ? -1 : 1));
    expect(await db.iterator().all()).toEqual(want);
    await db.close();
    const c = new ClassicLevel(dir, { valueEncoding: 'utf8' });
    const seen: Array<[string, string]> = [];
    for await (const [k, v] of c.iterator()) seen.push([k, v]);
    await c.close();
    expect(seen).toEqual(want);
  });
});

describe('bad input gives documented codes', () => {
  test('argument types', async () => {
    const db = await open('bad-args', { storage: 'mem' });
    expect(await codeOf(db.put(42 as unknown as string, 'v'))).toBe('LEVEL_INVALID_ARGUMENT');
    expect(await codeOf(db.put('k', undefined as unknown as string))).toBe('LEVEL_INVALID_ARGUMENT');
    expect(await codeOf(db.get(null as unknown as string))).toBe('LEVEL_INVALID_ARGUMENT');
    expect(await codeOf(db.batch('nope' as unknown as []))).toBe('LEVEL_INVALID_ARGUMENT');
    expect(await codeOf(db.batch([{ type: 'frob', key: 'k' } as unknown as { type: 'del'; key: string }]))).toBe(
      'LEVEL_INVALID_ARGUMENT',
    );
    expect(await codeOf(() => db.iterator({ gt: {} as unknown as string }))).toBe('LEVEL_INVALID_ARGUMENT');
    expect(await codeOf(db.get('k', { valueEncoding: 'json' as 'utf8' }))).toBe('LEVEL_INVALID_ARGUMENT');
    expect(await codeOf(open('', {}))).toBe('LEVEL_INVALID_ARGUMENT');
    expect(await codeOf(open('x', { storage: 'mem', profile: 'mojang' as 'bedrock' }))).toBe('LEVEL_INVALID_ARGUMENT');
    expect(await codeOf(open('y', { storage: 'mem', cacheSize: -1 }))).toBe('LEVEL_INVALID_ARGUMENT');
    expect(await codeOf(open('z', { storage: 'opfs' }))).toBe('LEVEL_INVALID_ARGUMENT');
    await db.close();
    expect(await codeOf(db.put('k', 'v'))).toBe('LEVEL_DATABASE_NOT_OPEN');
    expect(await codeOf(() => db.iterator())).toBe('LEVEL_DATABASE_NOT_OPEN');
  });

  test('closed iterator, missing database, existing database', async () => {
    const dir = path.join(tempDir('codes'), 'db');
    expect(await codeOf(open(dir, { createIfMissing: false }))).toBe('LEVEL_NOT_FOUND');
    const db = await open(dir);
    await db.put('a', '1');
    const it = db.iterator();
    await it.close();
    expect(await codeOf(it.next())).toBe('LEVEL_ITERATOR_NOT_OPEN');
    await db.close();
    expect(await codeOf(open(dir, { errorIfExists: true }))).toBe('LEVEL_INVALID_ARGUMENT');
    const ro = await open(dir, { readOnly: true });
    expect(await codeOf(ro.put('b', '2'))).toBe('LEVEL_NOT_SUPPORTED');
    await ro.close();
  });

  test('a locked database: same process, another process, and a crashed holder', async () => {
    const dir = path.join(tempDir('lock'), 'db');
    const db = await open(dir);
    expect(await codeOf(open(dir))).toBe('LEVEL_LOCKED');
    expect(await codeOf(open(dir, { readOnly: true }))).toBe('LEVEL_LOCKED');
    const script = `import { open } from ${JSON.stringify(path.resolve('dist/node.js'))};
      try { await open(${JSON.stringify(dir)}); console.log('opened'); } catch (e) { console.log(e.code); }`;
    const other = execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
    expect(other.trim()).toBe('LEVEL_LOCKED');
    await db.close();

    // A holder killed without closing leaves its owner file; the next open takes over.
    const holder = spawn(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        `import { open } from ${JSON.stringify(path.resolve('dist/node.js'))};
         const db = await open(${JSON.stringify(dir)}); await db.put('held', 'yes', { sync: true });
         console.log('ready'); setInterval(() => {}, 1000);`,
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    await new Promise<void>((resolve) => holder.stdout!.on('data', (d: Buffer) => d.toString().includes('ready') && resolve()));
    expect(await codeOf(open(dir))).toBe('LEVEL_LOCKED');
    holder.kill('SIGKILL');
    await new Promise((r) => holder.on('exit', r));
    expect(fs.existsSync(path.join(dir, 'LOCK.owner'))).toBe(true);
    const again = await open(dir, { valueEncoding: 'utf8' });
    expect(await again.get('held')).toBe('yes');
    await again.close();
  });

  worldTest('a corrupted world reports LEVEL_CORRUPTION with the file', async () => {
    const w = worlds().find((r) => r.name === 'amulet_1_16')!;
    const dir = tempDir('corrupt');
    copyDir(path.join(worldsDir, w.name, 'db'), dir);
    const table = fs.readdirSync(dir).find((n) => n.endsWith('.ldb'))!;
    const bytes = fs.readFileSync(path.join(dir, table));
    for (let i = 1000; i < 1100; i++) bytes[i]! ^= 0x5a;
    fs.writeFileSync(path.join(dir, table), bytes);
    const db = await open(dir, { readOnly: true });
    let err: { code?: string; file?: string; message?: string } = {};
    try {
      await db.iterator().all();
    } catch (e) {
      err = e as typeof err;
    }
    expect(err.code).toBe('LEVEL_CORRUPTION');
    expect(err.file).toBe(table);
    expect(await codeOf(db.scan())).toBe('LEVEL_CORRUPTION');
    // The handle is still usable after the error: keys outside the damaged block read fine.
    expect((await db.properties()).filesPerLevel.reduce((a, b) => a + b, 0)).toBe(1);
    await db.close();
  });
});
