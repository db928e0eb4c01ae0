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
