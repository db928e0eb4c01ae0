// Read-only storage over the `File`s of a user-picked folder (an `<input webkitdirectory>` or
// a drop), read synchronously with `FileReaderSync` in a worker: a world opens in place,
// without copying it first. Every write operation fails with EROFS (LEVEL_NOT_SUPPORTED).

import { childrenOf, hostError, type StorageHost } from './host.js';

function normalize(path: string): string {
  return path.replace(/\\/g, '/').replace(/\/+/g, '/').replace(/^\.?\//, '').replace(/\/$/, '');
}

export class FilePickerHost implements StorageHost {
  private readonly files = new Map<string, Blob>();
  private readonly fds = new Map<number, Blob>();
  private readonly reader = new FileReaderSync();
  private nextFd = 1;

  constructor(files: ReadonlyArray<{ path: string; file: Blob }>) {
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
    const data = new Uint8Array(this.reader.readAsArrayBuffer(file.slice(offset, end)));
    buf.set(data);
    return data.length;
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
    return childrenOf(this.files.keys(), normalize(dir));
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
