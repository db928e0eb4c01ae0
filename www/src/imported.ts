// Worlds imported into browser storage (OPFS): a picked folder copied file by file through
// the package's importIntoOpfs (progress in files and bytes, cancellable between files; a
// cancelled or failed import is destroyed), remembered in localStorage so they are listed
// on return, opened with openWorld(location, { storage: 'opfs' }) and deleted with destroy().
// A new copy never replaces a listed world of the same name (`viewer/<name>-2`, …): an edited
// copy is the user's work.

import { destroy, importIntoOpfs } from 'strata-level/browser';

import type { PickedFile } from './picked.js';

const STORE = 'strata-viewer-imported';

export interface ImportedWorld {
  location: string;
  name: string;
  files: number;
  bytes: number;
  date: string;
}

export function importedWorlds(): ImportedWorld[] {
  try {
    const list = JSON.parse(localStorage.getItem(STORE) ?? '[]') as unknown;
    return Array.isArray(list) ? (list as ImportedWorld[]) : [];
  } catch {
    return [];
  }
}

function save(list: ImportedWorld[]): void {
  localStorage.setItem(STORE, JSON.stringify(list));
}

export class Cancelled extends Error {
  constructor() {
    super('import cancelled');
  }
}

const BATCH_BYTES = 32 * 1024 * 1024;
const PERSIST_WAIT_MS = 3000;
const BATCH_FILES = 128;

/** Copies the files under `root` into browser storage; `progress` after each batch of files;
 * `cancelled` is polled between batches. */
export async function importFolder(
  files: readonly PickedFile[],
  root: string,
  progress: (files: number, totalFiles: number, bytes: number, totalBytes: number) => void,
  cancelled: () => boolean,
): Promise<ImportedWorld> {
  const name = root.split('/').pop() || 'world';
  // A stored world of the same name (an edited copy, say) is never replaced: the new copy
  // gets a location of its own.
  const base = `viewer/${name.replace(/[^A-Za-z0-9._-]+/g, '_')}`;
  const taken = new Set(importedWorlds().map((w) => w.location));
  let location = base;
  for (let i = 2; taken.has(location); i++) location = `${base}-${i}`;
  const mine = files.filter((f) => f.path.startsWith(`${root}/`));
  const totalBytes = mine.reduce((n, f) => n + f.file.size, 0);
  // Ask that the origin's storage be kept under pressure (not evicted like a cache) before
  // anything is copied; browsers may grant it silently, ask, or decline.
  // Never waited on for long: a browser may leave the request pending (a permission prompt
  // nobody answers), and the copy does not depend on it.
  await Promise.race([navigator.storage?.persist?.().catch(() => false), new Promise((r) => setTimeout(r, PERSIST_WAIT_MS))]);
  await forget(location);
  let bytes = 0;
  try {
    // Files go over in batches (up to BATCH_BYTES or BATCH_FILES each): one storage open per
    // batch, not per file (a world of 1,200 tables took 19 minutes file by file).
    for (let i = 0; i < mine.length; ) {
      if (cancelled()) throw new Cancelled();
      const batch: PickedFile[] = [];
      let size = 0;
      while (i < mine.length && batch.length < BATCH_FILES && (batch.length === 0 || size + mine[i]!.file.size <= BATCH_BYTES)) {
        size += mine[i]!.file.size;
        batch.push(mine[i++]!);
      }
      bytes += await importIntoOpfs(location, batch.map((f) => ({ name: f.path.slice(root.length + 1), data: f.file })));
      progress(i, mine.length, bytes, totalBytes);
    }
  } catch (e) {
    await destroy(location).catch(() => {});
    throw e;
  }
  const world: ImportedWorld = { location, name, files: mine.length, bytes, date: new Date().toISOString() };
  save([...importedWorlds().filter((w) => w.location !== location), world]);
  return world;
}

/** Deletes an imported world's files and its entry. */
export async function forget(location: string): Promise<void> {
  await destroy(location);
  save(importedWorlds().filter((w) => w.location !== location));
}

/** Whether the origin's storage is persistent, and what it uses and may use (bytes). */
export async function storageState(): Promise<{ persisted: boolean; usage: number; quota: number }> {
  const persisted = (await navigator.storage?.persisted?.().catch(() => false)) ?? false;
  const e: StorageEstimate = (await navigator.storage?.estimate?.().catch(() => ({}))) ?? {};
  return { persisted, usage: e.usage ?? 0, quota: e.quota ?? 0 };
}
