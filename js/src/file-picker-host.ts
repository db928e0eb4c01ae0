// Read-only storage over the `File`s of a user-picked folder (an `<input webkitdirectory>` or
// a drop), read synchronously with `FileReaderSync` in a worker: a world opens in place,
// without copying it first. Every write operation fails with EROFS (LEVEL_NOT_SUPPORTED).
//
// Each `FileReaderSync` read is a round trip to the browser's process (tens of microseconds,
// whatever its size), so reads go through a cache of windows of the files (CACHE_BYTES in
// all, least recently used out): a file of at most WHOLE_FILE bytes (a table: Mojang's are
// about 2 MiB) is one window, read in one call; a larger file (a log) has aligned windows of
// WINDOW bytes, and reads of more than a window of it go straight to the file. The map's one
// `get` per chunk reads each table once instead of once per block; the chunk index of the
// 160,000-chunk world reads 61 tables in 61 calls. The picked files cannot change under the
// page (a `File` is a snapshot), so a cached window never goes stale.

import { childrenOf, hostError, type StorageHost } from './host.js';

function normalize(path: string): string {
  return path.replace(/\\/g, '/').replace(/\/+/g, '/').replace(/^\.?\//, '').replace(/\/$/, '');
}

/** Files up to WHOLE_FILE bytes are cached whole; larger ones by windows of WINDOW bytes;
 * CACHE_BYTES in all. */
const WHOLE_FILE = 4 << 20;
const WINDOW = 256 << 10;
const CACHE_BYTES = 64 << 20;

/** A file's window size: the whole file when it is small beside the cache (at most a quarter
 * of it, and WHOLE_FILE), else WINDOW. */
function windowOf(file: Blob, cacheBytes: number): number {
  return file.size <= Math.min(WHOLE_FILE, cacheBytes / 4) ? Math.max(1, file.size) : WINDOW;
}

export class FilePickerHost implements StorageHost {
  private readonly files = new Map<string, Blob>();
  private readonly fds = new Map<number, Blob>();
  private readonly reader = new FileReaderSync();
  private nextFd = 1;
  /** Cached windows by `file id:window number`, least recently used first (Map order). */
  private readonly windows = new Map<string, Uint8Array>();
  private readonly fileIds = new Map<Blob, number>();
  private cachedBytes = 0;
  /** Reads served, from the cache or by the browser (tests read these). */
  readonly stats = { reads: 0, windowHits: 0, windowReads: 0, directReads: 0 };

  constructor(
    files: ReadonlyArray<{ path: string; file: Blob }>,
    private readonly cacheBytes = CACHE_BYTES,
  ) {
    for (const { path, file } of files) this.files.set(normalize(path), file);
  }

  private readOnly(what: string): never {
    throw hostError('EROFS', `${what}: the picked folder is read-only`);
  }

  open(path: string, mode: 'r' | 'w' | 'a'): number {
    if (mode !== 'r') this.readOnly(`open ${path}`);
    const file = this.files.get(normalize(path));
    if (!file) throw hostError('ENOENT', `${path}: no such file`);
    const fd = this.nextFd++;
    this.fds.set(fd, file);
    return fd;
  }

  read(fd: number, offset: number, buf: Uint8Array): number {
    const file = this.fds.get(fd);
    if (!file) throw hostError('EBADF', `bad file descriptor ${fd}`);
    const end = Math.min(file.size, offset + buf.length);
    if (offset >= end) return 0;
    this.stats.reads += 1;
    const win = windowOf(file, this.cacheBytes);
    if (end - offset > win) {
      this.stats.directReads += 1;
      const data = new Uint8Array(this.reader.readAsArrayBuffer(file.slice(offset, end)));
      buf.set(data);
      return data.length;
    }
    let pos = offset;
    while (pos < end) {
      const n = Math.floor(pos / win);
      const w = this.window(file, n);
      const from = pos - n * win;
      const take = Math.min(end - pos, w.length - from);
      buf.set(w.subarray(from, from + take), pos - offset);
      pos += take;
    }
    return end - offset;
  }

  /** Window `n` of `file`, from the cache or read now (evicting the least recently used). */
  private window(file: Blob, n: number): Uint8Array {
    let id = this.fileIds.get(file);
    if (id === undefined) this.fileIds.set(file, (id = this.fileIds.size));
    const key = `${id}:${n}`;
    const hit = this.windows.get(key);
    if (hit) {
      this.stats.windowHits += 1;
      this.windows.delete(key); // most recently used last
      this.windows.set(key, hit);
      return hit;
    }
    this.stats.windowReads += 1;
    const win = windowOf(file, this.cacheBytes);
    const start = n * win;
    const bytes = new Uint8Array(this.reader.readAsArrayBuffer(file.slice(start, Math.min(file.size, start + win))));
    this.windows.set(key, bytes);
    this.cachedBytes += bytes.length;
    for (const [k, b] of this.windows) {
      if (this.cachedBytes <= this.cacheBytes || k === key) break;
      this.windows.delete(k);
      this.cachedBytes -= b.length;
    }
    return bytes;
  }

  write(): void {
    this.readOnly('write');
  }

  sync(): void {}

  size(fd: number): number {
    const file = this.fds.get(fd);
    if (!file) throw hostError('EBADF', `bad file descriptor ${fd}`);
    return file.size;
  }

  close(fd: number): void {
    this.fds.delete(fd);
  }

  exists(path: string): boolean {
    const p = normalize(path);
    if (this.files.has(p)) return true;
    for (const k of this.files.keys()) if (k.startsWith(`${p}/`)) return true;
    return false;
  }

  fileSize(path: string): number {
    const file = this.files.get(normalize(path));
    if (!file) throw hostError('ENOENT', `${path}: no such file`);
    return file.size;
  }

  list(dir: string): string[] {
    const p = normalize(dir);
    // A file is not a folder (the engine tells them apart by whether listing succeeds).
    if (this.files.has(p)) throw hostError('ENOTDIR', `${dir}: not a folder`);
    return childrenOf(this.files.keys(), p);
  }

  remove(path: string): void {
    this.readOnly(`remove ${path}`);
  }

  rename(from: string): void {
    this.readOnly(`rename ${from}`);
  }

  mkdir(path: string): void {
    this.readOnly(`mkdir ${path}`);
  }

  lock(path: string, shared: boolean): unknown {
    if (!shared) this.readOnly(`lock ${path}`);
    return null;
  }

  unlock(): void {}

  syncDir(): void {}
}
