// The published bedrock-provider (PrismarineJS), unchanged, on strata-level/leveldb-zlib: two
// projects installed from npm, one with the real leveldb-zlib (Mojang's LevelDB addon), one by the
// README's recipe: the packed strata-level and leveldb-zlib-*-strata tarballs (scripts/pack.sh,
// the drop-in js/compat/leveldb-zlib), a plain `npm install`, and `"overrides": { "leveldb-zlib":
// "$leveldb-zlib" }` for any leveldb-zlib deeper in the tree. The same
// script (test/bedrock-provider/run.cjs) loads every chunk of bedrock-provider's own test world
// with WorldProvider, saves an edited column and reloads it: the outputs are byte-identical.

import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'vitest';

import { repoRoot, tempDir, worldsDir, worldTest } from './helpers.js';

const PEERS = { 'bedrock-provider': '3.1.0', 'prismarine-registry': '^1.11.0', 'prismarine-chunk': '^1.39.0', 'prismarine-block': '^1.21.0' };

function project(dir: string, extra: Record<string, unknown>): void {
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: path.basename(dir), private: true, ...extra }, null, 2));
  execFileSync('npm', ['install', '--no-audit', '--no-fund', '--loglevel=error'], { cwd: dir, stdio: 'pipe' });
  fs.copyFileSync(path.join(repoRoot, 'js/test/bedrock-provider/run.cjs'), path.join(dir, 'run.cjs'));
}

function run(dir: string): string {
  const world = path.join(dir, 'world');
  fs.cpSync(path.join(worldsDir, 'bedrock_provider_mctestdb'), world, { recursive: true });
  return execFileSync(process.execPath, ['run.cjs', path.join(world, 'db')], { cwd: dir, encoding: 'utf8' });
}

worldTest('bedrock-provider runs unchanged on strata-level/leveldb-zlib with results equal to the addon', () => {
  const base = tempDir('bedrock-provider');
  const tarballs = execFileSync('bash', [path.join(repoRoot, 'scripts/pack.sh'), path.join(base, 'pack')], { encoding: 'utf8' })
    .trim()
    .split('\n');
  const strata = tarballs.find((t) => path.basename(t).startsWith('strata-level-'))!;
  const dropIn = tarballs.find((t) => path.basename(t).startsWith('leveldb-zlib-'))!;
  project(path.join(base, 'addon'), { dependencies: { ...PEERS, 'leveldb-zlib': '1.2.0' } });
  project(path.join(base, 'strata'), {
    dependencies: { ...PEERS, 'strata-level': `file:${strata}`, 'leveldb-zlib': `file:${dropIn}` },
    overrides: { 'leveldb-zlib': '$leveldb-zlib' },
  });
  const theirs = run(path.join(base, 'addon'));
  const ours = run(path.join(base, 'strata'));
  expect(ours).toBe(theirs);
  const r = JSON.parse(ours) as { chunks: number; digests: Array<string | null>; entriesAfterSave: number; contentBefore: string; contentAfterSave: string };
  expect(r.chunks).toBe(57);
  expect(r.digests.filter((d) => d !== null).length).toBe(57);
  expect(r.entriesAfterSave).toBe(295);
  expect(r.contentAfterSave).not.toBe(r.contentBefore);
}, 600_000);
