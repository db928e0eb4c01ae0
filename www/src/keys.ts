// The key browser: keys of the whole database under a prefix (text, or 0x-hex), in key
// order, at most LIMIT per search (one engine batch), each with its value's size; a click
// shows the value (NBT tree or hex). Keys print as text when they are printable ASCII.

import type { World } from 'strata-level/browser';

import { showValue, toHex } from './inspector.js';

const LIMIT = 500;

/** The bytes of a prefix typed by the user: `0x…` is hex, anything else UTF-8. */
export function parsePrefix(text: string): Uint8Array {
  const t = text.trim();
  if (/^0x([0-9a-f]{2})*$/i.test(t)) {
    const hex = t.slice(2);
    return Uint8Array.from({ length: hex.length / 2 }, (_, i) => parseInt(hex.slice(i * 2, i * 2 + 2), 16));
  }
  return new TextEncoder().encode(t);
}

/** The first key after every key starting with `prefix`; undefined when there is none. */
export function prefixEnd(prefix: Uint8Array): Uint8Array | undefined {
  let end = prefix.length;
  while (end > 0 && prefix[end - 1] === 0xff) end--;
  if (end === 0) return undefined;
  const out = prefix.slice(0, end);
  out[end - 1]! += 1;
  return out;
}

export function keyLabel(key: Uint8Array): string {
  return key.every((b) => b >= 0x20 && b < 0x7f) ? new TextDecoder().decode(key) : `0x${toHex(key)}`;
}

export class KeyBrowser {
  private world: World | undefined;

  constructor(
    private readonly section: HTMLElement,
    private readonly list: HTMLUListElement,
    private readonly view: HTMLElement,
    private readonly count: HTMLElement,
    /** Opens a record in the NBT editor. */
    private readonly onEdit?: (key: Uint8Array, label: string) => void,
  ) {}

  attach(world: World | undefined): void {
    this.world = world;
    this.section.hidden = world === undefined;
    delete this.section.dataset.keys;
    this.list.replaceChildren();
    this.view.replaceChildren();
    this.count.textContent = '';
  }

  async search(text: string): Promise<void> {
    const world = this.world;
    if (!world) return;
    const prefix = parsePrefix(text);
    const end = prefixEnd(prefix);
    const entries = (await world.db
      .iterator({ ...(prefix.length > 0 ? { gte: prefix } : {}), ...(end ? { lt: end } : {}), limit: LIMIT + 1 })
      .all()) as Array<[Uint8Array, Uint8Array]>;
    if (world !== this.world) return;
    const shown = entries.slice(0, LIMIT);
    this.count.textContent = entries.length > LIMIT ? `first ${LIMIT} keys` : `${shown.length} keys`;
    this.section.dataset.keys = String(shown.length);
    this.view.replaceChildren();
    this.list.replaceChildren(
      ...shown.map(([k, v]) => {
        const li = document.createElement('li');
        li.textContent = `${keyLabel(k)} · ${v.length} B`;
        li.addEventListener('click', () => {
          for (const other of this.list.children) other.classList.remove('selected');
          li.classList.add('selected');
          const edit = this.onEdit;
          void showValue(world, k, `key ${keyLabel(k)} · ${v.length} bytes`, this.view, edit && ((key) => edit(key, `key ${keyLabel(key)}`)));
        });
        return li;
      }),
    );
  }
}
