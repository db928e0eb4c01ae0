// The packaging test: `npm pack`, install the tarball into an empty project, import it from a
// plain Node ESM script (no build step, no native compilation, no download at install), and
// scan a shared world with both entry points (`strata-level` and `strata-level/level`).

import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'vitest';

import { tempDir, worlds, worldsDir, worldTest } from './helpers.js';

worldTest('npm pack installs into an empty project and scans a world', () => {
  const work = tempDir('pack');
  const out = execFileSync('npm', ['pack', '--pack-destination', work, '--json'], { encoding: 'utf8' });
  const info = JSON.parse(out)[0] as { filename: string; files: Array<{ path: string }> };
  const packed = info.files.map((f) => f.path).sort();
  expect(packed).toContain('wasm/strata_bg.wasm');
  expect(packed).toContain('dist/node.js');
  expect(packed).toContain('dist/worker.js');
  expect(packed.filter((p) => p.startsWith('test/') || p.startsWith('src/') || p.includes('node_modules'))).toEqual([]);

  const project = path.join(work, 'app');
  fs.mkdirSync(project);
  fs.writeFileSync(path.join(project, 'package.json'), JSON.stringify({ name: 'app', private: true, type: 'module' }));
  execFileSync('npm', ['install', '--no-audit', '--no-fund', '--ignore-scripts', path.join(work, info.filename)], {
    cwd: project,
    encoding: 'utf8',
  });
  const w = worlds().find((r) => r.name === 'amulet_1_16')!;
  fs.writeFileSync(
    path.join(project, 'scan.mjs'),
    `import { open } from 'strata-level';
import { StrataLevel } from 'strata-level/level';
const dir = process.argv[2];
const db = await open(dir, { readOnly: true });
const scan = await db.scan();
let n = 0;
for await (const _ of db.iterator()) n++;
await db.close();
const level = new StrataLevel(dir, { readOnly: true, createIfMissing: false });
let m = 0;
for await (const _ of level.keys()) m++;
await level.close();
console.log(JSON.stringify({ ...scan, iterated: n, levelKeys: m }));
`,
  );
  const result = JSON.parse(
    execFileSync(process.execPath, ['scan.mjs', path.join(worldsDir, w.name, 'db')], { cwd: project, encoding: 'utf8' }),
  );
  expect(result).toEqual({
    entries: w.entries,
    keyBytes: w.keyBytes,
    valueBytes: w.valueBytes,
    crc32c: w.crc32c,
    iterated: w.entries,
    levelKeys: w.entries,
  });
});
