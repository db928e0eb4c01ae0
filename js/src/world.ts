// Bedrock worlds over the engine's world methods (src/wasm/world.rs): a `World` with its
// summary (level.dat fields, key kinds, chunk counts), chunk lists, top-down maps, chunk
// records and NBT values, and — opened with `{ writable: true }` — the editor: chunk deletion
// and prune, NBT records and level.dat as SNBT text, `.mcworld` export; the same in Node and
// in the browser worker.
//
// Invariants: every method is one engine call answering a whole table, image or archive; a
// world is read-only unless opened `writable` (edits of a read-only world reject with
// LEVEL_NOT_SUPPORTED and write nothing); `world.db` is the ordinary `Db` of the world's
// LevelDB (scan, get, iterator); a world opened from a `.mcworld` lives in an in-memory store
// of the engine that `close()` frees (edits to it live there too: `exportMcworld()` saves them);
// a streamed export's `discard()` works after the world is closed.

import { toBytes, type Input } from './codec.js';
import { Db, type Link, type OpenOptions } from './db.js';
import { engineOptions, type ExportProgress, type MapLayer, type StorageKind, type WasmMapImage } from './engine.js';
export type { ExportProgress, MapLayer } from './engine.js';
import { StrataError, invalidArgument, toStrataError } from './errors.js';
import type { SnbtRoot } from './snbt-tree.js';

/** 0 Overworld, 1 Nether, 2 End. */
export type Dimension = 0 | 1 | 2;

export interface LevelDatSummary {
  storageVersion: number;
  name: string | null;
  gameVersion: string | null;
  /** A decimal string: seeds are 64-bit. */
  seed: string | null;
  spawn: [number, number, number] | null;
  gameMode: number | null;
  /** The whole root compound as JSON (NBT arrays past 256 elements summarized). */
  root: unknown;
}

export interface KindStats {
  count: number;
  keyBytes: number;
  valueBytes: number;
}

export interface KindRow extends KindStats {
  /** `chunk:<tag name>` for chunk records, else the key family (`~local_player`, `map`, …). */
  kind: string;
}

export interface WorldSummary {
  /** `null` when the world has no level.dat (a bare db folder) or it does not parse. */
  levelDat: LevelDatSummary | null;
  levelDatError: string | null;
  kinds: KindRow[];
  total: KindStats;
  /** Chunks having a Version record: Overworld, Nether, End. */
  chunks: [number, number, number];
}

/** A top-down map, RGBA row-major from the north-west corner; transparent where nothing is. */
export type MapImage = WasmMapImage;

export interface ChunkRecord {
  key: Uint8Array;
  tag: number;
  /** The tag's name (`Data3D`, `SubChunkPrefix`, …). */
  name: string;
  /** The subchunk y of a SubChunkPrefix record, else null. */
  subchunk: number | null;
  size: number;
}

export interface NbtRoot {
  name: string;
  value: unknown;
}

export interface WorldOpenOptions extends Pick<OpenOptions, 'storage' | 'files' | 'fileCacheBytes' | 'cacheSize' | 'paranoidChecks' | 'decodeWorkers'> {
  /** Open for editing (default false: read-only). */
  writable?: boolean;
}

/** Chunk rectangles, inclusive chunk coordinates: `"x0,z0:x1,z1;x0,z0:x1,z1"` (a lone `"x,z"`
 * is one chunk), or an array of `[x0, z0, x1, z1]` / `[x, z]` tuples. */
export type ChunkAreas = string | ReadonlyArray<readonly [number, number, number, number] | readonly [number, number]>;

/** What `deleteChunks` / `prune` deleted, in one atomic batch. */
export interface EditReport {
  /** Chunk positions (x, z) of the dimension whose records were deleted: the chunks (with a
   * Version record: what the map draws and `summary()` counts) and the stubs among them. */
  chunks: number;
  /** Of `chunks`, the stubs: positions with records but no Version record (the game's
   * unfinished border chunks). `chunks - stubs` is what the map and `summary()` count. */
  stubs: number;
  /** Records deleted: chunk records, `digp` records and `actorprefix` entities. */
  records: number;
  /** Key + value bytes of those records. */
  bytes: number;
  /** Entities deleted: `actorprefix` records, and compounds cut out of legacy Entity records
   * (a deleted chunk's Entity records go whole, counted as records). */
  entities: number;
  /** Records rewritten without some of their entities (a `digp` list, an Entity record). */
  recordsRewritten: number;
  /** Chunk positions of the dimension left (stubs included, as in `chunks`). */
  chunksLeft: number;
  /** Of `chunksLeft`, the stubs. */
  stubsLeft: number;
}

/** One staged edit of `applyEdits`: delete the chunks of `areas`, keep only them, delete the
 * entities in `areas` (of `identifier` when given; never block entities), or delete one
 * entity (its `key` and `root` as `entities()` lists them; with its `identifier`, refused if
 * that compound now holds another entity). */
export type StagedEdit =
  | { kind: 'delete' | 'keep'; dimension: Dimension; areas: ChunkAreas }
  | { kind: 'entities'; dimension: Dimension; areas: ChunkAreas; identifier?: string }
  | { kind: 'entity'; dimension: Dimension; key: string; root: number; identifier?: string };

/** What an SNBT write did: `changed` false when the bytes equal the stored ones (nothing
 * written). */
/** An entity or block entity (World.entities). */
export interface EntityInfo {
  /** `actor` (actorprefix + digp), `entity` (a chunk's Entity record), `block entity`. */
  kind: 'actor' | 'entity' | 'block entity';
  /** The record holding it, as hex. */
  key: string;
  /** Which compound of the record (0 for actors). */
  root: number;
  /** `minecraft:cow`, `Chest`, or `id:NN` (numeric ids of the oldest worlds). */
  identifier: string;
  x: number;
  y: number;
  z: number;
  /** The chunk storing it. */
  cx: number;
  cz: number;
}

/** What deleting entities did (or, dry, would do). */
export interface EntityReport {
  entities: number;
  recordsDeleted: number;
  recordsRewritten: number;
  bytes: number;
}

export interface SetReport {
  changed: boolean;
  bytes: number;
}

function areasText(areas: ChunkAreas): string {
  if (typeof areas === 'string') return areas;
  if (!Array.isArray(areas) || areas.length === 0) throw invalidArgument('areas must be a non-empty string or array of rectangles');
  return areas
    .map((a) => {
      if (!Array.isArray(a) || (a.length !== 2 && a.length !== 4) || !a.every((n) => Number.isInteger(n))) {
        throw invalidArgument('each area must be [x0, z0, x1, z1] or [x, z] of integers');
      }
      return a.length === 2 ? `${a[0]},${a[1]}` : `${a[0]},${a[1]}:${a[2]},${a[3]}`;
    })
    .join(';');
}

export interface McworldImport {
  rootInZip: string;
  files: number;
  bytes: number;
}

/** Options of `World.exportMcworldTo`. */
export interface ExportMcworldOptions {
  /** Node: the `.mcworld` file to write (required there; replaced atomically at the end).
   * The export works in a temporary folder beside it, `.<name>.strata-export`. Browsers:
   * not accepted (the zip is written into browser storage and handed over as a Blob). */
  path?: string;
  /** Called after every step, and once more at the end (`phase: 'done'`). */
  onProgress?: (progress: ExportProgress) => void;
  /** Aborting stops the export at its next step, removes its temporary files and rejects
   * with the signal's reason (an `AbortError`). The world is untouched either way. */
  signal?: AbortSignal;
  /** Bytes copied or zipped per step (default 4 MiB, at least 64 KiB): the grain of progress
   * and cancel. */
  stepBytes?: number;
}

/** A finished streamed export. */
export interface ExportedMcworld {
  /** Files in the zip and their bytes (after compaction). */
  files: number;
  bytes: number;
  /** Bytes of the `.mcworld`. */
  size: number;
  /** Node: the file written. */
  path?: string;
  /** Browsers: the `.mcworld` as a Blob of the file in browser storage (OPFS: the file
   * itself, not a copy in memory; IndexedDB: a copy). */
  file?: Blob;
  /** Browsers: removes the file behind `file` from browser storage (once it is downloaded;
   * the next export removes it too). Node: nothing to do. */
  discard(): Promise<void>;
}

/** The browser-storage location of a streamed export's scratch store (one per origin: a
 * second export at once, in another tab, gets LEVEL_LOCKED). */
export const EXPORT_SCRATCH = '.strata-export';

const inNode = (): boolean => typeof (globalThis as { process?: { versions?: { node?: unknown } } }).process?.versions?.node === 'string';

function abortError(signal: AbortSignal): unknown {
  return signal.reason ?? Object.assign(new Error('The export was aborted'), { name: 'AbortError' });
}

function hexBytes(hex: string): Uint8Array {
  const out = new Uint8Array(hex.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(hex.slice(i * 2, i * 2 + 2), 16);
  return out;
}

function checkDimension(d: number): void {
  if (d !== 0 && d !== 1 && d !== 2) throw invalidArgument('dimension must be 0, 1 or 2');
}

export class World {
  private closed = false;

  /** @internal */
  constructor(
    private readonly link: Link,
    private readonly handle: number,
    /** The world's LevelDB, read-only. */
    readonly db: Db,
    /** What the world was opened from: a folder path, or the `.mcworld` import's report. */
    readonly source: { location: string; mcworld?: McworldImport },
    private readonly memStore?: string,
    /** True when opened with `{ writable: true }`. */
    readonly writable = false,
    /** The engine that removes a finished export's zip from browser storage when `link`
     * cannot: a world shared across tabs has a link that closes with it, and `discard()` must
     * work after the world is closed (a page keeps the zip until it is downloaded). */
    private readonly storageLink?: Link,
  ) {}

  private async call(op: string, args: unknown[], transfer?: ArrayBuffer[]): Promise<unknown> {
    if (this.closed || this.db.status === 'closed') throw new StrataError('LEVEL_DATABASE_NOT_OPEN', 'World is not open');
    try {
      return await this.link.call(op, [this.handle, ...args], transfer);
    } catch (e) {
      throw toStrataError(e);
    }
  }

  /** level.dat fields, every key kind with counts and bytes, chunks per dimension (one pass). */
  async summary(): Promise<WorldSummary> {
    return JSON.parse((await this.call('worldSummary', [])) as string) as WorldSummary;
  }

  /** The (x, z) of every chunk of `dimension` with a Version record, ascending. With
   * `reliefSamples`, the same pass also samples each chunk's relief (about 200 ms more for
   * 160,000 chunks in wasm, 60 bytes a chunk held by the engine), so the relief, slime,
   * height and biome maps drawn next (at up to 4 pixels per chunk, or far out) read no sampled
   * chunk again (`reliefSamples()` hands them out to keep). */
  async chunks(dimension: Dimension = 0, options: { reliefSamples?: boolean } = {}): Promise<Array<[number, number]>> {
    const flat = await this.chunkList(dimension, options);
    const out: Array<[number, number]> = [];
    for (let i = 0; i + 1 < flat.length; i += 2) out.push([flat[i]!, flat[i + 1]!]);
    return out;
  }

  /** `chunks()` flat: x0, z0, x1, z1, … in the same order (ascending x, then z), two 32-bit
   * integers a chunk. For large worlds: 160,000 chunks are one 1.25 MB array instead of
   * 160,000 small ones to make and collect, and the list (or a part of it) can be handed to
   * `map({ chunks })` as it is. */
  async chunkList(dimension: Dimension = 0, options: { reliefSamples?: boolean } = {}): Promise<Int32Array> {
    checkDimension(dimension);
    return (await this.call('chunkList', [dimension, options.reliefSamples === true])) as Int32Array;
  }

  /** Keys that cut the world's database into about `parts` (2-1024) ranges of equal table
   * bytes, ascending, 8 bytes each (any 8-byte key leaves each chunk's records on one side);
   * none when its tables hold fewer than `minBytes`. Reads no table: the cuts come from the
   * live tables' key ranges and sizes. With
   * `chunkListPart` and `joinChunkParts`, several engines on the same world's files share the
   * pass of `chunkList(dimension, { reliefSamples: true })`: the viewer's map helpers do. */
  async chunkSplitKeys(parts: number, minBytes = 0): Promise<Uint8Array[]> {
    if (!Number.isInteger(parts) || parts < 2 || parts > 1024) throw invalidArgument('parts must be an integer from 2 to 1024');
    if (typeof minBytes !== 'number' || Number.isNaN(minBytes) || minBytes < 0) throw invalidArgument('minBytes must be a number of bytes, 0 or more');
    const flat = (await this.call('chunkSplitKeys', [parts, minBytes])) as Uint8Array;
    const keys: Uint8Array[] = [];
    for (let i = 0; i + 8 <= flat.length; i += 8) keys.push(flat.slice(i, i + 8));
    return keys;
  }

  /** The chunk index pass of `chunkList(dimension, { reliefSamples: true })` over the keys in
   * `[start, end)` only (either absent: unbounded), packed: the chunks whose keys lie there
   * with their relief samples. Nothing is kept by this engine; `joinChunkParts` on the
   * engine that draws the maps puts the parts of every range together. */
  async chunkListPart(dimension: Dimension, range: { start?: Uint8Array; end?: Uint8Array } = {}): Promise<Uint8Array> {
    checkDimension(dimension);
    return (await this.call('chunkListPart', [dimension, range.start, range.end])) as Uint8Array;
  }

  /** Joins `chunkListPart`'s parts (of this world as it is now, from this engine or another
   * on the same files, ranges that together cover every key) into the list
   * `chunkList(dimension, { reliefSamples: true })` gives, and keeps their samples as it
   * does. Parts given in key order keep the samples exactly as one pass lays them out. */
  async joinChunkParts(dimension: Dimension, parts: Uint8Array[]): Promise<Int32Array> {
    checkDimension(dimension);
    if (!Array.isArray(parts) || !parts.every((p) => p instanceof Uint8Array)) throw invalidArgument('parts must be an array of Uint8Array');
    const all = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
    let at = 0;
    for (const p of parts) {
      all.set(p, at);
      at += p.length;
    }
    return (await this.call('joinChunkParts', [dimension, all], [all.buffer])) as Int32Array;
  }

  /** Bytes that identify the world's database contents (the last sequence, every live table's
   * number, size and key range, every log's bytes): any write changes them, and two worlds
   * with equal identities hold the same tables (by number, size and key range) and logs, so
   * something derived from the world (a chunk index) can be kept under their hash and reused
   * when the same world is opened again. Reads no table. */
  async contentIdentity(): Promise<Uint8Array> {
    return (await this.call('contentIdentity', [])) as Uint8Array;
  }

  /** The relief samples `chunks(dimension, { reliefSamples: true })` took in its pass (each chunk's relief at up to 4
   * pixels per chunk: the maps drawn after it read no sampled chunk again), packed, while the
   * world is unchanged since; undefined otherwise. Kept with a chunk list under the world's
   * content identity, they are handed back with `setReliefSamples` when the same world is
   * opened again. */
  async reliefSamples(dimension: Dimension = 0): Promise<Uint8Array | undefined> {
    checkDimension(dimension);
    return ((await this.call('reliefSamples', [dimension])) as Uint8Array | undefined) ?? undefined;
  }

  /** Hands back samples `reliefSamples` gave for a world with this world's content identity,
   * for the maps drawn next (until the world changes). Bytes that are not packed samples
   * reject with LEVEL_INVALID_ARGUMENT. */
  async setReliefSamples(packed: Uint8Array): Promise<void> {
    if (!(packed instanceof Uint8Array)) throw invalidArgument('relief samples must be a Uint8Array');
    await this.call('setReliefSamples', [packed]);
  }

  /** A top-down map; `pixelsPerChunk` 1, 2, 4, 8 or 16; `layer` `relief` (default: biome
   * colour shaded by height), `surface` (real top blocks), `height`, `biome`, `slime` or
   * `cave` (the first block at or below `y`, which it needs). `region` `[x0, z0, x1, z1]`
   * (chunks, inclusive) draws only that rectangle, as part of the whole map: bands drawn one
   * by one stack into the whole map's pixels, and their figures add up to its figures.
   * `chunks` (from `chunks()`, or flat from `chunkList()`) spares the engine reading the chunk
   * index again (a map drawn in many regions). */
  async map(
    options: {
      dimension?: Dimension;
      pixelsPerChunk?: number;
      chunksPerPixel?: number;
      layer?: MapLayer;
      y?: number;
      region?: readonly [number, number, number, number];
      chunks?: ReadonlyArray<readonly [number, number]> | Int32Array;
    } = {},
  ): Promise<MapImage> {
    const dimension = options.dimension ?? 0;
    checkDimension(dimension);
    const ppc = options.pixelsPerChunk ?? 16;
    if (![1, 2, 4, 8, 16].includes(ppc)) throw invalidArgument('pixelsPerChunk must be 1, 2, 4, 8 or 16');
    const layer = options.layer ?? 'relief';
    if (!['relief', 'surface', 'height', 'biome', 'slime', 'cave'].includes(layer)) {
      throw invalidArgument('layer must be relief, surface, height, biome, slime or cave');
    }
    if (layer === 'cave' && !Number.isInteger(options.y)) throw invalidArgument('the cave layer needs an integer y');
    if (options.y !== undefined && (!Number.isInteger(options.y) || Math.abs(options.y) > 4096)) {
      throw invalidArgument('y must be an integer between -4096 and 4096');
    }
    const cpp = options.chunksPerPixel ?? 1;
    if (!Number.isInteger(cpp) || cpp < 1 || cpp > 1 << 20 || (cpp & (cpp - 1)) !== 0 || (cpp > 1 && ppc !== 1)) {
      throw invalidArgument('chunksPerPixel must be a power of two up to 2^20, with pixelsPerChunk 1');
    }
    let region: Int32Array | undefined;
    if (options.region !== undefined) {
      const r = options.region;
      if (!Array.isArray(r) || r.length !== 4 || !r.every(isI32) || r[0]! > r[2]! || r[1]! > r[3]!) {
        throw invalidArgument('region must be [x0, z0, x1, z1]: integer chunk coordinates with x0 <= x1 and z0 <= z1');
      }
      if (cpp !== 1) throw invalidArgument('a map region needs chunksPerPixel 1');
      region = Int32Array.from(r);
    }
    let chunks: Int32Array | undefined;
    if (options.chunks instanceof Int32Array) {
      if (options.chunks.length % 2 !== 0) throw invalidArgument('chunks as an Int32Array must hold x, z pairs (an even length)');
      chunks = options.chunks;
    } else if (options.chunks !== undefined) {
      if (!Array.isArray(options.chunks)) throw invalidArgument('chunks must be an array of [x, z] pairs or an Int32Array of x, z');
      chunks = new Int32Array(options.chunks.length * 2);
      options.chunks.forEach((c, i) => {
        if (!Array.isArray(c) || c.length !== 2 || !isI32(c[0]) || !isI32(c[1])) throw invalidArgument('chunks must be an array of [x, z] pairs of 32-bit integers');
        chunks![i * 2] = c[0]!;
        chunks![i * 2 + 1] = c[1]!;
      });
    }
    return (await this.call('renderMap', [dimension, ppc, layer, options.y, cpp, region, chunks])) as MapImage;
  }

  /** Real top-block colours of chunks: a 16×16 RGBA tile per chunk that has block data,
   * keyed `"x,z"`. */
  async surfaceTiles(dimension: Dimension, chunks: ReadonlyArray<readonly [number, number]>): Promise<Map<string, Uint8Array>> {
    checkDimension(dimension);
    const coords = new Int32Array(chunks.length * 2);
    chunks.forEach(([x, z], i) => {
      coords[i * 2] = x;
      coords[i * 2 + 1] = z;
    });
    const packed = (await this.call('surfaceTiles', [dimension, coords])) as Uint8Array;
    const out = new Map<string, Uint8Array>();
    let pos = 0;
    for (const [x, z] of chunks) {
      if (packed[pos++] === 1) {
        out.set(`${x},${z}`, packed.slice(pos, pos + 1024));
        pos += 1024;
      }
    }
    return out;
  }

  /** Every record of one chunk, in key order. */
  async chunkRecords(dimension: Dimension, x: number, z: number): Promise<ChunkRecord[]> {
    checkDimension(dimension);
    if (!Number.isInteger(x) || !Number.isInteger(z)) throw invalidArgument('x and z must be integers');
    const rows = JSON.parse((await this.call('chunkRecords', [dimension, x, z])) as string) as Array<Omit<ChunkRecord, 'key'> & { key: string }>;
    return rows.map((r) => ({ ...r, key: hexBytes(r.key) }));
  }

  /** A record's value decoded as NBT (one element per concatenated root); `undefined` when
   * the key is absent. Values that are not NBT reject with LEVEL_CORRUPTION. */
  async nbt(key: Input): Promise<NbtRoot[] | undefined> {
    const json = (await this.call('recordNbt', [toBytes(key, 'key')])) as string | undefined;
    return json === undefined ? undefined : (JSON.parse(json) as NbtRoot[]);
  }

  /** A record's value as SNBT text (pretty-printed; see README's SNBT section); `undefined`
   * when absent. `level.dat`'s text comes from `levelDatSnbt()`. Values that are not NBT, or
   * would not come back byte-identical from text, reject with LEVEL_CORRUPTION. */
  async snbt(key: Input): Promise<string | undefined> {
    return (await this.call('recordSnbt', [toBytes(key, 'key')])) as string | undefined;
  }

  /** Stores SNBT `text` as the value of `key` (creating it when absent). Text that does not
   * parse rejects with LEVEL_INVALID_ARGUMENT naming line, column and offset; nothing is
   * written. Needs a writable world. */
  async setNbt(key: Input, text: string): Promise<SetReport> {
    if (typeof text !== 'string') throw invalidArgument('snbt text must be a string');
    return JSON.parse((await this.call('setRecordSnbt', [toBytes(key, 'key'), text])) as string) as SetReport;
  }

  /** SNBT `text` as a typed tree for editors (every leaf with its exact literal; print it back
   * with `printSnbtTree`). Text that does not parse rejects with LEVEL_INVALID_ARGUMENT naming
   * line, column and offset. */
  async snbtTree(text: string): Promise<SnbtRoot[]> {
    if (typeof text !== 'string') throw invalidArgument('snbt text must be a string');
    return JSON.parse((await this.call('snbtTree', [text])) as string) as SnbtRoot[];
  }

  /** level.dat as SNBT text (LEVEL_NOT_FOUND when the world has none). */
  async levelDatSnbt(): Promise<string> {
    return (await this.call('levelDatSnbt', [])) as string;
  }

  /** Replaces level.dat with SNBT `text`; its 8-byte header keeps the storage version. The
   * file is replaced atomically (written beside it, then renamed). Needs a writable world. */
  async setLevelDat(text: string): Promise<SetReport> {
    if (typeof text !== 'string') throw invalidArgument('snbt text must be a string');
    return JSON.parse((await this.call('setLevelDatSnbt', [text])) as string) as SetReport;
  }

  /** Deletes every record of the chunks of `dimension` in `areas` — every chunk-record tag,
   * the chunk's `digp` and the `actorprefix` entities it names — in one atomic batch. A
   * selection holding no chunk rejects with LEVEL_INVALID_ARGUMENT. Needs a writable world. */
  async deleteChunks(dimension: Dimension, areas: ChunkAreas): Promise<EditReport> {
    checkDimension(dimension);
    return JSON.parse((await this.call('deleteChunks', [dimension, areasText(areas)])) as string) as EditReport;
  }

  /** Keeps only the chunks of `dimension` in `keep` and deletes every other chunk of it (as
   * `deleteChunks`); other dimensions and non-chunk records (level data, players, maps, …)
   * stay. Keeping no chunk is refused unless `{ allowEmpty: true }`. */
  async prune(dimension: Dimension, keep: ChunkAreas, options: { allowEmpty?: boolean } = {}): Promise<EditReport> {
    checkDimension(dimension);
    return JSON.parse((await this.call('pruneChunks', [dimension, areasText(keep), options.allowEmpty === true])) as string) as EditReport;
  }

  /** Applies staged edits (`StagedEdit`: chunk deletions, keeps, entity deletions) as ONE
   * atomic batch; the result equals applying them one after another (an entity whose chunk
   * is deleted goes with the chunk). With `{ dryRun: true }` nothing is written and the report
   * says what would go (the editor's staged panel). A `keep` selecting no chunk of its
   * dimension is refused; an `entity` naming none is LEVEL_NOT_FOUND. */
  async applyEdits(edits: ReadonlyArray<StagedEdit>, options: { dryRun?: boolean } = {}): Promise<EditReport> {
    if (!Array.isArray(edits)) throw invalidArgument('edits must be an array');
    const oneLine = (text: string, what: string): string => {
      if (/[\r\n]/.test(text)) throw invalidArgument(`${what} must be one line`);
      return text;
    };
    const lines = edits.map((e: StagedEdit) => {
      checkDimension(e?.dimension);
      switch (e.kind) {
        case 'delete':
        case 'keep':
          return `${e.kind} ${e.dimension} ${oneLine(areasText(e.areas), 'areas')}`;
        case 'entities': {
          if (e.identifier !== undefined && (typeof e.identifier !== 'string' || e.identifier === '' || e.identifier === '*' || /\s/.test(e.identifier))) {
            throw invalidArgument('identifier must be a non-empty string without spaces');
          }
          return `entities ${e.dimension} ${e.identifier ?? '*'} ${oneLine(areasText(e.areas), 'areas')}`;
        }
        case 'entity':
          if (typeof e.key !== 'string' || !/^([0-9a-f]{2})+$/.test(e.key) || !Number.isInteger(e.root) || e.root < 0) {
            throw invalidArgument('entity must be { key: hex string, root: integer >= 0 } as entities() lists it');
          }
          if (e.identifier !== undefined && (typeof e.identifier !== 'string' || e.identifier === '' || /\s/.test(e.identifier))) {
            throw invalidArgument('identifier must be a non-empty string without spaces');
          }
          return `entity ${e.dimension} ${e.key} ${e.root}${e.identifier === undefined ? '' : ` ${e.identifier}`}`;
        default:
          throw invalidArgument("each edit's kind must be 'delete', 'keep', 'entities' or 'entity'");
      }
    });
    return JSON.parse((await this.call('applyEdits', [lines.join('\n'), options.dryRun === true])) as string) as EditReport;
  }

  /** Every entity and block entity of `dimension` (positions in blocks), and how many records
   * did not decode. */
  async entities(dimension: Dimension): Promise<{ unreadable: number; entities: EntityInfo[] }> {
    checkDimension(dimension);
    return JSON.parse((await this.call('entities', [dimension])) as string) as { unreadable: number; entities: EntityInfo[] };
  }

  /** Deletes the entities (never block entities) of `dimension` stored in the chunks of
   * `areas`, only those of `identifier` when given, in one atomic batch: an actor's record
   * goes and its id leaves its chunk's digp; a legacy Entity record loses that compound (the
   * others keep their bytes). `{ dryRun: true }` only counts. Needs a writable world unless
   * dry. */
  async deleteEntities(dimension: Dimension, areas: ChunkAreas, options: { identifier?: string; dryRun?: boolean } = {}): Promise<EntityReport> {
    checkDimension(dimension);
    if (options.identifier !== undefined && typeof options.identifier !== 'string') throw invalidArgument('identifier must be a string');
    return JSON.parse(
      (await this.call('deleteEntities', [dimension, areasText(areas), options.identifier, options.dryRun === true])) as string,
    ) as EntityReport;
  }

  /** Deletes one entity (as listed by `entities`: its `key` and `root`). */
  async deleteEntity(dimension: Dimension, entity: { key: string; root: number }): Promise<EntityReport> {
    checkDimension(dimension);
    if (typeof entity?.key !== 'string' || !/^([0-9a-f]{2})+$/.test(entity.key) || !Number.isInteger(entity.root) || entity.root < 0) {
      throw invalidArgument('entity must be { key: hex string, root: integer >= 0 } as entities() lists it');
    }
    const key = Uint8Array.from({ length: entity.key.length / 2 }, (_, i) => parseInt(entity.key.slice(i * 2, i * 2 + 2), 16));
    return JSON.parse((await this.call('deleteEntity', [dimension, key, entity.root])) as string) as EntityReport;
  }

  /** The world as `.mcworld` (zip) bytes: its files are copied into engine memory, the copy
   * compacted (the world itself is not touched) and zipped (tables stored, other files
   * deflated). Memory: the copy and the zip live in the engine's heap at once (about twice
   * the world's size), then the bytes are handed over. Works on read-only worlds too. */
  async exportMcworld(): Promise<Uint8Array> {
    return (await this.call('exportMcworld', [])) as Uint8Array;
  }

  /** The world as a `.mcworld` written through storage, in steps, instead of memory: the
   * world's files are copied into a temporary folder (browsers: OPFS, or IndexedDB where OPFS
   * is missing; Node: beside `path`), the copy is compacted there (so deleted data is gone)
   * and zipped into a file there; engine memory stays bounded (caches and buffers) whatever
   * the world's size. The zip equals `exportMcworld()`'s byte for byte. Progress after every
   * step; `signal` cancels. Browsers: resolves with `file`, a Blob of the zip in browser
   * storage (`discard()` it once downloaded); Node: writes `path`. Temporary files are removed
   * on success, failure (e.g. a full disk or an exhausted quota: LEVEL_IO_ERROR with kind
   * `NoSpace`) and cancel; a crash's leftovers by the next export. Works on read-only worlds. */
  async exportMcworldTo(options: ExportMcworldOptions = {}): Promise<ExportedMcworld> {
    if (typeof options !== 'object' || options === null) throw invalidArgument('options must be an object');
    const { path, onProgress, signal } = options;
    const step = options.stepBytes ?? 4 << 20;
    if (!Number.isInteger(step) || step < 64 << 10) throw invalidArgument('stepBytes must be an integer >= 65536');
    if (onProgress !== undefined && typeof onProgress !== 'function') throw invalidArgument('onProgress must be a function');
    const node = inNode();
    let scratch: { kind?: StorageKind; location: string; dir: string };
    if (node) {
      if (typeof path !== 'string' || path === '' || path.endsWith('/')) throw invalidArgument('exportMcworldTo needs { path } in Node: the .mcworld file to write');
      const slash = path.lastIndexOf('/');
      const folder = slash < 0 ? '.' : slash === 0 ? '/' : path.slice(0, slash);
      const dir = `${folder === '/' ? '' : folder}/.${path.slice(slash + 1)}.strata-export`;
      scratch = { kind: 'fs', location: folder, dir: slash < 0 ? dir.slice(2) : dir };
    } else {
      if (path !== undefined) throw invalidArgument('exportMcworldTo: path is for Node; browsers get the zip as a Blob (file)');
      scratch = { kind: this.db.storage, location: EXPORT_SCRATCH, dir: `${EXPORT_SCRATCH}/export` };
    }
    if (signal?.aborted) throw abortError(signal);
    const eh = (await this.call('exportBegin', [scratch])) as number;
    const run = async (op: string, args: unknown[]): Promise<unknown> => {
      try {
        return await this.link.call(op, [eh, ...args]);
      } catch (e) {
        throw toStrataError(e);
      }
    };
    let finished = false;
    try {
      while (!finished) {
        if (signal?.aborted) throw abortError(signal);
        const p = (await run('exportStep', [step])) as ExportProgress & { finished: boolean };
        finished = p.finished;
        const { finished: _f, ...progress } = p;
        onProgress?.(progress);
      }
      if (signal?.aborted) throw abortError(signal);
      const { store, ...r } = (await run('exportFinish', [node ? path : undefined])) as Omit<ExportedMcworld, 'discard'> & { store: StorageKind };
      const link = this.storageLink ?? this.link;
      const discard = node
        ? async () => {}
        : async () => {
            try {
              await link.call('exportDiscard', [EXPORT_SCRATCH, store]);
            } catch (e) {
              throw toStrataError(e);
            }
          };
      return { ...r, discard };
    } catch (e) {
      await this.link.call('exportCancel', [eh]).catch(() => {});
      throw e;
    }
  }

  /** Closes the world (and frees the in-memory copy of a `.mcworld`). Idempotent. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    try {
      await this.db.close();
    } finally {
      if (this.memStore !== undefined) await this.link.call('dropMemStore', [this.memStore]);
    }
  }
}

let nextStore = 1;

/** @internal Opens a world folder through `link` (both entry points). */
export async function openWorldVia(
  link: Link,
  location: string,
  options: WorldOpenOptions,
  defaultStorage: StorageKind,
  mcworld?: { report: McworldImport; store: string },
): Promise<World> {
  if (typeof location !== 'string' || location === '') throw invalidArgument('location must be a non-empty string');
  if (typeof options !== 'object' || options === null) throw invalidArgument('options must be an object');
  const kind = options.storage ?? defaultStorage;
  const writable = options.writable === true;
  const { writable: _w, ...rest } = options;
  const opts = engineOptions({ ...rest, readOnly: !writable, profile: 'bedrock' });
  let handle: number;
  try {
    handle = (await link.call('openWorld', [kind, location, opts, filesExtra(options)])) as number;
  } catch (e) {
    link.release?.();
    throw toStrataError(e);
  }
  const db = new Db(link, handle, location, { ...rest, storage: kind, readOnly: !writable, profile: 'bedrock' });
  return new World(link, handle, db, { location, ...(mcworld ? { mcworld: mcworld.report } : {}) }, mcworld?.store, writable);
}

/** @internal Unpacks a `.mcworld` into a fresh in-memory store of the engine and opens it. */
export async function openMcworldVia(link: Link, zip: Uint8Array, options: { writable?: boolean; decodeWorkers?: number } = {}): Promise<World> {
  if (!(zip instanceof Uint8Array)) throw invalidArgument('a .mcworld must be given as a Uint8Array');
  const store = `mcworld-${nextStore++}`;
  let report: McworldImport;
  try {
    report = JSON.parse((await link.call('importMcworld', [zip, store])) as string) as McworldImport;
  } catch (e) {
    link.release?.();
    throw toStrataError(e);
  }
  try {
    const open: WorldOpenOptions = { storage: 'mem', writable: options.writable === true };
    if (options.decodeWorkers !== undefined) open.decodeWorkers = options.decodeWorkers;
    return await openWorldVia(link, store, open, 'mem', { report, store });
  } catch (e) {
    await link.call('dropMemStore', [store]).catch(() => {});
    throw e;
  }
}

/** What a `files` open sends the engine: the picked files, with the cache size when given. */
export function filesExtra(options: { files?: unknown; fileCacheBytes?: unknown }): unknown {
  if (options.fileCacheBytes === undefined) return options.files;
  const n = options.fileCacheBytes;
  if (typeof n !== 'number' || !Number.isInteger(n) || n < 0 || n > 2 ** 32) throw invalidArgument('fileCacheBytes must be an integer from 0 to 2^32');
  return { files: options.files, cacheBytes: n };
}

/** A chunk coordinate: a 32-bit signed integer. */
function isI32(v: unknown): v is number {
  return Number.isInteger(v) && (v as number) >= -(2 ** 31) && (v as number) < 2 ** 31;
}
