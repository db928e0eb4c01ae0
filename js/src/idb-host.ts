// The IndexedDB store: the fallback where OPFS sync access handles are missing (WebKitGTK
// answers createSyncAccessHandle() with NotSupportedError, and its automation sessions answer
// any OPFS call with UnknownError; older Safari has no OPFS at all). A database's files live in
// this host's memory while it is open, loaded from IndexedDB at open, and go back to IndexedDB
// in flushes.
//
// Invariants:
// - One flush is ONE IndexedDB transaction holding every change since the previous flush, and
//   its contents are captured synchronously, between two engine steps (engine calls are
//   synchronous). So IndexedDB always holds the exact state of every file at one such moment:
//   a crash or reload sees a state the engine could have crashed in, never a mix. Flushes run
//   one at a time, in order.
// - An operation's promise resolves only once a flush holding everything it changed has
//   committed (`settle`, called right after each operation): strict durability when it synced
//   something (a sync write's log, a table, the MANIFEST, a rename), relaxed otherwise. So an
//   acknowledged write survives its tab closing or crashing, and a synced one survives the
//   machine too: LevelDB's own guarantees. The operations of one burst share one flush (group
//   commit). Changes made outside an operation (an idle compaction step) are flushed within
//   IDLE_FLUSH_MS, and everything at close.
// - A flush that fails (the origin's quota) is sticky: every later write fails with that
//   error (reads go on), and IndexedDB keeps the last complete flush.
// - One open per database across tabs and workers: a Web Lock `strata-idb:<location>` held
//   while open (LEVEL_LOCKED when another context holds it). `release()` (and `destroy`)
//   resolve only once the lock is free again: browsers release a lock in a later task, and
//   an open right after (an export's cancel destroying its scratch store) must not find it
//   held by the store just closed.
// - `destroy` leaves no record of the folder: every file's and every folder's, in one flush.
//
// Layout (IndexedDB database `strata-files`): store `files`, path -> {file: true} or
// {dir: true} (written when a file or folder is created, renamed or removed); store `chunks`,
// [path, index] -> the file's bytes [index*CHUNK, (index+1)*CHUNK); a file's size is where
// its last chunk ends (files are written front to back), so a write to the end of a log
// rewrites one small chunk and nothing else.

import { childrenOf, hostError, parentOf, type StorageHost } from './host.js';

const DB_NAME = 'strata-files';
const CHUNK = 4 * 1024;
const IDLE_FLUSH_MS = 100;

interface MemFile {
  data: Uint8Array;
  size: number;
  /** Chunk indexes written since the last flush. */
  dirty: Set<number>;
}

interface Fd {
  path: string;
  file: MemFile;
  pos: number;
}

interface LockManagerLike {
  request(name: string, options: { ifAvailable: boolean }, cb: (lock: unknown) => Promise<void>): Promise<void>;
}

export interface IdbOptions {
  /** The IndexedDB factory (default `indexedDB`; tests pass another). */
  indexedDB?: IDBFactory;
  /** Web Locks (default `navigator.locks` where it exists). */
  locks?: LockManagerLike | null;
}

/** Databases open in this context (a second open is LEVEL_LOCKED even without Web Locks). */
const openHere = new Set<string>();

function normalize(path: string): string {
  return path.split('/').filter((p) => p !== '' && p !== '.').join('/');
}

function done(req: IDBRequest): Promise<unknown> {
  return new Promise((resolve, reject) => {
    req.onsuccess = () => resolve(req.result);
    req.onerror = () => reject(req.error);
  });
}

function committed(tx: IDBTransaction): Promise<void> {
  return new Promise((resolve, reject) => {
    tx.oncomplete = () => resolve();
    tx.onabort = () => reject(tx.error ?? new DOMException('IndexedDB transaction aborted', 'AbortError'));
    tx.onerror = (ev) => ev.preventDefault(); // the abort that follows reports it
  });
}

function openIdb(factory: IDBFactory): Promise<IDBDatabase> {
  return new Promise((resolve, reject) => {
    const req = factory.open(DB_NAME, 1);
    req.onupgradeneeded = () => {
      const db = req.result;
      if (!db.objectStoreNames.contains('files')) db.createObjectStore('files');
      if (!db.objectStoreNames.contains('chunks')) db.createObjectStore('chunks');
    };
    req.onsuccess = () => resolve(req.result);
    req.onerror = () => reject(req.error);
    req.onblocked = () => reject(hostError('ELOCKED', 'IndexedDB strata-files is blocked by an older version open elsewhere'));
  });
}

/** IndexedDB's errors as host errors (QuotaExceededError keeps its name: kind NoSpace). */
function idbError(e: unknown, what: string): Error {
  const name = (e as { name?: string })?.name;
  const detail = (e as Error)?.message ?? String(e);
  const message = `IndexedDB ${what}: ${name ?? 'Error'}${detail ? ` (${detail})` : ''}`;
  if (name === 'QuotaExceededError') return hostError('ENOSPC', `${message}: the origin's storage quota is exhausted`);
  return hostError('EIO', message);
}

/** The key range of every record under `prefix` (a database folder, with its trailing `/`). */
function pathRange(prefix: string): IDBKeyRange {
  return IDBKeyRange.bound(prefix, `${prefix}\uffff`);
}

function chunkRange(path: string): IDBKeyRange {
  return IDBKeyRange.bound([path], [path, Infinity]);
}

export class IdbHost implements StorageHost {
  private readonly files = new Map<string, MemFile>();
  private readonly dirs = new Set<string>();
  /** Paths whose stored records (meta and chunks) a flush deletes before writing. */
  private readonly removed = new Set<string>();
  /** Paths whose `files` record (a file, or a folder) a flush writes. */
  private readonly metaDirty = new Set<string>();
  private readonly fds = new Map<number, Fd>();
  private nextFd = 3;
  /** A change since the last capture was synced (the next flush is strict). */
  private durable = false;
  /** Anything changed since the last capture. */
  private changed = false;
  private waiters: Array<{ resolve(): void; reject(e: unknown): void }> = [];
  private timerMs = 0;
  private failure: Error | undefined;
  private chain: Promise<void> = Promise.resolve();
  private timer: ReturnType<typeof setTimeout> | undefined;
  private closed = false;
  /** Flushes committed, and bytes they wrote (tests and the benchmark page read these). */
  readonly stats = { flushes: 0, bytes: 0 };

  private constructor(
    private readonly db: IDBDatabase,
    readonly location: string,
    private readonly unlockTab: () => Promise<void> | void,
  ) {}

  /** Settles once the Web Lock is free again (after `abandon`). */
  private unlocked: Promise<void> | void = undefined;

  /** Opens the database folder `location`: takes its lock and loads its files. */
  static async open(location: string, options: IdbOptions = {}): Promise<IdbHost> {
    const factory = options.indexedDB ?? (globalThis as { indexedDB?: IDBFactory }).indexedDB;
    if (!factory) throw hostError('EROFS', 'this browser has neither OPFS sync access handles nor IndexedDB');
    const key = normalize(location);
    if (openHere.has(key)) throw hostError('ELOCKED', `${location} is already open in this worker`);
    openHere.add(key);
    let unlock = (): Promise<void> | void => {};
    try {
      const locks = options.locks !== undefined ? options.locks : ((globalThis as { navigator?: { locks?: LockManagerLike } }).navigator?.locks ?? null);
      if (locks) unlock = await holdLock(locks, `strata-idb:${key}`, location);
      const db = await openIdb(factory);
      const host = new IdbHost(db, key, unlock);
      try {
        await host.load();
      } catch (e) {
        db.close();
        throw e;
      }
      return host;
    } catch (e) {
      unlock();
      openHere.delete(key);
      throw e;
    }
  }

  /** Deletes every file and folder record of the database folder `location` (it must not be
   * open). */
  static async destroy(location: string, options: IdbOptions = {}): Promise<void> {
    const host = await IdbHost.open(location, options);
    try {
      for (const p of [...host.files.keys()]) host.remove(p);
      for (const d of [...host.dirs]) {
        host.dirs.delete(d);
        host.removed.add(d);
      }
      // A store holding only folders (an aborted export's scratch store: its files went with
      // the cancel) has no file removal marking it changed: the flush must still run.
      if (host.removed.size > 0) host.changed = true;
      await host.flush();
    } finally {
      host.abandon();
      await host.unlocked;
    }
  }

  private async load(): Promise<void> {
    const prefix = `${this.location}/`;
    const tx = this.db.transaction(['files', 'chunks'], 'readonly');
    const files = tx.objectStore('files');
    const chunks = tx.objectStore('chunks');
    const [keys, metas, chunkKeys, chunkValues, self] = await Promise.all([
      done(files.getAllKeys(pathRange(prefix))),
      done(files.getAll(pathRange(prefix))),
      done(chunks.getAllKeys(IDBKeyRange.bound([prefix], [`${prefix}\uffff`]))),
      done(chunks.getAll(IDBKeyRange.bound([prefix], [`${prefix}\uffff`]))),
      done(files.get(this.location)),
    ]).catch((e) => {
      throw idbError(e, 'load');
    });
    if ((self as { dir?: boolean } | undefined)?.dir) this.dirs.add(this.location);
    const ks = keys as string[];
    const ms = metas as Array<{ dir?: boolean }>;
    for (let i = 0; i < ks.length; i++) {
      if (ms[i]!.dir) this.dirs.add(ks[i]!);
      else this.files.set(ks[i]!, { data: new Uint8Array(0), size: 0, dirty: new Set() });
    }
    // A file's size is where its last chunk ends (files are written front to back: no holes).
    const cks = chunkKeys as Array<[string, number]>;
    const cvs = chunkValues as Uint8Array[];
    for (let i = 0; i < cks.length; i++) {
      const f = this.files.get(cks[i]![0]);
      if (f) f.size = Math.max(f.size, cks[i]![1] * CHUNK + cvs[i]!.length);
    }
    for (const f of this.files.values()) f.data = new Uint8Array(f.size);
    for (let i = 0; i < cks.length; i++) {
      const [path, index] = cks[i]!;
      const f = this.files.get(path);
      if (!f) continue; // a chunk whose file record is gone is not the file's (never written so)
      f.data.set(cvs[i]!, index * CHUNK);
    }
  }

  // --- flushing ---------------------------------------------------------------------------

  /** Whether something changed since the last flush captured the files. */
  get pendingChanges(): boolean {
    return this.changed;
  }

  /** Writes every change since the last flush to IndexedDB in one transaction; resolves once
   * it committed. Flushes run in order; a failure is sticky. */
  flush(): Promise<void> {
    const next = this.chain.then(() => this.flushNow());
    this.chain = next.catch(() => {});
    return next;
  }

  /** Called right after each engine operation, in the same synchronous step: resolves once a
   * flush holding everything the operation changed has committed (at once if it changed
   * nothing). The operations of one burst share one flush (group commit: the flush starts
   * in the next macrotask, after the queued operations ran). */
  settle(): Promise<void> {
    if (!this.changed) return Promise.resolve();
    return new Promise((resolve, reject) => {
      this.waiters.push({ resolve, reject });
      this.scheduleFlush(0);
    });
  }

  private async flushNow(): Promise<void> {
    const waiters = this.waiters;
    this.waiters = [];
    if (this.failure) {
      for (const w of waiters) w.reject(this.failure);
      throw this.failure;
    }
    if (!this.changed) {
      for (const w of waiters) w.resolve();
      return;
    }
    // Captured synchronously: the state of every file at this moment between engine steps.
    // A flush holding a synced change is strict (on disk when it commits); others are relaxed
    // (in the browser's hands: they survive the tab, as LevelDB's unsynced writes survive the
    // process).
    let tx: IDBTransaction;
    try {
      tx = this.db.transaction(['files', 'chunks'], 'readwrite', { durability: this.durable ? 'strict' : 'relaxed' });
    } catch (e) {
      this.failure = idbError(e, 'flush');
      for (const w of waiters) w.reject(this.failure);
      throw this.failure;
    }
    const files = tx.objectStore('files');
    const chunks = tx.objectStore('chunks');
    let bytes = 0;
    for (const p of this.removed) {
      files.delete(p);
      chunks.delete(chunkRange(p));
    }
    this.removed.clear();
    for (const p of this.metaDirty) {
      const f = this.files.get(p);
      if (f) files.put({ file: true }, p);
      else if (this.dirs.has(p)) files.put({ dir: true }, p);
    }
    this.metaDirty.clear();
    for (const [p, f] of this.files) {
      for (const i of f.dirty) {
        const at = i * CHUNK;
        if (at >= f.size) continue;
        const part = f.data.slice(at, Math.min(f.size, at + CHUNK));
        chunks.put(part, [p, i]);
        bytes += part.length;
      }
      f.dirty.clear();
    }
    this.durable = false;
    this.changed = false;
    try {
      await committed(tx);
    } catch (e) {
      this.failure = idbError(e, 'flush');
      for (const w of waiters) w.reject(this.failure);
      throw this.failure;
    }
    this.stats.flushes += 1;
    this.stats.bytes += bytes;
    for (const w of waiters) w.resolve();
  }

  /** A flush in `ms` (0: after the operations queued now; changes made outside any operation,
   * e.g. an idle compaction step, wait IDLE_FLUSH_MS). */
  private scheduleFlush(ms = IDLE_FLUSH_MS): void {
    if (this.closed) return;
    if (this.timer !== undefined) {
      if (ms >= this.timerMs) return;
      clearTimeout(this.timer);
    }
    this.timerMs = ms;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      if (!this.closed) void this.flush().catch(() => {});
    }, ms);
  }

  /** Flushes, then closes the store and releases the lock; resolves once the lock is free. */
  async release(): Promise<void> {
    if (this.closed) return;
    try {
      await this.flush();
    } finally {
      this.abandon();
      await this.unlocked;
    }
  }

  /** Closes without flushing (what a crash leaves: the last committed flush). */
  abandon(): void {
    if (this.closed) return;
    this.closed = true;
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    const waiters = this.waiters;
    this.waiters = [];
    const gone = hostError('EIO', `${this.location}: the IndexedDB store closed before the change was committed`);
    for (const w of waiters) w.reject(gone);
    this.db.close();
    this.unlocked = this.unlockTab();
    openHere.delete(this.location);
  }

  // --- the host contract ------------------------------------------------------------------

  private touch(): void {
    this.changed = true;
    this.scheduleFlush();
  }

  private writable(): void {
    if (this.failure) throw this.failure;
    if (this.closed) throw hostError('EIO', `${this.location}: the IndexedDB store is closed`);
  }

  private file(path: string): MemFile {
    const f = this.files.get(normalize(path));
    if (!f) throw hostError('ENOENT', `${path}: no such file`);
    return f;
  }

  private fd(fd: number): Fd {
    const f = this.fds.get(fd);
    if (!f) throw hostError('EBADF', `bad file descriptor ${fd}`);
    return f;
  }

  private create(p: string): MemFile {
    const f: MemFile = { data: new Uint8Array(0), size: 0, dirty: new Set() };
    this.files.set(p, f);
    this.removed.add(p); // stale chunks of an earlier file of that name go
    this.metaDirty.add(p);
    this.touch();
    return f;
  }

  /** A copy of a file's bytes as a Blob (an export's zip handed over). */
  async blob(path: string): Promise<Blob> {
    const f = this.file(path);
    return new Blob([f.data.slice(0, f.size)], { type: 'application/octet-stream' });
  }

  open(path: string, mode: 'r' | 'w' | 'a'): number {
    const p = normalize(path);
    let f = this.files.get(p);
    if (mode === 'r') {
      if (!f) throw hostError('ENOENT', `${path}: no such file`);
    } else {
      this.writable();
      if (!f || mode === 'w') f = this.create(p);
    }
    const fd = this.nextFd++;
    this.fds.set(fd, { path: p, file: f, pos: mode === 'a' ? f.size : 0 });
    return fd;
  }

  read(fd: number, offset: number, buf: Uint8Array): number {
    const f = this.fd(fd).file;
    if (offset >= f.size) return 0;
    const n = Math.min(buf.length, f.size - offset);
    buf.set(f.data.subarray(offset, offset + n));
    return n;
  }

  write(fd: number, data: Uint8Array): void {
    this.writable();
    const d = this.fd(fd);
    const f = d.file;
    if (this.files.get(d.path) !== f) throw hostError('EIO', `${d.path}: written after it was removed or replaced`);
    const end = d.pos + data.length;
    if (end > f.data.length) {
      const grown = new Uint8Array(Math.max(end, f.data.length * 2, 4096));
      grown.set(f.data.subarray(0, f.size));
      f.data = grown;
    }
    f.data.set(data, d.pos);
    for (let i = Math.floor(d.pos / CHUNK); i * CHUNK < end; i++) f.dirty.add(i);
    d.pos = end;
    if (end > f.size) f.size = end;
    this.touch();
  }

  sync(fd: number): void {
    this.writable();
    this.fd(fd);
    this.durable = true;
    this.touch();
  }

  size(fd: number): number {
    return this.fd(fd).file.size;
  }

  close(fd: number): void {
    this.fds.delete(fd);
  }

  /** Every file's path (the engine's names). */
  paths(): string[] {
    return [...this.files.keys()];
  }

  exists(path: string): boolean {
    const p = normalize(path);
    return this.files.has(p) || this.dirs.has(p);
  }

  fileSize(path: string): number {
    return this.file(path).size;
  }

  list(dir: string): string[] {
    const p = normalize(dir);
    // A file is not a folder (the engine tells them apart by whether listing succeeds).
    if (this.files.has(p)) throw hostError('ENOTDIR', `${dir}: not a folder`);
    return childrenOf([...this.files.keys(), ...this.dirs], p);
  }

  remove(path: string): void {
    this.writable();
    const p = normalize(path);
    this.file(p);
    this.files.delete(p);
    this.metaDirty.delete(p);
    this.removed.add(p);
    this.touch();
  }

  rename(from: string, to: string): void {
    this.writable();
    const f = normalize(from);
    const t = normalize(to);
    const file = this.file(f);
    if (f === t) return;
    this.files.delete(f);
    this.metaDirty.delete(f);
    this.removed.add(f);
    this.files.set(t, file);
    this.removed.add(t);
    this.metaDirty.add(t);
    for (let i = 0; i * CHUNK < file.size; i++) file.dirty.add(i);
    // Descriptors open on the file keep writing it under its new name.
    for (const d of this.fds.values()) if (d.file === file) d.path = t;
    this.durable = true;
    this.touch();
  }

  mkdir(path: string): void {
    this.writable();
    let added = false;
    for (let d = normalize(path); d !== ''; d = parentOf(d)) {
      if (this.dirs.has(d)) continue;
      this.dirs.add(d);
      this.metaDirty.add(d);
      added = true;
    }
    if (added) this.touch();
  }

  lock(path: string, shared: boolean): unknown {
    // The Web Lock taken at open is the lock between contexts; this records the engine's view.
    const p = normalize(path);
    if (!this.files.has(p)) {
      if (shared) return null;
      this.writable();
      this.create(p);
    }
    return { path: p };
  }

  unlock(_token: unknown): void {}

  syncDir(_path: string): void {
    this.durable = true;
    this.touch();
  }
}

/** Takes the Web Lock `name` if no other context holds it; returns its release, which
 * settles once the lock is free (request() settles after the browser released it). */
function holdLock(locks: LockManagerLike, name: string, location: string): Promise<() => Promise<void>> {
  return new Promise((resolve, reject) => {
    let release: () => void = () => {};
    const held = new Promise<void>((r) => (release = r));
    const done = locks.request(name, { ifAvailable: true }, async (lock) => {
      if (!lock) {
        reject(hostError('ELOCKED', `${location} is open in another worker or tab`));
        return;
      }
      resolve(() => {
        release();
        return done.then(
          () => {},
          () => {},
        );
      });
      await held;
    });
    done.catch(reject);
  });
}
