// Picked worlds: turns a directory handle (showDirectoryPicker or a drop), an
// `<input webkitdirectory>` file list or dropped entries into `{path, file}` pairs with
// '/'-separated paths, and finds the world's root among them: the shallowest folder holding
// level.dat, else the one holding db/CURRENT. A folder with neither is not a world.

export interface PickedFile {
  path: string;
  file: File;
}

/** Minimal typings of the File System Access API parts used here (not all in lib.dom). */
interface DirHandle {
  kind: 'directory';
  name: string;
  values(): AsyncIterable<DirHandle | FileHandle>;
}
interface FileHandle {
  kind: 'file';
  name: string;
  getFile(): Promise<File>;
}

export type DirectoryPicker = (options?: { mode?: 'read' }) => Promise<DirHandle>;

/** Every file under a directory handle, paths starting with the folder's own name. */
export async function filesOfHandle(dir: DirHandle, prefix = dir.name): Promise<PickedFile[]> {
  const out: PickedFile[] = [];
  for await (const entry of dir.values()) {
    const path = `${prefix}/${entry.name}`;
    if (entry.kind === 'file') out.push({ path, file: await entry.getFile() });
    else for (const f of await filesOfHandle(entry, path)) out.push(f);
  }
  return out;
}

/** The files of an `<input webkitdirectory>`. */
export function filesOfInput(list: FileList): PickedFile[] {
  return [...list].map((file) => ({ path: file.webkitRelativePath || file.name, file }));
}

/** Every file under a dropped directory entry (the older entries API, for drag and drop). */
export async function filesOfEntry(entry: FileSystemEntry, prefix = entry.name): Promise<PickedFile[]> {
  if (entry.isFile) {
    const file = await new Promise<File>((resolve, reject) => (entry as FileSystemFileEntry).file(resolve, reject));
    return [{ path: prefix, file }];
  }
  const reader = (entry as FileSystemDirectoryEntry).createReader();
  const out: PickedFile[] = [];
  for (;;) {
    const batch = await new Promise<FileSystemEntry[]>((resolve, reject) => reader.readEntries(resolve, reject));
    if (batch.length === 0) break;
    for (const e of batch) for (const f of await filesOfEntry(e, `${prefix}/${e.name}`)) out.push(f);
  }
  return out;
}

function dirOf(path: string): string {
  const i = path.lastIndexOf('/');
  return i < 0 ? '' : path.slice(0, i);
}

function depth(path: string): number {
  return path === '' ? 0 : path.split('/').length;
}

/** The world's root folder among `files`, or `undefined` when there is no world. */
export function worldRoot(files: readonly PickedFile[]): string | undefined {
  const pick = (suffix: string, up: number): string | undefined => {
    const roots = files
      .map((f) => f.path)
      .filter((p) => p === suffix || p.endsWith(`/${suffix}`))
      .map((p) => {
        let d = p;
        for (let i = 0; i < up; i++) d = dirOf(d);
        return d;
      })
      .sort((a, b) => depth(a) - depth(b) || a.localeCompare(b));
    return roots[0];
  };
  return pick('level.dat', 1) ?? pick('db/CURRENT', 2);
}
