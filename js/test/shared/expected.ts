// Exact figures the shared test modules give, asserted by every suite that runs them (Node,
// Chromium, Firefox, WebKit): one place, so the browsers are held to the same numbers.

/** `inflight(open, ...)` (shared/inflight.mjs): its seeded model's counts. */
export const INFLIGHT = { writes: 2632, reads: 1369, iterators: 470, flushes: 83, snapshotReads: 4920, checks: 7007, entries: 197 };

/** `badInput()` (browser/page.mjs): the documented code of each bad call. */
export const BAD_INPUT = {
  putNumber: 'LEVEL_INVALID_ARGUMENT',
  badBatch: 'LEVEL_INVALID_ARGUMENT',
  badOption: 'LEVEL_INVALID_ARGUMENT',
  notFound: 'LEVEL_NOT_FOUND',
  alive: 'alive',
  closed: 'LEVEL_DATABASE_NOT_OPEN',
};

/** `opfsSnapshot()` (browser/page.mjs): entries a database held read-only and one opened on
 * its snapshots both read (6,000 puts, every 7th deleted), and what a snapshot of the pool
 * written slot by slot gives: a spare, a torn header and journal-named slots left out; of two
 * slots naming one path the higher generation, on a tie the higher slot number. */
export const OPFS_SNAPSHOT = {
  entries: 6000 - 858,
  crafted: [
    ['crafted-pool/000005.ldb', 'newer name of 000005.ldb'],
    ['crafted-pool/000011.log', 'journal names another generation'],
    ['crafted-pool/000013.ldb', 'older name of 000013.ldb'],
    ['crafted-pool/CURRENT', 'MANIFEST-000002\n'],
    ['crafted-pool/MANIFEST-000002', 'slot 10'],
  ],
};
