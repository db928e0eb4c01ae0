// Reliability through the Node package: many promises in flight against a model (mem and
// node:fs), and a full disk (ENOSPC from a quota-limited storage host) during a synced write,
// a flush and a compaction: the error reaches the caller as LEVEL_IO_ERROR with kind NoSpace
// and the host's code, and the database reopens (on plain node:fs) with every acknowledged
// write and passes the native `strata verify`.

import path from 'node:path';
import { describe, expect, test } from 'vitest';

import { NodeFsHost, open, type Db, type StorageHost } from '../dist/node.js';
import { cli, tempDir } from './helpers.js';
// @ts-expect-error: plain JS module shared with the browser test.
import { inflight } from './shared/inflight.mjs';
import { INFLIGHT } from './shared/expected.js';

/** The counts `inflight` reports for its default seed (deterministic: every random choice is
 * made in issue order). */

describe('many promises in flight agree with a model', () => {
  test('mem', async () => {
    expect(await inflight(open, 'inflight-mem', { storage: 'mem' })).toEqual(INFLIGHT);
  });
  test('node:fs', async () => {
    expect(await inflight(open, path.join(tempDir('inflight'), 'db'))).toEqual(INFLIGHT);
  });
});

/** node:fs with a byte quota on writes: a write that would pass it throws ENOSPC and writes
 * nothing (as a full disk does for a whole append). */
class QuotaHost extends NodeFsHost implements StorageHost {
  used = 0;
  budget = Infinity;
  refused = 0;

  override write(fd: number, data: Uint8Array): void {
    if (this.used + data.length > this.budget) {
      this.refused++;
      const err = new Error('no space left on device') as Error & { code: string };
      err.code = 'ENOSPC';
      throw err;
    }
    super.write(fd, data);
    this.used += data.length;
  }
}

const value = (i: number) => `value-${i}-`.padEnd(300, String.fromCharCode(97 + (i % 26)));

async function failure(p: Promise<unknown>): Promise<{ code: string; kind?: string; message: string }> {
  try {
    await p;
  } catch (e) {
    const err = e as { code: string; kind?: string; message: string };
    return { code: err.code, kind: err.kind, message: err.message };
  }
  throw new Error('expected a failure');
}

/** Fills a database on a quota host with acknowledged synced writes; returns it and them. */
async function filled(dir: string, host: QuotaHost, n: number): Promise<{ db: Db; acked: Map<string, string> }> {
  const db = await open(dir, { storage: 'host', host, writeBufferSize: 64 * 1024 });
  const acked = new Map<string, string>();
  for (let i = 0; i < n; i++) {
    const k = `key-${String(i % 700).padStart(4, '0')}`;
    await db.put(k, value(i), { sync: i % 3 === 0 });
    acked.set(k, value(i));
    if (i % 100 === 99) await db.flush();
  }
  return { db, acked };
}

/** Reopens on plain node:fs: every acknowledged write is there, nothing else, and the native
 * verifier passes. */
async function checkReopened(dir: string, acked: Map<string, string>): Promise<number> {
  const db = await open(dir, { valueEncoding: 'utf8', keyEncoding: 'utf8' });
  const all = await db.iterator().all();
  await db.close();
  expect(all).toEqual([...acked.entries()].sort(([a], [b]) => (a < b ? -1 : 1)));
  expect(cli('verify', dir)).toMatch(/^OK: \d+ tables, \d+ blocks, \d+ entries/);
  return all.length;
}

describe('a full disk (ENOSPC) reaches the caller and loses no acknowledged write', () => {
  test('during a synced put', async () => {
    const dir = path.join(tempDir('enospc-put'), 'db');
    const host = new QuotaHost();
    const { db, acked } = await filled(dir, host, 1000);
    host.budget = host.used + 10_000;
    let err: { code: string; kind?: string; message: string } | undefined;
    for (let i = 1000; i < 1100 && err === undefined; i++) {
      const k = `key-${String(i % 700).padStart(4, '0')}`;
      try {
        await db.put(k, value(i), { sync: true });
        acked.set(k, value(i));
      } catch (e) {
        err = e as typeof err;
      }
    }
    expect(err?.code).toBe('LEVEL_IO_ERROR');
    expect(err?.kind).toBe('NoSpace');
    expect(err?.message).toMatch(/ENOSPC/);
    // No write is acknowledged on a database that ran out of space, even after space returns.
    host.budget = Infinity;
    expect((await failure(db.put('after', 'x', { sync: true }))).code).toBe('LEVEL_IO_ERROR');
    await db.close().catch(() => {});
    expect(await checkReopened(dir, acked)).toBe(700);
  });

  test('during a flush and during a compaction', async () => {
    for (const stage of ['flush', 'compaction'] as const) {
      const dir = path.join(tempDir(`enospc-${stage}`), 'db');
      const host = new QuotaHost();
      // 1,550 writes leave 50 in the memtable (a flush runs after every 100th).
      const { db, acked } = await filled(dir, host, 1550);
      if (stage === 'compaction') await db.flush();
      // Room for part of the table output: the flush or compaction fails part-way through.
      host.budget = host.used + (stage === 'flush' ? 1_000 : 6_000);
      const err = await failure(stage === 'flush' ? db.flush() : db.compactRange());
      expect(host.refused).toBeGreaterThan(0);
      expect(err.code).toBe('LEVEL_IO_ERROR');
      expect(err.kind).toBe('NoSpace');
      expect(err.message).toMatch(/ENOSPC/);
      host.budget = Infinity;
      await db.close().catch(() => {});
      expect(await checkReopened(dir, acked)).toBe(700);
    }
  });

  test('a storage host lacking methods is refused', async () => {
    const err = await failure(open(path.join(tempDir('badhost'), 'db'), { storage: 'host', host: { open() {} } as unknown as StorageHost }));
    expect(err.code).toBe('LEVEL_INVALID_ARGUMENT');
    expect(err.message).toMatch(/lacks read, write/);
  });
});
