// OPFS storage for a dedicated worker: a pool of pre-opened files, one per database file.
//
// OPFS sync access handles are synchronous to use but asynchronous to open, while the engine
// needs files synchronously. So every file of the pool stays open, each one's logical path is
// kept in a 4 KiB header at its start, and spare (unnamed) files are opened ahead of need:
// `prepare()` runs before each engine call and tops the spares up. Creating a file names a
// spare; removing it clears the name; renaming rewrites the name with a higher generation
// (after a crash between the two header writes of a replacing rename, the higher generation
// wins). A pool lives in `strata/<location>/` of the origin's OPFS root. `LOCK.sah` is opened
// first; OPFS allows one sync access handle per file, so a second worker or tab opening the
// same database gets `NoModificationAllowedError`, reported as LEVEL_LOCKED; a closed tab
// releases its handles. Needs no COOP/COEP headers (no SharedArrayBuffer).
//
// Bounded handles (Safari allows about 250 open sync access handles per page): at most
// `maxHandles` (default 200) are open. Beyond that, sealed tables (`.ldb`/`.sst` with no
// writer) are PARKED: their handle is closed and reads go through a `File` snapshot with
// FileReaderSync (a table never changes once written). Parking happens in `prepare()`, least
// recently used first, and at open (tables beyond the bound start parked: their headers are read
// from `File`s, not handles). A parked file that the engine removes (or a rename replaces) is
// named in the journal `free.jnl` (one synchronous write), dropped from the engine's view at
// once, and deleted from OPFS by the next `prepare()`; a journal left by a crash is replayed at
// open (an entry deletes its file only when the file still carries that generation).

import { childrenOf, hostError, parentOf, type StorageHost } from './host.js';

const HEADER = 4096;
const MAGIC = 0x53_54_52_31; // "STR1"
const SPARES_LOW = 24;
/** What Firefox (153 ESR) throws from a sync access handle's truncate() to a larger size at the
 * origin's quota: an exception with this name and no message, where Chromium throws
 * QuotaExceededError. (Its write() at the quota writes nothing and returns 0.) */
const FIREFOX_NO_SPACE = 'NS_ERROR_FILE_NO_DEVICE_SPACE';
const SPARES_HIGH = 48;
/** Bytes of parked tables kept in memory after a whole-file read (least recently used go). */
const PARKED_CACHE = 32 * 1024 * 1024;

interface SyncHandle {
  read(buf: Uint8Array, opts: { at: number }): number;
  write(buf: Uint8Array, opts: { at: number }): number;
  truncate(size: number): void;
  getSize(): number;
  flush(): void;
  close(): void;
}

interface Slot {
  name: string;
  /** Open sync access handle, or null when the slot is parked. */
  handle: SyncHandle | null;
  /** A parked slot's content (header included). */
  file: File | null;
  /** A parked slot's bytes after the header, read whole on first use (see PARKED_CACHE). */
  bytes?: Uint8Array | null;
  path: string;
  gen: number;
  /** Open write/append descriptors (a slot with writers is never parked). */
  writers: number;
  /** Last use, for least-recently-used parking. */
  used: number;
}

interface Fd {
  slot: Slot;
  pos: number;
  writer: boolean;
}

/** Pool options. */
export interface OpfsOptions {
  /** Most sync access handles open at once, spares and the lock included (default 200,
   * at least 64). */
  maxHandles?: number;
  /** `default`: every write reaches its OPFS file before the engine call returns (a write
   * acknowledged survives the tab's crash, as LevelDB's unsynced writes survive a process
   * crash). `relaxed`: appends to the write-ahead log are gathered in memory and handed to
   * OPFS when the worker's current task ends (a timer), when 256 KiB are gathered, at any
   * sync, before an operation on that log file, between engine calls that need the pool
   * prepared, and at close: acknowledged writes of the last
   * moments can be lost if the tab dies, never reordered (the log keeps a prefix). A gathered
   * write that then fails fails every later call. */
  durability?: Durability;
}

export type Durability = 'default' | 'relaxed';

/** Log bytes gathered under durability `relaxed` before they are written at once. */
const WRITE_BEHIND_MAX = 256 * 1024;

/** Appends gathered for one log file (durability `relaxed`): contiguous, from `at`. */
interface WriteBehind {
  slot: Slot;
  at: number;
  chunks: Uint8Array[];
  bytes: number;
}

const DEFAULT_MAX_HANDLES = 200;
const JOURNAL = 'free.jnl';

function isTable(path: string): boolean {
  return path.endsWith('.ldb') || path.endsWith('.sst');
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** A slot's header: the path it holds and the generation of that name, or undefined for a
 * spare (or a header torn by a crash: its checksum fails). */
function parseHeader(h: Uint8Array): { path: string; gen: number } | undefined {
  if (h.length < 16) return undefined;
  const view = new DataView(h.buffer, h.byteOffset, h.byteLength);
  if (view.getUint32(0, true) !== MAGIC) return undefined;
  const len = view.getUint32(12, true);
  if (len > HEADER - 20 || 20 + len > h.length) return undefined;
  if (fnv(h.subarray(0, 16 + len)) !== view.getUint32(16 + len, true)) return undefined;
  return { gen: view.getFloat64(4, true), path: decoder.decode(h.subarray(16, 16 + len)) };
}

/** The journal's entries (`N.sah gen` lines): slot name -> generation. */
function parseJournal(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split('\n')) {
    const m = /^(\d+\.sah) (\d+)$/.exec(line);
    if (m) out.set(m[1]!, Number(m[2]));
  }
  return out;
}
const openPools = new Set<string>();

function fnv(bytes: Uint8Array): number {
  let h = 0x811c9dc5;
  for (const b of bytes) h = Math.imul(h ^ b, 0x01000193) >>> 0;
  return h;
}

function normalize(path: string): string {
  return path.replace(/\/+/g, '/').replace(/\/$/, '');
}

export class OpfsPool implements StorageHost {
  private readonly byPath = new Map<string, Slot>();
  private readonly spares: Slot[] = [];
  /** Every handle the pool opened, whatever became of its slot: closing them all is what
   * releases the database to other workers and tabs. */
  private readonly handles = new Set<SyncHandle>();
  /** Parked slots the engine removed, to delete from OPFS (named in the journal). */
  private pendingDeletes: Slot[] = [];
  private tick = 0;
  private readonly parkedCache = new Map<Slot, Uint8Array>();
  private parkedCacheBytes = 0;
  private readonly maxHandles: number;
  private readonly fds = new Map<number, Fd>();
  private readonly dirs = new Set<string>();
  private nextFd = 1;
  private nextName = 0;
  private gen = 0;
  private closed = false;
  private readonly relaxed: boolean;
  private behind: WriteBehind | null = null;
  private behindTimer: ReturnType<typeof setTimeout> | undefined;
  /** A gathered write that failed after its calls returned: every later call fails with it. */
  private behindError: unknown;

  private constructor(
    private readonly key: string,
    private readonly dir: FileSystemDirectoryHandle,
    private readonly lockHandle: SyncHandle,
    private readonly journal: SyncHandle,
    options: OpfsOptions,
  ) {
    const m = options.maxHandles ?? DEFAULT_MAX_HANDLES;
    if (!Number.isInteger(m) || m < 64) throw hostError('EINVAL', `maxHandles must be an integer >= 64, not ${m}`);
    this.maxHandles = m;
    const d = options.durability ?? 'default';
    if (d !== 'default' && d !== 'relaxed') throw hostError('EINVAL', `durability must be 'default' or 'relaxed', not ${String(d)}`);
    this.relaxed = d === 'relaxed';
  }

  /** Writes what `relaxed` durability gathered (first of all, before any other operation);
   * a failure is kept and thrown by every later call. */
  private drain(): void {
    if (this.behindError !== undefined) {
      const e = this.behindError as { message?: string; name?: string; code?: string };
      // An exhausted quota stays a NoSpace error (Chromium's QuotaExceededError, Firefox's ENOSPC).
      const code = e?.code === 'ENOSPC' || e?.name === 'QuotaExceededError' ? 'ENOSPC' : 'EIO';
      const what = e?.message !== undefined ? `${e.message}${e.name && !e.message.includes(e.name) ? ` (${e.name})` : ''}` : String(e);
      throw hostError(code, `an earlier write to the log, already acknowledged (durability 'relaxed'), failed: ${what}`);
    }
    const b = this.behind;
    if (!b) return;
    this.behind = null;
    let data = b.chunks[0]!;
    if (b.chunks.length > 1) {
      data = new Uint8Array(b.bytes);
      let o = 0;
      for (const c of b.chunks) {
        data.set(c, o);
        o += c.length;
      }
    }
    try {
      writeAll(this.handleOf(b.slot), data, b.at);
    } catch (e) {
      this.behindError = e;
      throw e;
    }
  }

  /** Before an operation on `slot` alone (a read, a size, a close, a remove): writes what was
   * gathered for that file first; other files' operations leave the gathered log alone
   * (so a get between puts does not end the gathering). A failed gathered write still
   * fails every call. */
  private drainFor(slot: Slot | undefined): void {
    if (this.behindError !== undefined || (slot !== undefined && this.behind?.slot === slot)) this.drain();
  }

  /** Gathers a log append (durability `relaxed`); written by `drain`. */
  private gather(slot: Slot, at: number, data: Uint8Array): void {
    // After a gathered write failed, gathering more would acknowledge a write that can never
    // reach the file (the log would have a gap): fail it with the first failure.
    if (this.behindError !== undefined) this.drain();
    let b = this.behind;
    if (b && (b.slot !== slot || b.at + b.bytes !== at)) {
      this.drain();
      b = null;
    }
    if (!b) {
      b = { slot, at, chunks: [], bytes: 0 };
      this.behind = b;
    }
    // A copy: the engine's buffer is wasm memory, reused after the call.
    b.chunks.push(data.slice());
    b.bytes += data.length;
    if (b.bytes >= WRITE_BEHIND_MAX) {
      this.drain();
    } else if (this.behindTimer === undefined) {
      this.behindTimer = setTimeout(() => {
        this.behindTimer = undefined;
        try {
          if (!this.closed) this.drain();
        } catch {
          // Kept in behindError: the next call reports it.
        }
      }, 0);
    }
  }

  /** Pools by location, for tests and diagnostics (`OpfsPool.stats`). */
  private static readonly live = new Map<string, OpfsPool>();

  /** Of the open pool of `location`: handles open (the lock's and the journal's included),
   * named files, parked ones, spares, files awaiting deletion, and the bound. */
  static stats(location: string): { open: number; files: number; parked: number; spares: number; pending: number; maxHandles: number } | undefined {
    const p = OpfsPool.live.get(normalize(location));
    if (!p) return undefined;
    let parked = 0;
    for (const s of p.byPath.values()) if (s.handle === null) parked++;
    return { open: p.handles.size + 2, files: p.byPath.size, parked, spares: p.spares.length, pending: p.pendingDeletes.length, maxHandles: p.maxHandles };
  }

  /** Opens (creating if needed) the pool of database `location`. */
  static async open(location: string, options: OpfsOptions = {}): Promise<OpfsPool> {
    const key = normalize(location);
    if (openPools.has(key)) throw hostError('ELOCKED', `${location} is already open in this worker`);
    openPools.add(key);
    try {
      const root = await navigator.storage.getDirectory();
      let dir = await root.getDirectoryHandle('strata', { create: true });
      for (const part of key.split('/').filter((p) => p !== '' && p !== '.')) {
        dir = await dir.getDirectoryHandle(encodeURIComponent(part), { create: true });
      }
      const lockFile = await dir.getFileHandle('LOCK.sah', { create: true });
      const lock = await openHandle(lockFile, location);
      let pool: OpfsPool;
      try {
        const journal = await openHandle(await dir.getFileHandle(JOURNAL, { create: true }), location);
        try {
          pool = new OpfsPool(key, dir, lock, journal, options);
        } catch (e) {
          journal.close();
          throw e;
        }
      } catch (e) {
        lock.close();
        throw e;
      }
      try {
        await pool.load();
        await pool.prepare();
      } catch (e) {
        pool.closeHandles();
        throw e;
      }
      OpfsPool.live.set(key, pool);
      return pool;
    } catch (e) {
      openPools.delete(key);
      throw e;
    }
  }

  private async load(): Promise<void> {
    const names: string[] = [];
    for await (const [name, handle] of (this.dir as unknown as { entries(): AsyncIterable<[string, FileSystemHandle]> }).entries()) {
      if (handle.kind === 'file' && /^\d+\.sah$/.test(name)) names.push(name);
    }
    names.sort((a, b) => parseInt(a, 10) - parseInt(b, 10));
    // Files a crash left named in the journal: deleted, if they still carry that generation.
    const doomed = this.readJournal();
    // Headers first, from File snapshots (no handle needed): which files are tables.
    const slots: Slot[] = [];
    for (const name of names) {
      this.nextName = Math.max(this.nextName, parseInt(name, 10) + 1);
      const fh = await this.dir.getFileHandle(name);
      const file = await fh.getFile();
      const slot: Slot = { name, handle: null, file, path: '', gen: 0, writers: 0, used: 0 };
      this.parseHeader(slot, new Uint8Array(await file.slice(0, HEADER).arrayBuffer()));
      if (slot.path !== '' && doomed.get(name) === slot.gen) {
        // Deleted now, or (still locked by a handle closing elsewhere) by a later prepare();
        // either way the engine never sees it again.
        if (!(await this.deleteFile(name))) this.pendingDeletes.push(slot);
        continue;
      }
      slots.push(slot);
    }
    this.writeJournal();
    // Handles for every named file but the tables beyond the bound (the spares to come count
    // too); unnamed files beyond the spares needed are deleted.
    let budget = this.maxHandles - 2 - SPARES_HIGH;
    const named = slots.filter((s) => s.path !== '');
    for (const slot of [...named.filter((s) => !isTable(s.path)), ...named.filter((s) => isTable(s.path))]) {
      if (budget > 0 || !isTable(slot.path)) {
        await this.unpark(slot);
        budget--;
      }
    }
    for (const slot of slots) {
      if (slot.path === '') {
        if (this.spares.length < SPARES_HIGH) {
          await this.unpark(slot);
          this.spares.push(slot);
        } else {
          await this.deleteFile(slot.name); // an unnamed file left behind is harmless
        }
        continue;
      }
      this.gen = Math.max(this.gen, slot.gen);
      const other = this.byPath.get(slot.path);
      if (other === undefined) {
        this.byPath.set(slot.path, slot);
      } else {
        // A rename was interrupted: the newer name wins, the older file is free again.
        const [keep, drop] = other.gen > slot.gen ? [other, slot] : [slot, other];
        this.byPath.set(keep.path, keep);
        this.free(drop);
      }
    }
    for (const p of this.byPath.keys()) {
      for (let d = parentOf(p); d !== ''; d = parentOf(d)) this.dirs.add(d);
    }
  }

  /** Deletes an OPFS file; false when it is still locked (a handle just closed, here or in
   * another worker, releases its lock asynchronously): try again later. */
  private async deleteFile(name: string): Promise<boolean> {
    try {
      await this.dir.removeEntry(name);
      return true;
    } catch (e) {
      const n = (e as { name?: string }).name;
      if (n === 'NotFoundError') return true;
      if (n === 'NoModificationAllowedError' || n === 'InvalidModificationError' || n === 'InvalidStateError') return false;
      throw e;
    }
  }

  /** The journal holds exactly the named files awaiting deletion. */
  private writeJournal(): void {
    const text = this.pendingDeletes.filter((s) => s.gen > 0).map((s) => `${s.name} ${s.gen}\n`).join('');
    this.journal.truncate(0);
    if (text !== '') writeAll(this.journal, encoder.encode(text), 0);
    this.journal.flush();
  }

  /** A parked table's bytes (after the header), from the bounded cache or read whole now. */
  private parkedBytes(slot: Slot): Uint8Array {
    const hit = this.parkedCache.get(slot);
    if (hit) {
      this.parkedCache.delete(slot); // most recently used last
      this.parkedCache.set(slot, hit);
      return hit;
    }
    const file = slot.file!;
    const bytes = file.size > HEADER ? new Uint8Array(new FileReaderSync().readAsArrayBuffer(file.slice(HEADER))) : new Uint8Array(0);
    this.parkedCache.set(slot, bytes);
    this.parkedCacheBytes += bytes.length;
    for (const [s, b] of this.parkedCache) {
      if (this.parkedCacheBytes <= PARKED_CACHE || s === slot) break;
      this.parkedCache.delete(s);
      this.parkedCacheBytes -= b.length;
    }
    return bytes;
  }

  /** Drops a slot's cached bytes (unparked, removed or replaced). */
  private uncache(slot: Slot): void {
    const b = this.parkedCache.get(slot);
    if (!b) return;
    this.parkedCache.delete(slot);
    this.parkedCacheBytes -= b.length;
  }

  private async unpark(slot: Slot): Promise<void> {
    this.uncache(slot);
    slot.handle = await openHandle(await this.dir.getFileHandle(slot.name), this.key);
    slot.file = null;
    this.handles.add(slot.handle);
  }

  /** The journal's entries: slot name -> generation. */
  private readJournal(): Map<string, number> {
    const size = this.journal.getSize();
    const out = new Map<string, number>();
    if (size === 0) return out;
    const buf = new Uint8Array(size);
    this.journal.read(buf, { at: 0 });
    return parseJournal(decoder.decode(buf));
  }

  private parseHeader(slot: Slot, h: Uint8Array): void {
    const named = parseHeader(h);
    if (!named) return;
    slot.gen = named.gen;
    slot.path = named.path;
  }

  /** A slot's handle, which mutating operations need (parked slots are sealed tables). */
  private handleOf(slot: Slot): SyncHandle {
    if (!slot.handle) throw hostError('EIO', `${slot.path}: a parked table cannot be written`);
    return slot.handle;
  }

  private slotSize(slot: Slot): number {
    return slot.handle ? slot.handle.getSize() : slot.file!.size;
  }

  private writeHeader(slot: Slot, path: string, gen: number): void {
    const p = encoder.encode(path);
    if (p.length > HEADER - 20) throw hostError('EINVAL', `path too long for OPFS: ${path}`);
    const h = new Uint8Array(20 + p.length);
    const view = new DataView(h.buffer);
    view.setUint32(0, MAGIC, true);
    view.setFloat64(4, gen, true);
    view.setUint32(12, p.length, true);
    h.set(p, 16);
    view.setUint32(16 + p.length, fnv(h.subarray(0, 16 + p.length)), true);
    const handle = this.handleOf(slot);
    writeAll(handle, h, 0);
    handle.flush();
    slot.path = path;
    slot.gen = gen;
  }

  private free(slot: Slot): void {
    this.uncache(slot);
    if (!slot.handle) {
      // Parked: named in the journal now (durable), deleted from OPFS by the next prepare().
      const line = encoder.encode(`${slot.name} ${slot.gen}\n`);
      writeAll(this.journal, line, this.journal.getSize());
      this.journal.flush();
      slot.path = '';
      this.pendingDeletes.push(slot);
      return;
    }
    const handle = slot.handle;
    slot.path = '';
    slot.gen = 0;
    try {
      handle.truncate(0);
      handle.flush();
    } finally {
      this.spares.push(slot);
    }
  }

  /** True when `prepare()` would do nothing now: no parked file to delete, the spares between
   * their marks, no handle to park. A caller may then run the next engine call at once. */
  prepared(): boolean {
    return (
      this.closed ||
      // A failed gathered write: the call goes through prepare, which throws it.
      (this.behindError === undefined &&
        this.pendingDeletes.length === 0 &&
        this.spares.length >= SPARES_LOW &&
        this.spares.length <= SPARES_HIGH &&
        this.handles.size + 2 <= this.maxHandles)
    );
  }

  /** Between engine calls: deletes what parked files the engine removed, parks tables while
   * more than `maxHandles` are open, and opens spare files for the next call. */
  async prepare(): Promise<void> {
    if (this.closed) return;
    this.drain();
    if (this.pendingDeletes.length > 0) {
      const doomed = this.pendingDeletes;
      this.pendingDeletes = [];
      for (const slot of doomed) {
        if (!(await this.deleteFile(slot.name))) this.pendingDeletes.push(slot);
      }
      this.writeJournal();
    }
    // Between the marks the spares stay as they are; above the high mark they come down to it
    // (not back up to where they were: trimmed, then topped up, a spare was closed, a new one
    // opened, and the trimmed file left pending).
    const spareTarget = this.spares.length >= SPARES_LOW ? Math.min(this.spares.length, SPARES_HIGH) : SPARES_HIGH;
    let excess = this.handles.size + 2 + (spareTarget - this.spares.length) - this.maxHandles;
    if (excess > 0) {
      const busy = new Set([...this.fds.values()].filter((f) => f.writer).map((f) => f.slot));
      const candidates = [...this.byPath.values()]
        .filter((s) => s.handle !== null && isTable(s.path) && s.writers === 0 && !busy.has(s))
        .sort((a, b) => a.used - b.used);
      for (const slot of candidates) {
        if (excess <= 0) break;
        const handle = slot.handle!;
        handle.flush();
        handle.close();
        this.handles.delete(handle);
        slot.handle = null;
        slot.file = await (await this.dir.getFileHandle(slot.name)).getFile();
        excess--;
        if (this.closed) return;
      }
    }
    // Spares beyond the high mark (files the engine removed while open) are deleted.
    while (this.spares.length > SPARES_HIGH) {
      const spare = this.spares.pop()!;
      spare.handle!.close();
      this.handles.delete(spare.handle!);
      spare.handle = null;
      // Unnamed (gen 0): not journaled; deleted once its lock is released.
      spare.gen = 0;
      this.pendingDeletes.push(spare);
    }
    while (this.spares.length < spareTarget && this.handles.size + 2 < this.maxHandles) {
      const name = `${this.nextName++}.sah`;
      const fh = await this.dir.getFileHandle(name, { create: true });
      const handle = await openHandle(fh, this.key);
      if (this.closed) {
        // The database was closed while this prepare() awaited (an idle step's prepare, say):
        // a handle opened now would outlive the pool and keep its folder locked.
        handle.close();
        return;
      }
      this.handles.add(handle);
      handle.truncate(0);
      this.spares.push({ name, handle, file: null, path: '', gen: 0, writers: 0, used: 0 });
    }
  }

  /** Closes every handle (the database is closed). */
  async release(): Promise<void> {
    try {
      if (!this.closed) this.drain();
    } finally {
      this.closeHandles();
    }
  }

  private closeHandles(): void {
    if (this.closed) return;
    this.closed = true;
    this.parkedCache.clear();
    this.parkedCacheBytes = 0;
    OpfsPool.live.delete(this.key);
    for (const h of [...this.handles, this.journal, this.lockHandle]) {
      try {
        h.close();
      } catch {
        // Closing is all that is left to do; one handle failing must not keep the others.
      }
    }
    openPools.delete(this.key);
  }

  private slot(path: string): Slot {
    const s = this.byPath.get(normalize(path));
    if (!s) throw hostError('ENOENT', `${path}: no such file`);
    return s;
  }

  private fd(fd: number): Fd {
    const f = this.fds.get(fd);
    if (!f) throw hostError('EBADF', `bad file descriptor ${fd}`);
    return f;
  }

  private createSlot(path: string): Slot {
    const spare = this.spares.pop();
    if (!spare) throw hostError('EMFILE', 'OPFS pool has no spare file handles (too many files created in one call)');
    try {
      this.writeHeader(spare, path, ++this.gen);
      // The file reaches its header's size here, so that running out of space (e.g. Firefox's
      // truncate at the quota) leaves no file named in memory that is not on disk.
      resize(this.handleOf(spare), HEADER);
    } catch (e) {
      // E.g. QuotaExceededError: the file was not created; the handle stays a spare (its
      // header, if written at all, is cleared so a reload does not see the file either).
      try {
        spare.handle?.truncate(0);
      } catch {
        // A header left behind names an empty file, which the engine ignores or deletes.
      }
      spare.path = '';
      spare.gen = 0;
      this.spares.push(spare);
      throw e;
    }
    this.byPath.set(path, spare);
    return spare;
  }

  open(path: string, mode: 'r' | 'w' | 'a'): number {
    const p = normalize(path);
    this.drainFor(this.byPath.get(p));
    let slot = this.byPath.get(p);
    let pos = 0;
    if (mode === 'r') {
      if (!slot) throw hostError('ENOENT', `${path}: no such file`);
    } else if (!slot) {
      slot = this.createSlot(p);
    } else if (mode === 'w') {
      resize(this.handleOf(slot), HEADER);
    } else {
      pos = Math.max(0, this.handleOf(slot).getSize() - HEADER);
    }
    if (slot.handle && slot.handle.getSize() < HEADER) resize(slot.handle, HEADER);
    const writer = mode !== 'r';
    if (writer) slot.writers++;
    slot.used = ++this.tick;
    const fd = this.nextFd++;
    this.fds.set(fd, { slot, pos, writer });
    return fd;
  }

  read(fd: number, offset: number, buf: Uint8Array): number {
    const f = this.fd(fd);
    this.drainFor(f.slot);
    f.slot.used = ++this.tick;
    const handle = f.slot.handle;
    if (!handle) {
      // Parked: the table's bytes, read whole from its File snapshot on first use (one
      // FileReaderSync read instead of one per block run: a scan reads every block of it).
      const bytes = this.parkedBytes(f.slot);
      const start = Math.min(offset, bytes.length);
      const end = Math.min(start + buf.length, bytes.length);
      buf.set(bytes.subarray(start, end));
      return end - start;
    }
    let done = 0;
    while (done < buf.length) {
      const n = handle.read(buf.subarray(done), { at: HEADER + offset + done });
      if (n <= 0) break;
      done += n;
    }
    return done;
  }

  write(fd: number, data: Uint8Array): void {
    const f = this.fd(fd);
    if (this.relaxed && f.slot.path.endsWith('.log') && data.length > 0) {
      this.handleOf(f.slot);
      this.gather(f.slot, HEADER + f.pos, data);
    } else {
      this.drainFor(f.slot);
      writeAll(this.handleOf(f.slot), data, HEADER + f.pos);
    }
    f.pos += data.length;
  }

  sync(fd: number): void {
    this.drain();
    const slot = this.fd(fd).slot;
    if (slot.handle) slot.handle.flush();
  }

  size(fd: number): number {
    this.drainFor(this.fd(fd).slot);
    return Math.max(0, this.slotSize(this.fd(fd).slot) - HEADER);
  }

  close(fd: number): void {
    const f = this.fds.get(fd);
    this.drainFor(f?.slot);
    if (f?.writer) f.slot.writers--;
    this.fds.delete(fd);
  }

  /** A file of the pool as a Blob of its OPFS file (after the pool's header), not read into
   * memory: the file's handle is closed and the slot parked (an export's zip, handed over
   * just before the pool is released). It stays readable while the file is unchanged. */
  async blob(path: string): Promise<Blob> {
    const slot = this.slot(path);
    this.drainFor(slot);
    if (slot.writers > 0) throw hostError('EBUSY', `${path} is still being written`);
    if (slot.handle) {
      const handle = slot.handle;
      handle.flush();
      handle.close();
      this.handles.delete(handle);
      slot.handle = null;
    }
    const file = await (await this.dir.getFileHandle(slot.name)).getFile();
    slot.file = file;
    return file.slice(HEADER, file.size, 'application/octet-stream');
  }

  /** Every file's path (the engine's names, relative to the OPFS root of the pools). */
  paths(): string[] {
    return [...this.byPath.keys()];
  }

  exists(path: string): boolean {
    const p = normalize(path);
    return this.byPath.has(p) || this.dirs.has(p);
  }

  fileSize(path: string): number {
    this.drainFor(this.byPath.get(normalize(path)));
    return Math.max(0, this.slotSize(this.slot(path)) - HEADER);
  }

  list(dir: string): string[] {
    const p = normalize(dir);
    // A file is not a folder (the engine tells them apart by whether listing succeeds).
    if (this.byPath.has(p)) throw hostError('ENOTDIR', `${dir}: not a folder`);
    return childrenOf([...this.byPath.keys(), ...this.dirs], p);
  }

  remove(path: string): void {
    const p = normalize(path);
    this.drainFor(this.byPath.get(p));
    const s = this.slot(p);
    this.byPath.delete(p);
    this.free(s);
  }

  rename(from: string, to: string): void {
    const f = normalize(from);
    const t = normalize(to);
    this.drainFor(this.byPath.get(f));
    this.drainFor(this.byPath.get(t));
    const s = this.slot(f);
    const old = this.byPath.get(t);
    this.writeHeader(s, t, ++this.gen);
    this.byPath.delete(f);
    this.byPath.set(t, s);
    if (old && old !== s) this.free(old);
  }

  mkdir(path: string): void {
    for (let d = normalize(path); d !== ''; d = parentOf(d)) this.dirs.add(d);
  }

  lock(path: string, shared: boolean): unknown {
    // The pool's own LOCK.sah handle is the lock; this only records the engine's view.
    if (shared && !this.byPath.has(normalize(path))) return null;
    if (!shared && !this.byPath.has(normalize(path))) {
      this.createSlot(normalize(path));
    }
    return { path };
  }

  unlock(_token: unknown): void {}

  syncDir(_path: string): void {}
}

/** Writes all of `data` at `at`. Chromium throws QuotaExceededError when the origin's quota is
 * exhausted; Firefox writes nothing, returns 0 and throws nothing: the same condition, reported
 * as ENOSPC (kind NoSpace) naming what Firefox did. A write is never left silently short. */
function writeAll(handle: SyncHandle, data: Uint8Array, at: number): void {
  let done = 0;
  while (done < data.length) {
    const n = handle.write(data.subarray(done), { at: at + done });
    if (n <= 0) {
      throw hostError(
        'ENOSPC',
        `OPFS write() wrote 0 of ${data.length - done} bytes (Firefox's answer at the origin's quota; Chromium throws QuotaExceededError)`,
      );
    }
    done += n;
  }
}

/** truncate() to `size`, with Firefox's out-of-quota exception reported as ENOSPC. */
function resize(handle: SyncHandle, size: number): void {
  try {
    handle.truncate(size);
  } catch (e) {
    if ((e as { name?: string }).name === FIREFOX_NO_SPACE) {
      throw hostError('ENOSPC', `OPFS truncate() to ${size} bytes: ${FIREFOX_NO_SPACE} (Firefox's answer at the origin's quota)`);
    }
    throw e;
  }
}

async function openHandle(fh: FileSystemFileHandle, location: string): Promise<SyncHandle> {
  try {
    return (await (fh as unknown as { createSyncAccessHandle(): Promise<SyncHandle> }).createSyncAccessHandle()) as SyncHandle;
  } catch (e) {
    const name = (e as { name?: string }).name;
    if (name === 'NoModificationAllowedError' || name === 'InvalidStateError') {
      throw hostError('ELOCKED', `${location} is open in another worker or tab`);
    }
    throw e;
  }
}

/** The files of database `location` as `File` snapshots, read from its pool without opening
 * it (no sync access handle, no lock: the engine that holds the pool keeps it): `path` is the
 * engine's path, `file` the bytes after the slot's header. For readers beside that engine,
 * e.g. map helpers opening the world with storage `files`, read-only. Slots are taken as an
 * open takes them: spares and torn headers are left out, and so are slots the journal names
 * (removed by the engine, not yet deleted); of two slots naming one path (a crash between a
 * replacing rename's two header writes) the higher generation wins, on a tie the slot with
 * the higher number; a slot deleted while it is listed is left out. A snapshot never
 * changes: a file the engine removes later reads as it was, or fails (NotReadableError),
 * never torn. Rejects with ENOENT when there is no such pool. */
export async function snapshotOpfs(location: string): Promise<Array<{ path: string; file: Blob }>> {
  const root = await navigator.storage.getDirectory();
  let dir: FileSystemDirectoryHandle;
  try {
    dir = await root.getDirectoryHandle('strata');
    for (const part of normalize(location).split('/').filter((p) => p !== '' && p !== '.')) dir = await dir.getDirectoryHandle(encodeURIComponent(part));
  } catch (e) {
    if ((e as { name?: string }).name === 'NotFoundError') throw hostError('ENOENT', `${location}: no database in OPFS`);
    throw e;
  }
  // The rules of OpfsPool.load(), in its order: slots by number, journal-named ones out,
  // then of two naming one path the higher generation (on a tie, the later slot).
  let doomed = new Map<string, number>();
  const names: Array<[string, FileSystemFileHandle]> = [];
  for await (const [name, handle] of (dir as unknown as { entries(): AsyncIterable<[string, FileSystemHandle]> }).entries()) {
    if (handle.kind !== 'file') continue;
    if (name === JOURNAL) doomed = parseJournal(await (await (handle as FileSystemFileHandle).getFile()).text());
    else if (/^\d+\.sah$/.test(name)) names.push([name, handle as FileSystemFileHandle]);
  }
  names.sort((a, b) => parseInt(a[0], 10) - parseInt(b[0], 10));
  const byPath = new Map<string, { gen: number; file: Blob }>();
  for (const [name, handle] of names) {
    let file: File;
    try {
      file = await handle.getFile();
    } catch (e) {
      // Deleted since the listing (a removed file's pending delete): not part of the database.
      if ((e as { name?: string }).name === 'NotFoundError') continue;
      throw e;
    }
    const named = parseHeader(new Uint8Array(await file.slice(0, HEADER).arrayBuffer()));
    if (!named || doomed.get(name) === named.gen) continue;
    const other = byPath.get(named.path);
    if (other && other.gen > named.gen) continue;
    byPath.set(named.path, { gen: named.gen, file: file.slice(HEADER, Math.max(HEADER, file.size)) });
  }
  const out = [...byPath].map(([path, { file }]) => ({ path, file }));
  return out.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

/** Removes a database's pool (it must not be open). */
export async function destroyOpfs(location: string): Promise<void> {
  const root = await navigator.storage.getDirectory();
  let dir: FileSystemDirectoryHandle;
  try {
    dir = await root.getDirectoryHandle('strata');
  } catch {
    return;
  }
  const parts = normalize(location).split('/').filter((p) => p !== '' && p !== '.');
  const last = parts.pop();
  if (last === undefined) return;
  try {
    for (const part of parts) dir = await dir.getDirectoryHandle(encodeURIComponent(part));
  } catch (e) {
    if ((e as { name?: string }).name !== 'NotFoundError') throw e;
    return;
  }
  // Handles closed just now (the database's close, or a terminated worker) release their
  // locks asynchronously: a removal that finds a file still locked is retried for a moment.
  const deadline = Date.now() + 3000;
  for (;;) {
    try {
      await dir.removeEntry(encodeURIComponent(last), { recursive: true });
      return;
    } catch (e) {
      const name = (e as { name?: string }).name;
      if (name === 'NotFoundError') return;
      if ((name !== 'NoModificationAllowedError' && name !== 'InvalidModificationError') || Date.now() > deadline) throw e;
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}
