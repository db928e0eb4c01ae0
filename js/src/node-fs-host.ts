// Storage host over node:fs (synchronous calls: the engine is synchronous).
//
// Locking: Node has no flock/fcntl, so an exclusive lock is an owner file beside `LOCK`
// (`LOCK.owner`, created with O_EXCL, holding "pid hostname"), plus an in-process registry so
// two opens in one process conflict too. An owner file left by a process that no longer runs
// on this host is stale and is taken over, so a crashed holder never blocks the next open.
// LevelDB ignores files whose names it does not know, so the owner file is harmless to
// Google's and Mojang's LevelDB. Shared (read-only) locks conflict with a live owner but are
// not seen by other processes.

import fs from 'node:fs';
import os from 'node:os';
import nodePath from 'node:path';

import { hostError, type StorageHost } from './host.js';

interface LockState {
  exclusive: boolean;
  shared: number;
}

const registry = new Map<string, LockState>();

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as { code?: string }).code === 'EPERM';
  }
}

export class NodeFsHost implements StorageHost {
  /** Descriptors and locks handed to the engine and not yet given back (see `abandon`). */
  private readonly fds = new Set<number>();
  private readonly locks = new Set<unknown>();

  open(path: string, mode: 'r' | 'w' | 'a'): number {
    const fd = fs.openSync(path, mode);
    this.fds.add(fd);
    return fd;
  }

  /** Closes every descriptor and releases every lock the engine still holds: its wasm
   * instance stopped and will never close them (engine.ts's `stop`), and a new engine must be
   * able to open the same databases. */
  abandon(): void {
    for (const fd of this.fds) {
      try {
        fs.closeSync(fd);
      } catch {
        // already gone
      }
    }
    this.fds.clear();
    for (const token of [...this.locks]) this.unlock(token);
  }

  read(fd: number, offset: number, buf: Uint8Array): number {
    let done = 0;
    while (done < buf.length) {
      const n = fs.readSync(fd, buf, done, buf.length - done, offset + done);
      if (n === 0) break;
      done += n;
    }
    return done;
  }

  write(fd: number, data: Uint8Array): void {
    let done = 0;
    while (done < data.length) {
      done += fs.writeSync(fd, data, done, data.length - done);
    }
  }

  sync(fd: number): void {
    fs.fdatasyncSync(fd);
  }

  size(fd: number): number {
    return fs.fstatSync(fd).size;
  }

  close(fd: number): void {
    // Not ours (any more): `abandon` closed it, and the number may since name another file.
    if (!this.fds.delete(fd)) return;
    fs.closeSync(fd);
  }

  exists(path: string): boolean {
    return fs.existsSync(path);
  }

  fileSize(path: string): number {
    return fs.statSync(path).size;
  }

  list(dir: string): string[] {
    return fs.readdirSync(dir);
  }

  remove(path: string): void {
    fs.unlinkSync(path);
  }

  rename(from: string, to: string): void {
    fs.renameSync(from, to);
  }

  mkdir(path: string): void {
    fs.mkdirSync(path, { recursive: true });
  }

  syncDir(path: string): void {
    const fd = fs.openSync(path, 'r');
    try {
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
  }

  lock(path: string, shared: boolean): unknown {
    const key = nodePath.resolve(path);
    const state = registry.get(key) ?? { exclusive: false, shared: 0 };
    if (state.exclusive || (!shared && state.shared > 0)) {
      throw hostError('ELOCKED', `${path} is locked by this process`);
    }
    const owner = `${path}.owner`;
    if (shared) {
      if (!fs.existsSync(path)) return null;
      const holder = this.liveOwner(owner);
      if (holder !== undefined) throw hostError('ELOCKED', `${path} is locked by process ${holder}`);
      state.shared += 1;
      registry.set(key, state);
      const token = { key, shared: true };
      this.locks.add(token);
      return token;
    }
    fs.closeSync(fs.openSync(path, 'a'));
    for (let attempt = 0; ; attempt++) {
      try {
        const fd = fs.openSync(owner, 'wx');
        try {
          fs.writeSync(fd, `${process.pid} ${os.hostname()}\n`);
        } finally {
          fs.closeSync(fd);
        }
        break;
      } catch (e) {
        if ((e as { code?: string }).code !== 'EEXIST' || attempt > 0) {
          if ((e as { code?: string }).code === 'EEXIST') {
            throw hostError('ELOCKED', `${path} is locked by another process`);
          }
          throw e;
        }
        const holder = this.liveOwner(owner);
        if (holder !== undefined) throw hostError('ELOCKED', `${path} is locked by process ${holder}`);
        fs.rmSync(owner, { force: true });
      }
    }
    state.exclusive = true;
    registry.set(key, state);
    const token = { key, shared: false, owner };
    this.locks.add(token);
    return token;
  }

  /** The pid holding `owner`, if that process still runs (or runs on another host). */
  private liveOwner(owner: string): number | undefined {
    let text: string;
    try {
      text = fs.readFileSync(owner, 'utf8');
    } catch {
      return undefined;
    }
    const [pidText, host] = text.trim().split(' ');
    const pid = Number(pidText);
    if (!Number.isInteger(pid) || pid <= 0) return undefined;
    if (host !== undefined && host !== os.hostname()) return pid;
    if (pid === process.pid) return undefined;
    return alive(pid) ? pid : undefined;
  }

  unlock(token: unknown): void {
    if (token === null || !this.locks.delete(token)) return; // none taken, or released by abandon()
    const t = token as { key: string; shared: boolean; owner?: string };
    const state = registry.get(t.key);
    if (!state) return;
    if (t.shared) {
      state.shared = Math.max(0, state.shared - 1);
    } else {
      state.exclusive = false;
      if (t.owner) fs.rmSync(t.owner, { force: true });
    }
    if (!state.exclusive && state.shared === 0) registry.delete(t.key);
  }
}
