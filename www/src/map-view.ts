// The map canvas: a top-down image of one dimension (from World.map) drawn with pan and zoom,
// an optional chunk grid, markers (spawn, players), block coordinates under the cursor; between
// far out and close up, detail tiles (squares of DETAIL_CHUNKS chunks drawn by the engine at the
// finer level the zoom asks for, any layer: level of detail); and — when zoomed in — real
// top-block tiles fetched in batches (World.surfaceTiles) for the visible chunks. A click that is not a drag reports the chunk under the cursor; a shift-drag draws a
// band and reports the chunk rectangle it covers; the editor's selection is outlined.
//
// Invariants: `scale` is screen pixels per block; block (bx, bz) is drawn at
// (bx - originX) * scale + panX; the base image covers chunks from (minChunkX, minChunkZ) at
// `pixelsPerChunk` (a fraction far out: 1/64 for a pixel per 64 × 64 chunks), so one image
// pixel is 16 / pixelsPerChunk blocks. A detail tile at level p
// has the pixels of the whole map drawn at p pixels per chunk over its square (the engine's
// `region`: the row north of it is read for shading), so tiles and base never disagree but in
// resolution; detail tiles are kept up to MAX_DETAIL_PIXELS, never fewer than one screen's.

import type { MapImage } from 'strata-level/browser';

export interface MapCallbacks {
  /** A click on chunk (x, z); `ev` tells the modifier keys (ctrl-click selects). */
  onChunkClick(x: number, z: number, ev?: MouseEvent): void;
  /** A click on a marker (instead of the chunk under it). */
  onMarkerClick?(m: Marker): void;
  /** A shift-drag ended: the chunk rectangle (inclusive) it covered. */
  onSelectRect?(x0: number, z0: number, x1: number, z1: number): void;
  /** Tiles for chunks not fetched yet; resolves with those that have block data. */
  fetchTiles(chunks: Array<[number, number]>): Promise<Map<string, Uint8Array>>;
  /** The map's layer drawn at `pixelsPerChunk` over the chunk square `region` (inclusive),
   * whose chunks (with the row north of it) are `chunks`. */
  fetchDetail?(pixelsPerChunk: number, region: [number, number, number, number], chunks: Array<[number, number]>): Promise<MapImage>;
}

/** A labelled point on the map (spawn, players), in block coordinates. */
export interface Marker {
  x: number;
  z: number;
  label: string;
  colour: string;
  /** A small dot without a label (entities): the label shows on hover. */
  small?: boolean;
  /** What a click on the marker opens (the page's business). */
  data?: unknown;
}

const TILE_SCALE = 3; // screen pixels per block from which block tiles are shown
/** Block tiles kept (least recently drawn go first): a few screens' worth at any world size. */
export const MAX_TILES = 4096;
/** Chunks on a side of a detail tile (16 × 16 chunks: 256 × 256 pixels at the finest level). */
export const DETAIL_CHUNKS = 16;
/** Pixels of detail tiles kept (least recently drawn go first): 32 MiB of RGBA. */
export const MAX_DETAIL_PIXELS = 8 << 20;

/** A detail tile: null once known to have nothing drawn (no chunk, or its call failed). */
interface DetailTile {
  level: number;
  canvas: HTMLCanvasElement | null;
  pixels: number;
}

/** Blocks on a side of one base-map pixel (`pixelsPerChunk` is 1 / chunksPerPixel far out: a
 * pixel per 64 × 64 chunks covers 1,024 blocks). */
function blocksPerPixel(img: MapImage): number {
  return 16 / img.pixelsPerChunk;
}

export class MapView {
  private image: MapImage | undefined;
  private base: HTMLCanvasElement | undefined;
  private chunkSet = new Set<string>();
  /** The chunks of each detail square ("rx,rz"), in the order given. */
  private regions = new Map<string, Array<[number, number]>>();
  /** Detail tiles by "level:rx,rz", least recently drawn first. */
  private detail = new Map<string, DetailTile>();
  private detailPixelsHeld = 0;
  /** Detail squares wanted at the last draw ("level:rx,rz"), nearest the centre first. */
  private detailWanted: Array<[number, number, number]> = [];
  /** Detail calls in flight (at most `detailConcurrency`), by key. */
  private detailLoading = new Set<string>();
  /** Detail calls at once: the page's engine plus each map helper (main.ts sets it). */
  detailConcurrency = 1;
  /** Most detail pixels kept (MAX_DETAIL_PIXELS; tests lower it to watch the eviction). */
  maxDetailPixels = MAX_DETAIL_PIXELS;
  /** Detail calls answered since the page loaded (tests). */
  detailCalls = 0;
  /** Block tiles by chunk ("x,z"; null: no block data), least recently drawn first. */
  private tiles = new Map<string, HTMLCanvasElement | null>();
  private pending = false;
  private scale = 1;
  private panX = 0;
  private panZ = 0;
  private markers: Marker[] = [];
  private drag: { x: number; y: number; panX: number; panZ: number; moved: boolean } | undefined;
  /** A shift-drag in progress, in canvas points. */
  private band: { x0: number; y0: number; x1: number; y1: number } | undefined;
  /** Chunk rectangles outlined (the editor's selection). */
  private selection: Array<[number, number, number, number]> = [];
  grid = true;
  /** Zoomed in, chunks show their real top blocks (relief and surface layers only: the other
   * layers would be hidden by them). */
  tilesEnabled = true;

  constructor(
    private readonly canvas: HTMLCanvasElement,
    private readonly coords: HTMLElement,
    private readonly cb: MapCallbacks,
  ) {
    canvas.addEventListener('wheel', (e) => {
      e.preventDefault();
      this.zoomAt(e.deltaY < 0 ? 1.25 : 0.8, ...this.canvasPoint(e));
    });
    canvas.addEventListener('pointerdown', (e) => {
      canvas.setPointerCapture(e.pointerId);
      if (e.shiftKey && this.cb.onSelectRect) {
        const [cx, cy] = this.canvasPoint(e);
        this.band = { x0: cx, y0: cy, x1: cx, y1: cy };
        return;
      }
      this.drag = { x: e.clientX, y: e.clientY, panX: this.panX, panZ: this.panZ, moved: false };
    });
    canvas.addEventListener('pointermove', (e) => {
      const [cx, cy] = this.canvasPoint(e);
      this.showCoords(cx, cy);
      if (this.band) {
        this.band.x1 = cx;
        this.band.y1 = cy;
        this.draw();
        return;
      }
      if (!this.drag) return;
      const k = this.canvas.width / this.canvas.clientWidth;
      const dx = (e.clientX - this.drag.x) * k;
      const dy = (e.clientY - this.drag.y) * k;
      if (Math.abs(dx) + Math.abs(dy) > 4) this.drag.moved = true;
      this.panX = this.drag.panX + dx;
      this.panZ = this.drag.panZ + dy;
      this.draw();
    });
    canvas.addEventListener('pointerup', (e) => {
      const b = this.band;
      if (b) {
        this.band = undefined;
        const [ax, az] = this.blockAt(b.x0, b.y0);
        const [bx, bz] = this.blockAt(b.x1, b.y1);
        this.cb.onSelectRect?.(Math.floor(Math.min(ax, bx) / 16), Math.floor(Math.min(az, bz) / 16), Math.floor(Math.max(ax, bx) / 16), Math.floor(Math.max(az, bz) / 16));
        this.draw();
        return;
      }
      const d = this.drag;
      this.drag = undefined;
      if (d && !d.moved) {
        const hit = this.markerAt(...this.canvasPoint(e));
        if (hit && this.cb.onMarkerClick) {
          this.cb.onMarkerClick(hit);
          return;
        }
        const [bx, bz] = this.blockAt(...this.canvasPoint(e));
        this.cb.onChunkClick(Math.floor(bx / 16), Math.floor(bz / 16), e);
      }
    });
  }

  private canvasPoint(e: MouseEvent): [number, number] {
    const r = this.canvas.getBoundingClientRect();
    const k = this.canvas.width / r.width;
    return [(e.clientX - r.left) * k, (e.clientY - r.top) * k];
  }

  /** The block (x, z) under canvas point (cx, cy). */
  blockAt(cx: number, cy: number): [number, number] {
    const img = this.image;
    const ox = img ? img.minChunkX * 16 : 0;
    const oz = img ? img.minChunkZ * 16 : 0;
    return [Math.floor((cx - this.panX) / this.scale) + ox, Math.floor((cy - this.panZ) / this.scale) + oz];
  }

  /** The canvas point of block (bx, bz) — for tests and markers. */
  pointOf(bx: number, bz: number): [number, number] {
    const img = this.image!;
    return [(bx - img.minChunkX * 16 + 0.5) * this.scale + this.panX, (bz - img.minChunkZ * 16 + 0.5) * this.scale + this.panZ];
  }

  private showCoords(cx: number, cy: number): void {
    if (!this.image) return;
    const [bx, bz] = this.blockAt(cx, cy);
    const cxk = Math.floor(bx / 16);
    const czk = Math.floor(bz / 16);
    const has = this.chunkSet.has(`${cxk},${czk}`) ? '' : ' (no chunk)';
    const m = this.markerAt(cx, cy);
    this.coords.textContent = `x ${bx}, z ${bz} · chunk ${cxk}, ${czk}${has}${m ? ` · ${m.label}` : ''}`;
  }

  /** Shows a new map (another world or dimension); fits it to the canvas unless `keepView`
   * (another layer of the same dimension: the view stays where it was). */
  show(image: MapImage, chunks: Array<[number, number]>, markers: Marker[], keepView = false): void {
    this.image = image;
    this.markers = markers;
    this.chunkSet = new Set(chunks.map(([x, z]) => `${x},${z}`));
    this.regions = new Map();
    for (const c of chunks) {
      const key = `${Math.floor(c[0] / DETAIL_CHUNKS)},${Math.floor(c[1] / DETAIL_CHUNKS)}`;
      const list = this.regions.get(key);
      if (list) list.push(c);
      else this.regions.set(key, [c]);
    }
    this.tiles.clear();
    this.detail.clear();
    this.detailPixelsHeld = 0;
    this.detailWanted = [];
    this.base = document.createElement('canvas');
    this.base.width = Math.max(1, image.width);
    this.base.height = Math.max(1, image.height);
    if (image.width > 0) {
      const data = new ImageData(new Uint8ClampedArray(image.rgba), image.width, image.height);
      this.base.getContext('2d')!.putImageData(data, 0, 0);
    }
    this.canvas.dataset.chunks = String(image.chunksDrawn);
    this.canvas.dataset.layer = image.layer;
    this.canvas.dataset.slimeChunks = String(image.slimeChunks);
    if (keepView) this.draw();
    else this.fit();
  }

  /** Starts a map drawn in bands (see main.ts drawMap): `frame` gives the whole map's size and
   * origin (its `rgba` is not read); the base starts transparent and `paint` fills it. */
  begin(frame: MapImage, chunks: Array<[number, number]>, markers: Marker[], keepView = false): void {
    this.show({ ...frame, width: 0 }, chunks, markers, true);
    this.image = frame;
    this.base!.width = Math.max(1, frame.width);
    this.base!.height = Math.max(1, frame.height);
    delete this.canvas.dataset.chunks;
    if (keepView) this.draw();
    else this.fit();
  }

  /** Pastes a band of the map begun (same width and origin x, rows from its `minChunkZ`). */
  paint(band: MapImage): void {
    const img = this.image;
    if (!img || !this.base || band.width === 0 || band.height === 0) return;
    const data = new ImageData(new Uint8ClampedArray(band.rgba), band.width, band.height);
    this.base.getContext('2d')!.putImageData(data, (band.minChunkX - img.minChunkX) * img.pixelsPerChunk, (band.minChunkZ - img.minChunkZ) * img.pixelsPerChunk);
    this.draw();
  }

  /** The figures of a map drawn in bands, once every band is painted. */
  finish(total: MapImage): void {
    this.canvas.dataset.chunks = String(total.chunksDrawn);
    this.canvas.dataset.layer = total.layer;
    this.canvas.dataset.slimeChunks = String(total.slimeChunks);
  }

  /** Most block tiles kept (MAX_TILES; tests lower it to watch the eviction). */
  maxTiles = MAX_TILES;
  /** Chunks with tiles in view at the last draw (eviction keeps at least these). */
  private inView = 0;

  /** Block tiles held (tests read it: never above `maxTiles`). */
  tileCount(): number {
    return this.tiles.size;
  }

  /** Chunks in view whose block tile is neither loaded nor known to be missing (0 once the
   * close-up screen is complete; also 0 when not zoomed in enough for tiles). */
  tilesMissing(): number {
    if (!this.image || !this.tilesEnabled || this.scale < TILE_SCALE) return 0;
    const [bx0, bz0] = this.blockAt(0, 0);
    const [bx1, bz1] = this.blockAt(this.canvas.width, this.canvas.height);
    let n = 0;
    for (let cz = Math.floor(bz0 / 16); cz <= Math.floor(bz1 / 16); cz++) {
      for (let cx = Math.floor(bx0 / 16); cx <= Math.floor(bx1 / 16); cx++) {
        if (this.chunkSet.has(`${cx},${cz}`) && !this.tiles.has(`${cx},${cz}`)) n++;
      }
    }
    return n;
  }

  /** The detail level the view asks for (pixels per chunk: 1, 2, 4, 8 or 16), or 0 when the base
   * map is fine enough. */
  detailLevel(): number {
    const img = this.image;
    if (!img || img.width === 0 || !this.cb.fetchDetail) return 0;
    const basePpc = img.pixelsPerChunk;
    // Only where the base is magnified (far out, a base of several chunks per pixel is finer
    // than the screen: no call for squares smaller than a pixel).
    if (16 * this.scale <= basePpc) return 0;
    // The coarsest level with at least one image pixel per screen pixel.
    let level = 1;
    while (level < 16 && level < 16 * this.scale) level *= 2;
    return level > basePpc ? level : 0;
  }

  /** Detail tiles held, their pixels, those the view still waits for, and the level asked for
   * (tests: `missing` is 0 once a screen is complete at its level). */
  detailState(): { held: number; pixels: number; missing: number; level: number; calls: number } {
    const level = this.detailLevel();
    let missing = 0;
    if (level > 0 && !this.blockTilesCover()) for (const [, rx, rz] of this.visibleRegions(level)) if (!this.heldAtLeast(level, rx, rz)) missing++;
    return { held: this.detail.size, pixels: this.detailPixelsHeld, missing, level, calls: this.detailCalls };
  }

  /** RGBA of a detail tile held (tests compare it with the engine's whole map at its level). */
  detailPixels(level: number, rx: number, rz: number): { width: number; height: number; rgba: Uint8ClampedArray } | undefined {
    const c = this.detail.get(`${level}:${rx},${rz}`)?.canvas;
    if (!c) return undefined;
    return { width: c.width, height: c.height, rgba: c.getContext('2d')!.getImageData(0, 0, c.width, c.height).data };
  }

  /** Whether block tiles cover the view (then detail tiles held are drawn under them while
   * they load, and none is asked for). */
  private blockTilesCover(): boolean {
    return this.tilesEnabled && this.scale >= TILE_SCALE;
  }

  /** Whether square (rx, rz) has a tile held at `level` or finer. */
  private heldAtLeast(level: number, rx: number, rz: number): boolean {
    for (let l = level; l <= 16; l *= 2) if (this.detail.has(`${l}:${rx},${rz}`)) return true;
    return false;
  }

  /** The detail squares with chunks in view at `level`, nearest the view's centre first. */
  private visibleRegions(level: number): Array<[number, number, number]> {
    const [bx0, bz0] = this.blockAt(0, 0);
    const [bx1, bz1] = this.blockAt(this.canvas.width, this.canvas.height);
    const span = 16 * DETAIL_CHUNKS;
    const [cx, cz] = [(bx0 + bx1) / 2 / span, (bz0 + bz1) / 2 / span];
    const [rx0, rz0, rx1, rz1] = [Math.floor(bx0 / span), Math.floor(bz0 / span), Math.floor(bx1 / span), Math.floor(bz1 / span)];
    const out: Array<[number, number, number]> = [];
    if ((rx1 - rx0 + 1) * (rz1 - rz0 + 1) > this.regions.size) {
      // Chunks spread far apart (a few squares in a huge view): walk the squares held.
      for (const key of this.regions.keys()) {
        const [rx, rz] = key.split(',').map(Number) as [number, number];
        if (rx >= rx0 && rx <= rx1 && rz >= rz0 && rz <= rz1) out.push([level, rx, rz]);
      }
    } else {
      for (let rz = rz0; rz <= rz1; rz++) {
        for (let rx = rx0; rx <= rx1; rx++) {
          if (this.regions.has(`${rx},${rz}`)) out.push([level, rx, rz]);
        }
      }
    }
    return out.sort((a, b) => (a[1] + 0.5 - cx) ** 2 + (a[2] + 0.5 - cz) ** 2 - ((b[1] + 0.5 - cx) ** 2 + (b[2] + 0.5 - cz) ** 2));
  }

  /** Draws the detail tiles in view (the finest held of each square) and asks for the missing
   * ones at `level`. */
  private drawDetail(ctx: CanvasRenderingContext2D, level: number): void {
    const img = this.image!;
    const basePpc = img.pixelsPerChunk;
    const want = this.visibleRegions(level);
    const side = DETAIL_CHUNKS * 16 * this.scale;
    for (const [, rx, rz] of want) {
      let best: DetailTile | undefined;
      for (let l = 16; l > basePpc; l /= 2) {
        const t = this.detail.get(`${l}:${rx},${rz}`);
        if (!t) continue;
        // Most recently drawn last: eviction takes from the front.
        this.detail.delete(`${l}:${rx},${rz}`);
        this.detail.set(`${l}:${rx},${rz}`, t);
        if (t.canvas && !best) best = t;
      }
      if (best?.canvas) ctx.drawImage(best.canvas, ...this.pointOfChunk(rx * DETAIL_CHUNKS, rz * DETAIL_CHUNKS), side, side);
    }
    this.detailWanted = this.blockTilesCover() ? [] : want.filter(([l, rx, rz]) => !this.heldAtLeast(l, rx, rz));
    this.pumpDetail();
  }

  /** Starts detail calls for the squares wanted, up to `detailConcurrency` at once. */
  private pumpDetail(): void {
    const fetch = this.cb.fetchDetail;
    const image = this.image;
    if (!fetch || !image) return;
    while (this.detailLoading.size < this.detailConcurrency) {
      const next = this.detailWanted.find(([l, rx, rz]) => !this.detailLoading.has(`${l}:${rx},${rz}`));
      if (!next) return;
      const [level, rx, rz] = next;
      const key = `${level}:${rx},${rz}`;
      this.detailLoading.add(key);
      const [x0, z0] = [rx * DETAIL_CHUNKS, rz * DETAIL_CHUNKS];
      const region: [number, number, number, number] = [x0, z0, x0 + DETAIL_CHUNKS - 1, z0 + DETAIL_CHUNKS - 1];
      // The square's chunks, and the row north of it (it shades the square's first row).
      const north = (this.regions.get(`${rx},${rz - 1}`) ?? []).filter(([, z]) => z === z0 - 1);
      const chunks = [...north, ...this.regions.get(`${rx},${rz}`)!];
      void fetch(level, region, chunks)
        .then(
          (got) => {
            if (image !== this.image) return;
            let canvas: HTMLCanvasElement | null = null;
            if (got.width > 0 && got.height > 0 && got.chunksDrawn > 0) {
              canvas = document.createElement('canvas');
              canvas.width = got.width;
              canvas.height = got.height;
              canvas.getContext('2d')!.putImageData(new ImageData(new Uint8ClampedArray(got.rgba), got.width, got.height), 0, 0);
            }
            this.keepDetail(key, { level, canvas, pixels: canvas ? canvas.width * canvas.height : 0 });
          },
          () => {
            if (image === this.image) this.keepDetail(key, { level, canvas: null, pixels: 0 });
          },
        )
        .finally(() => {
          this.detailLoading.delete(key);
          if (image !== this.image) {
            // A call for an older map: its slot goes to the current map's squares.
            this.pumpDetail();
            return;
          }
          this.detailCalls += 1;
          this.draw();
        });
    }
  }

  /** Keeps a detail tile, evicting the least recently drawn beyond `maxDetailPixels` (never
   * those of the screen: they would be asked for again at once). */
  private keepDetail(key: string, tile: DetailTile): void {
    this.detail.set(key, tile);
    this.detailPixelsHeld += tile.pixels;
    const onScreen = new Set(this.visibleRegions(tile.level).map(([l, rx, rz]) => `${l}:${rx},${rz}`));
    for (const [k, t] of this.detail) {
      if (this.detailPixelsHeld <= this.maxDetailPixels) break;
      if (onScreen.has(k)) continue;
      this.detail.delete(k);
      this.detailPixelsHeld -= t.pixels;
    }
  }

  /** The base map's pixels (tests compare them with the engine's whole-map image). */
  basePixels(): { width: number; height: number; rgba: Uint8ClampedArray } | undefined {
    if (!this.base || !this.image || this.image.width === 0) return undefined;
    const { width, height } = this.base;
    return { width, height, rgba: this.base.getContext('2d')!.getImageData(0, 0, width, height).data };
  }

  /** Called after the view moved (pan, zoom, fit, jump): the page keeps it in the URL. */
  onViewChange: (() => void) | undefined;

  /** The block at the canvas centre and the zoom (screen pixels per block). */
  view(): { x: number; z: number; zoom: number } {
    const [x, z] = this.blockAt(this.canvas.width / 2, this.canvas.height / 2);
    return { x, z, zoom: this.scale };
  }

  /** Centres the view on block (bx, bz), at `zoom` screen pixels per block (default: as now). */
  centerOn(bx: number, bz: number, zoom = this.scale): void {
    const img = this.image;
    const ox = img ? img.minChunkX * 16 : 0;
    const oz = img ? img.minChunkZ * 16 : 0;
    this.scale = Math.min(64, Math.max(this.minScale(), zoom));
    this.panX = this.canvas.width / 2 - (bx - ox + 0.5) * this.scale;
    this.panZ = this.canvas.height / 2 - (bz - oz + 0.5) * this.scale;
    this.draw();
  }

  /** The marker drawn under canvas point (cx, cy), if any (the topmost). */
  markerAt(cx: number, cy: number): Marker | undefined {
    if (!this.image) return undefined;
    for (let i = this.markers.length - 1; i >= 0; i--) {
      const m = this.markers[i]!;
      const [sx, sy] = this.pointOf(m.x, m.z);
      const r = m.small ? 5 : 8;
      if ((sx - cx) ** 2 + (sy - cy) ** 2 <= r * r) return m;
    }
    return undefined;
  }

  /** Replaces the markers (another layer of markers toggled) without moving the view. */
  setMarkers(markers: Marker[]): void {
    this.markers = markers;
    this.draw();
  }

  /** Outlines the editor's selection (chunk rectangles, inclusive). */
  setSelection(rects: Array<[number, number, number, number]>): void {
    this.selection = rects;
    this.draw();
  }

  /** The farthest zoom: 0.02 screen pixels per block, or half the whole map's fit when it is
   * wider (chunks a million blocks apart). */
  private minScale(): number {
    const img = this.image;
    if (!img || img.width === 0) return 0.02;
    const span = Math.max(img.width, img.height) * blocksPerPixel(img);
    return Math.min(0.02, Math.min(this.canvas.width, this.canvas.height) / span / 2);
  }

  fit(): void {
    const img = this.image;
    if (!img || img.width === 0) {
      this.draw();
      return;
    }
    const blocksW = img.width * blocksPerPixel(img);
    const blocksH = img.height * blocksPerPixel(img);
    this.scale = Math.min(this.canvas.width / blocksW, this.canvas.height / blocksH) * 0.95;
    this.panX = (this.canvas.width - blocksW * this.scale) / 2;
    this.panZ = (this.canvas.height - blocksH * this.scale) / 2;
    this.draw();
  }

  zoomAt(factor: number, cx = this.canvas.width / 2, cy = this.canvas.height / 2): void {
    const next = Math.min(64, Math.max(this.minScale(), this.scale * factor));
    const f = next / this.scale;
    this.panX = cx - (cx - this.panX) * f;
    this.panZ = cy - (cy - this.panZ) * f;
    this.scale = next;
    this.draw();
  }

  draw(): void {
    this.onViewChange?.();
    const ctx = this.canvas.getContext('2d')!;
    ctx.fillStyle = '#1a1f24';
    ctx.fillRect(0, 0, this.canvas.width, this.canvas.height);
    const img = this.image;
    if (!img || !this.base || img.width === 0) return;
    ctx.imageSmoothingEnabled = false;
    const blockPerPixel = blocksPerPixel(img);
    ctx.drawImage(this.base, this.panX, this.panZ, img.width * blockPerPixel * this.scale, img.height * blockPerPixel * this.scale);
    const [bx0, bz0] = this.blockAt(0, 0);
    const [bx1, bz1] = this.blockAt(this.canvas.width, this.canvas.height);
    const chunkPx = 16 * this.scale;
    const level = this.detailLevel();
    if (level > 0) this.drawDetail(ctx, level);
    else this.detailWanted = [];
    if (this.tilesEnabled && this.scale >= TILE_SCALE) {
      const missing: Array<[number, number]> = [];
      this.inView = 0;
      for (let cz = Math.floor(bz0 / 16); cz <= Math.floor(bz1 / 16); cz++) {
        for (let cx = Math.floor(bx0 / 16); cx <= Math.floor(bx1 / 16); cx++) {
          const key = `${cx},${cz}`;
          if (!this.chunkSet.has(key)) continue;
          this.inView += 1;
          const tile = this.tiles.get(key);
          if (tile === undefined) {
            missing.push([cx, cz]);
            continue;
          }
          // Most recently drawn last: eviction takes from the front.
          this.tiles.delete(key);
          this.tiles.set(key, tile);
          if (tile) ctx.drawImage(tile, ...this.pointOfChunk(cx, cz), chunkPx, chunkPx);
        }
      }
      if (missing.length > 0) void this.loadTiles(missing.slice(0, 512));
    }
    if (this.grid && chunkPx >= 8) {
      ctx.strokeStyle = 'rgba(0,0,0,0.25)';
      ctx.lineWidth = 1;
      ctx.beginPath();
      for (let cx = Math.floor(bx0 / 16); cx <= Math.floor(bx1 / 16) + 1; cx++) {
        const x = Math.round(this.pointOfChunk(cx, 0)[0]) + 0.5;
        ctx.moveTo(x, 0);
        ctx.lineTo(x, this.canvas.height);
      }
      for (let cz = Math.floor(bz0 / 16); cz <= Math.floor(bz1 / 16) + 1; cz++) {
        const y = Math.round(this.pointOfChunk(0, cz)[1]) + 0.5;
        ctx.moveTo(0, y);
        ctx.lineTo(this.canvas.width, y);
      }
      ctx.stroke();
    }
    if (this.selection.length > 0) {
      ctx.strokeStyle = '#ffd400';
      ctx.lineWidth = 2;
      for (const [x0, z0, x1, z1] of this.selection) {
        const [sx, sy] = this.pointOfChunk(x0, z0);
        ctx.strokeRect(sx, sy, (x1 - x0 + 1) * chunkPx, (z1 - z0 + 1) * chunkPx);
      }
    }
    if (this.band) {
      ctx.setLineDash([5, 4]);
      ctx.strokeStyle = '#fff';
      ctx.lineWidth = 1.5;
      ctx.strokeRect(this.band.x0, this.band.y0, this.band.x1 - this.band.x0, this.band.y1 - this.band.y0);
      ctx.setLineDash([]);
    }
    for (const m of this.markers) {
      const [sx, sy] = this.pointOf(m.x, m.z);
      if (m.small) {
        if (sx < -4 || sy < -4 || sx > this.canvas.width + 4 || sy > this.canvas.height + 4) continue;
        ctx.fillStyle = m.colour;
        ctx.strokeStyle = '#000a';
        ctx.lineWidth = 1;
        ctx.beginPath();
        ctx.arc(sx, sy, 3, 0, Math.PI * 2);
        ctx.fill();
        ctx.stroke();
        continue;
      }
      ctx.fillStyle = m.colour;
      ctx.strokeStyle = '#fff';
      ctx.lineWidth = 2;
      ctx.beginPath();
      ctx.arc(sx, sy, 6, 0, Math.PI * 2);
      ctx.fill();
      ctx.stroke();
      ctx.fillStyle = '#fff';
      ctx.font = '12px system-ui';
      ctx.fillText(m.label, sx + 9, sy + 4);
    }
  }

  private pointOfChunk(cx: number, cz: number): [number, number] {
    const img = this.image!;
    return [(cx - img.minChunkX) * 16 * this.scale + this.panX, (cz - img.minChunkZ) * 16 * this.scale + this.panZ];
  }

  private async loadTiles(chunks: Array<[number, number]>): Promise<void> {
    if (this.pending) return;
    this.pending = true;
    const image = this.image;
    try {
      const got = await this.cb.fetchTiles(chunks);
      if (image !== this.image) return;
      for (const [x, z] of chunks) {
        const key = `${x},${z}`;
        const rgba = got.get(key);
        if (!rgba) {
          this.tiles.set(key, null);
          continue;
        }
        const c = document.createElement('canvas');
        c.width = 16;
        c.height = 16;
        c.getContext('2d')!.putImageData(new ImageData(new Uint8ClampedArray(rgba), 16, 16), 0, 0);
        this.tiles.set(key, c);
      }
    } catch {
      for (const [x, z] of chunks) this.tiles.set(`${x},${z}`, null);
    } finally {
      this.pending = false;
    }
    // Never below the tiles of one screen (they would be fetched again on every draw).
    const keep = Math.max(this.maxTiles, this.inView);
    for (const key of this.tiles.keys()) {
      if (this.tiles.size <= keep) break;
      this.tiles.delete(key);
    }
    this.draw();
  }
}
