// The assertions on `decodersGone()` (browser/page.mjs), shared by the Chromium and Firefox
// suites: with the decode worker's script refused by the test server, the page reports each of
// the two workers it started (`decoderGone`), the engine's pool drops them at once instead of
// waiting out its start bound, and the scan decodes alone with the iterator's exact figures.

import { expect } from 'vitest';

import { START_BOUND_MS } from '../../dist/decode-pool.js';

/** The path the suites make the server refuse. */
export const DECODE_WORKER_SCRIPT = '/pkg/dist/decode-worker.js';

export interface DecodersGoneResult {
  scan: object;
  iterated: object;
  scanMs: number;
  pool: Record<string, number>;
}

export function expectDecodersGone(r: DecodersGoneResult, browser: string): void {
  console.log(`decode workers refused (${browser}): pool ${JSON.stringify(r.pool)}, scan ${Math.round(r.scanMs)} ms`);
  expect(r.iterated).toMatchObject({ entries: 3000, keyBytes: 3000 * 6, valueBytes: 3000 * 1000 });
  expect(r.scan).toEqual(r.iterated);
  expect(r.pool).toMatchObject({ live: 0, byPage: 2, workersLost: 2, late: 0, sent: 0 });
  expect(r.pool.startMs).toBeGreaterThanOrEqual(0);
  expect(r.pool.startMs).toBeLessThan(START_BOUND_MS);
}
