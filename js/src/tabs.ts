// Sharing an OPFS database between the tabs (and windows and workers) of one origin. OPFS
// lets one worker hold a database's files, so one tab LEADS: it holds the Web Lock
// `strata-db:<location>` for as long as it keeps the database open (a lock is released by the
// browser when its tab closes or crashes), runs the engine, and answers the others' calls
// arriving on the BroadcastChannel of the same name. Every tab that opens the database queues
// for the lock; the first in the queue leads next.
//
// Invariants:
// - A call is answered by the leader it was sent to, or rejected with LEVEL_CONNECTION_LOST
//   when leadership changes before its answer arrives (it may or may not have been applied;
//   an acknowledged write always was, and survives: the engine's own guarantees). Never a hang.
// - The leader substitutes its own database handle. Iterators, snapshots and streamed exports
//   (World.exportMcworldTo) live in the engine of the leader that made them and die with it: a
//   sharer hands out its own ids for them, each bound to that leader, and a use after the
//   leader changed rejects with LEVEL_CONNECTION_LOST (never reaching another engine, whose ids
//   could name a different one); closing, releasing or cancelling one that died succeeds.
// - A leader frees what it holds for a sharer that went without closing (a crashed tab): each
//   sharer holds the Web Lock `strata-tab:<id>` while it lives, and the leader releases the
//   iterators and snapshots, and cancels the exports, of sharers whose lock is gone.
// - A new leader opens the database again, retrying LEVEL_LOCKED while the previous leader's
//   worker releases its handles (asynchronously, within about a second), then announces itself.
// - An open waits for a leader as long as some tab says it is opening the database (a large
//   one on a loaded machine can take longer than any fixed bound): the tab holding the lock
//   says so every second until its engine is open (and after a close mid-open, until the
//   open is undone and the lock passes on), and whenever a waiting sharer asks (each second).
//   With nobody opening (the lock held outside the sharing, or a tab that froze), an open or
//   a call waiting through a handover fails after `TabLink.leaderWaitMs`, or
//   `openingSilenceMs` after the opener was last heard, once an ask goes unanswered for a
//   second; never later than `openingMaxMs` (an open that never settles keeps its own tab's
//   lock until the page goes: a stuck engine is a bug of its own).

import type { Link } from './db.js';
import { StrataError, toErrorShape, toStrataError, type ErrorShape } from './errors.js';

/** Operations whose first argument is not the database handle: a cursor id, an export's id,
 * or (exportDiscard) the scratch store's location. */
const CURSOR_OPS = new Set(['nextv', 'seek', 'closeIterator', 'exportStep', 'exportCancel', 'exportFinish', 'exportDiscard']);
/** Operations whose first argument is a streamed export's id (from exportBegin). */
const EXPORT_OPS = new Set(['exportStep', 'exportCancel', 'exportFinish']);
/** Operations that end what their id names (nothing to do when it died with its leader). */
const FREEING: Record<string, number> = { closeIterator: 0, releaseSnapshot: 1, exportCancel: 0 };
/** Reads with no state on the leader: a follower resends them to the next leader instead of
 * rejecting with LEVEL_CONNECTION_LOST (writes, iterators and snapshots are not resent). */
const RESENDABLE = new Set([
  'get',
  'getMany',
  'scan',
  'properties',
  'dialect',
  'recovery',
  'worldSummary',
  'chunkList',
  'chunkSplitKeys',
  'chunkListPart',
  'contentIdentity',
  'reliefSamples',
  'renderMap',
  'surfaceTiles',
  'chunkRecords',
  'recordNbt',
  'recordSnbt',
  'levelDatSnbt',
  'snbtTree',
  'entities',
]);
/** How often a tab opening the database for the others says so. */
const OPENING_EVERY_MS = 1_000;
/** How often waiting opens and calls look again for a leader. */
const POLL_MS = 250;
/** How often a leader looks for sharers gone with iterators or snapshots open. */
const REAP_MS = 2_000;
/** The argument of each operation that names a snapshot (`iterator`: its spec's field). */
const SNAPSHOT_ARG: Record<string, number> = { get: 2, getMany: 2, releaseSnapshot: 1 };

/** An iterator, snapshot or export this sharer opened: in the engine of `leader`, as `remote`. */
interface Held {
  kind: 'iterator' | 'snapshot' | 'export';
  leader: string;
  remote: number;
}

type Msg =
  | { t: 'hello'; from: string }
  | { t: 'leader'; id: string }
  | { t: 'opening'; id: string }
  | { t: 'bye'; id: string }
  | { t: 'call'; from: string; leader: string; id: number; op: string; args: unknown[] }
  | { t: 'reply'; to: string; id: number; ok: boolean; value?: unknown; error?: ErrorShape };

interface Pending {
  resolve(v: unknown): void;
  reject(e: unknown): void;
  leader: string;
}

/** Opens the engine's database for this tab when it leads: its link and handle. */
export type OpenEngine = () => Promise<{ link: Link; handle: number }>;

function lost(): StrataError {
  return new StrataError('LEVEL_CONNECTION_LOST', "the tab that ran the database's engine went away before answering; the call may or may not have been applied");
}

function died(what: string): StrataError {
  return new StrataError('LEVEL_CONNECTION_LOST', `the ${what} lived in the engine of a tab that went away; open it again`);
}

/** Whether this context can share databases across tabs. */
export function canShareTabs(): boolean {
  return typeof BroadcastChannel === 'function' && typeof navigator !== 'undefined' && typeof navigator.locks?.request === 'function';
}

export class TabLink implements Link {
  /** How long an open waits for some tab to lead while no tab says it is opening the
   * database (tests shorten it). */
  static leaderWaitMs = 15_000;
  /** How long a sharer waits on an opener it no longer hears from (past `leaderWaitMs`;
   * tests shorten it). */
  static openingSilenceMs = 5_000;
  /** The longest any open or call waits for a leader, openers heard or not: an engine whose
   * open never settles fails every sharer's wait instead of hanging it. */
  static openingMaxMs = 300_000;
  /** The open links of this context, by location (for `tabInfo`). */
  static readonly open_ = new Map<string, Set<TabLink>>();
  readonly id = `${Date.now().toString(36)}-${Math.random().toString(36).slice(2)}`;
  private readonly channel: BroadcastChannel;
  private leader: string | undefined;
  private mine: { link: Link; handle: number } | undefined;
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  private waiters: Array<() => void> = [];
  /** The one timer that re-checks the waiters (every 250 ms while any waits). */
  private poll: ReturnType<typeof setTimeout> | undefined;
  /** When this sharer last asked who leads or opens ('hello'). */
  private lastAsk = 0;
  private channelClosed = false;
  private readonly abort = new AbortController();
  private unlock: (() => void) | undefined;
  private closed = false;
  private leadError: unknown;
  /** Whether this tab holds the lock and is opening the engine's database. */
  private opening = false;
  /** When another tab last said it was opening the database (0: never). */
  private openingHeard = 0;
  /** Whether another sharer ever announced itself (a handover is then what LEVEL_LOCKED means). */
  private sawLeader = false;
  /** Calls this tab answered for others, and leaderships it took (tests read these). */
  readonly stats = { served: 0, led: 0 };
  /** Iterators, snapshots and exports opened through this sharer, by the ids it handed out. */
  private readonly held = new Map<number, Held>();
  private nextLocal = 1;
  /** While leading: what this engine holds for each other sharer (cursor, snapshot and
   * export ids). */
  private readonly heldFor = new Map<string, { cursors: Set<number>; snapshots: Set<number>; exports: Set<number> }>();
  private reaper: ReturnType<typeof setInterval> | undefined;

  private constructor(
    readonly location: string,
    private readonly openEngine: OpenEngine,
  ) {
    this.channel = new BroadcastChannel(`strata-db:${location}`);
    this.channel.onmessage = (ev: MessageEvent<Msg>) => this.onMessage(ev.data);
    // Held while this sharer lives: a leader sees it gone when the lock is.
    navigator.locks
      .request(`strata-tab:${this.id}`, { signal: this.abort.signal }, () => new Promise<void>((resolve) => this.abort.signal.addEventListener('abort', () => resolve())))
      .catch(() => {});
    let set = TabLink.open_.get(location);
    if (!set) TabLink.open_.set(location, (set = new Set()));
    set.add(this);
  }

  /** Joins (or starts) the sharing of `location`; resolves once some tab leads. */
  static async open(location: string, openEngine: OpenEngine): Promise<TabLink> {
    const t = new TabLink(location, openEngine);
    t.queueForLead();
    t.ask();
    try {
      await t.leaderKnown();
    } catch (e) {
      t.shutdown();
      throw e;
    }
    return t;
  }

  /** Whether this tab runs the engine now. */
  get leading(): boolean {
    return this.mine !== undefined;
  }

  private post(m: Msg): void {
    if (!this.channelClosed) this.channel.postMessage(m);
  }

  /** Asks the other sharers who leads (a leader answers 'leader', an opener 'opening'). */
  private ask(): void {
    this.lastAsk = Date.now();
    this.post({ t: 'hello', from: this.id });
  }

  /** Tells the others this tab holds the lock and is opening the database. */
  private sayOpening(): void {
    this.post({ t: 'opening', id: this.id });
  }

  private closeChannel(): void {
    this.channelClosed = true;
    this.channel.close();
  }

  private queueForLead(): void {
    navigator.locks
      .request(`strata-db:${this.location}`, { signal: this.abort.signal }, async () => {
        if (this.closed) return;
        // The others wait for as long as this tab keeps saying it is opening.
        this.opening = true;
        this.sayOpening();
        const saying = setInterval(() => this.sayOpening(), OPENING_EVERY_MS);
        const done = (): void => {
          clearInterval(saying);
          this.opening = false;
          // Closed while opening: the channel stayed open to keep the others waiting until
          // the open was undone (the lock passes to them when this callback returns).
          if (this.closed) this.closeChannel();
        };
        let opened: { link: Link; handle: number };
        try {
          opened = await this.openWithRetry();
        } catch (e) {
          // This tab cannot run the engine (e.g. the database does not exist): it stops
          // queueing, and its open fails with the engine's error.
          this.leadError = e;
          done();
          this.wake();
          return;
        }
        if (this.closed) {
          try {
            await opened.link.call('close', [opened.handle]).catch(() => {});
            opened.link.release?.();
          } finally {
            done();
          }
          return;
        }
        done();
        this.mine = opened;
        this.stats.led += 1;
        this.setLeader(this.id);
        this.post({ t: 'leader', id: this.id });
        await new Promise<void>((resolve) => (this.unlock = resolve));
      })
      .catch(() => {
        // Aborted (closed before leading): nothing to do.
      });
  }

  private async openWithRetry(): Promise<{ link: Link; handle: number }> {
    // After a leader, its worker releases the files within about a second (10 s allowed); with
    // no leader ever seen, LEVEL_LOCKED means a holder outside the sharing (a `shared: false`
    // open, or the other of read-only and writable): reported after a short grace.
    const deadline = Date.now() + (this.sawLeader ? 10_000 : 1_000);
    for (;;) {
      try {
        return await this.openEngine();
      } catch (e) {
        // The previous leader's worker releases its OPFS handles asynchronously.
        if ((e as { code?: string }).code !== 'LEVEL_LOCKED' || Date.now() > deadline) throw e;
        await new Promise((r) => setTimeout(r, 100));
      }
    }
  }

  private setLeader(id: string | undefined): void {
    if (this.leader === id) return;
    this.leader = id;
    // Calls sent to any other leader will not be answered.
    for (const [n, p] of this.pending) {
      if (p.leader !== id) {
        this.pending.delete(n);
        p.reject(lost());
      }
    }
    this.wake();
  }

  private wake(): void {
    const w = this.waiters;
    this.waiters = [];
    for (const f of w) {
      try {
        f();
      } catch {
        // A check settles its own promise; one that threw must not strand the others.
      }
    }
  }

  /** Resolves once some tab leads. Waits while this tab or another is opening the database
   * (at most `openingMaxMs`); with nobody opening and nobody leading, fails after
   * `leaderWaitMs`, or `openingSilenceMs` after the last opener was heard if later. */
  private leaderKnown(): Promise<void> {
    const waitMs = TabLink.leaderWaitMs;
    const silenceMs = TabLink.openingSilenceMs;
    const start = Date.now();
    return new Promise<void>((resolve, reject) => {
      const check = (): void => {
        if (this.leadError !== undefined) return reject(toStrataError(this.leadError));
        if (this.closed) return reject(new StrataError('LEVEL_DATABASE_NOT_OPEN', 'Database is not open'));
        if (this.leader !== undefined) return resolve();
        const now = Date.now();
        const seconds = (ms: number): string => (ms / 1000).toFixed(1);
        if (now - start > TabLink.openingMaxMs) {
          return reject(new StrataError('LEVEL_CONNECTION_LOST', `no tab finished opening the database within ${seconds(now - start)} s`));
        }
        if (!this.opening) {
          // Asked each second: a leader or opener answers from its message handler, which a
          // hidden tab runs even while the browser throttles its timers (and a lost
          // announcement is made up for). Nobody is opening only when an ask went a second
          // without an answer, so a wait whose own turns come late (a loaded machine, a
          // hidden tab) judges by the answers, not by its clock.
          const askedAt = this.lastAsk;
          const unanswered = now - askedAt >= OPENING_EVERY_MS && this.openingHeard < askedAt;
          if (unanswered && now > start + waitMs && now > this.openingHeard + silenceMs) {
            const why = this.openingHeard > start ? `the tab opening it went silent ${seconds(now - this.openingHeard)} s ago` : 'none was opening it';
            return reject(new StrataError('LEVEL_CONNECTION_LOST', `no tab could run the database within ${seconds(now - start)} s (${why})`));
          }
          if (now - askedAt >= OPENING_EVERY_MS) this.ask();
        }
        this.waiters.push(check);
        this.poll ??= setTimeout(() => {
          this.poll = undefined;
          this.wake();
        }, POLL_MS);
      };
      check();
    });
  }

  private onMessage(m: Msg): void {
    if (this.closed) {
      // Closed while opening: the others still wait for the lock this open holds.
      if (this.opening && m.t === 'hello') this.sayOpening();
      return;
    }
    switch (m.t) {
      case 'hello':
        if (this.mine) this.post({ t: 'leader', id: this.id });
        else if (this.opening) this.sayOpening();
        break;
      case 'opening':
        if (m.id !== this.id) this.openingHeard = Date.now();
        break;
      case 'leader':
        if (m.id !== this.id) {
          this.sawLeader = true;
          this.setLeader(m.id);
        }
        break;
      case 'bye':
        if (m.id === this.leader) this.setLeader(undefined);
        break;
      case 'call':
        if (this.mine && m.leader === this.id) void this.serve(m);
        break;
      case 'reply': {
        if (m.to !== this.id) break;
        const p = this.pending.get(m.id);
        if (!p) break;
        this.pending.delete(m.id);
        if (m.ok) p.resolve(m.value);
        else p.reject(toStrataError(m.error));
        break;
      }
    }
  }

  private async serve(m: Extract<Msg, { t: 'call' }>): Promise<void> {
    const mine = this.mine!;
    this.stats.served += 1;
    try {
      // A follower's close only detaches it; the database stays open for the others.
      const value = m.op === 'close' ? undefined : await mine.link.call(m.op, CURSOR_OPS.has(m.op) ? m.args : [mine.handle, ...m.args.slice(1)]);
      this.track(m.from, m.op, m.args, value);
      this.post({ t: 'reply', to: m.from, id: m.id, ok: true, value });
    } catch (e) {
      this.post({ t: 'reply', to: m.from, id: m.id, ok: false, error: toErrorShape(e) });
    }
  }

  /** Leader: records the iterators, snapshots and exports a sharer opens and ends here. */
  private track(from: string, op: string, args: unknown[], value: unknown): void {
    let h = this.heldFor.get(from);
    if (op === 'iterator' || op === 'snapshot' || op === 'exportBegin') {
      if (!h) this.heldFor.set(from, (h = { cursors: new Set(), snapshots: new Set(), exports: new Set() }));
      (op === 'iterator' ? h.cursors : op === 'snapshot' ? h.snapshots : h.exports).add(value as number);
      this.reaper ??= setInterval(() => void this.reap(), REAP_MS);
    } else if (h && op === 'closeIterator') h.cursors.delete(args[0] as number);
    else if (h && op === 'releaseSnapshot') h.snapshots.delete(args[1] as number);
    else if (h && (op === 'exportCancel' || op === 'exportFinish')) h.exports.delete(args[0] as number);
    if (h && h.cursors.size === 0 && h.snapshots.size === 0 && h.exports.size === 0) this.heldFor.delete(from);
  }

  /** Leader: frees what sharers that went without closing (their tab crashed or closed) had
   * open here. A sharer is gone when its `strata-tab:` lock is neither held nor asked for. */
  private async reap(): Promise<void> {
    const mine = this.mine;
    if (!mine || this.heldFor.size === 0) {
      clearInterval(this.reaper);
      this.reaper = undefined;
      return;
    }
    let state: LockManagerSnapshot;
    try {
      state = await navigator.locks.query();
    } catch {
      return; // the next round asks again
    }
    const alive = new Set([...(state.held ?? []), ...(state.pending ?? [])].map((l) => l.name));
    for (const [from, h] of [...this.heldFor]) {
      if (alive.has(`strata-tab:${from}`) || this.mine !== mine) continue;
      this.heldFor.delete(from);
      for (const c of h.cursors) await mine.link.call('closeIterator', [c]).catch(() => {});
      for (const sn of h.snapshots) await mine.link.call('releaseSnapshot', [mine.handle, sn]).catch(() => {});
      for (const x of h.exports) await mine.link.call('exportCancel', [x]).catch(() => {});
    }
  }

  /** Iterators, snapshots and exports this tab's engine holds for other sharers (tests read
   * this). */
  get heldForOthers(): number {
    let n = 0;
    for (const h of this.heldFor.values()) n += h.cursors.size + h.snapshots.size + h.exports.size;
    return n;
  }

  /** The engine-side arguments of a call: the ids this sharer handed out for iterators,
   * snapshots and exports replaced by the engine's own. Throws when one died with an earlier
   * leader; returns undefined when the call closes, releases or cancels one that died
   * (nothing left to do). */
  private toRemote(op: string, args: unknown[], leader: string): unknown[] | undefined {
    const freeing = op in FREEING;
    const remote = (local: number, kind: Held['kind']): number | undefined => {
      const h = this.held.get(local);
      // Unknown ids get the engine's own answers: closing twice is fine, using a closed
      // iterator, a released snapshot or a finished export is not.
      if (!h || h.kind !== kind) {
        if (freeing) return undefined;
        if (kind === 'iterator') throw new StrataError('LEVEL_ITERATOR_NOT_OPEN', 'Iterator is not open');
        if (kind === 'export') throw new StrataError('LEVEL_DATABASE_NOT_OPEN', 'the export is not running (finished, cancelled or failed, or its world was closed)');
        throw new StrataError('LEVEL_INVALID_ARGUMENT', 'snapshot was released');
      }
      if (h.leader === leader) return h.remote;
      if (freeing) {
        this.held.delete(local);
        return undefined;
      }
      throw died(kind);
    };
    const out = [...args];
    if (EXPORT_OPS.has(op)) out[0] = remote(args[0] as number, 'export');
    else if (CURSOR_OPS.has(op) && op !== 'exportDiscard') out[0] = remote(args[0] as number, 'iterator');
    const at = SNAPSHOT_ARG[op];
    if (at !== undefined && args[at] !== undefined && args[at] !== null) out[at] = remote(args[at] as number, 'snapshot');
    if (op === 'iterator') {
      const spec = args[1] as { snapshot?: number };
      if (spec.snapshot !== undefined) out[1] = { ...spec, snapshot: remote(spec.snapshot, 'snapshot') };
    }
    // Closing, releasing or cancelling one that is gone: nothing left to do.
    if (freeing && out[FREEING[op]!] === undefined) return undefined;
    return out;
  }

  /** Maps an engine's reply back: new iterators, snapshots and exports get ids of this
   * sharer's own. */
  private fromRemote(op: string, args: unknown[], value: unknown, leader: string): unknown {
    if (op === 'iterator' || op === 'snapshot' || op === 'exportBegin') {
      const local = this.nextLocal++;
      this.held.set(local, { kind: op === 'exportBegin' ? 'export' : op, leader, remote: value as number });
      return local;
    }
    if (op === 'closeIterator' || op === 'exportCancel' || op === 'exportFinish') this.held.delete(args[0] as number);
    if (op === 'releaseSnapshot') this.held.delete(args[1] as number);
    return value;
  }

  async call(op: string, args: unknown[]): Promise<unknown> {
    if (this.closed) throw new StrataError('LEVEL_DATABASE_NOT_OPEN', 'Database is not open');
    if (op === 'close') {
      await this.close();
      return undefined;
    }
    for (let attempt = 0; ; attempt++) {
      if (this.closed) throw new StrataError('LEVEL_DATABASE_NOT_OPEN', 'Database is not open');
      if (!this.mine && this.leader === undefined) await this.leaderKnown();
      const mine = this.mine;
      const leader = mine ? this.id : this.leader!;
      const remote = this.toRemote(op, args, leader);
      if (remote === undefined) return undefined;
      let value: unknown;
      try {
        value = mine ? await mine.link.call(op, CURSOR_OPS.has(op) ? remote : [mine.handle, ...remote.slice(1)]) : await this.forward(op, remote);
      } catch (e) {
        if ((e as { code?: string }).code !== 'LEVEL_CONNECTION_LOST' || !RESENDABLE.has(op) || attempt >= 3) throw e;
        continue;
      }
      return this.fromRemote(op, args, value, leader);
    }
  }

  private forward(op: string, args: unknown[]): Promise<unknown> {
    const leader = this.leader!;
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject, leader });
      this.post({ t: 'call', from: this.id, leader, id, op, args });
    });
  }

  /** The engine behind `link` is gone (its worker was terminated): every sharer of this
   * context that led through it stops leading at once (its calls reject; the next tab in the
   * queue leads) instead of answering with a dead engine. */
  static abandonAll(link: Link): void {
    for (const set of TabLink.open_.values()) {
      for (const t of [...set]) {
        if (t.mine?.link === link) {
          t.mine = undefined;
          t.post({ t: 'bye', id: t.id });
          t.shutdown();
        }
      }
    }
  }

  /** Leaves the sharing: a leader closes its engine's database and lets the next tab lead. */
  private async close(): Promise<void> {
    if (this.closed) return;
    // Snapshots still held (a Db's close does not release them one by one) are released on
    // the engine that holds them, if it is still the leader.
    for (const [local, h] of [...this.held]) {
      if (h.kind === 'snapshot' && h.leader === (this.mine ? this.id : this.leader)) await this.call('releaseSnapshot', [0, local]).catch(() => {});
    }
    this.closed = true;
    const mine = this.mine;
    this.mine = undefined;
    try {
      if (mine) await mine.link.call('close', [mine.handle]);
    } finally {
      if (mine) {
        mine.link.release?.();
        this.post({ t: 'bye', id: this.id });
      }
      this.shutdown();
    }
  }

  private shutdown(): void {
    this.closed = true;
    clearInterval(this.reaper);
    this.reaper = undefined;
    this.heldFor.clear();
    this.held.clear();
    TabLink.open_.get(this.location)?.delete(this);
    this.abort.abort();
    this.unlock?.();
    for (const p of this.pending.values()) p.reject(new StrataError('LEVEL_DATABASE_NOT_OPEN', 'Database is not open'));
    this.pending.clear();
    clearTimeout(this.poll);
    this.poll = undefined;
    this.wake();
    // While opening, the channel stays open until the open is undone (queueForLead).
    if (!this.opening) this.closeChannel();
  }
}
