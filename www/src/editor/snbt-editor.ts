// The NBT editor of the page: any NBT record (from the key browser or the chunk inspector) or
// level.dat, edited in a dialog (`#snbt-dialog`) as a tree of typed rows (`#snbt-tree`,
// nbt-tree.ts; the default) or as SNBT text (`#snbt-text`), switched by `#snbt-view-tree` /
// `#snbt-view-text` (`#snbt-dialog[data-view]`), saved by `#snbt-save`, errors in `#snbt-error`.
// The text and the tree come from the engine (`World.snbt` / `levelDatSnbt`, `snbtTree`), which
// guarantees they parse back to the same bytes; values that did not change are written back
// byte-identical (src/bedrock/snbt.rs, snbt_tree.rs).
//
// Invariants: the original world is never written (saving goes through the host's writable
// copy, as the chunk editor does); text that does not parse is refused by the engine with its
// line and column, shown in the dialog, and nothing is written; a tree with values that do not
// fit their type is not saved (nor shown as text) until they are fixed; one record (or
// level.dat, replaced atomically) per save.

import { printSnbtTree, type World } from 'strata-level/browser';

import { NbtTree } from './nbt-tree.js';

export interface SnbtHost {
  world(): World | undefined;
  /** Reopens the current world writable on a copy (first edit), returning it. */
  writable(): Promise<World>;
  refresh(world: World, label: string): Promise<void>;
  say(text: string, kind?: 'info' | 'busy' | 'error'): void;
  busy(on: boolean): void;
}

/** What the dialog edits: a record (by key) or level.dat. */
type Target = { kind: 'record'; key: Uint8Array; label: string } | { kind: 'level.dat'; label: string };

export class SnbtEditor {
  private target: Target | undefined;
  private original = '';
  private view: 'tree' | 'text' = 'tree';
  private readonly tree: NbtTree;

  constructor(
    private readonly host: SnbtHost,
    private readonly els: {
      dialog: HTMLDialogElement;
      title: HTMLElement;
      text: HTMLTextAreaElement;
      tree: HTMLElement;
      viewTree: HTMLButtonElement;
      viewText: HTMLButtonElement;
      error: HTMLElement;
      save: HTMLButtonElement;
      cancel: HTMLButtonElement;
    },
  ) {
    this.tree = new NbtTree(els.tree, () => this.treeChanged());
    els.save.addEventListener('click', () => void this.save());
    els.cancel.addEventListener('click', () => {
      this.target = undefined;
      els.dialog.close();
    });
    els.viewTree.addEventListener('click', () => void this.showTree());
    els.viewText.addEventListener('click', () => this.showText());
  }

  private setView(view: 'tree' | 'text'): void {
    this.view = view;
    this.els.dialog.dataset.view = view;
    this.els.tree.hidden = view !== 'tree';
    this.els.text.hidden = view !== 'text';
    this.els.viewTree.setAttribute('aria-pressed', String(view === 'tree'));
    this.els.viewText.setAttribute('aria-pressed', String(view === 'text'));
  }

  private treeChanged(): void {
    const bad = this.tree.invalid();
    this.els.error.textContent = bad.length === 0 ? '' : `${bad.length} ${bad.length === 1 ? 'value does' : 'values do'} not fit ${bad.length === 1 ? 'its type' : 'their types'}: ${bad[0]}`;
  }

  /** The tree of the text view's SNBT (the engine parses it; its errors name line and column). */
  private async showTree(): Promise<void> {
    if (this.view === 'tree') return;
    const w = this.host.world();
    if (!w) return;
    try {
      this.tree.show(await w.snbtTree(this.els.text.value));
      this.els.error.textContent = '';
      this.setView('tree');
    } catch (e) {
      this.els.error.textContent = (e as Error).message;
    }
  }

  private showText(): void {
    if (this.view === 'text') return;
    if (this.tree.invalid().length > 0) return this.treeChanged();
    this.els.text.value = printSnbtTree(this.tree.value());
    this.els.error.textContent = '';
    this.setView('text');
  }

  /** Opens the dialog on record `key`. */
  async editRecord(key: Uint8Array, label: string): Promise<void> {
    const w = this.host.world();
    if (!w) return;
    try {
      const text = await w.snbt(key);
      if (text === undefined) throw new Error('the record is gone');
      await this.open({ kind: 'record', key, label }, text);
    } catch (e) {
      this.host.say(`Cannot edit ${label} as SNBT: ${(e as Error).message}`, 'error');
    }
  }

  /** Opens the dialog on level.dat. */
  async editLevelDat(): Promise<void> {
    const w = this.host.world();
    if (!w) return;
    try {
      await this.open({ kind: 'level.dat', label: 'level.dat' }, await w.levelDatSnbt());
    } catch (e) {
      this.host.say(`Cannot edit level.dat: ${(e as Error).message}`, 'error');
    }
  }

  private async open(target: Target, text: string): Promise<void> {
    const w = this.host.world();
    if (!w) return;
    this.tree.show(await w.snbtTree(text));
    this.target = target;
    this.original = text;
    this.els.title.textContent = `Edit ${target.label}`;
    this.els.text.value = text;
    this.els.error.textContent = '';
    this.els.dialog.dataset.target = target.kind === 'record' ? 'record' : 'level.dat';
    this.setView('tree');
    this.els.dialog.showModal();
  }

  private async save(): Promise<void> {
    const target = this.target;
    if (!target) return;
    if (this.view === 'tree' && this.tree.invalid().length > 0) return this.treeChanged();
    const text = this.view === 'tree' ? printSnbtTree(this.tree.value()) : this.els.text.value;
    if (text === this.original) {
      this.target = undefined;
      this.els.dialog.close();
      this.host.say(`${target.label}: nothing changed.`);
      return;
    }
    this.els.save.disabled = true;
    this.host.busy(true);
    try {
      const w = await this.host.writable();
      const r = target.kind === 'record' ? await w.setNbt(target.key, text) : await w.setLevelDat(text);
      this.target = undefined;
      this.els.dialog.close();
      await this.host.refresh(w, 'the edited world');
      this.host.say(`Saved ${target.label}: ${r.bytes.toLocaleString('en')} bytes${r.changed ? '' : ' (the same bytes as before)'}. Export the world to keep it.`);
    } catch (e) {
      // Stays open with the text: the engine's message names line and column.
      this.els.error.textContent = (e as Error).message;
    } finally {
      this.els.save.disabled = false;
      this.host.busy(false);
    }
  }
}
