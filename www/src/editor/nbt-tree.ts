// The NBT tree editor of the SNBT dialog: a record (or level.dat) as a tree of typed rows —
// rename a compound's tags, edit values in inputs checked against their type, add and remove
// tags and list elements, edit arrays as number lists. The tree is the engine's
// (`World.snbtTree`); saving prints it back as SNBT (`printSnbtTree`) for the engine to parse
// and write, so the engine stays the only SNBT parser and unedited values stay byte-identical.
//
// Invariants: the rows edit `roots` in place and nothing else; an input whose text does not
// fit its type leaves its node unchanged and is marked (`aria-invalid`, its reason in `title`)
// until fixed, and `invalid()` counts those; a list only takes elements of its element type
// (an untyped empty list takes the first element's); containers render their rows when first
// opened (`.nbt-toggle`), so a record with thousands of elements opens at once. Stable hooks
// for tests: `li.nbt-node[data-path]` (root index, then names / indices, each URI-encoded, joined by `/`),
// `.nbt-name`, `.nbt-value`, `.nbt-remove`, `.nbt-add-type` + `.nbt-add`.

import { emptyNode, leafFromInput, leafText, SNBT_TYPES, type SnbtLeafType, type SnbtNode, type SnbtRoot, type SnbtType } from 'strata-level/browser';

type Container = Extract<SnbtNode, { t: 'compound' } | { t: 'list' }>;
type Leaf = Extract<SnbtNode, { s: string }>;

const ARRAYS = new Set(['byte_array', 'int_array', 'long_array']);

function el<K extends keyof HTMLElementTagNameMap>(tag: K, cls?: string, text?: string): HTMLElementTagNameMap[K] {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}

function summary(node: Container): string {
  if (node.t === 'compound') return `{${node.v.length} ${node.v.length === 1 ? 'tag' : 'tags'}}`;
  return `[${node.v.length} × ${node.e === 'end' ? 'empty' : node.e}]`;
}

export class NbtTree {
  private roots: SnbtRoot[] = [];
  private readonly bad = new Set<HTMLElement>();

  constructor(
    private readonly root: HTMLElement,
    private readonly changed: () => void,
  ) {}

  /** Shows `roots` (edited in place from now on). */
  show(roots: SnbtRoot[]): void {
    this.roots = roots;
    this.bad.clear();
    const list = el('ul', 'nbt-tree');
    roots.forEach((r, i) => {
      list.append(
        this.row(String(i), r.name === '' ? undefined : r.name, r.tag, {
          set: (n) => (r.tag = n),
          rename: r.name === '' ? undefined : (name) => (r.name = name),
        }),
      );
    });
    this.root.replaceChildren(list);
    // The first root is open.
    this.root.querySelector<HTMLButtonElement>('.nbt-toggle')?.click();
  }

  /** The tree as edited. */
  value(): SnbtRoot[] {
    return this.roots;
  }

  /** Inputs whose text does not fit their type (saving waits until there are none). */
  invalid(): string[] {
    return [...this.bad].map((e) => e.title);
  }

  private mark(input: HTMLElement, error: string | undefined): void {
    if (error === undefined) {
      this.bad.delete(input);
      input.removeAttribute('aria-invalid');
      input.title = '';
    } else {
      this.bad.add(input);
      input.setAttribute('aria-invalid', 'true');
      input.title = error;
    }
    this.changed();
  }

  private row(path: string, name: string | undefined, node: SnbtNode, at: { set(n: SnbtNode): void; rename?: (name: string) => void; remove?: () => void; index?: number }): HTMLLIElement {
    const li = el('li', 'nbt-node');
    li.dataset.path = path;
    li.dataset.type = node.t;
    const head = el('span', 'nbt-head');
    if (at.rename && name !== undefined) {
      const n = el('input', 'nbt-name');
      n.value = name;
      n.size = Math.max(4, Math.min(32, name.length + 1));
      n.setAttribute('aria-label', 'tag name');
      n.addEventListener('input', () => {
        at.rename!(n.value);
        this.changed();
      });
      head.append(n);
    } else if (at.index !== undefined) {
      head.append(el('span', 'nbt-index', `[${at.index}]`));
    } else if (name !== undefined) {
      head.append(el('span', 'nbt-index', name));
    }
    head.append(el('span', 'nbt-type', node.t));
    if (node.t === 'compound' || node.t === 'list') {
      const toggle = el('button', 'nbt-toggle', '▸');
      toggle.type = 'button';
      toggle.setAttribute('aria-expanded', 'false');
      toggle.setAttribute('aria-label', 'open');
      const sum = el('span', 'nbt-summary', summary(node));
      let box: HTMLElement | undefined;
      toggle.addEventListener('click', () => {
        const open = toggle.getAttribute('aria-expanded') !== 'true';
        toggle.setAttribute('aria-expanded', String(open));
        toggle.textContent = open ? '▾' : '▸';
        if (open && !box) li.append((box = this.children(path, node, () => (sum.textContent = summary(node)))));
        if (box) box.hidden = !open;
      });
      head.prepend(toggle);
      head.append(sum);
      li.append(head);
    } else {
      li.append(head, this.leafInput(node, at.set));
    }
    if (at.remove) {
      const rm = el('button', 'nbt-remove', '×');
      rm.type = 'button';
      rm.title = 'remove';
      rm.addEventListener('click', () => at.remove!());
      head.append(rm);
    }
    return li;
  }

  private leafInput(node: Leaf, set: (n: SnbtNode) => void): HTMLElement {
    const text = leafText(node);
    if (node.t === 'string' && text.includes('\r')) {
      // Text fields turn CR and CRLF into LF: such a string is shown, and edited in the text
      // view, never silently changed here.
      const span = el('span', 'nbt-value nbt-readonly', node.s);
      span.title = 'holds carriage returns: edit it in the SNBT text view';
      return span;
    }
    const input = ARRAYS.has(node.t) || (node.t === 'string' && (text.length > 60 || text.includes('\n'))) ? el('textarea', 'nbt-value') : el('input', 'nbt-value');
    input.value = text;
    if (input instanceof HTMLTextAreaElement) input.rows = Math.min(8, 1 + Math.floor(text.length / 80));
    input.setAttribute('aria-label', `${node.t} value`);
    input.addEventListener('input', () => {
      try {
        set(leafFromInput(node.t as SnbtLeafType, input.value));
        this.mark(input, undefined);
      } catch (e) {
        this.mark(input, (e as Error).message);
      }
    });
    return input;
  }

  /** The rows of a container and its add control; `resized` updates its summary. */
  private children(path: string, node: Container, resized: () => void): HTMLElement {
    const box = el('div', 'nbt-children');
    const render = (): void => {
      // Rows being replaced take their invalid marks along.
      for (const e of [...this.bad]) if (box.contains(e)) this.bad.delete(e);
      const ul = el('ul');
      if (node.t === 'compound') {
        node.v.forEach((entry, i) => {
          ul.append(
            this.row(`${path}/${encodeURIComponent(entry[0])}`, entry[0], entry[1], {
              set: (n) => (entry[1] = n),
              rename: (name) => (entry[0] = name),
              remove: () => {
                node.v.splice(i, 1);
                render();
              },
            }),
          );
        });
      } else {
        node.v.forEach((child, i) => {
          ul.append(
            this.row(`${path}/${i}`, undefined, child, {
              index: i,
              set: (n) => (node.v[i] = n),
              remove: () => {
                node.v.splice(i, 1);
                render();
              },
            }),
          );
        });
      }
      box.replaceChildren(ul, this.addControl(node, render));
      resized();
      this.changed();
    };
    render();
    return box;
  }

  private addControl(node: Container, render: () => void): HTMLElement {
    const p = el('div', 'nbt-add-row');
    const type = el('select', 'nbt-add-type');
    type.setAttribute('aria-label', 'type of the new tag');
    const fixed = node.t === 'list' && node.e !== 'end' ? node.e : undefined;
    for (const t of fixed ? [fixed] : SNBT_TYPES) type.append(new Option(t, t));
    const name = el('input', 'nbt-add-name');
    name.placeholder = 'name';
    name.setAttribute('aria-label', 'name of the new tag');
    const add = el('button', 'nbt-add', node.t === 'compound' ? 'add tag' : 'add element');
    add.type = 'button';
    add.addEventListener('click', () => {
      const t = type.value as SnbtType;
      if (node.t === 'compound') {
        node.v.push([name.value, emptyNode(t)]);
      } else {
        if (node.e === 'end') node.e = t;
        node.v.push(emptyNode(t));
      }
      render();
    });
    if (node.t === 'compound') p.append(name);
    p.append(type, add);
    return p;
  }
}
