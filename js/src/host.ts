// The storage host contract shared with the engine (src/storage/js_host.rs): synchronous file
// operations that throw errors carrying a Node-style `code` (ENOENT, ENOSPC, ELOCKED, EROFS)
// or a DOM-style `name`. Hosts: node:fs (node-fs-host.ts), OPFS (opfs-host.ts), a user-picked
// folder (file-picker-host.ts).

export interface StorageHost {
  /** `r`: must exist; `w`: create or truncate; `a`: append, create if missing. */
  open(path: string, mode: 'r' | 'w' | 'a'): number;
  /** Fills `buf` from `offset`; returns bytes read (fewer only at end of file). */
  read(fd: number, offset: number, buf: Uint8Array): number;
  write(fd: number, data: Uint8Array): void;
  sync(fd: number): void;
  size(fd: number): number;
  close(fd: number): void;
  exists(path: string): boolean;
  fileSize(path: string): number;
  list(dir: string): string[];
  remove(path: string): void;
  /** Atomically replaces `to`. */
  rename(from: string, to: string): void;
  /** Creates a folder and its parents. */
  mkdir(path: string): void;
  /** Exclusive or shared lock; `null` only for a shared lock on a missing file. */
  lock(path: string, shared: boolean): unknown;
  unlock(token: unknown): void;
  syncDir(path: string): void;
}

/** An error a host throws, with the code the engine maps to an error kind. */
export function hostError(code: string, message: string): Error {
  const err = new Error(message) as Error & { code: string };
  err.code = code;
  return err;
}

/** The folder holding `path` ('' at the top). */
export function parentOf(path: string): string {
  const i = path.lastIndexOf('/');
  return i < 0 ? '' : path.slice(0, i);
}

/** The names directly inside folder `dir` among `paths` (files and folders, each once). */
export function childrenOf(paths: Iterable<string>, dir: string): string[] {
  const out = new Set<string>();
  for (const p of paths) {
    if (p !== dir && parentOf(p) === dir) out.add(p.slice(dir === '' ? 0 : dir.length + 1));
  }
  return [...out];
}
