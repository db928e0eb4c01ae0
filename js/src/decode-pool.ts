// Decode workers: a pool of workers (Node worker_threads, browser dedicated workers), each with
// its own wasm instance, that inflate the runs of compressed blocks a scan's readahead lends
// out (src/table/readahead.rs, external pools). No SharedArrayBuffer: a run's raw bytes are
// transferred to a worker and its decoded blocks transferred back.
//
// Invariants:
// - Every `decode` settles: with the worker's answer, or `{ ok: false }` when the worker failed,
//   was terminated or said a request reached it unreadable (the engine's cursor then decodes
//   the run itself), so a scan never waits on a dead worker and never returns a wrong figure.
// - Jobs go to the least loaded live worker that said it is ready (its wasm instance is up); a
//   dead worker is dropped from the pool.
// - A pool is `started` once every worker said it is ready or went away, or after START_BOUND_MS
//   (workers not ready by then are terminated and counted `late`). Passes begin only then, so
//   no worker is starting while the engine's thread makes synchronous storage calls: in Firefox,
//   the first scan with decode workers on the benchmark page stalled its whole worker (no
//   timer fired for 110 s) three times in full test suites, each time with its decode workers
//   starting while the scan's first steps read OPFS synchronously.
// - `scanWithDecoders` keeps at most RUNS_PER_WORKER runs in flight per worker, lending more
//   between steps of the scan, and yields to the event loop between steps so answers arrive.

/** The messages between the pool and a decode worker. */
export interface DecodeRequest {
  id: number;
  raw: Uint8Array;
  sizes: Uint32Array;
  verify: boolean;
  max: number;
  /** The reader's key filter (`decodeRun`'s `filter`): 0 keeps every entry. */
  filter: number;
}
export type DecodeAnswer = { id: number; ok: true; packed: Uint8Array } | { id: number; ok: false; error?: string };
/** What a decode worker posts: answers, once whether its instance started, and `unreadable`
 * when a request reached it but could not be read (a `messageerror`: its id is unknown). */
export type DecodeMessage = DecodeAnswer | { ready: true } | { ready: false; error: string } | { unreadable: true };

/** A worker as the pool needs it (Node's and the browser's differ). */
export interface DecodePort {
  post(msg: DecodeRequest, transfer: ArrayBuffer[]): void;
  /** Registers the message handler and the "gone" handler (error or exit). */
  listen(onMessage: (m: DecodeMessage) => void, onGone: (why: string) => void): void;
  terminate(): void;
  /** Whether the worker posts `{ ready }` once its instance is up (the real workers do); a
   * port that does not is ready at once. */
  readonly announcesReady?: boolean;
  /** Whether the page started the worker (browser.ts startDecodeWorkers) rather than the
   * engine's own thread. */
  readonly byPage?: boolean;
}

export const RUNS_PER_WORKER = 3;

/** Longest a pool waits for its workers to start (their wasm instances made) before passes go
 * on without the ones not ready. */
export const START_BOUND_MS = 10_000;

interface Member {
  port: DecodePort;
  pending: Map<number, (a: DecodeAnswer) => void>;
  alive: boolean;
  ready: boolean;
}

export class DecodePool {
  private readonly members: Member[] = [];
  private nextId = 1;
  /** `workersLost`: workers dropped for any reason (including the `late` ones and those that
   * could not be started); `late`: workers terminated for not starting within the bound;
   * `startMs`: how long the pool took to start; `byPage`: workers the page started;
   * `unreadable`: requests a worker said it could not read. */
  readonly stats = { sent: 0, answered: 0, failed: 0, workersLost: 0, late: 0, startMs: -1, byPage: 0, unreadable: 0 };
  /** Settles once every worker is ready or gone (or the bound passed): see the invariants. */
  readonly started: Promise<void>;
  private settleStart: () => void = () => {};
  private startTimer: ReturnType<typeof setTimeout> | undefined;

  constructor(
    spawn: () => DecodePort,
    readonly size: number,
    startBoundMs = START_BOUND_MS,
  ) {
    const t0 = Date.now();
    this.started = new Promise<void>((resolve) => {
      this.settleStart = () => {
        if (this.stats.startMs >= 0) return;
        this.stats.startMs = Date.now() - t0;
        if (this.startTimer !== undefined) clearTimeout(this.startTimer);
        this.startTimer = undefined;
        trace(`decode pool started in ${this.stats.startMs} ms: ${this.live} of ${size} ready`);
        resolve();
      };
    });
    for (let i = 0; i < size; i++) {
      let m: Member;
      try {
        const port = spawn();
        m = { port, pending: new Map(), alive: true, ready: port.announcesReady !== true };
      } catch (e) {
        // No worker to be had (a policy refusing workers): the passes decode themselves.
        trace(`decode pool: worker ${i} could not start: ${String(e)}`);
        this.stats.workersLost += 1;
        continue;
      }
      m.port.listen(
        (msg) => {
          if ('ready' in msg) {
            if (msg.ready) m.ready = true;
            else this.lose(m);
            this.checkStarted();
            return;
          }
          if ('unreadable' in msg) {
            // Which request it was is unknown: fail every one in flight there (their passes
            // decode those runs themselves; a late answer to one of them is ignored). The
            // worker stays: the next requests may well arrive whole.
            this.stats.unreadable += 1;
            failPending(m, 'a request reached the decode worker unreadable');
            return;
          }
          const done = m.pending.get(msg.id);
          if (!done) return;
          m.pending.delete(msg.id);
          done(msg);
        },
        () => {
          this.lose(m);
          this.checkStarted();
        },
      );
      this.members.push(m);
    }
    this.stats.byPage = this.members.filter((m) => m.port.byPage === true).length;
    trace(`decode pool: starting ${size} worker(s), ${this.stats.byPage} started by the page`);
    this.checkStarted();
    if (this.stats.startMs < 0) {
      this.startTimer = setTimeout(() => {
        for (const m of this.members) {
          if (!m.alive || m.ready) continue;
          this.stats.late += 1;
          this.lose(m);
        }
        this.settleStart();
      }, startBoundMs);
    }
  }

  private checkStarted(): void {
    if (this.members.every((m) => m.ready || !m.alive)) this.settleStart();
  }

  /** Drops a member for good: its worker is ended too (a page-started one would otherwise
   * live on with its port open, a nested one that only raised an error too). */
  private lose(m: Member): void {
    if (!m.alive) return;
    m.alive = false;
    this.stats.workersLost += 1;
    try {
      m.port.terminate();
    } catch {
      // already gone
    }
    failPending(m, 'the decode worker went away');
  }

  /** Live workers (started or starting). */
  get live(): number {
    return this.members.filter((m) => m.alive).length;
  }

  /** Runs that can be in flight now (on workers that are ready). */
  get capacity(): number {
    return this.members.filter((m) => m.alive && m.ready).length * RUNS_PER_WORKER;
  }

  /** Decodes one run on the least loaded ready worker; `{ ok: false }` if none can. */
  decode(raw: Uint8Array, sizes: Uint32Array, verify: boolean, max: number, filter = 0): Promise<DecodeAnswer> {
    const id = this.nextId++;
    const live = this.members.filter((m) => m.alive && m.ready);
    if (live.length === 0) return Promise.resolve({ id, ok: false, error: 'no decode worker' });
    const m = live.reduce((a, b) => (b.pending.size < a.pending.size ? b : a));
    this.stats.sent += 1;
    return new Promise((resolve) => {
      m.pending.set(id, (a) => {
        if (a.ok) this.stats.answered += 1;
        else this.stats.failed += 1;
        resolve(a);
      });
      try {
        m.port.post({ id, raw, sizes, verify, max, filter }, [raw.buffer as ArrayBuffer]);
      } catch (e) {
        m.pending.delete(id);
        this.stats.failed += 1;
        resolve({ id, ok: false, error: String(e) });
      }
    });
  }

  /** Terminates worker `i` at once (tests: a worker killed mid-scan). */
  terminateWorker(i: number): void {
    const m = this.members[i];
    if (m) this.lose(m);
  }

  /** Whether the pool started with no worker ready (none could start here: a missing script, a
   * policy refusing workers): a new pool would most likely wait out the bound again. */
  get neverStarted(): boolean {
    return this.stats.startMs >= 0 && this.size > 0 && this.stats.workersLost === this.size && this.stats.sent === 0;
  }

  close(): void {
    for (const m of this.members) this.lose(m);
    this.settleStart();
  }
}

/** Settles every request in flight on `m` as failed (their passes decode those runs). */
function failPending(m: Member, error: string): void {
  const pending = [...m.pending];
  m.pending.clear();
  for (const [id, done] of pending) done({ id, ok: false, error });
}

/** Reports a step of the pool or of a pass to `globalThis.strataTrace` when a page or a test
 * set it (a diagnostic: called before each synchronous step, so the last report names where a
 * stalled thread stopped). */
function trace(text: string): void {
  traceHook()?.(text);
}

/** `globalThis.strataTrace` wrapped so that it never throws, or undefined when none is set
 * (read once per pass: its messages are built only when someone listens). */
function traceHook(): ((text: string) => void) | undefined {
  const f = (globalThis as { strataTrace?: (text: string) => void }).strataTrace;
  if (typeof f !== 'function') return undefined;
  return (text) => {
    try {
      f(text);
    } catch {
      // a diagnostic never fails the pass
    }
  };
}

/** `globalThis.strataPassGate` when a test set it: called at each step of a pass with decode
 * workers, after that step's runs were lent and before the cursor steps; a promise it returns
 * holds the pass until it settles. Tests force their interleavings with it (hold the pass until
 * the workers answered, then act while runs are in flight) instead of racing the pass. Read
 * once per pass; a gate that throws or rejects fails the pass. */
function passGate(): ((step: number) => Promise<void> | void) | undefined {
  const f = (globalThis as { strataPassGate?: (step: number) => Promise<void> | void }).strataPassGate;
  return typeof f === 'function' ? f : undefined;
}

/** One run lent by the engine (`Database.lendRuns` packing). */
interface Lent {
  id: number;
  verify: boolean;
  filter: number;
  max: number;
  sizes: Uint32Array;
  raw: Uint8Array;
}

function unpackLent(packed: Uint8Array): Lent[] {
  const view = new DataView(packed.buffer, packed.byteOffset, packed.byteLength);
  const count = view.getUint32(0, true);
  const out: Lent[] = [];
  let at = 4;
  for (let i = 0; i < count; i++) {
    const id = view.getFloat64(at, true);
    const verify = packed[at + 8] === 1;
    const filter = packed[at + 9]!;
    const max = view.getUint32(at + 10, true);
    const n = view.getUint32(at + 14, true);
    at += 18;
    const sizes = new Uint32Array(n);
    for (let j = 0; j < n; j++) sizes[j] = view.getUint32(at + 4 * j, true);
    at += 4 * n;
    const len = view.getUint32(at, true);
    at += 4;
    out.push({ id, verify, filter, max, sizes, raw: packed.slice(at, at + len) });
    at += len;
  }
  return out;
}

/** What a pass with decode workers needs from the engine's database object. */
export interface ScanTarget {
  scanCursor(): Stepper & { figures(): Float64Array | number[] };
  chunkListCursor(dimension: number): Stepper;
  chunkListFinish(cursor: Stepper): Int32Array;
  lendRuns(max: number): Uint8Array;
  deliverRun(id: number, packed: Uint8Array): void;
  abandonRun(id: number): void;
}

/** A pass over the database in steps (the wasm facade's ScanCursor, ChunkListCursor). */
export interface Stepper {
  step(max: number): boolean;
  free(): void;
}

/** Bytes of entries per step (between steps, answers are delivered and more runs lent):
 * about a few runs' worth, so answers arrive before the cursor reaches their runs. */
const STEP_BYTES = 256 * 1024;

const yieldNow: () => Promise<void> = (() => {
  const g = globalThis as { setImmediate?: (f: () => void) => void; MessageChannel?: typeof MessageChannel };
  if (typeof g.setImmediate === 'function') return () => new Promise<void>((r) => g.setImmediate!(r));
  if (typeof g.MessageChannel === 'function') {
    // A macrotask without setTimeout's clamping: messages already queued (decoders' answers)
    // are handled before it.
    const ch = new g.MessageChannel();
    const waiting: Array<() => void> = [];
    ch.port1.onmessage = () => waiting.shift()?.();
    return () =>
      new Promise<void>((resolve) => {
        waiting.push(resolve);
        ch.port2.postMessage(0);
      });
  }
  return () => new Promise<void>((r) => setTimeout(r, 0));
})();

const notOpen = () => Object.assign(new Error('Database is not open'), { code: 'LEVEL_DATABASE_NOT_OPEN' });

/** Runs `cursor` to its end with the pool decoding the readahead's runs (lent between steps,
 * their blocks delivered as they come back). `alive()` says whether the database is still
 * open (answers after a close are dropped, and nothing more is asked of the database). A
 * delivery that fails (a trap: the engine stopped) fails the pass at its next step. */
async function stepWithDecoders(db: ScanTarget, cursor: Stepper, pool: DecodePool, alive: () => boolean): Promise<void> {
  let inflight = 0;
  let deliveryFailed: { error: unknown } | undefined;
  const trace = traceHook();
  const gate = passGate();
  for (let step = 1; ; step++) {
    if (deliveryFailed) throw deliveryFailed.error;
    if (!alive()) throw notOpen();
    const room = pool.capacity - inflight;
    trace?.(`pass step ${step}: ${inflight} run(s) in flight, lending ${Math.max(0, room)}`);
    if (room > 0) {
      for (const run of unpackLent(db.lendRuns(room))) {
        inflight += 1;
        void pool.decode(run.raw, run.sizes, run.verify, run.max, run.filter).then((a) => {
          inflight -= 1;
          if (!alive()) return;
          try {
            if (a.ok) db.deliverRun(run.id, a.packed);
            else db.abandonRun(run.id);
          } catch (error) {
            deliveryFailed ??= { error };
          }
        });
      }
    }
    const held = gate?.(step);
    if (held) {
      await held;
      // (set by an answer's delivery while the gate held the pass)
      const failed = deliveryFailed as { error: unknown } | undefined;
      if (failed) throw failed.error;
      if (!alive()) throw notOpen();
    }
    trace?.(`pass step ${step}: stepping`);
    if (cursor.step(STEP_BYTES)) return;
    trace?.(`pass step ${step}: yield`);
    await yieldNow();
  }
}

/** A full scan with the pool decoding the readahead's runs: the figures `scan()` gives.
 * (`db` comes through the engine's instance fence: after a stop, `free()` does nothing.) */
export async function scanWithDecoders(db: ScanTarget, pool: DecodePool, alive: () => boolean): Promise<number[]> {
  if (!alive()) throw notOpen(); // closed while its pool started
  const cursor = db.scanCursor();
  try {
    await stepWithDecoders(db, cursor, pool, alive);
    return [...cursor.figures()];
  } finally {
    cursor.free();
  }
}

/** `chunkList(dimension, true)` with the pool decoding the pass's runs, each block handed back
 * with only the records the pass reads: the same list, and the same samples kept. */
export async function chunkListWithDecoders(db: ScanTarget, dimension: number, pool: DecodePool, alive: () => boolean): Promise<Int32Array> {
  if (!alive()) throw notOpen(); // closed while its pool started
  const cursor = db.chunkListCursor(dimension);
  try {
    await stepWithDecoders(db, cursor, pool, alive);
    return db.chunkListFinish(cursor);
  } finally {
    cursor.free();
  }
}
