// Map helpers (helper-worker.ts): one page worker per spare core, each with its own engine on
// the world's files (a picked folder, a `.mcworld` unpacked into `File`s, or `File` snapshots
// of a world in OPFS: strata-level's opfsFiles), drawing map bands, detail and block tiles in
// parallel with the page's engine. They open with a world large enough to share its chunk
// index pass and take ranges of it (chunk-index/shared-pass.ts: the first picture waits on
// that pass), else once the page is ready; then they serve the maps drawn after: another
// layer or dimension, tiles. A `File` can be read by any worker; a
// world in IndexedDB cannot be shared this way (one engine holds the store's lock).
//
// Invariants: a call goes to the helper with the fewest calls in flight; a helper that fails
// (its worker died, its open failed) is dropped and its calls reject, so the caller can redo
// the work on the page's engine; `close()` terminates every worker at once.

import type { MapImage, World } from 'strata-level/browser';

/** Longest wait for one helper call (a band of a huge world's surface layer takes seconds). */
const CALL_TIMEOUT_MS = 120_000;

interface Helper {
  worker: Worker;
  inFlight: number;
  pending: Map<number, { resolve(v: unknown): void; reject(e: unknown): void }>;
}

/** Helpers to start by default: one per core beyond the page's engine and its decode worker,
 * at most three, and at least one where there are two cores. On two cores (no decode worker
 * there) the page's engine and one helper drew the 160,000-chunk world's surface layer in
 * 3.0-3.4 s against 4.4 alone, the page and its workers peaking at 409-411 MiB against 361
 * (`?helpers=0` asks for none). A helper once took the page from about 500 to 600 MiB and
 * gained 1.26x: its file cache (16 MiB then) was smaller than the world, and every band
 * re-read every table through the browser's process. */
export function helperCount(): number {
  const cores = typeof navigator !== 'undefined' ? navigator.hardwareConcurrency || 2 : 2;
  return cores < 2 ? 0 : Math.max(1, Math.min(3, cores - 2));
}

export class MapHelpers {
  private helpers: Helper[] = [];
  private nextId = 1;
  /** Calls answered by helpers (tests read it). */
  readonly stats = { calls: 0, failed: 0 };

  private constructor() {}

  /** Starts `n` helpers on the picked world; resolves once each has it open (those that
   * cannot open it are dropped; none left: rejects). */
  static async open(files: ReadonlyArray<{ path: string; file: Blob }>, root: string, n = helperCount()): Promise<MapHelpers> {
    const pool = new MapHelpers();
    for (let i = 0; i < n; i++) {
      const worker = new Worker(new URL('./helper-worker.ts', import.meta.url), { type: 'module', name: `strata-map-helper-${i}` });
      const h: Helper = { worker, inFlight: 0, pending: new Map() };
      worker.onmessage = (ev: MessageEvent<{ id: number; ok: boolean; value?: unknown; error?: { code: string; message: string } }>) => {
        const r = ev.data;
        const p = h.pending.get(r.id);
        if (!p) return;
        h.pending.delete(r.id);
        h.inFlight -= 1;
        if (r.ok) p.resolve(r.value);
        else p.reject(Object.assign(new Error(r.error!.message), { code: r.error!.code }));
      };
      worker.onerror = (ev) => pool.drop(h, new Error(`map helper failed: ${ev.message}`));
      worker.onmessageerror = () => pool.drop(h, new Error('map helper: a message could not be read'));
      pool.helpers.push(h);
    }
    const started = [...pool.helpers];
    const opened = await Promise.allSettled(started.map((h) => pool.call(h, { op: 'open', files, root })));
    opened.forEach((r, i) => {
      if (r.status === 'rejected') pool.drop(started[i]!, r.reason);
    });
    if (pool.helpers.length === 0) throw new Error(`no map helper could open the folder: ${String((opened.find((r) => r.status === 'rejected') as PromiseRejectedResult | undefined)?.reason)}`);
    return pool;
  }

  get size(): number {
    return this.helpers.length;
  }

  private call(h: Helper, msg: Record<string, unknown>): Promise<unknown> {
    const id = this.nextId++;
    h.inFlight += 1;
    return new Promise((resolve, reject) => {
      // A helper that died without an error event (out of memory) would leave the call
      // pending: past CALL_TIMEOUT_MS it is dropped and the call rejects (the caller redoes it).
      const timer = setTimeout(() => this.drop(h, new Error(`map helper: no answer in ${CALL_TIMEOUT_MS / 1000} s`)), CALL_TIMEOUT_MS);
      h.pending.set(id, {
        resolve: (v) => (clearTimeout(timer), resolve(v)),
        reject: (e) => (clearTimeout(timer), reject(e)),
      });
      h.worker.postMessage({ id, ...msg });
    });
  }

  private drop(h: Helper, err: unknown): void {
    if (!this.helpers.includes(h)) return; // dropped already
    h.worker.onmessage = null;
    h.worker.terminate();
    this.stats.failed += 1;
    for (const p of h.pending.values()) p.reject(err);
    h.pending.clear();
    this.helpers = this.helpers.filter((x) => x !== h);
  }

  private least(): Helper {
    const h = [...this.helpers].sort((a, b) => a.inFlight - b.inFlight)[0];
    if (!h) throw Object.assign(new Error('no map helper left'), { code: 'LEVEL_DATABASE_NOT_OPEN' });
    return h;
  }

  /** Whether a helper is free now (no call in flight). */
  idle(): boolean {
    return this.helpers.some((h) => h.inFlight === 0);
  }

  async map(options: Parameters<World['map']>[0]): Promise<MapImage> {
    const v = (await this.call(this.least(), { op: 'map', options })) as MapImage;
    this.stats.calls += 1;
    return v;
  }

  /** A range of the chunk index's pass (World.chunkListPart), on the helper with the fewest
   * calls in flight. */
  async chunkPart(dimension: 0 | 1 | 2, range: { start?: Uint8Array; end?: Uint8Array }): Promise<Uint8Array> {
    const v = (await this.call(this.least(), { op: 'chunkPart', dimension, start: range.start, end: range.end })) as Uint8Array;
    this.stats.calls += 1;
    return v;
  }

  async surfaceTiles(dimension: 0 | 1 | 2, chunks: Array<[number, number]>): Promise<Map<string, Uint8Array>> {
    const v = (await this.call(this.least(), { op: 'tiles', dimension, chunks })) as Map<string, Uint8Array>;
    this.stats.calls += 1;
    return v;
  }

  close(): void {
    for (const h of [...this.helpers]) this.drop(h, Object.assign(new Error('the map helpers were closed'), { code: 'LEVEL_DATABASE_NOT_OPEN' }));
    this.stats.failed = 0;
  }
}
