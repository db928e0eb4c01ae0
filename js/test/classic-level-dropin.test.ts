// Strata's classic-level drop-in (strata-level/classic-level) against the real classic-level
// (Google's LevelDB as a native addon) in the same run: the methods classic-level adds to
// abstract-level (approximateSize, compactRange, getProperty, static destroy and repair) give
// the same answers on the same data, throw the same errors for bad arguments, and each side
// reads what the other wrote.

import fs from 'node:fs';
import path from 'node:path';
import { ClassicLevel as RealClassicLevel } from 'classic-level';
import { describe, expect, test } from 'vitest';

import { ClassicLevel } from '../dist/classic-level.js';
import { tempDir } from './helpers.js';

type AnyLevel = {
  open(): Promise<void>;
  close(): Promise<void>;
  batch(ops: Array<{ type: 'put' | 'del'; key: string; value?: string }>): Promise<void>;
  get(key: string): Promise<string | undefined>;
  approximateSize(start: string, end: string): Promise<number>;
  compactRange(start: string, end: string): Promise<void>;
  getProperty(name: string): string;
};
type Impl = { name: string; make(dir: string, options?: Record<string, unknown>): AnyLevel; destroy(dir: string): Promise<void>; repair(dir: string): Promise<void> };

const IMPLS: Impl[] = [
  {
    name: 'classic-level',
    make: (dir, o) => new RealClassicLevel(dir, o) as unknown as AnyLevel,
    destroy: (dir) => RealClassicLevel.destroy(dir),
    repair: (dir) => RealClassicLevel.repair(dir),
  },
  {
    name: 'strata',
    make: (dir, o) => new ClassicLevel(dir, o) as unknown as AnyLevel,
    destroy: (dir) => ClassicLevel.destroy(dir),
    repair: (dir) => ClassicLevel.repair(dir),
  },
];

const N = 2000;
const key = (i: number) => `key${String(i).padStart(6, '0')}`;
/** 200 bytes that do not compress much (so sizes are about the data's). */
const value = (i: number) => {
  let x = i * 2654435761;
  let s = '';
  while (s.length < 200) {
    x = (x * 1103515245 + 12345) >>> 0;
    s += x.toString(36);
  }
  return s.slice(0, 200);
};

async function fill(db: AnyLevel): Promise<void> {
  for (let i = 0; i < N; i += 200) {
    await db.batch(Array.from({ length: 200 }, (_, j) => ({ type: 'put' as const, key: key(i + j), value: value(i + j) })));
  }
}

/** LevelDB's files in a folder (what DestroyDB removes). */
const LEVELDB_FILE = /^(CURRENT|LOCK|LOG|LOG\.old|MANIFEST-\d+|\d+\.(log|ldb|sst|dbtmp))$/;

describe('classic-level drop-in: the added methods beside the real classic-level', () => {
  test('approximateSize: 0 while in the memtable, then the same order of magnitude once in tables', async () => {
    const root = tempDir('classic-dropin-size');
    const sizes: Record<string, { memtable: number; all: number; half: number; empty: number }> = {};
    for (const impl of IMPLS) {
      const db = impl.make(path.join(root, impl.name));
      await db.open();
      await fill(db);
      const memtable = await db.approximateSize(key(0), key(N));
      await db.compactRange(key(0), key(N));
      const all = await db.approximateSize(key(0), key(N));
      const half = await db.approximateSize(key(0), key(N / 2));
      const empty = await db.approximateSize(key(N), key(N + 100));
      sizes[impl.name] = { memtable, all, half, empty };
      await db.close();
    }
    const real = sizes['classic-level']!;
    const ours = sizes.strata!;
    // LevelDB counts table files only: nothing while the data is in the memtable.
    expect(real.memtable).toBe(0);
    expect(ours.memtable).toBe(0);
    expect(real.empty).toBe(0);
    expect(ours.empty).toBe(0);
    // 2000 × (10-byte key + 200-byte value) = 420,000 bytes of data.
    expect(real.all).toBeGreaterThan(300_000);
    expect(ours.all).toBeGreaterThan(300_000);
    expect(ours.all / real.all).toBeGreaterThan(0.5);
    expect(ours.all / real.all).toBeLessThan(2);
    expect(ours.half / ours.all).toBeGreaterThan(0.4);
    expect(ours.half / ours.all).toBeLessThan(0.6);
  });

  test('approximateSize and compactRange: the same argument errors', async () => {
    const root = tempDir('classic-dropin-args');
    for (const impl of IMPLS) {
      const db = impl.make(path.join(root, impl.name)) as unknown as Record<string, (...a: unknown[]) => Promise<unknown>> & AnyLevel;
      await db.open();
      for (const m of ['approximateSize', 'compactRange']) {
        await expect(db[m]!('a'), `${impl.name} ${m}`).rejects.toThrow(new TypeError("The arguments 'start' and 'end' are required"));
      }
      await db.close();
      await expect(db.approximateSize('a', 'b')).rejects.toMatchObject({ code: 'LEVEL_DATABASE_NOT_OPEN' });
      await expect(db.compactRange('a', 'b')).rejects.toMatchObject({ code: 'LEVEL_DATABASE_NOT_OPEN' });
      expect(() => db.getProperty('leveldb.stats')).toThrow(expect.objectContaining({ code: 'LEVEL_DATABASE_NOT_OPEN' }));
    }
  });

  test('getProperty: num-files-at-levelN, stats, sstables, unknown names, bad arguments', async () => {
    const root = tempDir('classic-dropin-props');
    const seen: Record<string, { levels: string[]; l0: number; statsLines: number; sstables: string; tables: number }> = {};
    for (const impl of IMPLS) {
      const dir = path.join(root, impl.name);
      const db = impl.make(dir);
      await db.open();
      const empty = [0, 1, 2, 3, 4, 5, 6].map((l) => `--- level ${l} ---`).join('\n') + '\n';
      expect(db.getProperty('leveldb.sstables')).toBe(empty);
      expect(db.getProperty('leveldb.num-files-at-level7')).toBe('');
      expect(db.getProperty('leveldb.num-files-at-level')).toBe('');
      expect(db.getProperty('leveldb.foo')).toBe('');
      expect(db.getProperty('foo')).toBe('');
      expect(() => db.getProperty(undefined as unknown as string)).toThrow(new TypeError("The first argument 'property' must be a string"));
      expect(() => db.getProperty({} as unknown as string)).toThrow(new TypeError("The first argument 'property' must be a string"));
      await fill(db);
      await db.compactRange(key(0), key(N));
      const levels = [0, 1, 2, 3, 4, 5, 6].map((l) => db.getProperty(`leveldb.num-files-at-level${l}`));
      const stats = db.getProperty('leveldb.stats');
      const sstables = db.getProperty('leveldb.sstables');
      const tables = fs.readdirSync(dir).filter((f) => f.endsWith('.ldb')).length;
      seen[impl.name] = { levels, l0: Number(levels[0]), statsLines: stats.split('\n').length, sstables, tables };
      // One line per table in sstables; the level of each table as num-files says.
      const perLevel = sstables.split(/--- level \d ---\n/).slice(1).map((s) => (s === '' ? 0 : s.trim().split('\n').length));
      expect(perLevel.map(String)).toEqual(levels);
      expect(levels.reduce((n, l) => n + Number(l), 0)).toBe(tables);
      // The first table's smallest key, in LevelDB's debug form.
      expect(sstables).toMatch(/^--- level 0 ---\n[^]*\d+:\d+\['key000000' @ \d+ : 1 \.\. 'key\d{6}' @ \d+ : 1\]\n/);
      await db.close();
    }
    const real = seen['classic-level']!;
    const ours = seen.strata!;
    // A manual compaction of everything leaves the data out of level 0, in the same number of
    // tables (2 MiB files: one table of 420 KB) at the same level.
    expect(ours.levels).toEqual(real.levels);
    expect(ours.tables).toBe(real.tables);
    // Header (3 lines) + one line per non-empty level + the final newline.
    expect(ours.statsLines).toBe(real.statsLines);
  });

  test('destroy: removes exactly LevelDB files, leaves a foreign file and the folder; an empty folder goes', async () => {
    const root = tempDir('classic-dropin-destroy');
    for (const impl of IMPLS) {
      const dir = path.join(root, impl.name);
      const db = impl.make(dir);
      await db.open();
      await fill(db);
      await db.close();
      fs.writeFileSync(path.join(dir, 'notes.txt'), 'keep me');
      fs.mkdirSync(path.join(dir, 'sub'));
      fs.writeFileSync(path.join(dir, 'sub', '000001.log'), 'not the database');
      const before = fs.readdirSync(dir);
      expect(before.filter((f) => LEVELDB_FILE.test(f)).length, impl.name).toBeGreaterThanOrEqual(4);
      await impl.destroy(dir);
      expect(fs.readdirSync(dir).sort(), impl.name).toEqual(['notes.txt', 'sub']);
      expect(fs.readFileSync(path.join(dir, 'notes.txt'), 'utf8')).toBe('keep me');
      expect(fs.readdirSync(path.join(dir, 'sub'))).toEqual(['000001.log']);

      const clean = path.join(root, `${impl.name}-clean`);
      const db2 = impl.make(clean);
      await db2.open();
      await db2.batch([{ type: 'put', key: 'a', value: '1' }]);
      await db2.close();
      await impl.destroy(clean);
      expect(fs.existsSync(clean), impl.name).toBe(false);
      // A folder that is not there: nothing to do, and not created.
      await impl.destroy(path.join(root, `${impl.name}-missing`));
      expect(fs.existsSync(path.join(root, `${impl.name}-missing`))).toBe(false);
      await expect(impl.destroy('')).rejects.toThrow(new TypeError("The first argument 'location' must be a non-empty string"));
    }
  });

  test('destroy of an open database is refused and removes nothing', async () => {
    const dir = path.join(tempDir('classic-dropin-destroy-open'), 'db');
    const db = new ClassicLevel(dir);
    await db.open();
    await fill(db as unknown as AnyLevel);
    const before = fs.readdirSync(dir).sort();
    await expect(ClassicLevel.destroy(dir)).rejects.toMatchObject({ code: 'LEVEL_LOCKED' });
    expect(fs.readdirSync(dir).sort()).toEqual(before);
    await db.close();
  });

  test('repair: a lost MANIFEST is rebuilt and every entry recovered, readable by both', async () => {
    const root = tempDir('classic-dropin-repair');
    for (const impl of IMPLS) {
      const dir = path.join(root, impl.name);
      const db = impl.make(dir);
      await db.open();
      await fill(db);
      await db.compactRange(key(0), key(N / 2));
      await db.batch([{ type: 'del', key: key(7) }]);
      await db.close();
      for (const f of fs.readdirSync(dir)) if (f === 'CURRENT' || f.startsWith('MANIFEST-')) fs.rmSync(path.join(dir, f));
      await impl.repair(dir);
      expect(fs.readdirSync(dir).some((f) => f.endsWith('.log') && fs.statSync(path.join(dir, f)).size > 0), impl.name).toBe(false);
      // Each side reads the other's repair.
      for (const reader of IMPLS) {
        const r = reader.make(dir, { createIfMissing: false });
        await r.open();
        let count = 0;
        let bad = 0;
        for await (const [k, v] of (r as unknown as { iterator(): AsyncIterable<[string, string]> }).iterator()) {
          count++;
          if (v !== value(Number(k.slice(3)))) bad++;
        }
        expect({ by: impl.name, reader: reader.name, count, bad, deleted: await r.get(key(7)) }).toEqual({ by: impl.name, reader: reader.name, count: N - 1, bad: 0, deleted: undefined });
        await r.close();
      }
    }
    await expect(ClassicLevel.repair('')).rejects.toThrow(new TypeError("The first argument 'location' must be a non-empty string"));
  });

  test('constructor: location checked with classic-level message; blockRestartInterval reaches the engine', async () => {
    expect(() => new ClassicLevel('')).toThrow(new TypeError("The first argument 'location' must be a non-empty string"));
    expect(() => new ClassicLevel({} as unknown as string)).toThrow(new TypeError("The first argument 'location' must be a non-empty string"));
    const root = tempDir('classic-dropin-restart');
    const bytes: number[] = [];
    for (const interval of [1, 128]) {
      const dir = path.join(root, String(interval));
      const db = new ClassicLevel(dir, { blockRestartInterval: interval, compression: false, multithreading: true });
      expect(db.location).toBe(dir);
      await db.open();
      await fill(db as unknown as AnyLevel);
      await db.compactRange(key(0), key(N));
      await db.close();
      bytes.push(fs.readdirSync(dir).filter((f) => f.endsWith('.ldb')).reduce((n, f) => n + fs.statSync(path.join(dir, f)).size, 0));
      // classic-level reads it.
      const real = new RealClassicLevel(dir, { createIfMissing: false });
      await real.open();
      expect(await real.get(key(1234))).toBe(value(1234));
      await real.close();
    }
    // A restart point per key stores every key whole plus a 4-byte offset each; one per 128
    // keys shares the prefixes: at least 2000 × (4 + ~5) bytes more.
    expect(bytes[0]! - bytes[1]!).toBeGreaterThan(N * 8);
  });
});
