// `strata-level/classic-level`: a drop-in for npm `classic-level` (3.0.0: Google's LevelDB as a
// native addon) on the Strata engine: `new ClassicLevel(location, options)` with its options,
// its `location`, its additional methods (`approximateSize`, `compactRange`, `getProperty`)
// and its static `destroy` and `repair`, with the same argument checks and error messages
// (classic-level's index.js) and the same results (its binding.cc over LevelDB's DB).
//
// Invariants: what the engine cannot do as LevelDB does is said where it differs:
// `multithreading` is accepted and ignored (one engine per thread: a database is open in one
// thread at a time, a second open anywhere gets LEVEL_LOCKED), `leveldb.stats` has no
// compaction timings (Strata does not keep them: those columns are 0). Option values are
// read as the addon reads them (a value of the wrong type falls back to the default) and
// clipped to LevelDB's ranges (its SanitizeOptions) instead of being refused.

import fs from 'node:fs';

import { toBytes } from './codec.js';
import { engineOptions } from './engine.js';
import { StrataError, toStrataError } from './errors.js';
import { fromClassicLevel, StrataLevel, type StrataLevelOptions } from './level.js';
import { LEVELDOWN_BLOOM_BITS, LEVELDOWN_SIZES } from './leveldown-defaults.js';
import { getEngine } from './node.js';

/** classic-level's open options (its index.d.ts `OpenOptions`), plus the `level` ones. */
export interface ClassicLevelOptions {
  createIfMissing?: boolean;
  errorIfExists?: boolean;
  /** Snappy blocks (default true); false: none. */
  compression?: boolean;
  cacheSize?: number;
  writeBufferSize?: number;
  blockSize?: number;
  maxOpenFiles?: number;
  blockRestartInterval?: number;
  maxFileSize?: number;
  /** Accepted and ignored (see the module comment). */
  multithreading?: boolean;
  passive?: boolean;
  keyEncoding?: unknown;
  valueEncoding?: unknown;
  [option: string]: unknown;
}

/** The addon's defaults (binding.cc `db_open`), and LevelDB's ranges (SanitizeOptions) for the
 * ones it clips; a Bloom filter of 10 bits per key on every open, as the addon's Database. */
const DEFAULTS = LEVELDOWN_SIZES;
type SizeOption = keyof typeof DEFAULTS;
const RANGES: Record<SizeOption, [number, number]> = {
  cacheSize: [0, 2 ** 31],
  writeBufferSize: [64 << 10, 1 << 30],
  blockSize: [1 << 10, 4 << 20],
  maxOpenFiles: [64 + 10, 50000],
  // LevelDB takes any; Strata's own bounds.
  blockRestartInterval: [1, 65536],
  maxFileSize: [1 << 20, 1 << 30],
};

/** The engine's options for classic-level's, read as the addon reads them. */
export function classicOpenOptions(options: Record<string, unknown>): StrataLevelOptions {
  const o: StrataLevelOptions = { ...options };
  o.compression = (typeof options.compression === 'boolean' ? options.compression : true) as never;
  for (const k of Object.keys(DEFAULTS) as SizeOption[]) {
    const v = options[k];
    const n = typeof v === 'number' ? v >>> 0 : DEFAULTS[k];
    const [min, max] = RANGES[k];
    o[k] = Math.min(max, Math.max(min, n));
  }
  o.bloomBitsPerKey = LEVELDOWN_BLOOM_BITS;
  return o;
}

function checkLocation(location: unknown): asserts location is string {
  if (typeof location !== 'string' || location === '') {
    throw new TypeError("The first argument 'location' must be a non-empty string");
  }
}

type Deferrable = { deferAsync<T>(fn: () => Promise<T>): Promise<T> };
type KeyEncoder = { keyEncoding(encoding?: unknown): { encode(key: unknown): unknown } };

/** A Strata database with classic-level's interface. */
export class ClassicLevel<KDefault = string, VDefault = string> extends StrataLevel {
  /** Phantom: the key and value types a typed caller names (`new ClassicLevel<K, V>()`). */
  declare readonly __types?: [KDefault, VDefault];

  constructor(location: string, options: ClassicLevelOptions = {}) {
    checkLocation(location);
    super(location, options as StrataLevelOptions, {
      additionalMethods: { approximateSize: true, compactRange: true },
    });
    this.iteratorsBreathe = true;
  }

  async _open(options: { createIfMissing: boolean; errorIfExists: boolean }): Promise<void> {
    return super._open(classicOpenOptions(options) as typeof options);
  }

  /** Approximate bytes on disk of the keys in `[start, end)` (flushed tables only, as LevelDB's
   * `GetApproximateSizes`). */
  async approximateSize(start: unknown, end: unknown, options?: { keyEncoding?: unknown }): Promise<number> {
    if (arguments.length < 2) throw new TypeError("The arguments 'start' and 'end' are required");
    if (typeof options !== 'object') options = undefined;
    if (this.status === 'opening') return (this as unknown as Deferrable).deferAsync(() => this.approximateSize(start, end, options));
    if (this.status !== 'open') {
      throw new StrataError('LEVEL_DATABASE_NOT_OPEN', 'Database is not open: cannot call approximateSize()');
    }
    const [s, e] = this.encodeRange(start, end, options);
    try {
      return this.engine.approximateSize(this.h, s, e);
    } catch (err) {
      throw toStrataError(err);
    }
  }

  /** Compacts the keys in `[start, end]` (the memtable flushed first, as LevelDB's). */
  async compactRange(start: unknown, end: unknown, options?: { keyEncoding?: unknown }): Promise<void> {
    if (arguments.length < 2) throw new TypeError("The arguments 'start' and 'end' are required");
    if (typeof options !== 'object') options = undefined;
    if (this.status === 'opening') return (this as unknown as Deferrable).deferAsync(() => this.compactRange(start, end, options));
    if (this.status !== 'open') {
      throw new StrataError('LEVEL_DATABASE_NOT_OPEN', 'Database is not open: cannot call compactRange()');
    }
    const [s, e] = this.encodeRange(start, end, options);
    try {
      this.engine.compactRange(this.h, s, e);
    } catch (err) {
      throw toStrataError(err);
    }
  }

  private encodeRange(start: unknown, end: unknown, options: { keyEncoding?: unknown } | null | undefined): [Uint8Array, Uint8Array] {
    const enc = (this as unknown as KeyEncoder).keyEncoding(options?.keyEncoding);
    return [toBytes(enc.encode(start), 'start'), toBytes(enc.encode(end), 'end')];
  }

  /** LevelDB's `GetProperty`: `leveldb.num-files-at-level<N>`, `leveldb.stats`,
   * `leveldb.sstables`, `leveldb.approximate-memory-usage`; '' for any other name. */
  getProperty(property: string): string {
    if (typeof property !== 'string') throw new TypeError("The first argument 'property' must be a string");
    // Synchronous, so it cannot be deferred.
    if (this.status !== 'open') throw new StrataError('LEVEL_DATABASE_NOT_OPEN', 'Database is not open');
    try {
      return this.property(property);
    } catch (err) {
      throw toStrataError(err);
    }
  }

  private property(name: string): string {
    if (!name.startsWith('leveldb.')) return '';
    const what = name.slice('leveldb.'.length);
    const props = (): { filesPerLevel: number[]; bytesPerLevel: number[]; memtableBytes: number } => JSON.parse(this.engine.properties(this.h));
    const levelMatch = /^num-files-at-level(\d+)$/.exec(what);
    if (levelMatch) {
      const files = props().filesPerLevel[Number(levelMatch[1])];
      return files === undefined ? '' : String(files);
    }
    if (what === 'stats') {
      const p = props();
      let out = '                               Compactions\nLevel  Files Size(MB) Time(sec) Read(MB) Write(MB)\n--------------------------------------------------\n';
      p.filesPerLevel.forEach((files, level) => {
        if (files === 0) return;
        const mb = (p.bytesPerLevel[level] ?? 0) / 1048576;
        out += `${pad(level, 3)} ${pad(files, 8)} ${pad(mb.toFixed(0), 8)} ${pad(0, 9)} ${pad(0, 8)} ${pad(0, 9)}\n`;
      });
      return out;
    }
    if (what === 'sstables') return this.engine.sstables(this.h);
    if (what === 'approximate-memory-usage') return String(props().memtableBytes);
    return '';
  }

  /** Deletes the database at `location` (LevelDB's `DestroyDB`): only LevelDB's files, its
   * LOCK taken first (an open database is refused), then the folder if nothing else is left. */
  static async destroy(location: string): Promise<void> {
    checkLocation(location);
    let report: { remaining: number };
    try {
      report = JSON.parse(await getEngine().destroyDb('fs', location)) as { remaining: number };
    } catch (e) {
      throw toStrataError(e);
    }
    if (report.remaining === 0) {
      try {
        fs.rmdirSync(location); // an empty folder only; LevelDB ignores a failure here too
      } catch {
        // not there, or not empty after all
      }
    }
  }

  /** Rebuilds the database at `location` from the tables and logs found (LevelDB's
   * `RepairDB`); the database must be closed. */
  static async repair(location: string): Promise<void> {
    checkLocation(location);
    try {
      await getEngine().repairDb('fs', location, engineOptions(fromClassicLevel(classicOpenOptions({}))));
    } catch (e) {
      throw toStrataError(e);
    }
  }
}

function pad(v: number | string, width: number): string {
  return String(v).padStart(width);
}

export default ClassicLevel;
