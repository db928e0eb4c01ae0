// The viewer's ChunkSet (www/src/chunk-index/chunk-set.ts) against a Set of "x,z" strings:
// the same answers for every pair in and around random lists (sorted as World.chunks gives
// them, and shuffled), at i32's extremes, and for an empty list.

import { describe, expect, test } from 'vitest';

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

describe('ChunkSet', () => {
  test('answers as a Set of "x,z" strings, sorted or shuffled, at the extremes', () => {
    const next = xorshift(7);
    let checked = 0;
    for (const spread of [3, 40, 2 ** 31]) {
      const pairs: Array<[number, number]> = [];
      for (let i = 0; i < 2000; i++) {
        const r = () => (spread === 2 ** 31 ? next() | 0 : (next() % (2 * spread)) - spread);
        pairs.push([r(), r()]);
      }
      pairs.push([-(2 ** 31), 2 ** 31 - 1], [2 ** 31 - 1, -(2 ** 31)]);
      const oracle = new Set(pairs.map(([x, z]) => `${x},${z}`));
      const sorted = [...new Map(pairs.map((p) => [`${p[0]},${p[1]}`, p])).values()].sort((a, b) => a[0] - b[0] || a[1] - b[1]);
      for (const list of [sorted, pairs]) {
        const set = new ChunkSet(list);
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
});
