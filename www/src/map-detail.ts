// Detail tiles: the map's level of detail between its base image (at most a few Mi pixels, so
// coarse on a large world) and the block tiles shown close up. A tile is one engine call: the
// map's layer drawn at `level` pixels per chunk (1, 2, 4, 8 or 16) over a square of
// DETAIL_PIXELS / level chunks, so every tile is DETAIL_PIXELS pixels on a side whatever its
// level and a screen holds a few dozen of them at any zoom. The square is a `region` call with
// the chunk row north of it (it shades the square's first row), so a tile's pixels are exactly
// the whole map's at that level over its square.
//
// Invariants: tiles belong to one map (`reset` binds the map's source: its world, dimension,
// layer and y; calls of an earlier map are dropped when they land); a failed call keeps no
// tile (it is not asked for again for this map: a closed world would fail again) and is
// counted; at most `concurrency` calls run at once, the squares nearest the view's centre
// first; tiles are kept up to `maxPixels`, least recently drawn out, never those drawn at the
// last draw or wanted on screen.

import type { MapImage } from 'strata-level/browser';

import type { ChunkList } from './chunk-index/chunk-list.js';
import { ChunkSet } from './chunk-index/chunk-set.js';

/** Pixels on a side of every detail tile. */
export const DETAIL_PIXELS = 256;
/** Pixels of detail tiles kept (least recently drawn go first): 32 MiB of RGBA. */
export const MAX_DETAIL_PIXELS = 8 << 20;

/** Draws the map (as shown) at `pixelsPerChunk` over the chunk square `region` (inclusive),
 * whose chunks (with the row north of it) are `chunks`. */
export type DetailSource = (pixelsPerChunk: number, region: [number, number, number, number], chunks: ChunkList) => Promise<MapImage>;

/** Chunks on a side of a tile at `level`. */
export function tileChunks(level: number): number {
  return DETAIL_PIXELS / level;
}

/** The part of the view a draw covers, in chunks, and where a chunk lands on the canvas. */
export interface DetailView {
  level: number;
  /** Chunks in view, inclusive. */
  cx0: number;
  cz0: number;
  cx1: number;
  cz1: number;
  /** Screen pixels per chunk. */
  chunkPx: number;
  /** Canvas point of chunk (cx, cz)'s north-west corner. */
  pointOfChunk(cx: number, cz: number): [number, number];
}

interface Tile {
  canvas: HTMLCanvasElement | null;
  pixels: number;
}

export class DetailTiles {
  /** The map's chunks. */
  private chunks = new ChunkSet();
  /** Whether a tile ("level:tx,tz") holds a chunk, as asked so far (a tile is asked about
   * only once it is in view). */
  private occupied = new Map<string, boolean>();
  /** Tiles by "level:tx,tz", least recently drawn first. */
  private tiles = new Map<string, Tile>();
  private failed = new Set<string>();
  private loading = new Set<string>();
  /** Tiles wanted at the last draw, nearest the centre first. */
  private wanted: Array<[number, number, number]> = [];
  /** Tiles drawn, or wanted, at the last draw: never evicted. */
  private onScreen = new Set<string>();
  private source: DetailSource | undefined;
  /** Bumped by `reset`: a call of an earlier map is dropped when it lands. */
  private map = 0;
  pixelsHeld = 0;
  /** Calls answered (tests). */
  calls = 0;
  /** Calls at once (the page's engine plus each map helper). */
  concurrency = 1;
  maxPixels = MAX_DETAIL_PIXELS;

  constructor(private readonly redraw: () => void) {}

  /** A new map: its chunks and what draws its tiles (none: no detail). */
  reset(chunks: ChunkSet, source: DetailSource | undefined): void {
    this.map += 1;
    this.source = source;
    this.chunks = chunks;
    this.occupied = new Map();
    this.tiles.clear();
    this.failed.clear();
    this.wanted = [];
    this.onScreen.clear();
    this.pixelsHeld = 0;
  }

  get enabled(): boolean {
    return this.source !== undefined;
  }

  /** Whether tile (tx, tz) of `level` holds a chunk (asked once per tile and map). */
  private holdsChunks(level: number, tx: number, tz: number): boolean {
    const key = `${level}:${tx},${tz}`;
    let holds = this.occupied.get(key);
    if (holds === undefined) {
      const side = tileChunks(level);
      holds = this.chunks.anyInRect(tx * side, tz * side, tx * side + side - 1, tz * side + side - 1);
      this.occupied.set(key, holds);
    }
    return holds;
  }

  /** The tiles (level, tx, tz) with chunks in view at `level`, nearest the centre first. */
  private inView(v: DetailView, level: number): Array<[number, number, number]> {
    const side = tileChunks(level);
    const [tx0, tz0, tx1, tz1] = [Math.floor(v.cx0 / side), Math.floor(v.cz0 / side), Math.floor(v.cx1 / side), Math.floor(v.cz1 / side)];
    const [mx, mz] = [(v.cx0 + v.cx1 + 1) / 2 / side, (v.cz0 + v.cz1 + 1) / 2 / side];
    const out: Array<[number, number, number]> = [];
    for (let tz = tz0; tz <= tz1; tz++) for (let tx = tx0; tx <= tx1; tx++) if (this.holdsChunks(level, tx, tz)) out.push([level, tx, tz]);
    return out.sort((a, b) => (a[1] + 0.5 - mx) ** 2 + (a[2] + 0.5 - mz) ** 2 - ((b[1] + 0.5 - mx) ** 2 + (b[2] + 0.5 - mz) ** 2));
  }

  /** Draws the tiles in view at `v.level`, and while some are missing those held of the
   * neighbouring levels under them (coarser, then finer); with `ask`, asks for the missing
   * ones. */
  draw(ctx: CanvasRenderingContext2D, v: DetailView, ask: boolean): void {
    this.onScreen.clear();
    const current = this.inView(v, v.level);
    const complete = current.every(([level, tx, tz]) => this.tiles.has(`${level}:${tx},${tz}`));
    for (const level of complete ? [v.level] : [v.level / 2, v.level * 2, v.level]) {
      if (level < 1 || level > 16) continue;
      const side = tileChunks(level);
      for (const [, tx, tz] of level === v.level ? current : this.inView(v, level)) {
        const key = `${level}:${tx},${tz}`;
        const t = this.tiles.get(key);
        if (!t?.canvas) continue;
        // Most recently drawn last: eviction takes from the front.
        this.tiles.delete(key);
        this.tiles.set(key, t);
        this.onScreen.add(key);
        ctx.drawImage(t.canvas, ...v.pointOfChunk(tx * side, tz * side), side * v.chunkPx, side * v.chunkPx);
      }
    }
    this.wanted = [];
    for (const [level, tx, tz] of current) {
      const key = `${level}:${tx},${tz}`;
      this.onScreen.add(key);
      if (ask && !this.tiles.has(key) && !this.failed.has(key)) this.wanted.push([level, tx, tz]);
    }
    this.evict();
    this.pump();
  }

  /** No tiles drawn this time (the base is fine enough): nothing is asked for. */
  idle(): void {
    this.wanted = [];
    this.onScreen.clear();
  }

  /** Tiles of `v.level` in view neither held nor failed (0 once the screen is complete). */
  missing(v: DetailView): number {
    let n = 0;
    for (const [level, tx, tz] of this.inView(v, v.level)) if (!this.tiles.has(`${level}:${tx},${tz}`) && !this.failed.has(`${level}:${tx},${tz}`)) n++;
    return n;
  }

  /** Held tiles, those with pixels, failed calls, pixels held, calls answered. */
  state(): { held: number; drawn: number; failed: number; pixels: number; calls: number } {
    let drawn = 0;
    for (const t of this.tiles.values()) if (t.canvas) drawn++;
    return { held: this.tiles.size, drawn, failed: this.failed.size, pixels: this.pixelsHeld, calls: this.calls };
  }

  /** RGBA of tile (tx, tz) at `level`, if held with pixels. */
  pixels(level: number, tx: number, tz: number): { width: number; height: number; rgba: Uint8ClampedArray } | undefined {
    const c = this.tiles.get(`${level}:${tx},${tz}`)?.canvas;
    if (!c) return undefined;
    return { width: c.width, height: c.height, rgba: c.getContext('2d')!.getImageData(0, 0, c.width, c.height).data };
  }

  /** Starts calls for the tiles wanted, up to `concurrency` at once. */
  private pump(): void {
    const source = this.source;
    if (!source) return;
    while (this.loading.size < this.concurrency) {
      const next = this.wanted.find(([l, tx, tz]) => !this.loading.has(`${this.map}/${l}:${tx},${tz}`));
      if (!next) return;
      const [level, tx, tz] = next;
      const key = `${level}:${tx},${tz}`;
      const map = this.map;
      const flight = `${map}/${key}`;
      this.loading.add(flight);
      const side = tileChunks(level);
      const [x0, z0] = [tx * side, tz * side];
      // The square's chunks, and the row north of it (it shades the square's first row).
      const chunks = this.chunks.inRect(x0, z0 - 1, x0 + side - 1, z0 + side - 1);
      // A source that throws at once fails like one that rejects; a tile that cannot be
      // made from the answer fails too (never a call asked for again and again).
      void Promise.resolve()
        .then(() => source(level, [x0, z0, x0 + side - 1, z0 + side - 1], chunks))
        .then((got) => {
          if (map !== this.map) return;
          let canvas: HTMLCanvasElement | null = null;
          if (got.width > 0 && got.height > 0 && got.chunksDrawn > 0) {
            canvas = document.createElement('canvas');
            canvas.width = got.width;
            canvas.height = got.height;
            canvas.getContext('2d')!.putImageData(new ImageData(new Uint8ClampedArray(got.rgba), got.width, got.height), 0, 0);
          }
          this.keep(key, { canvas, pixels: canvas ? canvas.width * canvas.height : 0 });
        })
        .catch(() => {
          if (map === this.map) this.failed.add(key);
        })
        .finally(() => {
          this.loading.delete(flight);
          if (map === this.map) {
            this.calls += 1;
            this.redraw();
          } else this.pump(); // a call of an earlier map: its slot goes to this map's tiles
        });
    }
  }

  /** Keeps a tile, evicting the least recently drawn beyond `maxPixels` (never those on
   * screen: they would be asked for again at once). */
  private keep(key: string, tile: Tile): void {
    this.tiles.set(key, tile);
    this.pixelsHeld += tile.pixels;
    this.onScreen.add(key); // drawn at the redraw that follows
    this.evict();
  }

  /** Drops the least recently drawn tiles beyond `maxPixels`, never those on screen. */
  private evict(): void {
    for (const [k, t] of this.tiles) {
      if (this.pixelsHeld <= this.maxPixels) break;
      if (this.onScreen.has(k)) continue;
      this.tiles.delete(k);
      this.pixelsHeld -= t.pixels;
    }
  }
}
