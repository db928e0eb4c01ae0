// The assertions on `opfsSnapshot()` (browser/page.mjs), shared by the Chromium and Firefox
// suites so that both browsers are held to the same checks: a database held read-only and one
// opened on its File snapshots read the same entries; the snapshot holds the database's files
// only (CURRENT, one MANIFEST, tables); a missing database is LEVEL_NOT_FOUND; a pool written
// slot by slot gives exactly what an open takes.

import { expect } from 'vitest';

import { OPFS_SNAPSHOT } from './expected.js';

export interface OpfsSnapshotResult {
  kinds: Record<string, number>;
  fromPool: { entries: number };
  fromSnapshots: object;
  missing: string;
  crafted: Array<[string, string]>;
}

export function expectOpfsSnapshot(r: OpfsSnapshotResult, browser: string): void {
  console.log(`opfsFiles (${browser}): ${JSON.stringify(r.kinds)}`);
  expect(r.fromPool.entries).toBe(OPFS_SNAPSHOT.entries);
  expect(r.fromSnapshots).toEqual(r.fromPool);
  expect(r.missing).toBe('LEVEL_NOT_FOUND');
  expect(Object.keys(r.kinds).filter((k) => k.startsWith('outside'))).toEqual([]);
  expect([r.kinds['CURRENT'], r.kinds['MANIFEST-N']]).toEqual([1, 1]);
  expect(r.kinds['N.ldb']).toBeGreaterThanOrEqual(2);
  expect(r.crafted).toEqual(OPFS_SNAPSHOT.crafted);
}
