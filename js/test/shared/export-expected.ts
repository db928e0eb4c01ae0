// The streamed `.mcworld` export in Node, as the reference the browser suites (Firefox, WebKit)
// hold their exports to: the engine makes byte-identical zips from the same files whatever the
// storage, so a world folder exported here and the same files imported into OPFS or IndexedDB
// and exported in a browser must give the same bytes and the same progress events. Also the
// figures pinned for the worlds the browser suites export (computed here and by the native
// CLI's tests/export_stream.rs for amulet_1_16).

import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

import { expect } from 'vitest';

import { copyDir, tempDir, worlds, worldsDir } from '../helpers.js';

export interface ExportEvent {
  phase: 'copy' | 'compact' | 'zip' | 'done';
  done: number;
  total: number;
  files: number;
  bytes: number;
}

export interface ZipFigures {
  size: number;
  crc32: number;
  sha256: string;
}

export interface NodeExport {
  zip: ZipFigures;
  report: { files: number; bytes: number; size: number };
  events: ExportEvent[];
  /** Bytes of the world's files the copy phase reads (every file but db/LOCK). */
  worldBytes: number;
  /** Bytes of every file of the world folder (what a browser import writes). */
  folderBytes: number;
  /** The world's figures (db.scan) and chunks per dimension (summary). */
  scan: { entries: number; keyBytes: number; valueBytes: number; crc32c: number };
  chunks: [number, number, number];
}

/** The zips of the worlds the browser suites export (step size does not change the bytes). */
export const EXPORTED: Record<string, ZipFigures & { files: number }> = {
  // Also editor.test.ts and tests/export_stream.rs.
  amulet_1_16: { size: 1_596_286, crc32: 0x1871bd91, sha256: '655b8a8f5b83dc3db8dfaa84d013742893c435dc33b666ec7790b8cadad8f3fd', files: 9 },
  mcpe_0_11_mcedit_testdb: { size: 650_954, crc32: 0xc55ebd5c, sha256: '50822887caf486ac6cfefc4737b5a9654c43d9a1bc11b8c339f4f8024ec79d89', files: 8 },
};

/** CRC-32 (zip's). */
export function crc32(data: Uint8Array): number {
  let c = ~0;
  for (const b of data) {
    c ^= b;
    for (let k = 0; k < 8; k++) c = (c >>> 1) ^ (0xedb88320 & -(c & 1));
  }
  return ~c >>> 0;
}

export function zipFigures(bytes: Uint8Array): ZipFigures {
  return { size: bytes.length, crc32: crc32(bytes), sha256: crypto.createHash('sha256').update(bytes).digest('hex') };
}

/** Node's `exportMcworldTo({ path })` of a copy of shared world `name` (its every event), and
 * checks that it equals the in-memory `exportMcworld()`. */
export async function nodeExport(name: string, stepBytes: number): Promise<NodeExport> {
  const { openWorld } = await import('../../dist/node.js');
  const dir = path.join(tempDir('export-ref'), name);
  copyDir(path.join(worldsDir, name), dir);
  const files = (fs.readdirSync(dir, { recursive: true, encoding: 'utf8' }) as string[]).filter((f) => fs.statSync(path.join(dir, f)).isFile());
  const size = (f: string) => fs.statSync(path.join(dir, f)).size;
  const folderBytes = files.reduce((n, f) => n + size(f), 0);
  const worldBytes = files.filter((f) => f !== path.join('db', 'LOCK')).reduce((n, f) => n + size(f), 0);
  const out = path.join(tempDir('export-ref-out'), `${name}.mcworld`);
  const w = await openWorld(dir);
  try {
    const events: ExportEvent[] = [];
    const r = await w.exportMcworldTo({ path: out, stepBytes, onProgress: (p: ExportEvent) => events.push({ ...p }) });
    const bytes = fs.readFileSync(out);
    if (!bytes.equals(Buffer.from(await w.exportMcworld()))) throw new Error(`${name}: the streamed export differs from exportMcworld()`);
    const scan = await w.db.scan();
    const chunks = (await w.summary()).chunks;
    return { zip: zipFigures(bytes), report: { files: r.files, bytes: r.bytes, size: r.size }, events, worldBytes, folderBytes, scan, chunks };
  } finally {
    await w.close();
  }
}

/** What the page's `exportWorld` (test/browser/page.mjs) returns. */
export interface BrowserExport {
  imported: number;
  dbStorage: string;
  report: { files: number; bytes: number; size: number; path: string | null };
  blob: { isBlob: boolean; size: number; type: string };
  zip: ZipFigures;
  events: ExportEvent[];
  exportMs: number;
  scratchBeforeDiscard: unknown;
  scratchAfterDiscard: unknown;
  /** Reading the Blob after discard(): `readable: N bytes`, or the error's `name: message`. */
  blobAfterDiscard: string;
  scan: NodeExport['scan'];
  chunks: [number, number, number];
}

/** What the page's `exportAbort` returns. */
export interface BrowserAbort {
  error: { name: string; code: number | string | null; isDOMException: boolean; isReason: boolean } | null;
  seen: string[];
  left: unknown;
  scanOpen: NodeExport['scan'];
  scanReopened: NodeExport['scan'];
  chunks: [number, number, number];
  zip: ZipFigures;
  discardError: string | null;
  leftAfterExport: unknown;
  /** Milliseconds per stage (import, open, aborted, …), for the log. */
  ms: Record<string, number>;
}

/** Nothing of the scratch store in browser storage: OPFS, its pool folder gone; IndexedDB, no
 * record under `.strata-export`. */
export const NO_SCRATCH = { opfs: null, idb: { files: [], chunks: 0 } } as const;

/** Progress as a summary checked independently of Node's events: phases in order, `done`
 * monotone within a phase and never past `total`; events per phase; the last event. */
export function progressSummary(events: ExportEvent[]): { ordered: boolean; monotone: boolean; perPhase: Record<string, number>; last: ExportEvent | undefined } {
  const order = ['copy', 'compact', 'zip', 'done'];
  let ordered = true;
  let monotone = true;
  const perPhase: Record<string, number> = {};
  events.forEach((e, i) => {
    perPhase[e.phase] = (perPhase[e.phase] ?? 0) + 1;
    if (e.done > e.total) monotone = false;
    if (i === 0) return;
    const a = events[i - 1]!;
    if (order.indexOf(e.phase) < order.indexOf(a.phase)) ordered = false;
    if (a.phase === e.phase && e.done < a.done) monotone = false;
  });
  return { ordered, monotone, perPhase, last: events.at(-1) };
}

/** The page's export of `name` in `storage` against Node's: the same zip bytes (size, CRC-32,
 * SHA-256, also the pinned ones), report and progress events; nothing left after discard(); the
 * world's MANIFEST figures. `opfsBlobGone`: what this browser says reading an OPFS export's
 * Blob after discard() (the Blob is the zip's file itself; an IndexedDB export's is a copy in
 * memory and stays readable). */
export function expectBrowserExport(name: string, storage: 'opfs' | 'idb', got: BrowserExport, ref: NodeExport, opfsBlobGone?: string): void {
  const pinned = EXPORTED[name]!;
  const m = worlds().find((w) => w.name === name)!;
  const figures = { entries: m.entries, keyBytes: m.keyBytes, valueBytes: m.valueBytes, crc32c: m.crc32c };
  expect(ref.zip).toEqual({ size: pinned.size, crc32: pinned.crc32, sha256: pinned.sha256 });
  expect(ref.report.files).toBe(pinned.files);
  expect(ref.scan).toEqual(figures);
  expect({ imported: got.imported, dbStorage: got.dbStorage }).toEqual({ imported: ref.folderBytes, dbStorage: storage });
  expect(got.zip).toEqual(ref.zip);
  expect(got.blob).toEqual({ isBlob: true, size: ref.zip.size, type: 'application/octet-stream' });
  expect(got.report).toEqual({ ...ref.report, path: null });
  // Every progress event equals Node's (same files, same steps) ...
  expect(got.events).toEqual(ref.events);
  // ... and on its own: phases in order, monotone, the copy ending at the world's bytes, the
  // last event done with done === total.
  const s = progressSummary(got.events);
  expect({ ordered: s.ordered, monotone: s.monotone }).toEqual({ ordered: true, monotone: true });
  expect(Object.keys(s.perPhase)).toEqual(['copy', 'compact', 'zip', 'done']);
  expect(got.events.filter((e) => e.phase === 'copy').at(-1)).toMatchObject({ done: ref.worldBytes, total: ref.worldBytes });
  expect(s.last).toEqual({ phase: 'done', done: ref.report.bytes, total: ref.report.bytes, files: pinned.files, bytes: ref.report.bytes });
  // Before discard() the zip is there (IndexedDB: its 4 KiB chunks and the folder records of
  // the scratch store; OPFS: a pool folder); after it, nothing.
  if (storage === 'idb') {
    expect(got.scratchBeforeDiscard).toEqual({
      files: ['.strata-export', '.strata-export/export', '.strata-export/export/world', '.strata-export/export/world.mcworld', '.strata-export/export/world/db'],
      chunks: Math.ceil(ref.zip.size / 4096),
    });
  } else {
    expect(got.scratchBeforeDiscard).toContain('LOCK.sah');
  }
  expect(got.scratchAfterDiscard).toEqual(NO_SCRATCH[storage]);
  expect(got.blobAfterDiscard).toBe(storage === 'idb' ? `readable: ${ref.zip.size} bytes` : opfsBlobGone);
  expect(got.scan).toEqual(figures);
  expect(got.chunks).toEqual(ref.chunks);
}

/** The page's aborted export of `name`, aborted at the `at`-th event of `phase`: AbortError
 * (the signal's reason itself), exactly the events before it seen, nothing left; the world
 * keeps its figures, open and reopened, and a whole export after it gives the pinned zip. */
export function expectBrowserAbort(name: string, storage: 'opfs' | 'idb', got: BrowserAbort, ref: NodeExport, phase: string, at: number): void {
  const m = worlds().find((w) => w.name === name)!;
  const figures = { entries: m.entries, keyBytes: m.keyBytes, valueBytes: m.valueBytes, crc32c: m.crc32c };
  const stop = ref.events.findIndex((e, i) => e.phase === phase && ref.events.slice(0, i + 1).filter((x) => x.phase === phase).length === at);
  expect(stop).toBeGreaterThanOrEqual(0);
  expect(stop).toBeLessThan(ref.events.length - 1);
  // The signal's own reason: a DOMException AbortError (legacy code 20, ABORT_ERR).
  expect(got.error).toEqual({ name: 'AbortError', code: 20, isDOMException: true, isReason: true });
  expect(got.seen).toEqual(ref.events.slice(0, stop + 1).map((e) => e.phase));
  expect(got.left).toEqual(NO_SCRATCH[storage]);
  expect({ open: got.scanOpen, reopened: got.scanReopened, chunks: got.chunks }).toEqual({ open: figures, reopened: figures, chunks: ref.chunks });
  expect(got.zip).toEqual(ref.zip);
  expect({ discardError: got.discardError, left: got.leftAfterExport }).toEqual({ discardError: null, left: NO_SCRATCH[storage] });
}
