// Shared test helpers: where the shared worlds and the native CLI are, MANIFEST.tsv's rows,
// CRC-32C of a key‖value stream computed independently of the engine (the `crc-32` package).

import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
// @ts-expect-error: crc-32's crc32c entry has no type declarations of its own.
import CRC32C from 'crc-32/crc32c.js';
import { afterAll, test } from 'vitest';

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const worldsDir = process.env.STRATA_WORLDS ?? path.resolve(repoRoot, '../shared/worlds');
/** Whether the real worlds are there (a clone with nothing beside it has none). Without them
 * the suites that read them are skipped, loudly (vitest.config.ts, `worldTest`); under CI
 * their absence is an error instead (CI always has them). */
export const haveWorlds = fs.existsSync(path.join(worldsDir, 'MANIFEST.tsv'));
/** `test`, skipped (and counted as skipped) when the real worlds are missing. */
export const worldTest = test.skipIf(!haveWorlds);
export const cliPath = process.env.STRATA_CLI ?? path.join(repoRoot, 'target/debug/strata');

export interface WorldRow {
  name: string;
  entries: number;
  keyBytes: number;
  valueBytes: number;
  crc32c: number;
}

export function worlds(): WorldRow[] {
  const lines = fs.readFileSync(path.join(worldsDir, 'MANIFEST.tsv'), 'utf8').trim().split('\n');
  const header = lines[0]!.split('\t');
  const col = (n: string) => header.indexOf(n);
  return lines.slice(1).map((line) => {
    const f = line.split('\t');
    return {
      name: f[col('name')]!,
      entries: Number(f[col('entries')]),
      keyBytes: Number(f[col('key_bytes')]),
      valueBytes: Number(f[col('value_bytes')]),
      crc32c: Number(f[col('crc32c')]),
    };
  });
}

/** Running CRC-32C over concatenated chunks, as an unsigned number. */
export class Crc {
  private state = 0;
  update(bytes: Uint8Array): void {
    this.state = (CRC32C as { buf(b: Uint8Array, seed: number): number }).buf(bytes, this.state);
  }
  get value(): number {
    return this.state >>> 0;
  }
}

const temps: string[] = [];
function removeTemps(): void {
  for (const t of temps.splice(0)) fs.rmSync(t, { recursive: true, force: true });
}
// Removed after each test file (vitest's worker processes are killed, not exited, so an exit
// handler alone left gigabytes in /tmp run after run), and at exit for anything else.
afterAll(removeTemps);
process.on('exit', removeTemps);

/** A fresh temporary folder, removed after the test file (or when the process exits). */
export function tempDir(prefix: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `strata-${prefix}-`));
  temps.push(dir);
  return dir;
}

export function copyDir(from: string, to: string): void {
  fs.cpSync(from, to, { recursive: true });
}

/** Runs the native CLI; returns stdout. */
export function cli(...args: string[]): string {
  return execFileSync(cliPath, args, { encoding: 'utf8' });
}

/** Runs in the viewer page: for each visible control of its open bar (buttons, the storage
 * checkbox), its id and the id of what a click at its centre lands on (`elementFromPoint`),
 * the control's own id when nothing covers it. A 0x0 file input once had a box over the
 * checkbox in WebKit, so a real click there opened the file picker. */
export const OPEN_BAR_HITS = `[...document.querySelectorAll('.open button:not([hidden]), .open input[type=checkbox]')].map((e) => {
  const r = e.getBoundingClientRect();
  const at = document.elementFromPoint(r.x + r.width / 2, r.y + r.height / 2);
  return [e.id, at === e || e.contains(at) ? e.id : at ? at.id || at.tagName : null];
})`;
