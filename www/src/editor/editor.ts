// The world editor in the page: a chunk selection (`#selection`: rectangles `x0,z0:x1,z1`
// separated by `;`, inclusive chunk coordinates of the current dimension), delete the selected
// chunks (`#delete-chunks`) or keep only them (`#prune`), each confirmed in a dialog
// (`#confirm`), then export a `.mcworld` (`#export-mcworld`) the game imports.
//
// Invariants: the original world is never written. The first edit reopens the world
// writable on a copy (a `.mcworld`'s bytes unpacked in the engine's memory, or the world in
// browser storage, a picked folder being copied there first); every edit is one atomic batch
// in the engine (src/bedrock/edit.rs); `#world-summary` and the map are redrawn after it.
// `#map[data-selected]` = selected chunks that exist in the current dimension.

import type { Dimension, World } from 'strata-level/browser';

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

export interface EditorHost {
  /** The open world, if any. */
  world(): World | undefined;
  dimension(): Dimension;
  /** Reopens the current world writable on a copy (first edit), returning it. */
  writable(): Promise<World>;
  /** Redraws the summary and the map from the (edited) world. */
  refresh(world: World, label: string): Promise<void>;
  say(text: string, kind?: 'info' | 'busy' | 'error'): void;
  fail(e: unknown, what: string): void;
  busy(on: boolean): void;
}

export class Editor {
  private chunks: Array<[number, number]> = [];
  private attached: World | undefined;
  private pending: (() => Promise<void>) | undefined;

  constructor(
    private readonly host: EditorHost,
    private readonly els: {
      section: HTMLElement;
      selection: HTMLInputElement;
      map: HTMLElement;
      deleteBtn: HTMLButtonElement;
      pruneBtn: HTMLButtonElement;
      exportBtn: HTMLButtonElement;
      dialog: HTMLDialogElement;
      dialogText: HTMLElement;
      confirm: HTMLButtonElement;
      cancel: HTMLButtonElement;
      staged: HTMLElement;
    },
  ) {
    els.selection.addEventListener('input', () => void this.count());
    els.deleteBtn.addEventListener('click', () => this.ask('delete'));
    els.pruneBtn.addEventListener('click', () => this.ask('prune'));
    els.exportBtn.addEventListener('click', () => void this.exportWorld());
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

  /** A world was opened (or redrawn): the chunk list of the current dimension. */
  async attach(world: World | undefined): Promise<void> {
    this.els.section.hidden = world === undefined;
    this.attached = world;
    const chunks = world ? await world.chunks(this.host.dimension()) : [];
    if (this.attached !== world) return; // another world was opened meanwhile
    this.chunks = chunks;
    await this.count();
  }

  /** Adds chunk (x, z) to the selection (a ctrl-click on the map). */
  toggle(x: number, z: number): void {
    const text = this.els.selection.value.trim();
    this.els.selection.value = `${text}${text ? ';' : ''}${x},${z}:${x},${z}`;
    void this.count();
  }

  private selected(): { rects: Rect[]; chunks: Array<[number, number]> } {
    const rects = parseSelection(this.els.selection.value);
    return { rects, chunks: this.chunks.filter(([x, z]) => inSelection(rects, x, z)) };
  }

  private async count(): Promise<void> {
    try {
      const { chunks } = this.selected();
      this.els.map.dataset.selected = String(chunks.length);
      this.els.staged.textContent = `${chunks.length} of ${this.chunks.length} chunks selected`;
      this.els.selection.setCustomValidity('');
    } catch (e) {
      this.els.map.dataset.selected = '0';
      this.els.staged.textContent = (e as Error).message;
      this.els.selection.setCustomValidity((e as Error).message);
    }
  }

  private ask(kind: 'delete' | 'prune'): void {
    let sel: { rects: Rect[]; chunks: Array<[number, number]> };
    try {
      sel = this.selected();
    } catch (e) {
      this.host.fail(e, 'the selection');
      return;
    }
    const dim = this.host.dimension();
    const n = sel.chunks.length;
    const others = this.chunks.length - n;
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
        ? `Delete ${n} chunk${n === 1 ? '' : 's'} (every record and entity of them) from dimension ${dim}? The original file is not changed; export the result to keep it.`
        : `Keep only ${n} chunk${n === 1 ? '' : 's'} of dimension ${dim} and delete the other ${others}? The original file is not changed; export the result to keep it.`;
    this.pending = () => this.apply(kind, sel.rects);
    this.els.dialog.showModal();
  }

  private async apply(kind: 'delete' | 'prune', rects: Rect[]): Promise<void> {
    const dim = this.host.dimension();
    this.host.busy(true);
    try {
      this.host.say(kind === 'delete' ? 'Deleting chunks…' : 'Pruning…', 'busy');
      const w = await this.host.writable();
      const report = kind === 'delete' ? await w.deleteChunks(dim, rects) : await w.prune(dim, rects);
      await this.host.refresh(w, 'the edited world');
      this.host.say(
        `${kind === 'delete' ? 'Deleted' : 'Pruned'}: ${report.chunks.toLocaleString('en')} chunks, ${report.records.toLocaleString('en')} records (${report.bytes.toLocaleString('en')} bytes). Export the world to keep it.`,
      );
    } catch (e) {
      this.host.fail(e, kind === 'delete' ? 'deleting chunks' : 'pruning');
    } finally {
      this.host.busy(false);
    }
  }

  private async exportWorld(): Promise<void> {
    const w = this.host.world();
    if (!w) return;
    this.host.busy(true);
    try {
      this.host.say('Compacting and zipping the world…', 'busy');
      const bytes = await w.exportMcworld();
      const name = ((await w.summary()).levelDat?.name ?? 'world').replace(/[\\/:*?"<>|]/g, '_') || 'world';
      const url = URL.createObjectURL(new Blob([bytes as Uint8Array<ArrayBuffer>], { type: 'application/octet-stream' }));
      const a = document.createElement('a');
      a.href = url;
      a.download = `${name}.mcworld`;
      document.body.append(a);
      a.click();
      a.remove();
      setTimeout(() => URL.revokeObjectURL(url), 60_000);
      this.host.say(`Exported “${name}.mcworld” (${bytes.length.toLocaleString('en')} bytes): open it with Minecraft to import it.`);
    } catch (e) {
      this.host.fail(e, 'the export');
    } finally {
      this.host.busy(false);
    }
  }
}
