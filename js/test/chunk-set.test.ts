// The viewer's ChunkSet (www/src/chunk-index/chunk-set.ts) against a Set of "x,z" strings:
// the same answers for every pair in and around random lists (sorted as World.chunkList gives
// them, and shuffled), at i32's extremes, and for an empty list. The flat chunk-list helpers
// (www/src/chunk-index/chunk-list.ts) against the same lists as [x, z] pairs, and rectangle
// queries (a band's, a detail tile's chunks) against a filter of the sorted pairs.

import { describe, expect, test } from 'vitest';

import { ascending, boundsOf, chunkCount, isAscending, listOf, pairsOf } from '../../www/src/chunk-index/chunk-list.js';
import { ChunkSet } from '../../www/src/chunk-index/chunk-set.js';

function xorshift(seed: number): () => number {
  let s = seed >>> 0 || 1;
  return () => {
    s ^= s << 13;
    s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5;
    s >>>= 0;
    return s;
  };
}

/** n pairs within ±spread (any i32 when spread is 2^31). */
function randomPairs(next: () => number, spread: number, n: number): Array<[number, number]> {
  const r = () => (spread === 2 ** 31 ? next() | 0 : (next() % (2 * spread)) - spread);
  return Array.from({ length: n }, () => [r(), r()] as [number, number]);
}

describe('ChunkSet', () => {
  test('answers as a Set of "x,z" strings, sorted or shuffled, at the extremes', () => {
    const next = xorshift(7);
    let checked = 0;
    for (const spread of [3, 40, 2 ** 31]) {
      const pairs = randomPairs(next, spread, 2000);
      pairs.push([-(2 ** 31), 2 ** 31 - 1], [2 ** 31 - 1, -(2 ** 31)]);
      const oracle = new Set(pairs.map(([x, z]) => `${x},${z}`));
      const sorted = [...new Map(pairs.map((p) => [`${p[0]},${p[1]}`, p])).values()].sort((a, b) => a[0] - b[0] || a[1] - b[1]);
      for (const list of [sorted, pairs]) {
        const set = new ChunkSet(listOf(list));
        expect(set.size).toBe(list.length);
        for (const [x, z] of pairs) {
          for (const [dx, dz] of [[0, 0], [1, 0], [0, 1], [-1, 0], [0, -1]] as const) {
            expect(set.has(x + dx, z + dz)).toBe(oracle.has(`${x + dx},${z + dz}`));
            checked += 1;
          }
        }
      }
    }
    expect(checked).toBe(3 * 2 * 2002 * 5);
    expect(new ChunkSet().has(0, 0)).toBe(false);
  });

  test('flat lists: pairs round trip, sort and bounds as the same lists of pairs', () => {
    const next = xorshift(11);
    for (const spread of [5, 300, 2 ** 31]) {
      const pairs = randomPairs(next, spread, 3000);
      const list = listOf(pairs);
      expect(chunkCount(list)).toBe(3000);
      expect(pairsOf(list)).toEqual(pairs);
      const sorted = [...pairs].sort((a, b) => a[0] - b[0] || a[1] - b[1]);
      expect(isAscending(list)).toBe(false);
      expect(pairsOf(ascending(list))).toEqual(sorted);
      const already = listOf(sorted);
      expect(isAscending(already)).toBe(true);
      expect(ascending(already)).toBe(already); // no copy
      expect(boundsOf(list)).toEqual([
        Math.min(...pairs.map((p) => p[0])),
        Math.min(...pairs.map((p) => p[1])),
        Math.max(...pairs.map((p) => p[0])),
        Math.max(...pairs.map((p) => p[1])),
      ]);
    }
    expect(boundsOf(new Int32Array(0))).toBeUndefined();
  });

  test('rectangle queries give exactly the chunks inside, ascending, at any spread and at the extremes', () => {
    const next = xorshift(23);
    let nonEmpty = 0;
    for (const spread of [4, 60, 2 ** 31]) {
      const pairs = randomPairs(next, spread, 1500);
      pairs.push([-(2 ** 31), 2 ** 31 - 1], [2 ** 31 - 1, -(2 ** 31)], [2 ** 31 - 1, 2 ** 31 - 1]);
      const sorted = [...pairs].sort((a, b) => a[0] - b[0] || a[1] - b[1]);
      const set = new ChunkSet(listOf(pairs));
      const rects: Array<[number, number, number, number]> = [
        [-(2 ** 31), -(2 ** 31), 2 ** 31 - 1, 2 ** 31 - 1],
        [2 ** 31 - 1, 0, 2 ** 31 - 1, 2 ** 31 - 1],
        [5, 5, 4, 9], // empty: x0 > x1
      ];
      for (let i = 0; i < 300; i++) {
        const a = spread === 2 ** 31 ? [next() | 0, next() | 0] : [(next() % (2 * spread)) - spread, (next() % (2 * spread)) - spread];
        const w = spread === 2 ** 31 ? [next() >>> 2, next() >>> 2] : [next() % spread, next() % spread];
        rects.push([a[0]!, a[1]!, a[0]! + w[0]!, a[1]! + w[1]!]);
      }
      for (const [x0, z0, x1, z1] of rects) {
        const want = sorted.filter(([x, z]) => x >= x0 && x <= x1 && z >= z0 && z <= z1);
        expect(pairsOf(set.inRect(x0, z0, x1, z1))).toEqual(want);
        expect(set.anyInRect(x0, z0, x1, z1)).toBe(want.length > 0);
        if (want.length > 0) nonEmpty += 1;
      }
    }
    // Most rectangles of the dense lists hold chunks, so the runs are exercised, not only misses.
    expect(nonEmpty).toBeGreaterThan(400);
    expect(chunkCount(new ChunkSet().inRect(0, 0, 9, 9))).toBe(0);
  });
});
