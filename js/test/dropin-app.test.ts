// The leveldb-zlib drop-in as an app adds it: the README's recipe to the letter (`npm run pack`,
// then a plain `npm install` of the two tarballs in a new app; no --install-links), then code
// written for the addon: `new LevelDB(path)` with no options creates the database; put, get,
// iterate; a second open context refused in-process and the LOCK refused to another process;
// and no native addon in the process (`/proc/self/maps` maps no `.node` file).

import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { expect, test } from 'vitest';

import { repoRoot, tempDir } from './helpers.js';

const APP = `
const fs = require('node:fs');
const { execFileSync } = require('node:child_process');
const { LevelDB } = require('leveldb-zlib');
(async () => {
  const dir = process.argv[2];
  const db = new LevelDB(dir);
  await db.open();
  for (let i = 0; i < 1000; i++) await db.put('k' + String(i).padStart(4, '0'), 'v' + i);
  await db.delete('k0003');
  const got = (await db.get('k0500')).toString();
  const missing = await db.get('k0003');
  const tail = [];
  const it = db.getIterator({ gte: 'k0995' });
  let n;
  while ((n = await it.next())) tail.push(n[1].toString() + '=' + n[0].toString()); // next(): [value, key]
  await it.end();
  let count = 0;
  for await (const _ of db) count++;
  let secondContext;
  try { await new LevelDB(dir).open(); secondContext = 'opened'; } catch (e) { secondContext = e.message; }
  let otherProcess;
  try {
    execFileSync(process.execPath, ['-e', "new (require('leveldb-zlib').LevelDB)(process.argv[1]).open().then(() => console.log('opened'), (e) => { console.log(e.message); process.exit(3); })", dir], { encoding: 'utf8' });
    otherProcess = 'opened';
  } catch (e) { otherProcess = 'refused: ' + String(e.stdout).trim(); }
  await db.close();
  const nativeModules = fs.readFileSync('/proc/self/maps', 'utf8').split('\\n').filter((l) => l.endsWith('.node')).length;
  console.log(JSON.stringify({
    resolved: require.resolve('leveldb-zlib'), got, missing, tail, count, secondContext, otherProcess,
    nativeModules, current: fs.existsSync(dir + '/CURRENT'),
  }));
})().catch((e) => { console.error(e); process.exit(1); });
`;

test('the README recipe: a plain npm install of the packed package and the leveldb-zlib drop-in; addon code runs on it unchanged', () => {
  const work = tempDir('dropin-app');
  const env = { ...process.env, npm_config_audit: 'false', npm_config_fund: 'false', npm_config_loglevel: 'error' };
  const tarballs = execFileSync('bash', [path.join(repoRoot, 'scripts/pack.sh'), path.join(work, 'pack')], { encoding: 'utf8', env })
    .trim()
    .split('\n');
  const strata = tarballs.find((t) => path.basename(t).startsWith('strata-level-'))!;
  const dropIn = tarballs.find((t) => path.basename(t).startsWith('leveldb-zlib-'))!;
  expect(path.basename(strata)).toBe('strata-level-0.1.0.tgz');
  expect(path.basename(dropIn)).toBe('leveldb-zlib-1.2.0-strata.tgz');
  const app = path.join(work, 'app');
  fs.mkdirSync(app);
  fs.writeFileSync(path.join(app, 'package.json'), JSON.stringify({ name: 'app', version: '1.0.0', private: true }));
  // The recipe's one command (README, "Drop-ins").
  execFileSync('npm', ['install', strata, dropIn], { cwd: app, env, stdio: 'pipe' });
  const manifest = JSON.parse(fs.readFileSync(path.join(app, 'package.json'), 'utf8')) as { dependencies: Record<string, string> };
  expect(Object.keys(manifest.dependencies).sort()).toEqual(['leveldb-zlib', 'strata-level']);
  expect(fs.lstatSync(path.join(app, 'node_modules/leveldb-zlib')).isSymbolicLink()).toBe(false);
  fs.writeFileSync(path.join(app, 'app.cjs'), APP);
  const out = JSON.parse(execFileSync(process.execPath, ['app.cjs', path.join(work, 'world-db')], { cwd: app, encoding: 'utf8' }));
  expect(out).toEqual({
    resolved: path.join(fs.realpathSync(app), 'node_modules/leveldb-zlib/index.js'),
    got: 'v500',
    missing: null,
    tail: ['k0995=v995', 'k0996=v996', 'k0997=v997', 'k0998=v998', 'k0999=v999'],
    count: 999,
    secondContext: 'DB already has an open context, did you close it properly?',
    otherProcess: expect.stringMatching(/^refused: .*lock/i),
    nativeModules: 0,
    current: true,
  });
}, 300_000);

test('the drop-in installed as a folder link says how to install it instead of a bare MODULE_NOT_FOUND', () => {
  const work = tempDir('dropin-link');
  fs.writeFileSync(path.join(work, 'package.json'), JSON.stringify({ name: 'app', version: '1.0.0', private: true }));
  const link = path.join(work, 'node_modules');
  fs.mkdirSync(link);
  fs.symlinkSync(path.join(repoRoot, 'js/compat/leveldb-zlib'), path.join(link, 'leveldb-zlib'));
  let message = '';
  try {
    execFileSync(process.execPath, ['-e', "require('leveldb-zlib')"], { cwd: work, encoding: 'utf8', stdio: 'pipe' });
  } catch (e) {
    message = String((e as { stderr: string }).stderr);
  }
  expect(message).toContain("leveldb-zlib (Strata's drop-in) cannot find strata-level");
  expect(message).toContain('packed tarballs');
});
