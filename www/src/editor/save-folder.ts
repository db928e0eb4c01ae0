// Saving the edited world back to a folder on disk where the browser allows it (the File
// System Access API's `showDirectoryPicker({ mode: 'readwrite' })`: Chromium-based browsers).
// The world is exported as the game would import it (`World.exportMcworldTo()`: compacted in
// browser storage, so deleted data is gone; the zip's file is removed afterwards) and unpacked
// into the folder the user picked, one entry at a time read from the zip's file in browser
// storage (`unzipEach` over a Blob: the page's memory holds one file, never the world): every
// file written through a writable stream, subfolders created; a folder that already holds
// files is refused (a world is never overwritten by mistake). Elsewhere (Firefox, Safari) the
// page says why and offers the .mcworld download instead.
//
// Invariants: nothing is written before the user picked a folder; the world in the page is
// not changed; the result is the same bytes as the exported .mcworld's entries (CRC-32 of
// each checked).

import type { World } from 'strata-level/browser';

import { blobSource, OWN_EXPORT_LIMITS, unzipEach } from '../unzip.js';

type DirectoryPicker = (options: { mode: 'readwrite'; id?: string }) => Promise<FileSystemDirectoryHandle>;

/** Whether this browser can write a folder the user picks. */
export function canSaveToFolder(): boolean {
  return typeof (window as unknown as { showDirectoryPicker?: unknown }).showDirectoryPicker === 'function';
}

export const NO_FOLDER_WRITES =
  'This browser cannot write to a folder on disk (it has no File System Access API: Firefox and Safari do not offer one). Use “Export .mcworld” and import that file into Minecraft, or open the page in a Chromium-based browser.';

/** Asks for a folder (it must be empty): called first, while the click that asked is still
 * a user gesture (a first save can take long). A cancelled picker rejects with AbortError. */
export async function pickEmptyFolder(): Promise<FileSystemDirectoryHandle> {
  const pick = (window as unknown as { showDirectoryPicker?: DirectoryPicker }).showDirectoryPicker;
  if (!pick) throw new Error(NO_FOLDER_WRITES);
  const dir = await pick({ mode: 'readwrite', id: 'strata-world' });
  for await (const _ of (dir as unknown as { keys(): AsyncIterable<string> }).keys()) {
    throw new Error(`“${dir.name}” is not empty: pick an empty folder (a world is never written over another one's files).`);
  }
  return dir;
}

/** Writes the world into `dir`; returns files and bytes written. */
export async function saveToFolder(world: World, dir: FileSystemDirectoryHandle, progress: (files: number, total: number) => void): Promise<{ folder: string; files: number; bytes: number }> {
  const exported = await world.exportMcworldTo();
  try {
    // The zip is read from browser storage one entry at a time: neither it nor the world is
    // ever whole in the page's memory.
    const r = await unzipEach(
      blobSource(exported.file!),
      async (name, data, n, total) => {
        const parts = name.split('/');
        let d = dir;
        for (const part of parts.slice(0, -1)) d = await d.getDirectoryHandle(part, { create: true });
        const fh = await d.getFileHandle(parts[parts.length - 1]!, { create: true });
        const w = await (fh as unknown as { createWritable(): Promise<{ write(data: Uint8Array): Promise<void>; close(): Promise<void> }> }).createWritable();
        await w.write(data);
        await w.close();
        progress(n, total);
      },
      OWN_EXPORT_LIMITS,
    );
    return { folder: dir.name, files: r.files, bytes: r.bytes };
  } finally {
    await exported.discard().catch(() => {});
  }
}
