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

import { hostError, type StorageHost } from './host.js';

const HEADER = 4096;
const MAGIC = 0x53_54_52_31; // "STR1"
const SPARES_LOW = 24;
const SPARES_HIGH = 48;

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
  handle: SyncHandle;
  path: string;
  gen: number;
}

interface Fd {
  slot: Slot;
  pos: number;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();
const openPools = new Set<string>();

function fnv(bytes: Uint8Array): number {
  let h = 0x811c9dc5;
  for (const b of bytes) h = Math.imul(h ^ b, 0x01000193) >>> 0;
  return h;
}

function normalize(path: string): string {
  return path.replace(/\/+/g, '/').replace(/\/$/, '');
}

function parent(path: string): string {
  const i = path.lastIndexOf('/');
  return i < 0 ? '' : path.slice(0, i);
}

export class OpfsPool implements StorageHost {
  private readonly byPath = new Map<string, Slot>();
  private readonly spares: Slot[] = [];
  /** Every handle the pool opened, whatever became of its slot: closing them all is what
   * releases the database to other workers and tabs. */
  private readonly handles: SyncHandle[] = [];
  private readonly fds = new Map<number, Fd>();
  private readonly dirs = new Set<string>();
  private nextFd = 1;
  private nextName = 0;
  private gen = 0;
  private closed = false;

  private constructor(
    private readonly key: string,
    private readonly dir: FileSystemDirectoryHandle,
    private readonly lockHandle: SyncHandle,
  ) {}

  /** Opens (creating if needed) the pool of database `location`. */
  static async open(location: string): Promise<OpfsPool> {
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
      const pool = new OpfsPool(key, dir, lock);
      try {
        await pool.load();
        await pool.prepare();
      } catch (e) {
        pool.closeHandles();
        throw e;
      }
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
    for (const name of names) {
      this.nextName = Math.max(this.nextName, parseInt(name, 10) + 1);
      const fh = await this.dir.getFileHandle(name);
      const handle = await openHandle(fh, this.key);
      this.handles.push(handle);
      const slot: Slot = { name, handle, path: '', gen: 0 };
      this.readHeader(slot);
      if (slot.path === '') {
        this.spares.push(slot);
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
      for (let d = parent(p); d !== ''; d = parent(d)) this.dirs.add(d);
    }
  }

  private readHeader(slot: Slot): void {
    const h = new Uint8Array(HEADER);
    const n = slot.handle.read(h, { at: 0 });
    if (n < 16) return;
    const view = new DataView(h.buffer);
    if (view.getUint32(0, true) !== MAGIC) return;
    const len = view.getUint32(12, true);
    if (len > HEADER - 20) return;
    if (fnv(h.subarray(0, 16 + len)) !== view.getUint32(16 + len, true)) return;
    slot.gen = view.getFloat64(4, true);
    slot.path = decoder.decode(h.subarray(16, 16 + len));
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
    slot.handle.write(h, { at: 0 });
    slot.handle.flush();
    slot.path = path;
    slot.gen = gen;
  }

  private free(slot: Slot): void {
    slot.path = '';
    slot.gen = 0;
    try {
      slot.handle.truncate(0);
      slot.handle.flush();
    } finally {
      this.spares.push(slot);
    }
  }

  /** Opens spare files until there are enough for the next engine call. */
  async prepare(): Promise<void> {
    if (this.closed || this.spares.length >= SPARES_LOW) return;
    while (this.spares.length < SPARES_HIGH) {
      const name = `${this.nextName++}.sah`;
      const fh = await this.dir.getFileHandle(name, { create: true });
      const handle = await openHandle(fh, this.key);
      this.handles.push(handle);
      handle.truncate(0);
      this.spares.push({ name, handle, path: '', gen: 0 });
    }
  }

  /** Closes every handle (the database is closed). */
  async release(): Promise<void> {
    this.closeHandles();
  }

  private closeHandles(): void {
    if (this.closed) return;
    this.closed = true;
    for (const h of [...this.handles, this.lockHandle]) {
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
    } catch (e) {
      // E.g. QuotaExceededError: the file was not created; the handle stays a spare (its
      // header, if written at all, is cleared so a reload does not see the file either).
      try {
        spare.handle.truncate(0);
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
    let slot = this.byPath.get(p);
    let pos = 0;
    if (mode === 'r') {
      if (!slot) throw hostError('ENOENT', `${path}: no such file`);
    } else if (!slot) {
      slot = this.createSlot(p);
    } else if (mode === 'w') {
      slot.handle.truncate(HEADER);
    } else {
      pos = Math.max(0, slot.handle.getSize() - HEADER);
    }
    if (slot.handle.getSize() < HEADER) slot.handle.truncate(HEADER);
    const fd = this.nextFd++;
    this.fds.set(fd, { slot, pos });
    return fd;
  }

  read(fd: number, offset: number, buf: Uint8Array): number {
    const f = this.fd(fd);
    let done = 0;
    while (done < buf.length) {
      const n = f.slot.handle.read(buf.subarray(done), { at: HEADER + offset + done });
      if (n <= 0) break;
      done += n;
    }
    return done;
  }

  write(fd: number, data: Uint8Array): void {
    const f = this.fd(fd);
    let done = 0;
    while (done < data.length) {
      const n = f.slot.handle.write(data.subarray(done), { at: HEADER + f.pos + done });
      // Chromium throws QuotaExceededError when the origin's quota is exhausted; Firefox
      // writes fewer bytes (none, at the limit) and throws nothing: the same condition.
      if (n <= 0) throw hostError('ENOSPC', 'OPFS write made no progress: the origin\'s storage quota is exhausted (QuotaExceededError)');
      done += n;
    }
    f.pos += done;
  }

  sync(fd: number): void {
    this.fd(fd).slot.handle.flush();
  }

  size(fd: number): number {
    return Math.max(0, this.fd(fd).slot.handle.getSize() - HEADER);
  }

  close(fd: number): void {
    this.fds.delete(fd);
  }

  exists(path: string): boolean {
    const p = normalize(path);
    return this.byPath.has(p) || this.dirs.has(p);
  }

  fileSize(path: string): number {
    return Math.max(0, this.slot(path).handle.getSize() - HEADER);
  }

  list(dir: string): string[] {
    const d = normalize(dir);
    const out = new Set<string>();
    for (const p of [...this.byPath.keys(), ...this.dirs]) {
      if (parent(p) === d) out.add(p.slice(d === '' ? 0 : d.length + 1));
    }
    return [...out];
  }

  remove(path: string): void {
    const p = normalize(path);
    const s = this.slot(p);
    this.byPath.delete(p);
    this.free(s);
  }

  rename(from: string, to: string): void {
    const f = normalize(from);
    const t = normalize(to);
    const s = this.slot(f);
    const old = this.byPath.get(t);
    this.writeHeader(s, t, ++this.gen);
    this.byPath.delete(f);
    this.byPath.set(t, s);
    if (old && old !== s) this.free(old);
  }

  mkdir(path: string): void {
    for (let d = normalize(path); d !== ''; d = parent(d)) this.dirs.add(d);
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
    await dir.removeEntry(encodeURIComponent(last), { recursive: true });
  } catch (e) {
    if ((e as { name?: string }).name !== 'NotFoundError') throw e;
  }
}
