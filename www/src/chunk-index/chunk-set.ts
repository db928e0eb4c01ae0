// The chunks of the map shown, for membership tests (is there a chunk under the cursor, which
// chunks in view get block tiles) and rectangle queries (a band's or a detail tile's chunks,
// whether a tile holds any), all by binary search over the map's flat chunk list itself: no
// string, hash entry or array per chunk, and nothing built before the first band but the
// check that the list ascends (a Set of "x,z" strings for the 160,000-chunk world, then cells
// of chunks for the detail tiles, took most of the 60-90 ms between the chunk index and the
// first band).
//
// Invariants: `has(x, z)` is true exactly for the (x, z) pairs of the list given, in any order
// given (a list not ascending by x, then z is sorted first, into a copy); `inRect` gives
// exactly the chunks of the list inside the rectangle, ascending; a rectangle query costs a
// few binary searches per column (x) holding chunks, whatever the rectangle's size.

import { ascending, chunkCount, type ChunkList } from './chunk-list.js';

export class ChunkSet {
  private readonly list: ChunkList;

  constructor(list: ChunkList = new Int32Array(0)) {
    this.list = ascending(list);
  }

  get size(): number {
    return chunkCount(this.list);
  }

  has(x: number, z: number): boolean {
    const i = this.lowerBound(x, z);
    return i < this.size && this.list[2 * i] === x && this.list[2 * i + 1] === z;
  }

  /** The chunks with x0 <= x <= x1 and z0 <= z <= z1, ascending by x, then z. */
  inRect(x0: number, z0: number, x1: number, z1: number): ChunkList {
    const runs: number[] = [];
    let total = 0;
    this.columns(x0, z0, x1, z1, (from, to) => {
      runs.push(from, to);
      total += to - from;
      return true;
    });
    const out = new Int32Array(2 * total);
    let k = 0;
    for (let r = 0; r < runs.length; r += 2) {
      out.set(this.list.subarray(2 * runs[r]!, 2 * runs[r + 1]!), k);
      k += 2 * (runs[r + 1]! - runs[r]!);
    }
    return out;
  }

  /** Whether any chunk has x0 <= x <= x1 and z0 <= z <= z1. */
  anyInRect(x0: number, z0: number, x1: number, z1: number): boolean {
    let any = false;
    this.columns(x0, z0, x1, z1, () => {
      any = true;
      return false;
    });
    return any;
  }

  /** Calls `run(from, to)` with each column's run of chunks inside the rectangle (indexes,
   * `to` exclusive), by ascending x, while it returns true. */
  private columns(x0: number, z0: number, x1: number, z1: number, run: (from: number, to: number) => boolean): void {
    if (x0 > x1 || z0 > z1) return;
    const l = this.list;
    const n = this.size;
    let p = this.lowerBound(x0, z0);
    while (p < n) {
      const x = l[2 * p]!;
      if (x > x1) return;
      if (l[2 * p + 1]! < z0) {
        // The column's first chunk lies north of the rectangle: on to its first chunk with
        // z >= z0 (or, if none, the next column's first chunk).
        p = this.lowerBound(x, z0, p);
        continue;
      }
      // p is the column's first chunk with z >= z0; its chunks up to z1 are the run.
      const q = this.lowerBound(x, z1 + 1, p);
      if (q > p && !run(p, q)) return;
      // The next column's first chunk.
      p = this.lowerBound(x, 2 ** 31, q);
    }
  }

  /** The first index (from `from` on) whose chunk is at or after (x, z). Coordinates are
   * numbers, so (x, z + 1) is "just after (x, z)" even at z = 2^31 - 1. */
  private lowerBound(x: number, z: number, from = 0): number {
    const l = this.list;
    let [lo, hi] = [from, this.size];
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const mx = l[2 * mid]!;
      if (mx < x || (mx === x && l[2 * mid + 1]! < z)) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

}
