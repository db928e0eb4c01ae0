// The chunk inspector: every record of the clicked chunk (tag, subchunk, size) and, for the
// selected record (or any key, for the key browser), its value as an NBT tree (collapsible) when it decodes as NBT, else a hex
// view (first 64 KiB). Renders with DOM nodes and textContent only (values are untrusted).

import type { ChunkRecord, NbtRoot, World } from 'strata-level/browser';

const DIMENSIONS = ['Overworld', 'Nether', 'The End'];
const HEX_LIMIT = 64 * 1024;

function el<K extends keyof HTMLElementTagNameMap>(tag: K, text?: string, cls?: string): HTMLElementTagNameMap[K] {
  const e = document.createElement(tag);
  if (text !== undefined) e.textContent = text;
  if (cls) e.className = cls;
  return e;
}

export function hexDump(bytes: Uint8Array): string {
  const lines: string[] = [];
  const n = Math.min(bytes.length, HEX_LIMIT);
  for (let off = 0; off < n; off += 16) {
    const row = bytes.subarray(off, Math.min(off + 16, n));
    const hex = [...row].map((b) => b.toString(16).padStart(2, '0')).join(' ');
    const ascii = [...row].map((b) => (b >= 0x20 && b < 0x7f ? String.fromCharCode(b) : '.')).join('');
    lines.push(`${off.toString(16).padStart(8, '0')}  ${hex.padEnd(47)}  ${ascii}`);
  }
  if (bytes.length > n) lines.push(`… ${bytes.length - n} more bytes`);
  return lines.join('\n');
}

function nbtNode(name: string, value: unknown): HTMLElement {
  if (value !== null && typeof value === 'object') {
    const entries = Array.isArray(value) ? value.map((v, i) => [String(i), v] as const) : Object.entries(value as Record<string, unknown>);
    const d = el('details');
    d.open = entries.length <= 12;
    const s = el('summary');
    s.append(el('span', name, 'k'), document.createTextNode(Array.isArray(value) ? ` [${entries.length}]` : ` {${entries.length}}`));
    d.append(s);
    for (const [k, v] of entries) d.append(nbtNode(k, v));
    return d;
  }
  const leaf = el('div', undefined, 'leaf');
  leaf.append(el('span', `${name}: `, 'k'), el('span', JSON.stringify(value), 'v'));
  return leaf;
}

export function nbtTree(roots: NbtRoot[]): HTMLElement {
  const box = el('div', undefined, 'nbt');
  roots.forEach((r, i) => box.append(nbtNode(r.name === '' ? `root ${i}` : r.name, r.value)));
  return box;
}

export class Inspector {
  constructor(
    private readonly section: HTMLElement,
    private readonly title: HTMLElement,
    private readonly list: HTMLUListElement,
    private readonly view: HTMLElement,
  ) {}

  clear(): void {
    this.section.hidden = true;
    this.list.replaceChildren();
    this.view.replaceChildren();
  }

  async show(world: World, dimension: 0 | 1 | 2, x: number, z: number): Promise<void> {
    const records = await world.chunkRecords(dimension, x, z);
    this.section.hidden = false;
    this.section.dataset.chunk = `${dimension},${x},${z}`;
    this.section.dataset.records = String(records.length);
    this.title.textContent = `Chunk ${x}, ${z} (${DIMENSIONS[dimension]}) — blocks ${x * 16}…${x * 16 + 15}, ${z * 16}…${z * 16 + 15}: ${records.length} records`;
    this.view.replaceChildren();
    this.list.replaceChildren(
      ...records.map((r) => {
        const li = el('li', `${r.name}${r.subchunk === null ? '' : ` y=${r.subchunk}`} · ${r.size} B`);
        li.dataset.tag = String(r.tag);
        li.dataset.name = r.name;
        li.addEventListener('click', () => {
          for (const other of this.list.children) other.classList.remove('selected');
          li.classList.add('selected');
          void this.showRecord(world, r);
        });
        return li;
      }),
    );
    if (records.length === 0) this.list.append(el('li', 'no records in this chunk'));
  }

  /** Opens a record in the NBT editor (set by the page). */
  onEdit: ((key: Uint8Array, label: string) => void) | undefined;

  private async showRecord(world: World, r: ChunkRecord): Promise<void> {
    const edit = this.onEdit;
    await showValue(world, r.key, `${r.name} · key ${toHex(r.key)} · ${r.size} bytes`, this.view, edit && ((key) => edit(key, `${r.name} ${toHex(key)}`)));
  }
}

export function toHex(bytes: Uint8Array): string {
  return [...bytes].map((b) => b.toString(16).padStart(2, '0')).join('');
}

/** Shows the value of `key` in `view`: an NBT tree when it decodes as NBT, else a hex dump. */
export async function showValue(
  world: World,
  key: Uint8Array,
  heading: string,
  view: HTMLElement,
  onEdit?: (key: Uint8Array) => void,
): Promise<void> {
  const head = el('p', heading);
  try {
    const roots = await world.nbt(key);
    if (roots !== undefined) {
      view.replaceChildren(head, nbtTree(roots));
      if (onEdit) {
        const b = document.createElement('button');
        b.type = 'button';
        b.className = 'edit-snbt';
        b.textContent = 'Edit as SNBT…';
        b.addEventListener('click', () => onEdit(key));
        head.append(' ', b);
      }
      return;
    }
  } catch {
    // Not NBT: show the bytes.
  }
  const value = (await world.db.get(key)) as Uint8Array | undefined;
  view.replaceChildren(head, el('pre', value ? hexDump(value) : '(absent)'));
}
