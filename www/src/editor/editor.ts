// The world editor in the page: a chunk selection (`#selection`: rectangles `x0,z0:x1,z1`
// separated by `;`, inclusive chunk coordinates of the current dimension; the map adds to it by
// shift-drag and ctrl-click), delete the selected chunks (`#delete-chunks`) or keep only them
// (`#prune`), each confirmed in a dialog (`#confirm`) and then STAGED (entity deletions from the
// entity panel are staged the same way, `stage`): `#staged-list` lists the staged edits
// (`li[data-kind]`) and `#staged-summary` (data-chunks/stubs/records/bytes/entities) what they would delete
// together (the engine's dry run), `#undo`/`#redo` (ctrl+z, ctrl+shift+z) move edits between
// the staged list and the redo list, `#save-edits` applies them, `#discard-edits` drops them.
// `#export-mcworld` saves staged edits first, then exports a `.mcworld` the game imports
// (export.ts: streamed through browser storage, `#export-progress` with a cancel button).
//
// Invariants: the original world is never written. Saving reopens the world writable on a
// copy in browser storage (a picked folder or a `.mcworld` is copied there first, with
// progress and a cancel; the demo's bytes are edited in the engine's memory; a world already
// in browser storage is edited in place) and applies every staged edit in ONE atomic batch
// in the engine (src/bedrock/edit.rs `apply_edits`: the same result as one after another);
// `#world-summary` and the map are redrawn after it. A dry run writes nothing (read-only worlds
// too). `#map[data-selected]` = selected chunks that exist in the current dimension.

import type { Dimension, StagedEdit, World } from 'strata-level/browser';

import { chunkCount, type ChunkList } from '../chunk-index/chunk-list.js';
import { McworldExporter } from './export.js';
import { NO_FOLDER_WRITES, canSaveToFolder, pickEmptyFolder, saveToFolder } from './save-folder.js';

export type Rect = [number, number, number, number];

/** Parses `x0,z0:x1,z1;…`; throws a message a person can act on. */
export function parseSelection(text: string): Rect[] {
  const rects: Rect[] = [];
  for (const part of text.split(';').map((p) => p.trim()).filter((p) => p !== '')) {
    const m = /^(-?\d+)\s*,\s*(-?\d+)\s*:\s*(-?\d+)\s*,\s*(-?\d+)$/.exec(part);
    if (!m) throw new Error(`“${part}” is not a chunk rectangle x0,z0:x1,z1 (e.g. -4,-4:3,3)`);
    const [x0, z0, x1, z1] = m.slice(1).map(Number) as Rect;
    rects.push([Math.min(x0, x1), Math.min(z0, z1), Math.max(x0, x1), Math.max(z0, z1)]);
  }
  return rects;
}

export function inSelection(rects: Rect[], x: number, z: number): boolean {
  return rects.some(([x0, z0, x1, z1]) => x >= x0 && x <= x1 && z >= z0 && z <= z1);
}

/** `v` with its noun: "1 chunk", "1,024 chunks". */
function counted(v: number, one: string, many: string): string {
  return `${v.toLocaleString('en')} ${v === 1 ? one : many}`;
}

/** "242 chunks and 122 stubs" (or "242 chunks" when there are none): chunks as the map and the
 * summary count them (positions with a Version record), and apart from them the stubs that an
 * edit deletes too (positions with records but no Version record, not drawn on the map), so the
 * numbers a user reads add up with the map's. */
export function chunksAndStubs(r: { chunks: number; stubs: number }): string {
  const chunks = counted(r.chunks - r.stubs, 'chunk', 'chunks');
  return r.stubs === 0 ? chunks : `${chunks} and ${counted(r.stubs, 'stub', 'stubs')} (records but no Version record: not on the map)`;
}

/** One staged edit and how the staged list names it. */
interface Staged {
  edit: StagedEdit;
  label: string;
}

export interface EditorHost {
  /** The open world, if any. */
  world(): World | undefined;
  dimension(): Dimension;
  /** The open world's name (level.dat's LevelName) as last read, if any. */
  worldName?(): string | null | undefined;
  /** Reopens the current world writable on a copy (first edit), returning it. */
  writable(): Promise<World>;
  /** Redraws the summary and the map from the (edited) world. */
  refresh(world: World, label: string): Promise<void>;
  say(text: string, kind?: 'info' | 'busy' | 'error'): void;
  fail(e: unknown, what: string): void;
  busy(on: boolean): void;
  /** The chunk list of `dimension` of `world` (the map's, read once per open); without it
   * the editor asks the world (a pass over the database). */
  chunkList?(world: World, dimension: Dimension): Promise<ChunkList>;
  /** The selection changed: outline it on the map. */
  showSelection?(rects: Rect[]): void;
}

export class Editor {
  /** The dimension's chunks (flat x, z, …: World.chunkList). */
  private chunks: ChunkList = new Int32Array(0);
  private attached: World | undefined;
  private pending: (() => Promise<void>) | undefined;
  private staged: Staged[] = [];
  private redoable: Staged[] = [];
  /** Increments with every change of the staged list: a preview of an older list is dropped. */
  private stagedVersion = 0;
  /** The `.mcworld` export (its progress box and cancel). */
  readonly exporter: McworldExporter;

  constructor(
    private readonly host: EditorHost,
    private readonly els: {
      section: HTMLElement;
      selection: HTMLInputElement;
      map: HTMLElement;
      deleteBtn: HTMLButtonElement;
      pruneBtn: HTMLButtonElement;
      exportBtn: HTMLButtonElement;
      exportProgress: HTMLElement;
      exportCancel: HTMLButtonElement;
      saveFolderBtn: HTMLButtonElement;
      dialog: HTMLDialogElement;
      dialogText: HTMLElement;
      confirm: HTMLButtonElement;
      cancel: HTMLButtonElement;
      staged: HTMLElement;
      stagedPanel: HTMLElement;
      stagedSummary: HTMLElement;
      stagedList: HTMLOListElement;
      undo: HTMLButtonElement;
      redo: HTMLButtonElement;
      save: HTMLButtonElement;
      discard: HTMLButtonElement;
    },
  ) {
    this.exporter = new McworldExporter(host, els.exportProgress, els.exportCancel);
    els.undo.addEventListener('click', () => this.undo());
    els.redo.addEventListener('click', () => this.redo());
    els.save.addEventListener('click', () => void this.save());
    els.discard.addEventListener('click', () => this.discard());
    document.addEventListener('keydown', (ev) => {
      if (!(ev.ctrlKey || ev.metaKey) || ev.key.toLowerCase() !== 'z' || els.section.hidden) return;
      if (ev.target instanceof HTMLInputElement || ev.target instanceof HTMLTextAreaElement) return;
      ev.preventDefault();
      if (ev.shiftKey) this.redo();
      else this.undo();
    });
    els.selection.addEventListener('input', () => void this.count());
    els.deleteBtn.addEventListener('click', () => this.ask('delete'));
    els.pruneBtn.addEventListener('click', () => this.ask('prune'));
    els.exportBtn.addEventListener('click', () => void this.exportWorld());
    els.saveFolderBtn.addEventListener('click', () => void this.saveFolder());
    els.saveFolderBtn.dataset.supported = String(canSaveToFolder());
    els.confirm.addEventListener('click', () => {
      els.dialog.close();
      const run = this.pending;
      this.pending = undefined;
      if (run) void run();
    });
    els.cancel.addEventListener('click', () => {
      this.pending = undefined;
      els.dialog.close();
    });
  }

  /** Another world was opened: its edits start from nothing. */
  reset(): void {
    this.staged = [];
    this.redoable = [];
    void this.renderStaged();
  }

  /** A world was opened (or redrawn): the chunk list of the current dimension. */
  async attach(world: World | undefined): Promise<void> {
    this.els.section.hidden = world === undefined;
    this.attached = world;
    const dimension = this.host.dimension();
    const chunks = !world ? new Int32Array(0) : this.host.chunkList ? await this.host.chunkList(world, dimension) : await world.chunkList(dimension);
    if (this.attached !== world) return; // another world was opened meanwhile
    this.chunks = chunks;
    await this.count();
  }

  /** Adds chunk (x, z) to the selection (a ctrl-click on the map). */
  toggle(x: number, z: number): void {
    this.addRect(x, z, x, z);
  }

  /** Adds a chunk rectangle to the selection (a shift-drag on the map). */
  addRect(x0: number, z0: number, x1: number, z1: number): void {
    const text = this.els.selection.value.trim();
    const r = `${Math.min(x0, x1)},${Math.min(z0, z1)}:${Math.max(x0, x1)},${Math.max(z0, z1)}`;
    this.els.selection.value = `${text}${text ? ';' : ''}${r}`;
    void this.count();
  }

  /** The selection's rectangles and how many of the dimension's chunks they hold. */
  private selected(): { rects: Rect[]; count: number } {
    const rects = parseSelection(this.els.selection.value);
    let count = 0;
    for (let i = 0; i + 1 < this.chunks.length; i += 2) if (inSelection(rects, this.chunks[i]!, this.chunks[i + 1]!)) count++;
    return { rects, count };
  }

  private async count(): Promise<void> {
    try {
      const { rects, count } = this.selected();
      this.host.showSelection?.(rects);
      this.els.map.dataset.selected = String(count);
      this.els.staged.textContent = `${count} of ${chunkCount(this.chunks)} chunks selected`;
      this.els.selection.setCustomValidity('');
    } catch (e) {
      this.els.map.dataset.selected = '0';
      this.host.showSelection?.([]);
      this.els.staged.textContent = (e as Error).message;
      this.els.selection.setCustomValidity((e as Error).message);
    }
  }

  private ask(kind: 'delete' | 'prune'): void {
    let sel: { rects: Rect[]; count: number };
    try {
      sel = this.selected();
    } catch (e) {
      this.host.fail(e, 'the selection');
      return;
    }
    const dim = this.host.dimension();
    const n = sel.count;
    const others = chunkCount(this.chunks) - n;
    if (kind === 'delete' && n === 0) {
      this.host.say('The selection holds no chunk of this dimension: nothing to delete.', 'error');
      return;
    }
    if (kind === 'prune' && n === 0) {
      this.host.say('The selection holds no chunk of this dimension: pruning would delete every chunk. Select the chunks to keep.', 'error');
      return;
    }
    this.els.dialogText.textContent =
      kind === 'delete'
        ? `Stage the deletion of ${n} chunk${n === 1 ? '' : 's'} (every record and entity of them) from dimension ${dim}? Nothing is written until you save; the original file is never changed.`
        : `Stage keeping only ${n} chunk${n === 1 ? '' : 's'} of dimension ${dim} (the other ${others} go)? Nothing is written until you save; the original file is never changed.`;
    const areas = sel.rects.map(([x0, z0, x1, z1]) => `${x0},${z0}:${x1},${z1}`).join(';');
    const s = (k: number) => `${k} chunk${k === 1 ? '' : 's'}`;
    this.pending = () =>
      kind === 'delete'
        ? this.stage({ kind: 'delete', dimension: dim, areas }, `delete ${s(n)} of dimension ${dim} (${areas})`)
        : this.stage({ kind: 'keep', dimension: dim, areas }, `keep only ${s(n)} of dimension ${dim} (${areas})`);
    this.els.dialog.showModal();
  }

  /** Stages `edit` (named `label` in the staged list); the redo list is dropped. */
  async stage(edit: StagedEdit, label: string): Promise<void> {
    this.staged.push({ edit, label });
    this.redoable = [];
    await this.renderStaged();
  }

  /** Asks through the confirmation dialog; runs `run` on `#confirm`. */
  confirm(text: string, run: () => Promise<void>): void {
    this.els.dialogText.textContent = text;
    this.pending = run;
    this.els.dialog.showModal();
  }

  private undo(): void {
    const e = this.staged.pop();
    if (!e) return;
    this.redoable.push(e);
    void this.renderStaged();
  }

  private redo(): void {
    const e = this.redoable.pop();
    if (!e) return;
    this.staged.push(e);
    void this.renderStaged();
  }

  private discard(): void {
    this.redoable = [...this.redoable, ...this.staged.reverse()];
    this.staged = [];
    void this.renderStaged();
  }

  /** The staged list, and what it would delete (the engine's dry run over all of it). */
  private async renderStaged(): Promise<void> {
    const version = ++this.stagedVersion;
    const { stagedPanel, stagedSummary, stagedList, undo, redo, save, discard } = this.els;
    stagedList.replaceChildren(
      ...this.staged.map(({ edit, label }) => {
        const li = document.createElement('li');
        li.textContent = label;
        li.dataset.kind = edit.kind;
        return li;
      }),
    );
    undo.disabled = this.staged.length === 0;
    redo.disabled = this.redoable.length === 0;
    save.disabled = discard.disabled = this.staged.length === 0;
    stagedPanel.dataset.edits = String(this.staged.length);
    stagedPanel.dataset.redo = String(this.redoable.length);
    for (const k of ['chunks', 'stubs', 'records', 'bytes', 'entities']) delete stagedSummary.dataset[k];
    if (this.staged.length === 0) {
      stagedSummary.textContent = 'nothing';
      stagedPanel.dataset.version = String(version);
      return;
    }
    const w = this.host.world();
    if (!w) return;
    stagedSummary.textContent = 'counting…';
    try {
      const r = await w.applyEdits(this.edits(), { dryRun: true });
      if (version !== this.stagedVersion) return; // the list changed meanwhile
      stagedSummary.textContent = `${chunksAndStubs(r)}, ${counted(r.records, 'record', 'records')}, ${counted(r.bytes, 'byte', 'bytes')} would be deleted (${counted(r.entities, 'entity', 'entities')})`;
      // Chunks as the map and the summary count them (with a Version record); stubs apart.
      stagedSummary.dataset.chunks = String(r.chunks - r.stubs);
      stagedSummary.dataset.stubs = String(r.stubs);
      stagedSummary.dataset.records = String(r.records);
      stagedSummary.dataset.bytes = String(r.bytes);
      stagedSummary.dataset.entities = String(r.entities);
    } catch (e) {
      if (version !== this.stagedVersion) return;
      stagedSummary.textContent = `cannot apply: ${(e as Error).message}`;
    }
    stagedPanel.dataset.version = String(version);
  }

  private edits(): StagedEdit[] {
    return this.staged.map((s) => s.edit);
  }

  /** Applies every staged edit in one batch. Returns whether it saved. */
  private async save(): Promise<boolean> {
    if (this.staged.length === 0) return true;
    const edits = this.edits();
    this.host.busy(true);
    try {
      this.host.say('Saving the staged edits…', 'busy');
      const w = await this.host.writable();
      const report = await w.applyEdits(edits);
      this.staged = [];
      this.redoable = [];
      await this.host.refresh(w, 'the edited world');
      await this.renderStaged();
      this.host.say(
        `Saved ${edits.length} edit${edits.length === 1 ? '' : 's'}: ${chunksAndStubs(report)}, ${report.records.toLocaleString('en')} records (${report.bytes.toLocaleString('en')} bytes) deleted, ${report.entities.toLocaleString('en')} entities, ${report.recordsRewritten.toLocaleString('en')} records rewritten. Export the world to keep it.`,
      );
      return true;
    } catch (e) {
      this.host.fail(e, 'saving the edits');
      return false;
    } finally {
      this.host.busy(false);
    }
  }

  /** Asks for a folder (first, while the click is a user gesture), saves the staged edits,
   * and writes the world into the folder (as the only export running). */
  private async saveFolder(): Promise<void> {
    if (!canSaveToFolder()) {
      this.host.say(NO_FOLDER_WRITES, 'error');
      return;
    }
    let dir: FileSystemDirectoryHandle;
    try {
      dir = await pickEmptyFolder();
    } catch (e) {
      if ((e as { name?: string }).name === 'AbortError') this.host.say('No folder picked: nothing written.');
      else this.host.fail(e, 'saving to a folder');
      return;
    }
    if (!(await this.save())) return;
    const w = this.host.world();
    if (!w) return;
    this.host.busy(true);
    try {
      this.host.say('Writing the world into the folder…', 'busy');
      const r = await this.exporter.exclusive(() => saveToFolder(w, dir, (n, total) => this.host.say(`Writing the world into the folder: ${n} of ${total} files…`, 'busy')));
      this.host.say(`Saved the world into “${r.folder}”: ${r.files} files, ${r.bytes.toLocaleString('en')} bytes. Copy that folder into Minecraft's worlds folder to play it.`);
    } catch (e) {
      this.host.fail(e, 'saving to a folder');
    } finally {
      this.host.busy(false);
    }
  }

  private async exportWorld(): Promise<void> {
    if (!(await this.save())) return;
    const w = this.host.world();
    if (!w) return;
    await this.exporter.run(w);
  }
}
