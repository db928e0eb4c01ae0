// The NBT editor of the page: any NBT record (from the key browser or the chunk inspector) or
// level.dat, edited as SNBT text in a dialog (`#snbt-dialog`: `#snbt-text`, `#snbt-save`,
// `#snbt-cancel`, errors in `#snbt-error`). The text comes from the engine (`World.snbt` /
// `levelDatSnbt`), which guarantees it parses back to the same bytes; values that did not
// change are written back byte-identical (src/bedrock/snbt.rs).
//
// Invariants: the original world is never written (saving goes through the host's writable
// copy, as the chunk editor does); text that does not parse is refused by the engine with its
// line and column, shown in the dialog, and nothing is written; one record (or level.dat,
// replaced atomically) per save.

import type { World } from 'strata-level/browser';

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

  constructor(
    private readonly host: SnbtHost,
    private readonly els: {
      dialog: HTMLDialogElement;
      title: HTMLElement;
      text: HTMLTextAreaElement;
      error: HTMLElement;
      save: HTMLButtonElement;
      cancel: HTMLButtonElement;
    },
  ) {
    els.save.addEventListener('click', () => void this.save());
    els.cancel.addEventListener('click', () => {
      this.target = undefined;
      els.dialog.close();
    });
  }

  /** Opens the dialog on record `key`. */
  async editRecord(key: Uint8Array, label: string): Promise<void> {
    const w = this.host.world();
    if (!w) return;
    try {
      const text = await w.snbt(key);
      if (text === undefined) throw new Error('the record is gone');
      this.open({ kind: 'record', key, label }, text);
    } catch (e) {
      this.host.say(`Cannot edit ${label} as SNBT: ${(e as Error).message}`, 'error');
    }
  }

  /** Opens the dialog on level.dat. */
  async editLevelDat(): Promise<void> {
    const w = this.host.world();
    if (!w) return;
    try {
      this.open({ kind: 'level.dat', label: 'level.dat' }, await w.levelDatSnbt());
    } catch (e) {
      this.host.say(`Cannot edit level.dat: ${(e as Error).message}`, 'error');
    }
  }

  private open(target: Target, text: string): void {
    this.target = target;
    this.original = text;
    this.els.title.textContent = `Edit ${target.label} (SNBT)`;
    this.els.text.value = text;
    this.els.error.textContent = '';
    this.els.dialog.dataset.target = target.kind === 'record' ? 'record' : 'level.dat';
    this.els.dialog.showModal();
  }

  private async save(): Promise<void> {
    const target = this.target;
    if (!target) return;
    const text = this.els.text.value;
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
