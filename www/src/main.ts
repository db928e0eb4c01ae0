// The world viewer page: opens a Bedrock world (a picked or dropped folder, read-only in
// place; or a .mcworld unpacked in the worker's memory), shows its summary and key kinds,
// its map per dimension (spawn and player markers), a chunk inspector and a key browser.
// Folders and .mcworlds can also be copied into browser storage (OPFS), listed on return and
// deleted. Uses only the package's public browser API; all engine work runs in its worker, so
// the page stays responsive. Long engine calls (open + scan, summary, map) cannot be
// interrupted (synchronous wasm), so #cancel-work terminates the engine's worker
// (terminateWorker) and the next open starts a fresh one; an OPFS open right after a cancel
// retries while the dead worker's sync handles are being released (LEVEL_LOCKED).
//
// Stable hooks for tests: #world-summary gets data-entries, data-key-bytes, data-value-bytes
// and data-crc32c once the world is open and scanned (removed while another one loads);
// #map gets data-chunks (chunks drawn); #inspector data-chunk and data-records; #keys-section
// data-keys (keys listed by the last search); #message has data-kind="error" for a failure;
// body[data-state] is loading | ready | error; #cancel-work is visible while engine work runs
// (after a cancel #message reads "Cancelled …").

import {
  defaultStorage,
  opfsFiles,
  engineMemory,
  openMcworld,
  openWorld,
  terminateWorker,
  type EntityInfo,
  type MapImage,
  type MapLayer,
  type RecoveryReport,
  type World,
  type WorldSummary,
} from 'strata-level/browser';

import { Cancelled, forget, importFolder, importedWorlds, storageState, type ImportedWorld } from './imported.js';
import type { Unzipped } from './unzip.js';

import { Editor, type EditorHost } from './editor/editor.js';
import { SnbtEditor } from './editor/snbt-editor.js';
import { EntityPanel } from './entities/entity-panel.js';
import { Inspector, showValue } from './inspector.js';
import { cachedChunks, identityOf, keepChunks, warmUp } from './chunk-index/cache.js';
import { boundsOf, chunkCount, type ChunkList } from './chunk-index/chunk-list.js';
import { ChunkSet } from './chunk-index/chunk-set.js';
import { helperCount, MapHelpers } from './map-helpers/pool.js';
import { MIN_SHARED_BYTES, sharedChunkPass, type SharedPass } from './chunk-index/shared-pass.js';
import { KeyBrowser } from './keys.js';
import type { DetailSource } from './map-detail.js';
import { MapView, type Marker } from './map-view.js';
import { filesOfEntry, filesOfHandle, filesOfInput, worldRoot, type DirectoryPicker, type PickedFile } from './picked.js';

/** The base map's largest size in pixels (a finer view gets detail tiles; tests lower it). */
let maxMapPixels = 4 << 20;
const GAME_MODES = ['survival', 'creative', 'adventure', 'spectator'];

function $<T extends HTMLElement>(id: string): T {
  return document.getElementById(id) as T;
}

const message = $('message');
const summaryEl = $('world-summary');
const dimensionSel = $<HTMLSelectElement>('dimension');
const layerSel = $<HTMLSelectElement>('layer');
const yLevel = $<HTMLInputElement>('y-level');
const inspector = new Inspector($('inspector'), $('inspector-title'), $<HTMLUListElement>('records'), $('record-view'));

const keyBrowser = new KeyBrowser($('keys-section'), $<HTMLUListElement>('key-list'), $('key-view'), $('key-count'), (key, label) =>
  void snbtEditor.editRecord(key, label),
);

let world: World | undefined;
/** Map helpers on a picked folder, and the world (opened from it) they serve: used only while
 * that world is the one shown (an edited copy is another world: helpers would read the
 * original). */
let helpers: MapHelpers | undefined;
let helpersFor: World | undefined;
function helpersNow(): MapHelpers | undefined {
  return helpers && helpersFor === world ? helpers : undefined;
}
/** Map helpers being opened for a world, from the world's open on (they share its chunk index
 * pass: chunk-index/shared-pass.ts), with how many were asked for. */
let helpersOpening: { world: World; pool: Promise<MapHelpers | undefined>; count: number; none?: boolean } | undefined;
/** Tests: how the last chunk index pass of the world shown was shared (undefined: passed
 * whole by the page's engine, or not passed). */
let lastPass: Omit<SharedPass, 'chunks'> | undefined;
/** Where the open world came from, so that the first edit can reopen it writable on a copy. */
type Source =
  | { kind: 'bytes'; bytes: Uint8Array }
  /** A `.mcworld` read in place from its unpacked files (the first edit copies them into
   * browser storage, as for a picked folder). */
  | { kind: 'zip'; files: PickedFile[]; root: string }
  | { kind: 'opfs'; location: string }
  | { kind: 'files'; files: PickedFile[]; root: string };
let source: Source | undefined;
let players: PlayerMarker[] = [];
let summary: WorldSummary | undefined;
let generation = 0;

// Engine work that can be cancelled: what it is, since when (for the elapsed-time text).
let work: { what: string; since: number; gen: number; onCancel?: () => void } | undefined;
let lastCancel = 0;
let lockRetries = 0;
const elapsedEl = $('work-elapsed');
const cancelBtn = $<HTMLButtonElement>('cancel-work');
setInterval(() => {
  if (work) elapsedEl.textContent = `${((performance.now() - work.since) / 1000).toFixed(0)} s`;
}, 500);

function startWork(what: string, gen: number, onCancel?: () => void): void {
  work = { what, since: performance.now(), gen, ...(onCancel ? { onCancel } : {}) };
  elapsedEl.textContent = '0 s';
  elapsedEl.hidden = false;
  cancelBtn.hidden = false;
}

function endWork(gen: number): void {
  if (work?.gen !== gen) return;
  work = undefined;
  elapsedEl.hidden = true;
  cancelBtn.hidden = true;
}

/** Stops the running work: the engine's worker is terminated (its worlds are gone). */
function cancelWork(): void {
  const w = work;
  if (!w) return;
  work = undefined;
  elapsedEl.hidden = true;
  cancelBtn.hidden = true;
  generation++;
  w.onCancel?.();
  terminateWorker(`cancelled ${w.what}`);
  helpers?.close();
  helpers = undefined;
  helpersOpening = undefined;
  lastCancel = performance.now();
  world = undefined;
  summary = undefined;
  clearWorldView();
  say(`Cancelled ${w.what}. The engine was restarted; open a world to continue.`);
  setState('ready');
}

/** Decode workers for the worlds this page opens: the package's default (cores - 1) where
 * there are more than 2 cores, none on 2. On 2 cores the page, its engine and a decode worker
 * share them: with the 160,000-chunk world in Chromium the worker gained nothing (chunk index
 * 920-1,015 ms with it, 1,016 without; page ready 4.0-4.3 s either way) and cost 60-80 MiB of
 * the page's memory (PSS peak 476-497 MiB with it, 413 without). `?decodeWorkers=N` sets it. */
const DECODE_WORKERS = ((): number => {
  const asked = Number(new URLSearchParams(location.search).get('decodeWorkers') ?? NaN);
  if (Number.isInteger(asked) && asked >= 0 && asked <= 8) return asked;
  const cores = navigator.hardwareConcurrency || 2;
  return cores > 2 ? cores - 1 : 0;
})();

/** Opens an OPFS world; right after a cancel, retries while the terminated worker's sync
 * access handles are still being released (LEVEL_LOCKED), for up to 5 s. */
async function openOpfsWorld(location: string): Promise<World> {
  for (;;) {
    try {
      return await openWorld(location, { decodeWorkers: DECODE_WORKERS });
    } catch (e) {
      if ((e as { code?: string }).code !== 'LEVEL_LOCKED' || performance.now() - lastCancel > 5000) throw e;
      lockRetries++;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

const mapView = new MapView($<HTMLCanvasElement>('map'), $('coords'), {
  onChunkClick: (x, z, ev?: MouseEvent) => {
    if (!world) return;
    if (ev && (ev.ctrlKey || ev.metaKey)) {
      editor.toggle(x, z);
      return;
    }
    const w = world;
    inspector.show(w, Number(dimensionSel.value) as 0 | 1 | 2, x, z).catch((e: unknown) => showError(describe(e, 'the chunk')));
  },
  onMarkerClick: (m) => {
    if (m.data && 'playerKey' in (m.data as object)) void showPlayer(m.data as PlayerRef).catch((e: unknown) => showError(describe(e, 'the player')));
    else if (m.data) void entityPanel.show(m.data as EntityInfo).catch((e: unknown) => showError(describe(e, 'the entity')));
  },
  onSelectRect: (x0, z0, x1, z1) => {
    if (world) editor.addRect(x0, z0, x1, z1);
  },
  fetchTiles: (chunks) => {
    const w = world;
    if (!w) return Promise.resolve(new Map());
    const dim = Number(dimensionSel.value) as 0 | 1 | 2;
    // On a helper when there is one (a failed helper call is redone by the page's engine).
    const pool = helpersNow();
    return pool ? pool.surfaceTiles(dim, chunks).catch(() => w.surfaceTiles(dim, chunks)) : w.surfaceTiles(dim, chunks);
  },
});

/** Detail calls running on the page's engine (the others go to map helpers). */
let pageDetailCalls = 0;

/** Whether the page's engine draws `layer` at `pixelsPerChunk` from the relief samples of its
 * chunk index pass (relief_index: relief, slime, height and biome at up to 4 pixels per
 * chunk). Such bands and tiles stay on the page's engine: a map helper has no samples and
 * would read every chunk the page's engine draws without reading (the 160,000-chunk world's
 * height, biome and slime layers took 0.83-0.86 s each with a helper drawing 5 of their
 * bands, 0.33-0.35 s without). */
function fromSamples(layer: MapLayer, pixelsPerChunk: number): boolean {
  return pixelsPerChunk <= 4 && (layer === 'relief' || layer === 'slime' || layer === 'height' || layer === 'biome');
}

/** What draws the detail tiles of a map: bound to the map when it is shown (its world,
 * dimension, layer and y), never to what the page's selections say later. A call goes to the
 * page's engine when it is free, else to a map helper of that world (a failed helper call is
 * redone by the page's engine); a tile drawn from samples always to the page's engine. */
function detailSourceOf(w: World, dimension: 0 | 1 | 2, layer: MapLayer, y: number | undefined): DetailSource {
  return async (pixelsPerChunk, region, chunks) => {
    const options = { dimension, pixelsPerChunk, layer, y, region, chunks };
    const pool = helpers && helpersFor === w && !fromSamples(layer, pixelsPerChunk) ? helpers : undefined;
    if (pool && pageDetailCalls > 0) return pool.map(options).catch(() => w.map(options));
    pageDetailCalls += 1;
    try {
      return await w.map(options);
    } finally {
      pageDetailCalls -= 1;
    }
  };
}

function setState(state: 'loading' | 'ready' | 'error'): void {
  document.body.dataset.state = state;
}

function say(text: string, kind: 'info' | 'busy' | 'error' = 'info'): void {
  message.hidden = false;
  message.dataset.kind = kind;
  message.textContent = text.charAt(0).toUpperCase() + text.slice(1);
}

/** What recovery did not use when the world was opened (LevelDB would say nothing): a torn
 * tail, a table the MANIFEST does not name, a gap before a log. Hidden when clean. */
function showRecovery(r: RecoveryReport): void {
  const el = $('recovery-warning');
  el.hidden = r.clean;
  el.dataset.findings = String(r.messages.length);
  if (r.clean) {
    el.replaceChildren();
    return;
  }
  const head = document.createElement('strong');
  head.textContent = 'This world was not closed cleanly: recovery did not use everything on disk.';
  const list = document.createElement('ul');
  for (const m of r.messages) {
    const li = document.createElement('li');
    li.textContent = m;
    list.append(li);
  }
  const hint = document.createElement('p');
  hint.textContent =
    'What is shown is what the game would load. `strata repair` (the CLI) folds every intact entry back in; the files are untouched here.';
  el.replaceChildren(head, list, hint);
}

function showError(text: string): void {
  say(text, 'error');
  setState('error');
}

interface ErrorLike {
  code?: string;
  message?: string;
  file?: string;
  offset?: number;
}

/** A message a player can act on, keeping the engine's own words as the detail. */
export function describe(e: unknown, what: string): string {
  const err = (e ?? {}) as ErrorLike;
  const msg = String(err.message ?? e);
  // The engine's messages start with their kind ("Corruption: ", "Invalid argument: ", …).
  const detail = msg.replace(/^(NotFound|Corruption|IO error|Invalid argument|Locked|Not supported|No space): /, '');
  if (msg.includes('mcworld:')) {
    if (msg.includes('inflates')) return `${what} was refused: it looks like a zip bomb (${detail}).`;
    if (msg.includes('not a readable zip')) return `${what} is not a readable .mcworld: the zip is truncated or damaged (${detail}).`;
    return `${what} was refused: ${detail}.`;
  }
  if (err.code === 'LEVEL_CORRUPTION') {
    const where = err.file ? ` in ${err.file}${err.offset !== undefined ? ` at offset ${err.offset}` : ''}` : '';
    return `The world's database is damaged${where}: ${detail}. Nothing was changed (worlds open read-only).`;
  }
  if (err.code === 'LEVEL_NOT_FOUND') return `${what} could not be opened: ${detail}.`;
  return `${what} could not be opened: ${err.code ? `${err.code}: ` : ''}${detail}`;
}

function clearWorldView(): void {
  for (const a of ['entries', 'keyBytes', 'valueBytes', 'crc32c']) delete summaryEl.dataset[a];
  delete $('map').dataset.chunks;
  $('summary-section').hidden = true;
  $('map-section').hidden = true;
  $('editor-section').hidden = true;
  inspector.clear();
  keyBrowser.attach(undefined);
  void entityPanel.load(undefined);
  players = [];
  renderPlayers();
}

async function closeWorld(): Promise<void> {
  const w = world;
  world = undefined;
  helpers?.close();
  helpers = undefined;
  helpersOpening = undefined;
  summary = undefined;
  if (w) await w.close().catch(() => {});
}

function row(dl: HTMLElement, name: string, value: string): void {
  const dt = document.createElement('dt');
  dt.textContent = name;
  const dd = document.createElement('dd');
  dd.textContent = value;
  dl.append(dt, dd);
}

/** Opens whatever `open` returns as the current world and shows it. */
/** Opens a world (closing the current one). `sameWorld`: the edited copy of the world shown
 * (its staged edits were just saved); otherwise the editor starts from nothing. */
async function load(label: string, open: () => Promise<World>, sameWorld = false): Promise<void> {
  if (!sameWorld) editor.reset();
  const gen = ++generation;
  setState('loading');
  say(`Opening ${label}…`, 'busy');
  startWork(`opening ${label}`, gen);
  try {
    await loadIn(gen, label, open);
  } finally {
    endWork(gen);
  }
}

/** When the world being opened got its milestones (ms from the open's start; tests and the
 * map benchmark read them through window.strataViewer.mapTimes). */
let mapBands = 0;
/** Tests: map helpers for the next worlds opened, instead of `?helpers` or the default. */
let helperOverride: string | null = null;
/** Calls answered by map helpers for the world shown (bands and tiles; tests read it). */
let mapHelperBands = 0;
let mapTimes: { opened?: number; identity?: number; chunkIndex?: number; firstPicture?: number; mapDrawn?: number; ready?: number } = {};
warmUp();
let loadStart = 0;
function mark(what: keyof typeof mapTimes): void {
  mapTimes[what] ??= Math.round(performance.now() - loadStart);
}

async function loadIn(gen: number, label: string, open: () => Promise<World>): Promise<void> {
  clearWorldView();
  await closeWorld();
  if (gen !== generation) return;
  mapTimes = {};
  loadStart = performance.now();
  let w: World;
  try {
    w = await open();
    mark('opened');
  } catch (e) {
    if (gen === generation) showError(describe(e, label));
    return;
  }
  if (gen !== generation) {
    await w.close();
    return;
  }
  world = w;
  chunkIndex = undefined; // an open (or a reopen after an edit) reads the index afresh
  lastPass = undefined;
  const src = source;
  // Map helpers open with a world large enough to share its chunk index pass with them;
  // with a smaller one, once the page is ready (below), so that they slow neither its first
  // picture nor its figures (the largest shared world, 16 MB: first picture 516 ms without a
  // helper opening beside the page's engine, 566 with).
  const early = (await w.chunkSplitKeys(2, MIN_SHARED_BYTES).catch(() => [])).length > 0;
  if (gen !== generation) return;
  if (early) startHelpers(gen, w, src);
  // Chunk indexes are kept once the first map is drawn (or this open ends otherwise).
  const releaseKeeps = holdKeeps();
  try {
    // The map first (the first picture a player waits for: it needs only the chunk index),
    // then the figures that read the whole database (key kinds, the checksum), then the panels.
    say(`Reading ${label}: chunks…`, 'busy');
    // A reloaded or shared view names its dimension; otherwise the first one with chunks.
    let chunks: ChunkList | undefined;
    if (!(viewFromUrl && readViewHash().has('dim'))) {
      let pick = 0;
      for (const d of [0, 1, 2] as const) {
        const c = await chunksOf(w, d);
        if (d === 0) chunks = c; // no chunks anywhere: the Overworld's (empty) map
        if (c.length > 0) {
          [pick, chunks] = [d, c];
          break;
        }
      }
      dimensionSel.value = String(pick);
      mark('chunkIndex');
    }
    // Undefined when another map (a layer or dimension picked meanwhile) superseded this one:
    // that map says its own message; the world's figures are still read here.
    const mapMessage = await drawMap(gen, w, chunks);
    releaseKeeps();
    if (gen !== generation) return;
    mark('mapDrawn');
    say(`Reading ${label}: key kinds and checksum…`, 'busy');
    const s = await w.summary();
    if (gen !== generation) return;
    summary = s;
    players = await playerMarkers(w);
    if (gen !== generation) return;
    baseMarkers = baseMarkersOf(Number(dimensionSel.value));
    renderPlayers();
    const scan = await w.db.scan();
    const props = await w.db.properties();
    const recovery = await w.db.recovery();
    if (gen !== generation) return;
    showRecovery(recovery);
    const dat = s.levelDat;
    $('world-name').textContent = dat?.name ?? label;
    summaryEl.replaceChildren();
    if (dat) {
      row(summaryEl, 'game version', dat.gameVersion ?? '—');
      row(summaryEl, 'seed', dat.seed ?? '—');
      row(summaryEl, 'spawn', dat.spawn ? dat.spawn.join(', ') : '—');
      row(summaryEl, 'game mode', dat.gameMode === null ? '—' : (GAME_MODES[dat.gameMode] ?? String(dat.gameMode)));
      row(summaryEl, 'storage version', String(dat.storageVersion));
    } else {
      row(summaryEl, 'level.dat', s.levelDatError ? `unreadable: ${s.levelDatError}` : 'none (a bare db folder)');
    }
    row(summaryEl, 'entries', scan.entries.toLocaleString('en'));
    row(summaryEl, 'key bytes', scan.keyBytes.toLocaleString('en'));
    row(summaryEl, 'value bytes', scan.valueBytes.toLocaleString('en'));
    row(summaryEl, 'CRC-32C', `0x${scan.crc32c.toString(16).padStart(8, '0')}`);
    row(summaryEl, 'files per level', props.filesPerLevel.join(' '));
    row(summaryEl, 'chunks', `Overworld ${s.chunks[0]} · Nether ${s.chunks[1]} · End ${s.chunks[2]}`);
    summaryEl.dataset.entries = String(scan.entries);
    summaryEl.dataset.keyBytes = String(scan.keyBytes);
    summaryEl.dataset.valueBytes = String(scan.valueBytes);
    summaryEl.dataset.crc32c = String(scan.crc32c);
    const tbody = $('kinds').querySelector('tbody')!;
    tbody.replaceChildren(
      ...[...s.kinds, { kind: 'total', ...s.total }].map((k) => {
        const tr = document.createElement('tr');
        for (const v of [k.kind, k.count, k.keyBytes, k.valueBytes]) {
          const td = document.createElement('td');
          td.textContent = typeof v === 'number' ? v.toLocaleString('en') : v;
          tr.append(td);
        }
        return tr;
      }),
    );
    $('summary-section').hidden = false;
    keyBrowser.attach(w);
    await editor.attach(w);
    await entityPanel.load(w);
    if (gen !== generation) return;
    mapView.setMarkers([...entityPanel.markers(), ...baseMarkers]);
    if (mapMessage !== undefined) say(mapMessage);
    mark('ready');
    if (mapsDrawing === 0) setState('ready');
    if (!early) startHelpers(gen, w, src);
  } catch (e) {
    if (gen === generation) showError(describe(e, label));
  } finally {
    releaseKeeps();
  }
}

/** Opens map helpers on the world just opened, from its open on: they take ranges of its
 * chunk index pass (the first picture waits on that pass), then draw the next maps (another
 * layer or dimension), detail and close-up tiles with the page's engine. `?helpers=N` sets
 * their number (0: none; default: the spare cores, helperCount()). A world in OPFS is shared
 * as `File` snapshots of its pool (opfsFiles: no handle, no lock, while this page's engine
 * holds it read-only); one in IndexedDB, or an edited copy (writable: saves and compactions
 * change it under them), is not shared. */
function startHelpers(gen: number, w: World, src: Source | undefined): void {
  const asked = helperOverride ?? new URLSearchParams(location.search).get('helpers');
  const count = asked === null ? helperCount() : Math.max(0, Math.min(8, Math.trunc(Number(asked)) || 0));
  if (count === 0) return;
  const shared =
    src?.kind === 'files' || src?.kind === 'zip'
      ? Promise.resolve({ files: src.files as ReadonlyArray<{ path: string; file: Blob }>, root: src.root })
      : src?.kind === 'opfs' && !w.writable
        ? defaultStorage().then((kind) => (kind === 'opfs' ? opfsFiles(src.location).then((files) => ({ files, root: src.location })) : undefined))
        : undefined;
  if (!shared) return;
  const pool = shared
    .then((s) => (s ? MapHelpers.open(s.files, s.root, count) : undefined))
    .then(
      (p) => {
        if (!p) {
          opening.none = true;
          return undefined;
        }
        if (gen === generation && w === world) {
          [helpers, helpersFor] = [p, w];
          mapView.detail.concurrency = 1 + p.size;
          return p;
        }
        p.close();
        return undefined;
      },
      (e: unknown) => {
        console.warn('map helpers unavailable; maps are drawn by the page engine alone:', e);
        opening.none = true;
        return undefined;
      },
    );
  const opening: NonNullable<typeof helpersOpening> = { world: w, pool, count };
  helpersOpening = opening;
}

async function showMap(gen = generation): Promise<void> {
  const w = world;
  if (!w) return;
  const mine = !work;
  if (mine) startWork('drawing the map', gen);
  try {
    const done = await drawMap(gen, w);
    if (done !== undefined && gen === generation && w === world) {
      say(done);
      // Drawn while a world was being opened (its figures still being read): the open says
      // when the page is ready.
      if (mine || !work) setState('ready');
    }
  } finally {
    if (mine) endWork(gen);
  }
}

/** Chunks per band when a large map is drawn progressively (one engine call per band). */
const BAND_CHUNKS = 4096;

/** Spawn and the players of `dimension`, drawn above the entity markers. */
function baseMarkersOf(dimension: number): Marker[] {
  const markers: Marker[] = players.filter((p) => p.dimension === dimension);
  const spawn = summary?.levelDat?.spawn;
  if (dimension === 0 && spawn) markers.unshift({ x: spawn[0], z: spawn[2], label: 'spawn', colour: '#ff3b3b' });
  return markers;
}

/** Draws the map of the dimension and layer selected. A large map (more than BAND_CHUNKS
 * chunks) is drawn in bands of chunk rows, the band at the view's centre first, each shown as
 * it arrives (the engine stacks them into the whole map's pixels: World.map's `region`).
 * Resolves with the message to show once the page is ready, or undefined when superseded. */
/** The chunk index of each dimension of the world shown, read once per open (the world
 * cannot change under the page: an edit reopens it, and the open reads the index again). A
 * layer picked on the 160,000-chunk world no longer waits 0.6 s for it. */
let chunkIndex:
  | { world: World; byDimension: Map<number, Promise<ChunkList>>; identity: Promise<string | undefined> }
  | undefined;
/** Tests: chunk lists of the world shown that came from the kept index (chunk-index/cache)
 * rather than a pass over the database. */
let chunkListsCached = 0;
/** Tests: settles when the lists of the last pass are kept (or found not worth keeping). */
let chunkListsKept: Promise<unknown> = Promise.resolve();
function chunksOf(w: World, dimension: 0 | 1 | 2): Promise<ChunkList> {
  if (chunkIndex?.world !== w) {
    // The identity is the world's as opened: a write made after (an edit) reopens the world,
    // which starts a new index.
    chunkIndex = { world: w, byDimension: new Map(), identity: identityOf(w) };
    chunkListsCached = 0;
  }
  const index = chunkIndex;
  // One lookup or pass per dimension, however many draws ask for it meanwhile.
  let list = index.byDimension.get(dimension);
  if (!list) {
    list = indexDimension(index, w, dimension);
    index.byDimension.set(dimension, list);
    list.catch(() => index.byDimension.delete(dimension)); // a failed pass is tried again
  }
  return list;
}

async function indexDimension(index: NonNullable<typeof chunkIndex>, w: World, dimension: 0 | 1 | 2): Promise<ChunkList> {
  const identity = await index.identity;
  if (chunkIndex === index) mark('identity');
  const kept = identity === undefined ? undefined : await cachedChunks(identity, dimension);
  if (kept) {
    if (chunkIndex === index) chunkListsCached += 1;
    // The samples back in the engine: the map reads no sampled chunk (best effort: without
    // them it reads every chunk, as before).
    if (kept.relief) await w.setReliefSamples(kept.relief).catch(() => undefined);
    return kept.chunks;
  }
  // Shared with the map helpers opening beside the page's engine where there are any, and
  // the world is large enough to gain; else passed whole (with decode workers, if any).
  // (Not once the helpers failed to open: the page's engine would pass every range alone.)
  const opening = helpersOpening?.world === w && !helpersOpening.none ? helpersOpening : undefined;
  const shared = opening ? await sharedChunkPass(w, dimension, opening.pool, 1 + opening.count) : undefined;
  if (chunkIndex === index) lastPass = shared && { ranges: shared.ranges, byHelpers: shared.byHelpers, timeline: shared.timeline };
  const chunks = shared?.chunks ?? (await w.chunkList(dimension, { reliefSamples: true }));
  // Kept only if the world did not change during the pass (its identity, read again, is the
  // same), so a list is never kept under the identity of another state of the world. Not for
  // a writable copy: each edit gives it another identity, and reopened later (read-only) it
  // has yet another, so its lists would only push other worlds' out. Kept once the map is
  // drawn: the engine answers calls in order, and the identity and the samples (packed: 9 MB
  // for 160,000 chunks) would come before the map's bands. The samples are the pass's while
  // nothing was written since (the engine's check); else the list is kept without them.
  if (identity !== undefined && !w.writable) {
    chunkListsKept = mapsDone()
      .then(() => identityOf(w))
      .then(async (after) => {
        if (after !== identity) return;
        const relief = await w.reliefSamples(dimension).catch(() => undefined);
        await keepChunks(identity, dimension, chunks, relief);
      });
  }
  return chunks;
}

/** Maps begun: a map drawn after another (another layer or dimension) supersedes it. */
let mapDraws = 0;
/** Tests: while set, no band is asked for (strataViewer.holdMap), so that a test can make a
 * second map start while the first is unfinished, deterministically. */
let mapPause: { held: Promise<void>; release(): void } | undefined;

/** Maps being drawn now (the page is not ready while one is). */
let mapsDrawing = 0;
/** Holds on keeping chunk indexes: an open holds from its start until its map is drawn (or
 * it failed), a map while it is drawn. */
let keepHolds = 0;
let keepWaiters: Array<() => void> = [];

/** Holds keeps until the returned release is called (once; later calls do nothing). */
function holdKeeps(): () => void {
  keepHolds += 1;
  let held = true;
  return () => {
    if (!held) return;
    held = false;
    keepHolds -= 1;
    if (keepHolds === 0) {
      const waiting = keepWaiters;
      keepWaiters = [];
      for (const w of waiting) w();
    }
  };
}

/** Resolves when no open or map holds keeps. */
function mapsDone(): Promise<void> {
  return keepHolds === 0 ? Promise.resolve() : new Promise((resolve) => keepWaiters.push(resolve));
}
let mapPaints = 0;

async function drawMap(gen: number, w: World, known?: ChunkList): Promise<string | undefined> {
  mapsDrawing += 1;
  const release = holdKeeps();
  try {
    return await drawMapIn(gen, w, known);
  } finally {
    mapsDrawing -= 1;
    release();
  }
}

async function drawMapIn(gen: number, w: World, known?: ChunkList): Promise<string | undefined> {
  const mine = ++mapDraws;
  const stale = (): boolean => gen !== generation || w !== world || mine !== mapDraws;
  const dimension = Number(dimensionSel.value) as 0 | 1 | 2;
  say('Drawing the map…', 'busy');
  setState('loading');
  const chunks = known ?? (await chunksOf(w, dimension));
  if (stale()) return undefined;
  let ppc = 16;
  let cpp = 1;
  const set = new ChunkSet(chunks);
  const count = set.size;
  const [x0, z0, x1, z1] = boundsOf(chunks) ?? [0, 0, -1, -1];
  if (count > 0) {
    const wChunks = x1 - x0 + 1;
    const hChunks = z1 - z0 + 1;
    while (ppc > 1 && wChunks * hChunks * ppc * ppc > maxMapPixels) ppc /= 2;
    // Chunks spread too far for a pixel each (a chunk visited a million blocks away): several
    // chunks per pixel far out; zoomed in, chunks still show their own tiles.
    while (Math.ceil(wChunks / cpp) * Math.ceil(hChunks / cpp) > maxMapPixels) cpp *= 2;
  }
  const layer = layerSel.value as MapLayer;
  const y = layer === 'cave' ? Math.trunc(Number(yLevel.value) || 0) : undefined;
  const sameView = shown?.world === w && shown.dimension === dimension;
  shown = { world: w, dimension };
  $('map-section').hidden = false;
  mapView.tilesEnabled = layer === 'relief' || layer === 'surface';
  mapView.detail.concurrency = 1 + (helpersNow()?.size ?? 0);
  const detail = detailSourceOf(w, dimension, layer, y);
  baseMarkers = baseMarkersOf(dimension);
  const markers = [...entityPanel.markers(), ...baseMarkers];
  let image: MapImage;
  if (cpp > 1 || count <= BAND_CHUNKS) {
    // With the chunk list the engine has no second pass over the database to make (the
    // largest shared world: 480 ms from the chunk index to the first picture, 190 of them that
    // pass).
    image = await w.map({ dimension, pixelsPerChunk: ppc, chunksPerPixel: cpp, layer, y, chunks });
    if (stale()) return undefined;
    mapView.show(image, set, markers, sameView, detail);
    mapBands = 1;
    mark('firstPicture');
    applyViewFromUrl();
  } else {
    const hChunks = z1 - z0 + 1;
    // Bands of chunk rows: the first (about BAND_CHUNKS chunks) at the view's centre, then
    // outwards on both sides, each twice the last (up to 16 first bands): the first picture
    // comes at once and the whole costs few engine calls (each band re-reads blocks shared
    // with its neighbours).
    const frame: MapImage = {
      width: (x1 - x0 + 1) * ppc,
      height: hChunks * ppc,
      rgba: new Uint8Array(0),
      minChunkX: x0,
      minChunkZ: z0,
      pixelsPerChunk: ppc,
      chunksPerPixel: 1,
      chunksSampledOut: 0,
      chunksIndexed: 0,
      chunksDrawn: 0,
      chunksFailed: 0,
      failedChunks: [],
      chunksWithoutSurface: 0,
      layer,
      slimeChunks: 0,
      biomes: [],
    };
    mapView.begin(frame, set, markers, sameView, detail);
    applyViewFromUrl();
    const rows = Math.max(1, Math.floor((BAND_CHUNKS * hChunks) / count));
    const centre = Math.min(z1, Math.max(z0, Math.floor(mapView.view().z / 16)));
    const first: [number, number] = [Math.max(z0, centre - (rows >> 1)), Math.min(z1, centre - (rows >> 1) + rows - 1)];
    // Map helpers draw bands too, unless the page's engine draws them from its samples.
    const pool = fromSamples(layer, ppc) ? undefined : helpersNow();
    const bands: Array<[number, number]> = [first];
    let [north, south, size] = [first[0] - 1, first[1] + 1, rows];
    while (north >= z0 || south <= z1) {
      // Alone, bands grow to 16 times the first (fewer calls); with map helpers, to 4 times
      // (smaller bands share out evenly: the last band is not left to one drawer).
      size = Math.min(size * 2, rows * (pool ? 4 : 16));
      if (south <= z1) bands.push([south, Math.min(z1, south + size - 1)]);
      if (north >= z0) bands.push([Math.max(z0, north - size + 1), north]);
      south += size;
      north -= size;
    }
    const biomes = new Map<number, [number, string | null, number, string]>();
    // Bands go to whoever is free: each map helper and the page's engine; a band a helper
    // fails is redone here.
    let next = 0;
    let superseded = false;
    const drawer = async (on: 'main' | 'helper'): Promise<void> => {
      while (!superseded && next < bands.length) {
        if (mapPause) await mapPause.held; // tests: bands held back to force an interleaving
        if (superseded || stale()) {
          superseded = true;
          return;
        }
        const i = next++;
        const [bz0, bz1] = bands[i]!;
        // The band's chunks in the engine's (key) order, with the row north of it (it shades
        // the band's first row).
        const inBand = set.inRect(x0, bz0 - 1, x1, bz1);
        const options = { dimension, pixelsPerChunk: ppc, layer, y, region: [x0, bz0, x1, bz1] as [number, number, number, number], chunks: inBand };
        let band: MapImage;
        try {
          band = on === 'helper' && pool ? await pool.map(options).catch(() => w.map(options)) : await w.map(options);
        } catch (e) {
          // The others stop too: the map fails once, with this error.
          superseded = true;
          throw e;
        }
        if (superseded || stale()) {
          superseded = true;
          return;
        }
        take(band);
      }
    };
    const take = (band: MapImage): void => {
      mapPaints += 1;
      mapView.paint(band);
      mark('firstPicture');
      frame.chunksIndexed += band.chunksIndexed;
      frame.chunksDrawn += band.chunksDrawn;
      frame.chunksFailed += band.chunksFailed;
      frame.failedChunks.push(...band.failedChunks);
      frame.chunksWithoutSurface += band.chunksWithoutSurface;
      frame.slimeChunks += band.slimeChunks;
      if (band.heightMin !== undefined) frame.heightMin = Math.min(frame.heightMin ?? Infinity, band.heightMin);
      if (band.heightMax !== undefined) frame.heightMax = Math.max(frame.heightMax ?? -Infinity, band.heightMax);
      for (const row of band.biomes) {
        const had = biomes.get(row[0]);
        if (had) had[2] += row[2];
        else biomes.set(row[0], [...row]);
      }
      say(`Drawing the map: ${frame.chunksIndexed.toLocaleString('en')} of ${count.toLocaleString('en')} chunks…`, 'busy');
    };
    const drawers: Array<Promise<void>> = [];
    for (let k = 0; k < (pool?.size ?? 0); k++) drawers.push(drawer('helper'));
    drawers.push(drawer('main'));
    await Promise.all(drawers);
    if (superseded || stale()) return undefined;
    // Each band names its first 64 failures in the engine's order (x, then z): merged, the
    // first 64 are exactly those of one whole-map call, whatever order the bands came in.
    frame.failedChunks = frame.failedChunks.sort((a, b) => a[0] - b[0] || a[1] - b[1]).slice(0, 64);
    mapHelperBands = pool?.stats.calls ?? 0;
    // Most columns first, then by id: the order of one whole-map call.
    frame.biomes = [...biomes.values()].sort((a, b) => b[2] - a[2] || a[0] - b[0]);
    mapBands = bands.length;
    mapView.finish(frame);
    image = frame;
  }
  showLegend(image);
  $('map').dataset.failed = image.failedChunks.map(([x, z]) => `${x},${z}`).join(';');
  const failed =
    (image.chunksFailed > 0
      ? `, ${image.chunksFailed} could not be decoded (chunk${image.chunksFailed === 1 ? '' : 's'} ${image.failedChunks
          .slice(0, 5)
          .map(([x, z]) => `${x}, ${z}`)
          .join('; ')}${image.chunksFailed > 5 ? '; …' : ''}: ${image.failedChunks[0]?.[2] ?? ''})`
      : '') +
    (image.chunksPerPixel > 1 ? ` (far out, one pixel per ${image.chunksPerPixel}×${image.chunksPerPixel} chunks: zoom in for every chunk)` : '');
  return `${image.chunksDrawn} of ${count} chunks drawn${failed}. Click a chunk to inspect its records.`;
}

/** The first map after the page loaded: the URL's centre and zoom, if it has them. */
function applyViewFromUrl(): void {
  if (!viewFromUrl) return;
  viewFromUrl = false;
  const h = readViewHash();
  const [x, z, zoom] = ['x', 'z', 'zoom'].map((k) => Number(h.get(k) ?? NaN));
  if (Number.isFinite(x) && Number.isFinite(z) && Number.isFinite(zoom) && zoom! > 0) mapView.centerOn(x!, z!, zoom);
}

/** What the map's colours mean, for the layer shown. */
function showLegend(image: MapImage): void {
  const legend = $('legend');
  const span = (text: string, colour?: string): HTMLElement => {
    const el = document.createElement('span');
    if (colour) {
      const sw = document.createElement('span');
      sw.className = 'swatch';
      sw.style.background = colour;
      el.append(sw);
    }
    el.append(text);
    return el;
  };
  const items: HTMLElement[] = [];
  if (image.layer === 'height' && image.heightMin !== undefined) {
    const el = span(`y ${image.heightMin}`);
    const ramp = document.createElement('span');
    ramp.className = 'ramp';
    // The engine's ramp (map.rs height_colour), over the range drawn.
    const stops: Array<[number, string]> = [
      [-64, '#14186e'],
      [0, '#286edc'],
      [64, '#3caa46'],
      [128, '#e6d23c'],
      [200, '#c83c28'],
      [320, '#ffffff'],
    ];
    const lo = image.heightMin;
    const hi = Math.max(image.heightMax ?? lo, lo + 1);
    ramp.style.background = `linear-gradient(to right, ${stops.map(([y, c]) => `${c} ${(((y - lo) / (hi - lo)) * 100).toFixed(1)}%`).join(', ')})`;
    el.append(ramp, `y ${image.heightMax}`);
    items.push(el);
  } else if (image.layer === 'biome') {
    for (const [id, name, columns, colour] of image.biomes.slice(0, 24)) {
      const el = span(`${name ?? `biome ${id}`} (${columns.toLocaleString('en')})`, colour);
      el.dataset.biome = String(id);
      items.push(el);
    }
    if (image.biomes.length > 24) items.push(span(`… ${image.biomes.length - 24} more`));
  } else if (image.layer === 'slime') {
    items.push(span(`slime chunk (${image.slimeChunks.toLocaleString('en')} of ${image.chunksIndexed.toLocaleString('en')} chunks; they spawn slimes below y 40 in any world)`, '#28dc3c'));
  } else if (image.layer === 'cave') {
    items.push(span(`the first block at or below y ${yLevel.value}; darker is deeper`));
  }
  legend.replaceChildren(...items);
  legend.dataset.layer = image.layer;
}

/** Where the players are: `Pos` and `DimensionId` of ~local_player and every player_* record. */
const DIMENSIONS = ['Overworld', 'Nether', 'End'];

/** The players of the world (every dimension): where each is; a click goes there (switching
 * the map's dimension when needed) and shows the record. */
function renderPlayers(): void {
  $('players-line').hidden = players.length === 0;
  $('player-list').replaceChildren(
    ...players.map((p) => {
      const li = document.createElement('li');
      const ref = p.data as PlayerRef;
      li.dataset.player = ref.name;
      const b = document.createElement('button');
      b.type = 'button';
      b.className = 'link goto-player';
      b.textContent = `${p.label} · ${DIMENSIONS[p.dimension] ?? `dimension ${p.dimension}`} ${p.x}, ${p.y ?? '?'}, ${p.z}`;
      b.addEventListener('click', () => {
        void (async () => {
          if (Number(dimensionSel.value) !== p.dimension && p.dimension >= 0 && p.dimension <= 2) {
            // What a change of the dimension select does, awaited.
            dimensionSel.value = String(p.dimension);
            inspector.clear();
            await showMap();
            await editor.attach(world);
            await entityPanel.load(world);
          }
          mapView.centerOn(p.x, p.z, Math.max(mapView.view().zoom, 4));
          await showPlayer(ref);
        })().catch((e: unknown) => showError(describe(e, 'the player')));
      });
      li.append(b);
      return li;
    }),
  );
}

/** A player's record (NBT, editable as SNBT) in the entity view. */
async function showPlayer(ref: PlayerRef): Promise<void> {
  const w = world;
  if (!w) return;
  const view = $('entity-view');
  $('entities-section').hidden = false;
  await showValue(w, ref.playerKey, `player ${ref.name}`, view, (key) => void snbtEditor.editRecord(key, `player ${ref.name}`));
  view.dataset.identifier = `player ${ref.name}`;
  view.scrollIntoView({ block: 'nearest' });
}

/** What a player marker opens: its record. */
interface PlayerRef {
  playerKey: Uint8Array;
  name: string;
}
type PlayerMarker = Marker & { dimension: number; y?: number | undefined };

async function playerMarkers(w: World): Promise<PlayerMarker[]> {
  const enc = new TextEncoder();
  const keys = [
    ...((await w.db.iterator({ gte: '~local_player', lte: '~local_player', values: false }).all()) as Array<[Uint8Array, unknown]>),
    ...((await w.db.iterator({ gte: 'player_', lt: 'player`', values: false, limit: 64 }).all()) as Array<[Uint8Array, unknown]>),
  ].map(([k]) => k);
  const out: PlayerMarker[] = [];
  for (const key of keys) {
    try {
      const value = (await w.nbt(key))?.[0]?.value as { Pos?: unknown; DimensionId?: unknown } | undefined;
      const pos = value?.Pos;
      if (!Array.isArray(pos) || typeof pos[0] !== 'number' || typeof pos[2] !== 'number') continue;
      const local = key.length === enc.encode('~local_player').length && key[0] === 0x7e;
      out.push({
        x: Math.floor(pos[0]),
        z: Math.floor(pos[2]),
        y: typeof pos[1] === 'number' ? Math.floor(pos[1]) : undefined,
        dimension: typeof value?.DimensionId === 'number' ? value.DimensionId : 0,
        label: local ? 'player (local)' : 'player',
        colour: '#3bd1ff',
        data: { playerKey: key, name: local ? '~local_player' : new TextDecoder().decode(key) } satisfies PlayerRef,
      });
    } catch {
      // A player record that is not NBT: no marker.
    }
  }
  return out;
}

let cancelImport = false;

/** Copies a world's files into browser storage showing `#import-progress` (its Cancel stops
 * the copy: `Cancelled`, nothing kept); the copy is listed with the imported worlds. */
async function copyIntoStorage(files: PickedFile[], root: string): Promise<ImportedWorld> {
  const box = $('import-progress');
  const bar = box.querySelector('progress')!;
  const text = $('import-text');
  cancelImport = false;
  bar.value = 0;
  text.textContent = '';
  box.hidden = false;
  try {
    const w = await importFolder(
      files,
      root,
      (n, total, bytes, totalBytes) => {
        bar.value = totalBytes === 0 ? 1 : bytes / totalBytes;
        text.textContent = `${n} / ${total} files · ${bytes.toLocaleString('en')} / ${totalBytes.toLocaleString('en')} bytes`;
      },
      () => cancelImport,
    );
    renderImported();
    return w;
  } finally {
    box.hidden = true;
  }
}

/** Copies a picked world into OPFS with progress, then opens the copy. */
async function importAndOpen(files: PickedFile[], root: string): Promise<void> {
  const gen = ++generation;
  setState('loading');
  clearWorldView();
  await closeWorld();
  say(`Copying “${root}” into browser storage…`, 'busy');
  try {
    const w = await copyIntoStorage(files, root);
    if (gen === generation) {
      source = { kind: 'opfs', location: w.location };
      await load(`“${w.name}” (browser storage)`, () => openOpfsWorld(w.location));
    }
  } catch (e) {
    if (gen !== generation) return;
    if (e instanceof Cancelled) showError('The import was cancelled; nothing was kept.');
    else if ((e as { kind?: string }).kind === 'NoSpace') {
      // importFolder deleted what was copied before the refusal.
      showError(`Browser storage is full: “${root}” was not copied, and nothing of it was kept. Delete a world below to make room, or open it without copying.`);
    } else showError(describe(e, `the folder “${root}”`));
  }
}

function renderImported(): void {
  const list = importedWorlds();
  $('imported-section').hidden = list.length === 0;
  void storageState().then((st) => {
    const el = $('storage-state');
    el.dataset.persisted = String(st.persisted);
    el.dataset.usage = String(st.usage);
    el.dataset.quota = String(st.quota);
    const mb = (n: number) => `${(n / 1e6).toLocaleString('en', { maximumFractionDigits: 1 })} MB`;
    const room = st.quota > 0 ? `${mb(st.usage)} used of ${mb(st.quota)} available to this site` : 'this browser does not report how much this site may store';
    el.textContent = `${room}; storage ${st.persisted ? 'is persistent (kept under pressure)' : 'may be cleared by the browser under storage pressure'}.`;
  });
  $('imported-list').replaceChildren(
    ...list.map((w) => {
      const li = document.createElement('li');
      li.dataset.location = w.location;
      li.textContent = `${w.name} — ${w.files} files, ${w.bytes.toLocaleString('en')} bytes, imported ${w.date.slice(0, 16).replace('T', ' ')}`;
      const open = document.createElement('button');
      open.type = 'button';
      open.className = 'open-imported';
      open.textContent = 'Open';
      open.addEventListener('click', () => {
        source = { kind: 'opfs', location: w.location };
        void load(`“${w.name}” (browser storage)`, () => openOpfsWorld(w.location));
      });
      const del = document.createElement('button');
      del.type = 'button';
      del.className = 'delete-imported';
      del.textContent = 'Delete';
      del.addEventListener('click', () => {
        generation++;
        clearWorldView();
        void (async () => {
          await closeWorld();
          await forget(w.location);
          renderImported();
          say(`Deleted “${w.name}” from browser storage.`);
          setState('ready');
        })().catch((e: unknown) => showError(describe(e, `deleting “${w.name}”`)));
      });
      li.append(open, del);
      return li;
    }),
  );
}

function openFolder(files: PickedFile[], label: string): void {
  const root = worldRoot(files);
  if (root === undefined || root === '') {
    generation++;
    clearWorldView();
    void closeWorld();
    showError(`${label} is not a Bedrock world: it holds no level.dat and no db/ folder. Pick the world's own folder (the one holding level.dat and db/).`);
    return;
  }
  if ($<HTMLInputElement>('import-opfs').checked) {
    void importAndOpen(files, root);
    return;
  }
  source = { kind: 'files', files, root };
  void load(`the folder “${root}”`, () => openWorld(root, { storage: 'files', files, decodeWorkers: DECODE_WORKERS }));
}

/** Unpacks a `.mcworld` in a page worker (unzip.ts, the engine's limits), then copies the
 * world into OPFS like a picked folder (listed on return, named after the world's folder in
 * the zip, or the file's name for a zip of the folder's contents). */
async function importZipAndOpen(file: File): Promise<void> {
  const gen = ++generation;
  const label = `“${file.name}”`;
  setState('loading');
  clearWorldView();
  await closeWorld();
  startWork(`unpacking ${label}`, gen);
  let unzipped: { root: string; files: PickedFile[] };
  try {
    unzipped = await unzipToFiles(file, label);
  } catch (e) {
    if (gen === generation) showError(describe(e, label));
    return;
  } finally {
    endWork(gen);
  }
  if (gen !== generation) return;
  await importAndOpen(unzipped.files, unzipped.root);
}

/** Unpacks a `.mcworld` in a page worker (unzip.ts: the engine's limits and wording) into
 * `File`s under the world's folder (named after the world's folder in the zip, or the file's
 * name for a zip of the folder's contents), as if that folder had been picked. The running
 * work's cancel terminates the unpacking. */
async function unzipToFiles(file: File, label: string): Promise<{ root: string; files: PickedFile[] }> {
  say(`Unpacking ${label}…`, 'busy');
  const worker = new Worker(new URL('./unzip-worker.ts', import.meta.url), { type: 'module', name: 'unzip' });
  if (work) work.onCancel = () => worker.terminate();
  let out: Unzipped;
  try {
    out = await new Promise<Unzipped>((resolve, reject) => {
      worker.onmessage = (ev: MessageEvent<{ type: string; files?: unknown; total?: number; root?: string; message?: string }>) => {
        const m = ev.data;
        if (m.type === 'progress') say(`Unpacking ${label}: ${String(m.files)} / ${String(m.total)} files…`, 'busy');
        else if (m.type === 'done') resolve({ root: m.root!, files: m.files as Unzipped['files'] });
        else reject(new Error(m.message));
      };
      worker.onerror = (ev) => reject(new Error(`mcworld: unpacking failed: ${ev.message}`));
      worker.postMessage(file);
    });
  } finally {
    worker.terminate();
  }
  const stem = file.name.replace(/\.(mcworld|zip)$/i, '').replace(/\//g, '_') || 'world';
  const root = out.root === '' ? stem : `${stem}/${out.root}`;
  const files: PickedFile[] = out.files.map((f) => ({
    path: `${root}/${f.name}`,
    file: new File([f.data as Uint8Array<ArrayBuffer>], f.name.split('/').pop()!),
  }));
  return { root, files };
}

function openZip(file: File): void {
  if ($<HTMLInputElement>('import-opfs').checked) {
    void importZipAndOpen(file);
    return;
  }
  // Unpacked into `File`s in a page worker and read in place like a picked folder (storage
  // 'files'): the world is not copied into the engine's memory, and map helpers can read the
  // same files; the first edit copies them into browser storage.
  const label = `“${file.name}”`;
  void load(label, async () => {
    const { root, files } = await unzipToFiles(file, label);
    source = { kind: 'zip', files, root };
    return openWorld(root, { storage: 'files', files, decodeWorkers: DECODE_WORKERS });
  });
}

$('open-folder-button').addEventListener('click', () => {
  const picker = (window as unknown as { showDirectoryPicker?: DirectoryPicker }).showDirectoryPicker;
  if (!picker) {
    $<HTMLInputElement>('open-folder').click();
    return;
  }
  picker({ mode: 'read' }).then(
    async (dir) => openFolder(await filesOfHandle(dir), `the folder “${dir.name}”`),
    (e: unknown) => {
      if ((e as { name?: string }).name !== 'AbortError') showError(describe(e, 'the folder'));
    },
  );
});

$<HTMLInputElement>('open-folder').addEventListener('change', (ev) => {
  const input = ev.target as HTMLInputElement;
  if (!input.files || input.files.length === 0) return;
  const files = filesOfInput(input.files);
  const top = files[0]!.path.split('/')[0] ?? 'the folder';
  openFolder(files, `the folder “${top}”`);
  input.value = '';
});

$('open-mcworld-button').addEventListener('click', () => $<HTMLInputElement>('open-mcworld').click());

$<HTMLInputElement>('open-mcworld').addEventListener('change', (ev) => {
  const input = ev.target as HTMLInputElement;
  const file = input.files?.[0];
  if (file) openZip(file);
  input.value = '';
});

$('key-search').addEventListener('submit', (ev) => {
  ev.preventDefault();
  keyBrowser.search($<HTMLInputElement>('key-prefix').value).catch((e: unknown) => showError(describe(e, 'the key search')));
});

let shown: { world: World; dimension: number } | undefined;
/** Spawn and players: drawn above the entity markers. */
let baseMarkers: Marker[] = [];

// The view lives in the URL's hash (`#dim=0&layer=height&y=20&x=12&z=-40&zoom=4`), so a view
// can be shared or reloaded: read when a world's first map is shown, written as it moves.
let viewFromUrl = true;
let urlTimer: ReturnType<typeof setTimeout> | undefined;
function readViewHash(): URLSearchParams {
  return new URLSearchParams(location.hash.slice(1));
}
function applyHashSettings(): void {
  const h = readViewHash();
  const dim = h.get('dim');
  if (dim !== null && ['0', '1', '2'].includes(dim)) dimensionSel.value = dim;
  const layer = h.get('layer');
  if (layer !== null && [...layerSel.options].some((o) => o.value === layer)) layerSel.value = layer;
  const y = h.get('y');
  if (y !== null && /^-?\d+$/.test(y)) yLevel.value = y;
  $('y-level-label').hidden = layerSel.value !== 'cave';
}
function writeViewHash(): void {
  if (!shown) return;
  clearTimeout(urlTimer);
  urlTimer = setTimeout(() => {
    const v = mapView.view();
    const h = new URLSearchParams({ dim: dimensionSel.value, layer: layerSel.value });
    if (layerSel.value === 'cave') h.set('y', yLevel.value);
    h.set('x', String(v.x));
    h.set('z', String(v.z));
    // Four significant digits: a far-out zoom (under 0.0005) is kept, not written as 0.000.
    h.set('zoom', String(Number(v.zoom.toPrecision(4))));
    history.replaceState(null, '', `#${h.toString()}`);
  }, 150);
}
mapView.onViewChange = writeViewHash;
applyHashSettings();

$('goto').addEventListener('submit', (ev) => {
  ev.preventDefault();
  const m = /^\s*(-?\d+)\s*[,\s]\s*(-?\d+)\s*$/.exec($<HTMLInputElement>('goto-xz').value);
  if (!m) {
    say('Go to: type block coordinates “x, z”, e.g. 120, -340.', 'error');
    return;
  }
  mapView.centerOn(Number(m[1]), Number(m[2]), Math.max(mapView.view().zoom, 4));
});

function redrawLayer(): void {
  $('y-level-label').hidden = layerSel.value !== 'cave';
  const gen = generation;
  showMap().catch((e: unknown) => {
    if (gen === generation) showError(describe(e, 'the map'));
  });
}
layerSel.addEventListener('change', redrawLayer);
yLevel.addEventListener('change', () => {
  if (layerSel.value === 'cave') redrawLayer();
});

dimensionSel.addEventListener('change', () => {
  inspector.clear();
  const gen = generation;
  showMap().catch((e: unknown) => {
    if (gen === generation) showError(describe(e, 'the map'));
  });
});
cancelBtn.addEventListener('click', cancelWork);
$('import-cancel').addEventListener('click', () => {
  cancelImport = true;
});
$('zoom-in').addEventListener('click', () => mapView.zoomAt(1.5));
$('zoom-out').addEventListener('click', () => mapView.zoomAt(1 / 1.5));
$('zoom-fit').addEventListener('click', () => mapView.fit());
$<HTMLInputElement>('grid').addEventListener('change', (ev) => {
  mapView.grid = (ev.target as HTMLInputElement).checked;
  mapView.draw();
});

document.addEventListener('dragover', (ev) => {
  ev.preventDefault();
  document.body.classList.add('dragging');
});
document.addEventListener('dragleave', () => document.body.classList.remove('dragging'));
document.addEventListener('drop', (ev) => {
  ev.preventDefault();
  document.body.classList.remove('dragging');
  const item = ev.dataTransfer?.items[0];
  const entry = item?.webkitGetAsEntry?.();
  if (entry?.isDirectory) {
    filesOfEntry(entry).then(
      (files) => openFolder(files, `the folder “${entry.name}”`),
      (e: unknown) => showError(describe(e, 'the dropped folder')),
    );
    return;
  }
  const file = ev.dataTransfer?.files[0];
  if (file) openZip(file);
});

/** For tests: the canvas point of block (x, z) on the current map. */
(window as unknown as { strataViewer: unknown }).strataViewer = {
  /** Bytes of the engine's wasm memory (its peak so far). */
  engineMemory: () => engineMemory(),
  /** The world's decode-worker counters (World.db.decodeStats): whether its passes used them. */
  decodeStats: () => world?.db.decodeStats(),
  /** The chunk-index pass again (with relief samples, as an open does); its chunk count. */
  chunkPass: async (dimension: 0 | 1 | 2) => chunkCount(await world!.chunkList(dimension, { reliefSamples: true })),
  /** Bytes per `.mcworld` export step (small: a cancel lands mid-export). */
  setExportStep: (n: number | undefined) => void (editor.exporter.stepBytes = n),
  pointOf: (x: number, z: number) => mapView.pointOf(x, z),
  /** The block at the map's centre and the zoom. */
  view: () => mapView.view(),
  /** Centres the map on block (x, z) at `zoom` screen pixels per block. */
  centerOn: (x: number, z: number, zoom: number) => mapView.centerOn(x, z, zoom),
  /** The label of the marker at canvas point (x, y), if any. */
  markerAt: (x: number, y: number) => mapView.markerAt(x, y)?.label,
  /** LEVEL_LOCKED retries of OPFS opens after a cancel (dead worker's handles not yet released). */
  lockRetries: () => lockRetries,
  /** Detail tiles: held, their pixels, missing in view, the level the view asks for. */
  detail: () => mapView.detailState(),
  /** RGBA of the detail tile of square (rx, rz) at `level`, if held. */
  detailPixels: (level: number, rx: number, rz: number) => mapView.detailPixels(level, rx, rz),
  setMaxDetailPixels: (n: number) => void (mapView.detail.maxPixels = n),
  /** The base map's largest size in pixels for the maps drawn next (a small one makes a small
   * world need detail tiles). */
  setMaxMapPixels: (n: number) => void (maxMapPixels = n),
  /** Block tiles held (bounded by MAX_TILES), and the base map's pixel size. */
  tiles: () => ({ held: mapView.tileCount(), missing: mapView.tilesMissing() }),
  setMaxTiles: (n: number) => void (mapView.maxTiles = n),
  /** Map helpers for the worlds opened next (null: `?helpers` or the default). */
  setHelpers: (n: number | null) => void (helperOverride = n === null ? null : String(n)),
  /** Holds back every band of the maps being drawn (true) or lets them go (false). */
  holdMap: (on: boolean) => {
    if (on && !mapPause) {
      let release = (): void => {};
      const held = new Promise<void>((r) => (release = r));
      mapPause = { held, release };
    } else if (!on && mapPause) {
      mapPause.release();
      mapPause = undefined;
    }
  },
  /** Maps being drawn now, and bands painted since the page loaded. */
  mapsDrawing: () => mapsDrawing,
  mapPaints: () => mapPaints,
  /** Engine calls (bands) the last map was drawn in. */
  mapBands: () => mapBands,
  /** How the last chunk index pass of the world shown was shared: ranges, and those map
   * helpers passed (undefined: passed whole, or the index was kept). */
  lastPass: () => lastPass,
  /** Calls map helpers answered (bands, tiles and chunk index ranges), and helpers running. */
  mapHelpers: () => ({ calls: helpersNow()?.stats.calls ?? 0, helpers: helpersNow()?.size ?? 0, bandsAtLastMap: mapHelperBands }),
  /** RGBA of the base map (the whole dimension at the map's pixels per chunk). */
  basePixels: () => mapView.basePixels(),
  /** Times (ms since the page's open of the world) of its first map picture and of the map finished. */
  mapTimes: () => ({ ...mapTimes }),
  chunkListsCached: () => chunkListsCached,
  chunkListsKept: () => chunkListsKept,
};

// The demo world, when the server offers one (npm run serve).
fetch('./demo.mcworld', { method: 'HEAD' }).then(
  (r) => {
    $('open-demo').hidden = !r.ok;
  },
  () => {},
);
$('open-demo').addEventListener('click', () => {
  void load('the demo world', async () => {
    const r = await fetch('./demo.mcworld');
    if (!r.ok) throw new Error(`demo world: HTTP ${r.status}`);
    const bytes = new Uint8Array(await r.arrayBuffer());
    source = { kind: 'bytes', bytes };
    return openMcworld(bytes, { decodeWorkers: DECODE_WORKERS });
  });
});

// The editor: the first edit reopens the world writable on a copy; the original is never written.
let writablePending: Promise<World> | undefined;

/** Reopens the current world writable on a copy (the editor's first save). */
async function reopenWritable(): Promise<World> {
  if (world?.writable) return world;
  const src = source;
  if (!src) throw new Error('no world is open');
  const gen = generation;
  let w: World;
  if (src.kind === 'bytes') {
    await closeWorld();
    w = await openMcworld(src.bytes, { writable: true, decodeWorkers: DECODE_WORKERS });
  } else if (src.kind === 'opfs') {
    await closeWorld();
    w = await openWorld(src.location, { writable: true, decodeWorkers: DECODE_WORKERS });
  } else {
    // A picked folder or a .mcworld (unpacked into Files): copied into browser storage first,
    // with progress and a cancel, while the original stays open and untouched; edits go to the
    // copy, which is listed with the stored worlds (it outlives a reload).
    say(`Copying “${src.root}” into browser storage to edit it there…`, 'busy');
    let copy: ImportedWorld;
    try {
      copy = await copyIntoStorage(src.files, src.root);
    } catch (e) {
      if (e instanceof Cancelled) throw new Error('the copy into browser storage was cancelled: nothing was kept and nothing was saved; the staged edits are still there');
      if ((e as { kind?: string }).kind === 'NoSpace') {
        throw new Error(`browser storage is full: “${src.root}” could not be copied there to edit it (nothing of it was kept); the staged edits are still there. Delete a stored world to make room.`);
      }
      throw e;
    }
    if (gen !== generation) {
      // Another world was opened meanwhile: it stays open; the copy is kept, listed.
      throw new Error(`another world was opened while “${src.root}” was copied: the copy is listed with the stored worlds, and nothing was saved`);
    }
    await closeWorld();
    source = { kind: 'opfs', location: copy.location };
    w = await openWorld(copy.location, { writable: true, decodeWorkers: DECODE_WORKERS });
  }
  world = w;
  return w;
}

const editorHost: EditorHost = {
    world: () => world,
    worldName: () => summary?.levelDat?.name,
    dimension: () => Number(dimensionSel.value) as 0 | 1 | 2,
    chunkList: (w, dimension) => chunksOf(w, dimension),
    writable: () => {
      // One reopen at a time: a second save (or export) while the first copy runs waits for it.
      writablePending ??= reopenWritable().finally(() => (writablePending = undefined));
      return writablePending;
    },
    refresh: async (w, label) => {
      world = undefined; // load() closes the current world; this one stays open
      await load(label, async () => w, true);
    },
    say,
    fail: (e, what) => showError(describe(e, what)),
    busy: (on) => setState(on ? 'loading' : 'ready'),
    showSelection: (rects) => {
      mapView.setSelection(rects);
      entityPanel.setSelection(rects);
    },
};
const editor = new Editor(
  editorHost,
  {
    section: $('editor-section'),
    selection: $<HTMLInputElement>('selection'),
    map: $('map'),
    deleteBtn: $<HTMLButtonElement>('delete-chunks'),
    pruneBtn: $<HTMLButtonElement>('prune'),
    exportBtn: $<HTMLButtonElement>('export-mcworld'),
    exportProgress: $('export-progress'),
    exportCancel: $<HTMLButtonElement>('export-cancel'),
    saveFolderBtn: $<HTMLButtonElement>('save-to-folder'),
    dialog: $<HTMLDialogElement>('confirm-dialog'),
    dialogText: $('confirm-text'),
    confirm: $<HTMLButtonElement>('confirm'),
    cancel: $<HTMLButtonElement>('confirm-cancel'),
    staged: $('selection-count'),
    stagedPanel: $('staged'),
    stagedSummary: $('staged-summary'),
    stagedList: $<HTMLOListElement>('staged-list'),
    undo: $<HTMLButtonElement>('undo'),
    redo: $<HTMLButtonElement>('redo'),
    save: $<HTMLButtonElement>('save-edits'),
    discard: $<HTMLButtonElement>('discard-edits'),
  },
);
const snbtEditor = new SnbtEditor(
  {
    world: () => world,
    writable: () => editorHost.writable(),
    refresh: (w, label) => editorHost.refresh(w, label),
    say,
    busy: (on) => setState(on ? 'loading' : 'ready'),
  },
  {
    dialog: $<HTMLDialogElement>('snbt-dialog'),
    title: $('snbt-title'),
    text: $<HTMLTextAreaElement>('snbt-text'),
    tree: $('snbt-tree'),
    viewTree: $<HTMLButtonElement>('snbt-view-tree'),
    viewText: $<HTMLButtonElement>('snbt-view-text'),
    error: $('snbt-error'),
    save: $<HTMLButtonElement>('snbt-save'),
    cancel: $<HTMLButtonElement>('snbt-cancel'),
  },
);
$('edit-level-dat').addEventListener('click', () => void snbtEditor.editLevelDat());
const entityPanel = new EntityPanel(
  {
    world: () => world,
    dimension: () => Number(dimensionSel.value) as 0 | 1 | 2,
    fail: (e, what) => showError(describe(e, what)),
    confirm: (text, run) => editor.confirm(text, run),
    stage: (edit, label) => editor.stage(edit, label),
    markersChanged: () => mapView.setMarkers([...entityPanel.markers(), ...baseMarkers]),
    edit: (key, label) => void snbtEditor.editRecord(key, label),
    goTo: (x, z) => mapView.centerOn(x, z, Math.max(mapView.view().zoom, 4)),
  },
  {
    section: $('entities-section'),
    showEntities: $<HTMLInputElement>('show-entities'),
    showBlockEntities: $<HTMLInputElement>('show-block-entities'),
    count: $('entity-count'),
    table: $<HTMLTableSectionElement>('entity-table'),
    view: $('entity-view'),
  },
);
inspector.onEdit = (key, label) => void snbtEditor.editRecord(key, label);
dimensionSel.addEventListener('change', () => {
  void editor.attach(world);
  void entityPanel.load(world).catch((e: unknown) => showError(describe(e, 'the entities')));
});

renderImported();
// Where copies go: OPFS, or IndexedDB where this browser has no OPFS sync access handles.
void defaultStorage()
  .then((kind) => {
    $('storage-kind').textContent = kind === 'opfs' ? 'OPFS' : 'IndexedDB';
    $('storage-kind').dataset.kind = kind;
  })
  .catch(() => {});
say('Open a world folder or a .mcworld to begin.');
setState('ready');
