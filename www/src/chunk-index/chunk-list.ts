// Chunk lists as the viewer holds them: one Int32Array of x0, z0, x1, z1, … (World.chunkList's
// form), never an array per chunk. The 160,000-chunk world's list is one 1.25 MB object with
// nothing in it for the garbage collector to trace (as 160,000 [x, z] pairs it cost about
// 30 ms of collection before the first band), and a band's part of it goes to the engine as
// it is.
//
// Invariant: a list has an even length (x, z of each chunk); lists from World.chunkList (and
// the kept index) ascend by x, then z.

export type ChunkList = Int32Array;

/** The chunks a list holds. */
export function chunkCount(list: ChunkList): number {
  return list.length >> 1;
}

/** The list as [x, z] pairs (small lists: a selection, a test's oracle). */
export function pairsOf(list: ChunkList): Array<[number, number]> {
  const out: Array<[number, number]> = [];
  for (let i = 0; i + 1 < list.length; i += 2) out.push([list[i]!, list[i + 1]!]);
  return out;
}

/** [x, z] pairs as a list, in the order given. */
export function listOf(pairs: ReadonlyArray<readonly [number, number]>): ChunkList {
  const out = new Int32Array(pairs.length * 2);
  pairs.forEach(([x, z], i) => {
    out[2 * i] = x;
    out[2 * i + 1] = z;
  });
  return out;
}

/** Whether the list ascends by x, then z (equal neighbours allowed). */
export function isAscending(list: ChunkList): boolean {
  for (let i = 2; i + 1 < list.length; i += 2) {
    const [px, x] = [list[i - 2]!, list[i]!];
    if (px > x || (px === x && list[i - 1]! > list[i + 1]!)) return false;
  }
  return true;
}

/** The list itself if it ascends by x, then z; else a sorted copy (duplicates kept). */
export function ascending(list: ChunkList): ChunkList {
  if (isAscending(list)) return list;
  const n = chunkCount(list);
  const order = Array.from({ length: n }, (_, i) => i);
  order.sort((a, b) => list[2 * a]! - list[2 * b]! || list[2 * a + 1]! - list[2 * b + 1]!);
  const out = new Int32Array(list.length);
  order.forEach((from, i) => {
    out[2 * i] = list[2 * from]!;
    out[2 * i + 1] = list[2 * from + 1]!;
  });
  return out;
}

/** The smallest rectangle [x0, z0, x1, z1] (inclusive) holding every chunk; undefined for an
 * empty list. */
export function boundsOf(list: ChunkList): [number, number, number, number] | undefined {
  if (list.length < 2) return undefined;
  let [x0, z0, x1, z1] = [list[0]!, list[1]!, list[0]!, list[1]!];
  for (let i = 2; i + 1 < list.length; i += 2) {
    const [x, z] = [list[i]!, list[i + 1]!];
    if (x < x0) x0 = x;
    if (x > x1) x1 = x;
    if (z < z0) z0 = z;
    if (z > z1) z1 = z;
  }
  return [x0, z0, x1, z1];
}
