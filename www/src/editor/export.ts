// Exporting the open world as a `.mcworld` from the page: the package's streamed export
// (`World.exportMcworldTo`: the world copied into browser storage, compacted there and zipped
// into a file there, in steps), with `#export-progress` (a bar, the phase and bytes, a cancel
// button), then a download of the zip straight from browser storage (an object URL of the
// OPFS file's Blob), named after the world (`<name>.mcworld`).
//
// Invariants: the world is only read; at most one export runs; a cancel or a failure (an
// exhausted quota included) leaves nothing in browser storage (the package removes its
// temporary files) and says so; the previous export's zip is removed from browser storage when
// the next export starts (a download may still be reading it before then) or after
// KEEP_ZIP_MS. `#export-progress[data-phase]` and `[data-done]`/`[data-total]` mirror the
// figures for tests.

import type { ExportProgress, World } from 'strata-level/browser';

import type { EditorHost } from './editor.js';

/** How long a finished export's zip stays in browser storage for its download. */
const KEEP_ZIP_MS = 10 * 60_000;

const PHASES: Record<ExportProgress['phase'], string> = {
  copy: 'Copying the world into browser storage',
  compact: 'Compacting the copy (deleted data goes)',
  zip: 'Zipping',
  done: 'Done',
};

/** A file name from a world name: characters file systems refuse become `_`. */
export function fileNameOf(name: string | null | undefined): string {
  const clean = (name ?? '').replace(/[\\/:*?"<>|\u0000-\u001f]/g, '_').trim();
  return `${clean === '' ? 'world' : clean}.mcworld`;
}

export class McworldExporter {
  private running: AbortController | undefined;
  /** Bytes per export step (the package's default when unset; tests make it small). */
  stepBytes: number | undefined;
  private last: { discard(): Promise<void>; url: string; timer: ReturnType<typeof setTimeout> } | undefined;

  constructor(
    private readonly host: EditorHost,
    private readonly box: HTMLElement,
    cancel: HTMLButtonElement,
  ) {
    cancel.addEventListener('click', () => this.running?.abort());
  }

  /** Drops the previous export's zip (its object URL and its file in browser storage). */
  private async forgetLast(): Promise<void> {
    const last = this.last;
    this.last = undefined;
    if (!last) return;
    clearTimeout(last.timer);
    URL.revokeObjectURL(last.url);
    await last.discard().catch(() => {});
  }

  private show(p: ExportProgress): void {
    const bar = this.box.querySelector('progress')!;
    const text = this.box.querySelector('span')!;
    bar.value = p.total === 0 ? (p.phase === 'copy' ? 0 : 1) : p.done / p.total;
    const mb = (n: number) => (n / 1e6).toFixed(1);
    text.textContent = `${PHASES[p.phase]}: ${mb(p.done)} / ${mb(p.total)} MB`;
    this.box.dataset.phase = p.phase;
    this.box.dataset.done = String(p.done);
    this.box.dataset.total = String(p.total);
  }

  /** Runs `fn` (another export of the world: save to a folder) as the only export running;
   * the previous export's zip is dropped first, as an export does. */
  async exclusive<T>(fn: () => Promise<T>): Promise<T> {
    if (this.running) throw new Error('an export is running: wait for it to end, or cancel it');
    this.running = new AbortController();
    try {
      await this.forgetLast();
      return await fn();
    } finally {
      this.running = undefined;
    }
  }

  /** The kept zip's time is up: dropped, unless an export is running (it waits for it). */
  private expire(): void {
    if (!this.last) return;
    if (this.running) {
      this.last.timer = setTimeout(() => this.expire(), 60_000);
      return;
    }
    void this.forgetLast();
  }

  /** Exports `w` and offers the download. */
  async run(w: World): Promise<void> {
    if (this.running) return;
    const ac = new AbortController();
    this.running = ac;
    this.host.busy(true);
    try {
      await this.forgetLast();
      const name = fileNameOf(this.host.worldName?.() ?? (await w.summary()).levelDat?.name);
      this.box.hidden = false;
      this.show({ phase: 'copy', done: 0, total: 0, files: 0, bytes: 0 });
      this.host.say('Exporting the world: copying it into browser storage, compacting, zipping…', 'busy');
      const r = await w.exportMcworldTo({ signal: ac.signal, onProgress: (p) => this.show(p), ...(this.stepBytes ? { stepBytes: this.stepBytes } : {}) });
      const url = URL.createObjectURL(r.file!);
      const a = document.createElement('a');
      a.href = url;
      a.download = name;
      document.body.append(a);
      a.click();
      a.remove();
      const timer = setTimeout(() => this.expire(), KEEP_ZIP_MS);
      this.last = { discard: r.discard, url, timer };
      this.box.dataset.size = String(r.size);
      this.host.say(`Exported “${name}” (${r.size.toLocaleString('en')} bytes, ${r.files} files): open it with Minecraft to import it.`);
    } catch (e) {
      if (ac.signal.aborted) {
        this.box.dataset.phase = 'cancelled';
        this.host.say('Export cancelled: its temporary files were removed; the world is unchanged.');
      } else if ((e as { kind?: string }).kind === 'NoSpace') {
        this.box.dataset.phase = 'failed';
        this.host.say(
          'Browser storage is full: the export needs room for a copy of the world and its zip. Its temporary files were removed and the world is unchanged. Delete a stored world to make room, then export again.',
          'error',
        );
      } else {
        this.box.dataset.phase = 'failed';
        this.host.fail(e, 'the export');
      }
    } finally {
      this.running = undefined;
      this.box.hidden = true;
      this.host.busy(false);
    }
  }
}
