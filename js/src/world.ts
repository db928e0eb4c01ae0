// Bedrock worlds over the engine's world methods (src/wasm/world.rs): a read-only `World`
// with its summary (level.dat fields, key kinds, chunk counts), chunk lists, top-down maps,
// chunk records and NBT values, the same in Node and in the browser worker.
//
// Invariants: every method is one engine call answering a whole table or image; a world is
// always opened read-only; `world.db` is the ordinary `Db` of the world's LevelDB (scan,
// get, iterator); a world opened from a `.mcworld` lives in an in-memory store of the engine
// that `close()` frees.

import { toBytes, type Input } from './codec.js';
import { Db, type Link, type OpenOptions } from './db.js';
import { engineOptions, type StorageKind, type WasmMapImage } from './engine.js';
import { StrataError, invalidArgument, toStrataError } from './errors.js';

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

export interface WorldOpenOptions extends Pick<OpenOptions, 'storage' | 'files' | 'cacheSize' | 'paranoidChecks'> {}

export interface McworldImport {
  rootInZip: string;
  files: number;
  bytes: number;
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
  ) {}

  private async call(op: string, args: unknown[]): Promise<unknown> {
    if (this.closed || this.db.status === 'closed') throw new StrataError('LEVEL_DATABASE_NOT_OPEN', 'World is not open');
    try {
      return await this.link.call(op, [this.handle, ...args]);
    } catch (e) {
      throw toStrataError(e);
    }
  }

  /** level.dat fields, every key kind with counts and bytes, chunks per dimension (one pass). */
  async summary(): Promise<WorldSummary> {
    return JSON.parse((await this.call('worldSummary', [])) as string) as WorldSummary;
  }

  /** The (x, z) of every chunk of `dimension` with a Version record, ascending. */
  async chunks(dimension: Dimension = 0): Promise<Array<[number, number]>> {
    checkDimension(dimension);
    const flat = (await this.call('chunkList', [dimension])) as Int32Array;
    const out: Array<[number, number]> = [];
    for (let i = 0; i + 1 < flat.length; i += 2) out.push([flat[i]!, flat[i + 1]!]);
    return out;
  }

  /** A top-down map (biome colour shaded by height); `pixelsPerChunk` 1, 2, 4, 8 or 16. */
  async map(options: { dimension?: Dimension; pixelsPerChunk?: number } = {}): Promise<MapImage> {
    const dimension = options.dimension ?? 0;
    checkDimension(dimension);
    const ppc = options.pixelsPerChunk ?? 16;
    if (![1, 2, 4, 8, 16].includes(ppc)) throw invalidArgument('pixelsPerChunk must be 1, 2, 4, 8 or 16');
    return (await this.call('renderMap', [dimension, ppc])) as MapImage;
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
  const opts = engineOptions({ ...options, readOnly: true, profile: 'bedrock' });
  let handle: number;
  try {
    handle = (await link.call('openWorld', [kind, location, opts, options.files])) as number;
  } catch (e) {
    link.release?.();
    throw toStrataError(e);
  }
  const db = new Db(link, handle, location, { ...options, readOnly: true, profile: 'bedrock' });
  return new World(link, handle, db, { location, ...(mcworld ? { mcworld: mcworld.report } : {}) }, mcworld?.store);
}

/** @internal Unpacks a `.mcworld` into a fresh in-memory store of the engine and opens it. */
export async function openMcworldVia(link: Link, zip: Uint8Array): Promise<World> {
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
    return await openWorldVia(link, store, { storage: 'mem' }, 'mem', { report, store });
  } catch (e) {
    await link.call('dropMemStore', [store]).catch(() => {});
    throw e;
  }
}
