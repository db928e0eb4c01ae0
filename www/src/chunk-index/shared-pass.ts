// The chunk index's pass shared between the page's engine and the map helpers. The world's
// keys are cut into ranges of about equal table bytes (World.chunkSplitKeys: any 8-byte key
// leaves each chunk's records on one side); every engine takes the next range nobody took
// until none is left; the page's engine joins the parts in key order (World.joinChunkParts:
// the list and samples one pass gives, byte for byte). On two cores the page's engine and one
// helper index the 160,000-chunk world in 777 ms against 1,038 alone (Chromium).
//
// Invariants: each range is joined once, from the first call that passed it; a range a helper
// fails goes back to be taken again (by the page's engine if no helper is left), so the pass
// never waits on a helper that died; when the page's engine has no range left and has waited
// STALL_MS (or 4 times the slowest range passed) without any helper answering, it passes the
// range a helper has held longest itself, so the pass never waits long on a helper that
// stalls; helpers not open yet join when they open, and the pass does not wait for them to
// open; parts are joined in key order.

import type { World } from 'strata-level/browser';

/** Engines that can pass a range: map helpers (map-helpers/pool.ts). */
export interface PartTakers {
  readonly size: number;
  chunkPart(dimension: 0 | 1 | 2, range: { start?: Uint8Array; end?: Uint8Array }): Promise<Uint8Array>;
}

/** Ranges per engine expected: enough that an engine that starts late, or runs slower, leaves
 * little for the others to wait on at the end (a range of the 160,000-chunk world is about
 * 110 ms of the pass at 4 per engine on two). */
export const RANGES_PER_ENGINE = 4;

/** Below this many bytes of tables, one pass is quick enough that sharing it saves nothing: a
 * helper opens 70-115 ms into the pass, and the largest shared world (16 MB of tables) was
 * indexed in 229-270 ms whole against 268-302 ms shared (Chromium, two runs each); the
 * 160,000-chunk world (47 MB) in 971-1,038 against 777-856. */
export const MIN_SHARED_BYTES = 32 << 20;

/** How long the page's engine, with no range left, waits for a helper's range at least
 * before passing it too (the slowest range of the 160,000-chunk world takes about 0.2 s). */
export const STALL_MS = 1000;

export interface SharedPass {
  /** The chunk list, as `chunkList(dimension, { reliefSamples: true })` gives it; the page's
   * engine keeps the samples. */
  chunks: Int32Array;
  /** Ranges the pass was cut into, and those the helpers passed. */
  ranges: number;
  byHelpers: number;
  /** Each range passed: by whom, and when (ms from the pass's start, split keys included). */
  timeline: Array<{ range: number; by: 'page' | 'helper'; start: number; end: number }>;
}

/** The chunk index of `dimension` with relief samples, its pass shared with the helpers
 * `takers` resolves to (`engines` is how many engines are expected in all, to cut the
 * ranges); undefined when the world's tables hold fewer than `minBytes` (the caller passes it
 * whole). */
export async function sharedChunkPass(
  w: World,
  dimension: 0 | 1 | 2,
  takers: Promise<PartTakers | undefined>,
  engines: number,
  minBytes = MIN_SHARED_BYTES,
  stallMs = STALL_MS,
): Promise<SharedPass | undefined> {
  const t0 = performance.now();
  const ms = (): number => Math.round(performance.now() - t0);
  const timeline: SharedPass['timeline'] = [];
  const keys = await w.chunkSplitKeys(Math.max(2, engines * RANGES_PER_ENGINE), minBytes);
  if (keys.length === 0) return undefined;
  const ranges = [undefined, ...keys].map((start, i) => ({ start, end: keys[i] }));
  const parts: Array<Uint8Array | undefined> = ranges.map(() => undefined);
  const taken = ranges.map(() => false);
  // When each range was last taken (ms), to find the one a stalled helper holds.
  const takenAt = ranges.map(() => 0);
  const take = (): number => {
    // Not a range passed already (given back by a helper that failed while the page's engine
    // passed it too).
    const i = taken.findIndex((t, k) => !t && parts[k] === undefined);
    if (i >= 0) [taken[i], takenAt[i]] = [true, ms()];
    return i;
  };
  // Helper calls in flight: the page's engine, with no range left to take, waits for one of
  // them to settle (a failed one gives its range back).
  const inFlight = new Set<Promise<void>>();
  let byHelpers = 0;
  let ended = false;
  // The longest any range took, to tell a stalled helper from a slow range.
  let slowest = 0;
  const done = (i: number, part: Uint8Array, by: 'page' | 'helper', start: number): boolean => {
    if (parts[i] !== undefined) return false; // passed twice (a stalled helper's): the first counts
    parts[i] = part;
    const end = ms();
    slowest = Math.max(slowest, end - start);
    timeline.push({ range: i, by, start, end });
    return true;
  };
  const helperLoop = async (pool: PartTakers): Promise<void> => {
    for (;;) {
      if (ended) return;
      const i = take();
      if (i < 0) return;
      let failed = false;
      const start = ms();
      const call = pool.chunkPart(dimension, ranges[i]!).then(
        (part) => {
          if (done(i, part, 'helper', start)) byHelpers += 1;
        },
        () => {
          if (parts[i] === undefined) taken[i] = false;
          failed = true;
        },
      );
      inFlight.add(call);
      await call;
      inFlight.delete(call);
      // A helper that answered with an error takes no more ranges of this pass (one whose
      // worker died is dropped by pool.ts; one that could not read the world would fail again).
      if (failed) return;
    }
  };
  void takers.then(
    (pool) => {
      for (let k = 0; k < (pool?.size ?? 0); k++) void helperLoop(pool!);
    },
    () => undefined,
  );
  try {
    for (;;) {
      const i = take();
      if (i >= 0) {
        const start = ms();
        done(i, await w.chunkListPart(dimension, ranges[i]!), 'page', start);
        continue;
      }
      if (parts.every((p) => p !== undefined)) break;
      if (inFlight.size === 0) {
        // Never wait on nothing: a range taken with no call in flight is taken again.
        parts.forEach((p, k) => (taken[k] = p !== undefined));
        continue;
      }
      let timer: ReturnType<typeof setTimeout> | undefined;
      const patience = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), Math.max(stallMs, 4 * slowest))));
      const settled = await Promise.race([Promise.race(inFlight).then(() => true), patience]);
      clearTimeout(timer);
      if (settled) continue;
      // A helper holds a range for long: the one held longest is passed here too (the first
      // answer counts).
      let k = -1;
      parts.forEach((p, j) => {
        if (p === undefined && taken[j] && (k < 0 || takenAt[j]! < takenAt[k]!)) k = j;
      });
      if (k < 0) continue;
      const start = ms();
      done(k, await w.chunkListPart(dimension, ranges[k]!), 'page', start);
    }
  } finally {
    ended = true;
  }
  const chunks = await w.joinChunkParts(dimension, parts as Uint8Array[]);
  return { chunks, ranges: ranges.length, byHelpers, timeline };
}
