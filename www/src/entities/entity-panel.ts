// The entity panel: the entities and block entities of the shown dimension (World.entities)
// as map markers (small dots coloured by identifier; entities on by default, block entities
// on request) and as a table of identifiers with their counts in the dimension and in the
// editor's selection; a row's "Delete in selection…" stages the deletion of those entities
// (never block entities) after a confirmation, and a click on a marker shows its NBT (editable
// as SNBT) with "Delete this entity…" (staged too). An identifier opens the list of where its
// entities are (chests, spawners…): a click goes there.
//
// Hooks: `#entities-section[data-entities]` (entities and block entities listed), rows
// `#entity-table tr[data-identifier][data-kind][data-count][data-selected]`, buttons
// `.delete-entities`, `.show-instances`, `tr.instances .goto-entity[data-x][data-z]`,
// `#entity-view` (the clicked entity's record) and its `.delete-entity`.
//
// Invariants: the list is the engine's for the world and dimension shown (reloaded after every
// saved edit); deletions are staged in the editor (undo/redo) and saved with the other staged
// edits in one atomic batch on the host's writable copy.

import type { Dimension, EntityInfo, StagedEdit, World } from 'strata-level/browser';

import type { Rect } from '../editor/editor.js';
import { inSelection } from '../editor/editor.js';
import { showValue } from '../inspector.js';
import type { Marker } from '../map-view.js';

export interface EntityHost {
  world(): World | undefined;
  dimension(): Dimension;
  fail(e: unknown, what: string): void;
  /** Asks the user to confirm `text`; runs `run` if they do. */
  confirm(text: string, run: () => Promise<void>): void;
  /** Stages an edit in the editor's list (saved with the others). */
  stage(edit: StagedEdit, label: string): Promise<void>;
  /** The entity markers changed (toggles, another world or dimension). */
  markersChanged(): void;
  /** Opens a record in the SNBT editor. */
  edit(key: Uint8Array, label: string): void;
  /** Centres the map on block (x, z) of the dimension shown, close up. */
  goTo(x: number, z: number): void;
}

/** Instances listed under an identifier's row (the rest are counted, not listed). */
const MAX_INSTANCES = 200;

function colourOf(identifier: string): string {
  let h = 0;
  for (const c of identifier) h = (Math.imul(h, 31) + c.charCodeAt(0)) >>> 0;
  return `hsl(${h % 360}, 80%, 60%)`;
}

function hexBytes(hex: string): Uint8Array {
  return Uint8Array.from({ length: hex.length / 2 }, (_, i) => parseInt(hex.slice(i * 2, i * 2 + 2), 16));
}

export class EntityPanel {
  private list: EntityInfo[] = [];
  private rects: Rect[] = [];
  /** Rows (kind + identifier) whose instances are listed. */
  private readonly open = new Set<string>();
  private loaded: World | undefined;

  constructor(
    private readonly host: EntityHost,
    private readonly els: {
      section: HTMLElement;
      showEntities: HTMLInputElement;
      showBlockEntities: HTMLInputElement;
      count: HTMLElement;
      table: HTMLTableSectionElement;
      view: HTMLElement;
    },
  ) {
    els.showEntities.addEventListener('change', () => host.markersChanged());
    els.showBlockEntities.addEventListener('change', () => host.markersChanged());
  }

  /** Lists the entities of `world`'s current dimension (or clears the panel). */
  async load(world: World | undefined): Promise<void> {
    if (this.loaded !== world) this.open.clear();
    this.loaded = world;
    this.els.section.hidden = world === undefined;
    this.els.view.replaceChildren();
    if (!world) {
      this.list = [];
      this.render();
      return;
    }
    const { entities, unreadable } = await world.entities(this.host.dimension());
    if (this.loaded !== world) return;
    this.list = entities;
    this.els.count.textContent = `${entities.length.toLocaleString('en')} listed${unreadable > 0 ? `, ${unreadable} unreadable` : ''}`;
    this.render();
    this.host.markersChanged();
  }

  /** The editor's selection changed. */
  setSelection(rects: Rect[]): void {
    this.rects = rects;
    this.render();
  }

  markers(): Marker[] {
    const out: Marker[] = [];
    for (const e of this.list) {
      const block = e.kind === 'block entity';
      if (block ? !this.els.showBlockEntities.checked : !this.els.showEntities.checked) continue;
      out.push({ x: Math.floor(e.x), z: Math.floor(e.z), label: `${e.identifier} (${e.kind}) at ${Math.floor(e.x)}, ${Math.floor(e.y)}, ${Math.floor(e.z)}`, colour: colourOf(e.identifier), small: true, data: e });
    }
    return out;
  }

  /** A marker of ours was clicked: its record's NBT. */
  async show(e: EntityInfo): Promise<void> {
    const w = this.host.world();
    if (!w) return;
    const heading = `${e.identifier} · ${e.kind} at ${Math.floor(e.x)}, ${Math.floor(e.y)}, ${Math.floor(e.z)} · chunk ${e.cx}, ${e.cz}${e.root > 0 ? ` · compound ${e.root + 1} of its record` : ''}`;
    this.els.section.hidden = false;
    await showValue(w, hexBytes(e.key), heading, this.els.view, (key) => this.host.edit(key, `${e.identifier} (${e.kind})`));
    this.els.view.dataset.identifier = e.identifier;
    if (e.kind !== 'block entity') {
      const b = document.createElement('button');
      b.type = 'button';
      b.className = 'delete-entity';
      b.textContent = 'Delete this entity…';
      const where = `${Math.floor(e.x)}, ${Math.floor(e.y)}, ${Math.floor(e.z)}`;
      const dim = this.host.dimension();
      b.addEventListener('click', () =>
        this.host.confirm(`Stage the deletion of this ${e.identifier} at ${where} (dimension ${dim})? Nothing is written until you save; the original file is never changed.`, () =>
          this.host.stage({ kind: 'entity', dimension: dim, key: e.key, root: e.root, identifier: e.identifier }, `delete the ${e.identifier} at ${where} of dimension ${dim}`),
        ),
      );
      this.els.view.append(b);
    }
    this.els.view.scrollIntoView({ block: 'nearest' });
  }

  private render(): void {
    const rows = new Map<string, { identifier: string; kind: string; count: number; selected: number }>();
    for (const e of this.list) {
      const key = `${e.kind}\u0000${e.identifier}`;
      const r = rows.get(key) ?? { identifier: e.identifier, kind: e.kind, count: 0, selected: 0 };
      r.count += 1;
      if (this.rects.length > 0 && inSelection(this.rects, e.cx, e.cz)) r.selected += 1;
      rows.set(key, r);
    }
    const sorted = [...rows.values()].sort((a, b) => b.count - a.count || a.identifier.localeCompare(b.identifier));
    this.els.section.dataset.entities = String(this.list.length);
    this.els.table.replaceChildren(
      ...sorted.flatMap((r) => {
        const rowKey = `${r.kind}\u0000${r.identifier}`;
        const tr = document.createElement('tr');
        tr.dataset.identifier = r.identifier;
        tr.dataset.kind = r.kind;
        tr.dataset.count = String(r.count);
        tr.dataset.selected = String(r.selected);
        const sw = document.createElement('span');
        sw.className = 'swatch';
        sw.style.background = colourOf(r.identifier);
        const name = document.createElement('td');
        // The identifier toggles the list of its instances (where each is; a click goes there).
        const toggle = document.createElement('button');
        toggle.type = 'button';
        toggle.className = 'link show-instances';
        toggle.textContent = r.identifier;
        toggle.title = 'list where they are';
        toggle.setAttribute('aria-expanded', String(this.open.has(rowKey)));
        toggle.addEventListener('click', () => {
          if (!this.open.delete(rowKey)) this.open.add(rowKey);
          this.render();
        });
        name.append(sw, toggle);
        const cells = [r.kind, r.count.toLocaleString('en'), r.selected.toLocaleString('en')].map((t) => {
          const td = document.createElement('td');
          td.textContent = t;
          return td;
        });
        const act = document.createElement('td');
        if (r.kind !== 'block entity' && r.selected > 0) {
          const b = document.createElement('button');
          b.type = 'button';
          b.className = 'delete-entities';
          b.textContent = 'Delete in selection…';
          b.addEventListener('click', () => this.askDelete(r.identifier, r.selected));
          act.append(b);
        }
        tr.append(name, ...cells, act);
        return this.open.has(rowKey) ? [tr, this.instancesRow(r.identifier, r.kind, r.count)] : [tr];
      }),
    );
  }

  /** A row listing where the entities of one identifier and kind are (at most MAX_INSTANCES);
   * a click centres the map there and shows the record. */
  private instancesRow(identifier: string, kind: string, count: number): HTMLTableRowElement {
    const tr = document.createElement('tr');
    tr.className = 'instances';
    tr.dataset.identifier = identifier;
    tr.dataset.kind = kind;
    const td = document.createElement('td');
    td.colSpan = 5;
    const ul = document.createElement('ul');
    const of = this.list.filter((e) => e.identifier === identifier && e.kind === kind);
    for (const e of of.slice(0, MAX_INSTANCES)) {
      const li = document.createElement('li');
      const b = document.createElement('button');
      b.type = 'button';
      b.className = 'link goto-entity';
      const [x, y, z] = [e.x, e.y, e.z].map(Math.floor) as [number, number, number];
      b.dataset.x = String(x);
      b.dataset.z = String(z);
      b.textContent = `${x}, ${y}, ${z}`;
      b.title = `chunk ${e.cx}, ${e.cz}: show it on the map and its record`;
      b.addEventListener('click', () => {
        this.host.goTo(x, z);
        this.show(e).catch((err: unknown) => this.host.fail(err, 'the entity'));
      });
      li.append(b);
      ul.append(li);
    }
    td.append(ul);
    if (count > MAX_INSTANCES) {
      const more = document.createElement('p');
      more.className = 'note';
      more.textContent = `… and ${(count - MAX_INSTANCES).toLocaleString('en')} more (the first ${MAX_INSTANCES} in key order are listed).`;
      td.append(more);
    }
    tr.append(td);
    return tr;
  }

  private askDelete(identifier: string, n: number): void {
    const dim = this.host.dimension();
    const areas = this.rects.map(([x0, z0, x1, z1]) => `${x0},${z0}:${x1},${z1}`).join(';');
    const what = `${n} ${identifier} entit${n === 1 ? 'y' : 'ies'}`;
    this.host.confirm(`Stage the deletion of ${what} stored in the selected chunks of dimension ${dim}? Nothing is written until you save; the original file is never changed.`, () =>
      this.host.stage({ kind: 'entities', dimension: dim, areas, identifier }, `delete ${what} of dimension ${dim} (${areas})`),
    );
  }
}
