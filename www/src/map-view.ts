// The map canvas: a top-down image of one dimension (from World.map) drawn with pan and zoom,
// an optional chunk grid, markers (spawn, players), block coordinates under the cursor; between
// far out and close up, detail tiles (map-detail.ts: the map drawn by the engine at the finer
// level the zoom asks for, any layer); and — when zoomed in — real top-block tiles fetched in
// batches (World.surfaceTiles) for the visible chunks. A click that is not a drag reports the chunk under the cursor; a shift-drag draws a
// band and reports the chunk rectangle it covers; the editor's selection is outlined.
//
// Invariants: `scale` is screen pixels per block; block (bx, bz) is drawn at
// (bx - originX) * scale + panX; the base image covers chunks from (minChunkX, minChunkZ) at
// `pixelsPerChunk` (a fraction far out: 1/64 for a pixel per 64 × 64 chunks), so one image
// pixel is 16 / pixelsPerChunk blocks. Detail tiles have the whole map's pixels at their level,
// so tiles and base never disagree but in resolution.

import type { MapImage } from 'strata-level/browser';

import { DetailTiles, tileChunks, type DetailSource, type DetailView } from './map-detail.js';
import { ChunkSet } from './chunk-index/chunk-set.js';
import { labelTexts, placeLabels } from './markers/labels.js';

export interface MapCallbacks {
  /** A click on chunk (x, z); `ev` tells the modifier keys (ctrl-click selects). */
  onChunkClick(x: number, z: number, ev?: MouseEvent): void;
  /** A click on a marker (instead of the chunk under it). */
  onMarkerClick?(m: Marker): void;
  /** A shift-drag ended: the chunk rectangle (inclusive) it covered. */
  onSelectRect?(x0: number, z0: number, x1: number, z1: number): void;
  /** Tiles for chunks not fetched yet; resolves with those that have block data. */
  fetchTiles(chunks: Array<[number, number]>): Promise<Map<string, Uint8Array>>;
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

/** Blocks on a side of one base-map pixel (`pixelsPerChunk` is 1 / chunksPerPixel far out: a
 * pixel per 64 × 64 chunks covers 1,024 blocks). */
function blocksPerPixel(img: MapImage): number {
  return 16 / img.pixelsPerChunk;
}

export class MapView {
  private image: MapImage | undefined;
  private base: HTMLCanvasElement | undefined;
  private chunkSet = new ChunkSet();
  /** Detail tiles of the map shown (tests lower `detail.maxPixels`; main.ts sets
   * `detail.concurrency`). */
  readonly detail = new DetailTiles(() => this.draw());

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
    const has = this.chunkSet.has(cxk, czk) ? '' : ' (no chunk)';
    const m = this.markerAt(cx, cy);
    this.coords.textContent = `x ${bx}, z ${bz} · chunk ${cxk}, ${czk}${has}${m ? ` · ${m.label}` : ''}`;
  }

  /** Shows a new map (another world or dimension); fits it to the canvas unless `keepView`
   * (another layer of the same dimension: the view stays where it was). `detail` draws its
   * detail tiles (bound to this map: its world, dimension, layer). */
  show(image: MapImage, chunks: ChunkSet, markers: Marker[], keepView = false, detail?: DetailSource): void {
    this.image = image;
    this.markers = markers;
    this.chunkSet = chunks;
    this.tiles.clear();
    this.detail.reset(chunks, detail);
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
  begin(frame: MapImage, chunks: ChunkSet, markers: Marker[], keepView = false, detail?: DetailSource): void {
    this.show({ ...frame, width: 0 }, chunks, markers, true, detail);
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
        if (this.chunkSet.has(cx, cz) && !this.tiles.has(`${cx},${cz}`)) n++;
      }
    }
    return n;
  }

  /** The detail level the view asks for (pixels per chunk: 1, 2, 4, 8 or 16), or 0 when the base
   * map is fine enough. */
  detailLevel(): number {
    const img = this.image;
    if (!img || img.width === 0 || !this.detail.enabled) return 0;
    const chunkPx = 16 * this.scale;
    // Only where the base is magnified.
    if (chunkPx <= img.pixelsPerChunk) return 0;
    // The coarsest level with at least one image pixel per screen pixel.
    let level = 1;
    while (level < 16 && level < chunkPx) level *= 2;
    if (level <= img.pixelsPerChunk) return 0;
    // Far out (a base of several chunks per pixel), no tile under 64 screen pixels: a screen
    // of smaller ones would be hundreds of calls.
    return tileChunks(level) * chunkPx < 64 ? 0 : level;
  }

  /** What a draw covers at `level` (chunks in view, where they land). */
  private detailView(level: number): DetailView {
    const [bx0, bz0] = this.blockAt(0, 0);
    const [bx1, bz1] = this.blockAt(this.canvas.width, this.canvas.height);
    return {
      level,
      cx0: Math.floor(bx0 / 16),
      cz0: Math.floor(bz0 / 16),
      cx1: Math.floor(bx1 / 16),
      cz1: Math.floor(bz1 / 16),
      chunkPx: 16 * this.scale,
      pointOfChunk: (cx, cz) => this.pointOfChunk(cx, cz),
    };
  }

  /** Detail tiles: held, with pixels, failed, their pixels, calls answered; the level the
   * view asks for and its tiles still missing (0 once the screen is complete at its level,
   * or when block tiles cover it). */
  detailState(): { held: number; drawn: number; failed: number; pixels: number; calls: number; level: number; missing: number } {
    const level = this.detailLevel();
    const missing = level > 0 && !this.blockTilesCover() ? this.detail.missing(this.detailView(level)) : 0;
    return { ...this.detail.state(), level, missing };
  }

  /** RGBA of the detail tile (tx, tz) at `level`, if held (tests compare it with the engine's
   * whole map at that level). */
  detailPixels(level: number, tx: number, tz: number): { width: number; height: number; rgba: Uint8ClampedArray } | undefined {
    return this.detail.pixels(level, tx, tz);
  }

  /** Whether block tiles cover the view (then detail tiles held are drawn under them while
   * they load, and none is asked for). */
  private blockTilesCover(): boolean {
    return this.tilesEnabled && this.scale >= TILE_SCALE;
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
    if (level > 0) this.detail.draw(ctx, this.detailView(level), !this.blockTilesCover());
    else this.detail.idle();
    if (this.tilesEnabled && this.scale >= TILE_SCALE) {
      const missing: Array<[number, number]> = [];
      this.inView = 0;
      for (let cz = Math.floor(bz0 / 16); cz <= Math.floor(bz1 / 16); cz++) {
        for (let cx = Math.floor(bx0 / 16); cx <= Math.floor(bx1 / 16); cx++) {
          if (!this.chunkSet.has(cx, cz)) continue;
          const key = `${cx},${cz}`;
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
    // Labels never overlap (markers/labels.ts): one hidden behind another adds to its count.
    ctx.font = '12px system-ui';
    const labelled = this.markers.filter((m) => !m.small);
    const at = labelled.map((m) => this.pointOf(m.x, m.z));
    const joined = placeLabels(labelled.map((m, i) => ({ x: at[i]![0] + 9, y: at[i]![1] - 8, width: ctx.measureText(`${m.label} +99`).width, height: 16 })));
    const texts = labelTexts(labelled.map((m) => m.label), joined);
    this.canvas.dataset.labels = String(texts.filter((t) => t !== null).length);
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
    }
    // The labels after every dot, so no dot covers one; outlined, to read on any terrain.
    ctx.lineWidth = 3;
    ctx.strokeStyle = '#000c';
    ctx.fillStyle = '#fff';
    texts.forEach((text, i) => {
      if (text === null) return;
      const [sx, sy] = at[i]!;
      ctx.strokeText(text, sx + 9, sy + 4);
      ctx.fillText(text, sx + 9, sy + 4);
    });
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
