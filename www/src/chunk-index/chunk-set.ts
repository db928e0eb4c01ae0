// The chunks of the map shown, for membership tests (is there a chunk under the cursor, which
// chunks in view get block tiles) without a string and a hash entry per chunk: building a
// Set of "x,z" strings for the 160,000-chunk world took most of the 80-100 ms between the
// chunk index and the first band.
//
// Invariant: `has(x, z)` is true exactly for the (x, z) pairs given, in any order given (a
// list not in ascending (x, z) order, as World.chunks gives it, is sorted first).

export class ChunkSet {
  private readonly xs: Int32Array;
  private readonly zs: Int32Array;

  constructor(chunks: ReadonlyArray<readonly [number, number]> = []) {
    let list = chunks;
    for (let i = 1; i < list.length; i++) {
      const [a, b] = [list[i - 1]!, list[i]!];
      if (a[0] > b[0] || (a[0] === b[0] && a[1] > b[1])) {
        list = [...chunks].sort((p, q) => p[0] - q[0] || p[1] - q[1]);
        break;
      }
    }
    this.xs = new Int32Array(list.length);
    this.zs = new Int32Array(list.length);
    list.forEach(([x, z], i) => {
      this.xs[i] = x;
      this.zs[i] = z;
    });
  }

  get size(): number {
    return this.xs.length;
  }

  has(x: number, z: number): boolean {
    let lo = 0;
    let hi = this.xs.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const mx = this.xs[mid]!;
      if (mx < x || (mx === x && this.zs[mid]! < z)) lo = mid + 1;
      else hi = mid;
    }
    return lo < this.xs.length && this.xs[lo] === x && this.zs[lo] === z;
  }
}
