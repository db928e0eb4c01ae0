// The viewer's shared chunk index pass (www/src/chunk-index/shared-pass.ts) with the package's
// Node engine as the page's and other engines on the same world as map helpers, their calls
// held and released by the test so that each interleaving is forced, not left to timing: a
// helper that opens after the pass, one that never opens, one whose call fails while the
// page's engine waits with no range left, one that stalls, two helpers answering out of order.
// Every way, the list and the samples are one whole pass's, byte for byte, and every range is
// joined once.

import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';

import { openWorld, type World } from '../dist/node.js';
import { sharedChunkPass, type PartTakers, type SharedPass } from '../../www/src/chunk-index/shared-pass.js';
import { cliPath, repoRoot, tempDir } from './helpers.js';

const releaseCli = process.env.STRATA_CLI ?? (fs.existsSync(path.join(repoRoot, 'target/release/strata')) ? path.join(repoRoot, 'target/release/strata') : cliPath);

/** A promise and its resolvers. */
function gate<T = void>(): { promise: Promise<T>; resolve(v: T): void; reject(e: unknown): void } {
  let resolve!: (v: T) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<T>((res, rej) => ((resolve = res), (reject = rej)));
  return { promise, resolve, reject };
}

/** A helper over `w` whose calls wait, each, for the test to let them go (`next()` gives the
 * next call asked for; `release(call, ok)` lets it run, or fail). */
class HeldHelper implements PartTakers {
  readonly size = 1;
  readonly asked: Array<{ range: { start?: Uint8Array; end?: Uint8Array }; go: ReturnType<typeof gate<boolean>> }> = [];
  private waiting: Array<() => void> = [];
  constructor(private readonly w: World) {}

  async chunkPart(dimension: 0 | 1 | 2, range: { start?: Uint8Array; end?: Uint8Array }): Promise<Uint8Array> {
    const go = gate<boolean>();
    this.asked.push({ range, go });
    for (const wake of this.waiting.splice(0)) wake();
    if (!(await go.promise)) throw new Error('the helper died');
    const part = await this.w.chunkListPart(dimension, range);
    this.answered += 1;
    return part;
  }

  /** Calls answered with a part. */
  answered = 0;

  /** Resolves once the helper has been asked for call number `n` (from 0). */
  async asking(n: number): Promise<void> {
    while (this.asked.length <= n) await new Promise<void>((r) => this.waiting.push(r));
  }
}

/** `w` as the page's engine, running `before(n, range)` before its n-th range (from 1). */
function spyOn(w: World, before: (n: number, range: { start?: Uint8Array; end?: Uint8Array }) => Promise<void> | void): World {
  let n = 0;
  return {
    chunkSplitKeys: (parts: number, min: number) => w.chunkSplitKeys(parts, min),
    chunkListPart: async (d: 0 | 1 | 2, r: { start?: Uint8Array; end?: Uint8Array }) => {
      await before(++n, r);
      return w.chunkListPart(d, r);
    },
    joinChunkParts: (d: 0 | 1 | 2, parts: Uint8Array[]) => w.joinChunkParts(d, parts),
  } as unknown as World;
}

const tick = (ms = 0): Promise<void> => new Promise((r) => setTimeout(r, ms));

describe('the chunk index pass shared between engines', () => {
  let dir: string;
  let whole: Int32Array;
  let samples: Uint8Array;
  let page: World;
  let other: World;
  beforeAll(async () => {
    dir = path.join(tempDir('shared-pass'), 'world');
    execFileSync(releaseCli, ['gen-world', dir, '--chunks-x', '50', '--chunks-z', '40', '--seed', '5']);
    const alone = await openWorld(dir);
    whole = await alone.chunkList(0, { reliefSamples: true });
    samples = (await alone.reliefSamples(0))!;
    await alone.close();
    [page, other] = [await openWorld(dir), await openWorld(dir)];
  });
  afterAll(async () => {
    await Promise.all([page?.close(), other?.close()]);
  });

  /** The pass's list and the page engine's samples are the whole pass's. */
  async function expectWhole(chunks: Int32Array): Promise<void> {
    expect(chunks.length).toBe(2000 * 2);
    expect(Buffer.from(chunks.buffer, chunks.byteOffset, chunks.byteLength).equals(Buffer.from(whole.buffer, whole.byteOffset, whole.byteLength))).toBe(true);
    expect(Buffer.from((await page.reliefSamples(0))!).equals(Buffer.from(samples))).toBe(true);
  }

  test('too small to share: undefined (the caller passes it whole)', { timeout: 30_000 }, async () => {
    expect(await sharedChunkPass(page, 0, Promise.resolve(undefined), 2)).toBeUndefined();
  });

  test('no helper opens (its open never settles): the page\'s engine passes every range, without waiting on it', { timeout: 30_000 }, async () => {
    const pass = (await sharedChunkPass(page, 0, new Promise<PartTakers | undefined>(() => {}), 2, 0))!;
    expect([pass.ranges, pass.byHelpers]).toEqual([8, 0]);
    expect(pass.timeline.map((t) => t.range)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    await expectWhole(pass.chunks);
  });

  test('a helper opens after the page\'s engine took the first range: it takes ranges from then on; each range is joined once, in key order', { timeout: 30_000 }, async () => {
    const opened = gate<PartTakers | undefined>();
    const helper = new HeldHelper(other);
    // The page's engine, telling when it starts its first range.
    const started = gate();
    const spy = {
      chunkSplitKeys: (parts: number, min: number) => page.chunkSplitKeys(parts, min),
      chunkListPart: (d: 0 | 1 | 2, r: { start?: Uint8Array; end?: Uint8Array }) => (started.resolve(), page.chunkListPart(d, r)),
      joinChunkParts: (d: 0 | 1 | 2, parts: Uint8Array[]) => page.joinChunkParts(d, parts),
    } as unknown as World;
    const passing = sharedChunkPass(spy, 0, opened.promise, 2, 0);
    // The page's engine has taken range 0 when the helper opens: the helper asks for a later
    // one. Each call it asks for runs at once; the page's engine passes the others.
    await started.promise;
    opened.resolve(helper);
    for (let n = 0; ; n++) {
      const asked = await Promise.race([helper.asking(n).then(() => true), passing.then(() => false)]);
      if (!asked) break;
      if (n === 0) expect(helper.asked[0]!.range.start).toBeDefined();
      helper.asked[n]!.go.resolve(true);
    }
    const pass = (await passing)!;
    expect(pass.byHelpers).toBe(helper.asked.length);
    expect(pass.byHelpers).toBeGreaterThanOrEqual(1);
    expect(pass.timeline.find((t) => t.range === 0)!.by).toBe('page');
    expect(pass.timeline.map((t) => t.range).sort((a, b) => a - b)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    expect(pass.timeline.filter((t) => t.by === 'helper').length).toBe(pass.byHelpers);
    await expectWhole(pass.chunks);
  });

  test('a helper\'s call fails while the page\'s engine has no range left to take: the page\'s engine passes that range itself', { timeout: 30_000 }, async () => {
    const helper = new HeldHelper(other);
    // The page's engine passes every other range (7) while the helper's call is held.
    const sevenDone = gate();
    let pageCalls = 0;
    const spy = spyOn(page, (n) => {
      pageCalls = n;
    });
    const passing = sharedChunkPass(spy, 0, Promise.resolve(helper), 2, 0);
    await helper.asking(0);
    const held = helper.asked[0]!;
    void (async () => {
      while (pageCalls < 7) await tick(5);
      sevenDone.resolve();
    })();
    await sevenDone.promise;
    await tick(50); // its 7th range passed, it waits on the held call
    let settled = false;
    void passing.then(() => (settled = true));
    await tick(20);
    expect(settled).toBe(false);
    held.go.resolve(false); // the helper's call fails: its range goes back, and it takes no more
    const pass = (await passing)!;
    expect(pageCalls).toBe(8);
    expect(helper.asked.length).toBe(1);
    expect([pass.ranges, pass.byHelpers]).toEqual([8, 0]);
    expect(pass.timeline.map((t) => t.by)).toEqual(Array(8).fill('page'));
    expect(pass.timeline.map((t) => t.range).sort((a, b) => a - b)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    await expectWhole(pass.chunks);
  });

  test('a helper that holds its range (stalled, not dead): past the patience the page\'s engine passes it too; the helper\'s late answer is not joined again', { timeout: 30_000 }, async () => {
    const helper = new HeldHelper(other);
    const t0 = Date.now();
    const pass = (await sharedChunkPass(page, 0, Promise.resolve(helper), 2, 0, 300))!;
    // The page's engine passed the 7 other ranges, waited at least 300 ms, then passed the
    // held one itself.
    expect(Date.now() - t0).toBeGreaterThanOrEqual(300);
    expect(helper.asked.length).toBe(1);
    expect([pass.ranges, pass.byHelpers]).toEqual([8, 0]);
    expect(pass.timeline.map((t) => t.by)).toEqual(Array(8).fill('page'));
    expect(pass.timeline.map((t) => t.range).sort((a, b) => a - b)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    await expectWhole(pass.chunks);
    // Released now, the helper answers: its part is not joined, nor timed, again.
    helper.asked[0]!.go.resolve(true);
    await new Promise((r) => setTimeout(r, 100));
    expect(pass.timeline.length).toBe(8);
  });

  /** A pass whose one helper holds its range until the page's engine, past the patience
   * (100 ms), starts passing it too: `meanwhile(helper)` runs then, before the page's call.
   * Resolves with the pass and the number of ranges the page's engine passed. */
  async function stalledPass(meanwhile: (helper: HeldHelper) => Promise<void>): Promise<{ pass: SharedPass; pageCalls: number; helper: HeldHelper }> {
    const helper = new HeldHelper(other);
    let pageCalls = 0;
    const spy = spyOn(page, async (n) => {
      pageCalls = n;
      if (n === 8) await meanwhile(helper);
    });
    const pass = (await sharedChunkPass(spy, 0, Promise.resolve(helper), 2, 0, 100))!;
    return { pass, pageCalls, helper };
  }

  test('a helper\'s call fails while the page\'s engine passes the same (stalled) range: the range is not passed a third time', { timeout: 30_000 }, async () => {
    const { pass, pageCalls, helper } = await stalledPass(async (h) => {
      h.asked[0]!.go.resolve(false);
      await tick(20);
    });
    expect([pageCalls, helper.asked.length, pass.byHelpers]).toEqual([8, 1, 0]);
    expect(pass.timeline.map((t) => t.range).sort((a, b) => a - b)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    await expectWhole(pass.chunks);
  });

  test('a stalled helper answers while the page\'s engine passes its range: the first answer, the helper\'s, is joined; the page\'s is not', { timeout: 30_000 }, async () => {
    const { pass, pageCalls, helper } = await stalledPass(async (h) => {
      h.asked[0]!.go.resolve(true);
      while (h.answered === 0) await tick(5);
      await tick(20);
    });
    expect([pageCalls, helper.asked.length, pass.byHelpers]).toEqual([8, 1, 1]);
    expect(pass.timeline.length).toBe(8);
    expect(pass.timeline.filter((t) => t.by === 'helper').length).toBe(1);
    await expectWhole(pass.chunks);
  });

  test('two helpers stalled: the page\'s engine passes first the range held longest', { timeout: 30_000 }, async () => {
    const [a, b] = [new HeldHelper(other), new HeldHelper(other)];
    // a holds the first range it takes; b answers its first after 10 ms, then holds the next
    // one it takes (taken later than a's).
    const both: PartTakers = { size: 2, chunkPart: (d, r) => (a.asked.length === 0 ? a : b).chunkPart(d, r) };
    void (async () => {
      await b.asking(0);
      await tick(10);
      b.asked[0]!.go.resolve(true);
    })();
    const stallPassed: Array<Uint8Array | undefined> = [];
    let pageCalls = 0;
    // The page's engine slowed (10 ms a range), so that ranges are left when b takes its second.
    const spy = spyOn(page, async (n, r) => {
      pageCalls = n;
      await tick(10);
      if (b.asked.length === 2 && [a.asked[0], b.asked[1]].some((c) => c!.range === r)) stallPassed.push(r.start);
    });
    const pass = (await sharedChunkPass(spy, 0, Promise.resolve(both), 3, 0, 100))!;
    expect([pass.ranges, pass.byHelpers, b.asked.length, stallPassed.length, pageCalls]).toEqual([12, 1, 2, 2, 11]);
    expect(stallPassed[0]).toEqual(a.asked[0]!.range.start);
    expect(stallPassed[1]).toEqual(b.asked[1]!.range.start);
    await expectWhole(pass.chunks);
    for (const c of [...a.asked, ...b.asked]) c.go.resolve(false);
  });

  test('the world closed during the pass: the pass fails with the engine\'s error, no helper call is waited on', { timeout: 30_000 }, async () => {
    const victim = await openWorld(dir);
    const helper = new HeldHelper(other);
    const spy = spyOn(victim, async (n) => {
      if (n === 3) await victim.close();
    });
    await expect(sharedChunkPass(spy, 0, Promise.resolve(helper), 2, 0)).rejects.toMatchObject({ code: 'LEVEL_DATABASE_NOT_OPEN' });
    for (const c of helper.asked) c.go.resolve(false);
  });

  test('two helpers and the page\'s engine, helpers answering out of order: the parts are still joined in key order', { timeout: 30_000 }, async () => {
    const [a, b] = [new HeldHelper(other), new HeldHelper(other)];
    const both: PartTakers = {
      size: 2,
      // The pool gives each call to the helper with fewer in flight: here, alternately.
      chunkPart: (d, r) => ((a.asked.length <= b.asked.length ? a : b) as HeldHelper).chunkPart(d, r),
    };
    const passing = sharedChunkPass(page, 0, Promise.resolve(both), 3, 0);
    await a.asking(0);
    await b.asking(0);
    // b's range (later in key order) answers first, then a's; then all calls run freely.
    b.asked[0]!.go.resolve(true);
    await new Promise((r) => setTimeout(r, 50));
    a.asked[0]!.go.resolve(true);
    let done = false;
    void passing.then(() => (done = true));
    while (!done) {
      for (const h of [a, b]) for (const c of h.asked) c.go.resolve(true);
      await new Promise((r) => setTimeout(r, 5));
    }
    const pass = (await passing)!;
    expect(pass.ranges).toBe(12);
    expect(pass.byHelpers).toBe(a.asked.length + b.asked.length);
    // b's first range (later in key order than a's) was answered, and timed, before a's.
    const keys = await page.chunkSplitKeys(12, 0);
    const rangeOf = (h: HeldHelper): number => {
      const start = h.asked[0]!.range.start;
      return start === undefined ? 0 : 1 + keys.findIndex((k) => Buffer.from(k).equals(Buffer.from(start)));
    };
    const [ra, rb] = [rangeOf(a), rangeOf(b)];
    expect(rb).toBeGreaterThan(ra);
    const order = pass.timeline.map((t) => t.range);
    expect(order.indexOf(rb)).toBeLessThan(order.indexOf(ra));
    expect(pass.timeline.map((t) => t.range).sort((x, y) => x - y)).toEqual([...Array(12).keys()]);
    await expectWhole(pass.chunks);
  });
});
