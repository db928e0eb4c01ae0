// bedrock-provider's OWN mocha suites on strata-level's leveldb-zlib drop-in. The published
// bedrock-provider@3.1.0 tarball is fetched from the npm registry at test time (`npm pack`) and
// unpacked in a temporary folder; nothing of it is kept in this repository. Two copies of it
// become two projects, each installed with one plain `npm install`: "strata" gets leveldb-zlib
// by the README's recipe (the packed strata-level and leveldb-zlib-*-strata tarballs, and
// `"overrides": { "leveldb-zlib": "$leveldb-zlib" }`), "addon" gets the real leveldb-zlib@1.2.0
// (Mojang's LevelDB addon); in both, bedrock-provider resolves to the unpacked package itself
// (its devDependency `file:./`). Then, with bedrock-provider's own runner (mocha, mocha-steps,
// ts-node) and mocha's JSON reporter:
//  - test/makeFlatWorld.ts, all of it: 3 passing, 0 failing, 0 pending on both backends;
//  - test/staticNetworkBuffer.ts (no server, no database): 1 passing, 1 failing, 0 pending on
//    both ("works on 1.18" fails in prismarine-chunk: the fixture's runtime ID 7180 is not in
//    the block tables of the minecraft-data that npm installs today);
//  - the disk half of test/load.ts (`--grep '^loads from disk '`, its 6 versions, on a copy of
//    its test/mctestdb at test/bds-<version>/worlds/Bedrock level/db): 0 passing, 18 failing,
//    0 pending on both, because mctestdb is a superflat world (no stone, no block entities, no
//    nether); what is asserted is that Strata gives exactly the addon's results: the same tests
//    with the same outcomes and failure messages, and the same output (the blocks of the 10
//    chunks read per version, the entity counts), byte for byte.
// The network half of load.ts is never run (it downloads a Bedrock server). load.ts imports
// bedrock-protocol at the top, whose raknet-native would compile itself at install on a kernel
// it has no prebuild for (cmake-js, with Node's headers downloaded): both projects override it
// with a stub written here, which only the network half would call. The strata project
// installs no package with an install script; a --require hook counts, at exit, the mappings of
// a LevelDB addon in /proc/self/maps: 0 on strata, at least 1 on addon.
// Skipped, loudly, only when the npm registry cannot be reached.

import { spawnSync, type SpawnSyncReturns } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect, test } from 'vitest';

import { repoRoot, tempDir } from './helpers.js';

const PACKAGE = 'bedrock-provider@3.1.0';
const DISK_VERSIONS = ['1.16.220', '1.17.10', '1.18.0', '1.18.11', '1.18.30', '1.19.1'];
const FLAT_VERSIONS = ['1.16.220', '1.17.10', '1.18.0'];

const env: NodeJS.ProcessEnv = {
  ...process.env,
  npm_config_audit: 'false',
  npm_config_fund: 'false',
  npm_config_update_notifier: 'false',
  npm_config_loglevel: 'error',
};

type Backend = 'strata' | 'addon';
type State = 'passed' | 'failed' | 'pending';
interface Outcome {
  title: string;
  state: State;
  message: string | null;
}
interface Run {
  stats: { tests: number; passes: number; failures: number; pending: number };
  outcomes: Outcome[];
  /** Mappings of a LevelDB addon in the mocha process's /proc/self/maps at exit. */
  nativeMaps: number;
  stdout: string;
}

function check(r: SpawnSyncReturns<string>, what: string): string {
  if (r.error || r.status !== 0) throw new Error(`${what} failed (${r.error?.message ?? `exit ${r.status}`}):\n${r.stderr}\n${r.stdout}`);
  return r.stdout;
}

function npm(args: string[], cwd: string, extraEnv: NodeJS.ProcessEnv = {}): string {
  const r = spawnSync('npm', args, { cwd, env: { ...env, ...extraEnv }, encoding: 'utf8', timeout: 300_000 });
  return check(r, `npm ${args.join(' ')} in ${cwd}`);
}

/** Why the registry cannot be reached, or null when it can (or failed for another reason,
 * which the test then reports as a failure instead of skipping). */
function registryUnreachable(): string | null {
  const r = spawnSync('npm', ['view', PACKAGE, 'version', '--fetch-retries=0', '--fetch-timeout=30000'], { env, encoding: 'utf8', timeout: 45_000 });
  if (!r.error && r.status === 0) return null;
  const out = `${r.error?.message ?? ''}\n${r.stderr}\n${r.stdout}`;
  const network = /\b(ENOTFOUND|EAI_AGAIN|ECONNREFUSED|ECONNRESET|ETIMEDOUT|ENETUNREACH|EHOSTUNREACH)\b|network request to .* failed/;
  if (network.test(out) || (r.error as NodeJS.ErrnoException | undefined)?.code === 'ETIMEDOUT') {
    return out.trim().split('\n').find((l) => network.test(l)) ?? out.trim().split('\n')[0] ?? 'no answer';
  }
  return null;
}

const unreachable = registryUnreachable();
if (unreachable !== null) {
  console.log(
    `\n!!! SKIPPED: test/bedrock-provider-suites.test.ts: the npm registry is unreachable (${unreachable});\n` +
      `!!! bedrock-provider's own suites were not run on the drop-in.\n`,
  );
}
const suiteTest = unreachable === null ? test : test.skip;

// The one part of the network half that would need a native build at install.
const RAKNET_STUB = `// Stub for bedrock-provider's network tests, which are not run: bedrock-protocol requires
// raknet-native when it is loaded, and only a network client or server would construct these.
class Unavailable { constructor () { throw new Error('raknet-native is stubbed: the network tests are not run') } }
module.exports = { Client: Unavailable, Server: Unavailable, PacketPriority: {}, PacketReliability: {} }
`;

// Loaded with mocha's --require: at exit, the mappings of a LevelDB addon in this process.
const NATIVE_HOOK = `const fs = require('fs')
process.on('exit', () => {
  const lines = fs.readFileSync('/proc/self/maps', 'utf8').split('\\n')
  const n = lines.filter((l) => l.endsWith('leveldb.node') || (l.includes('leveldb-zlib') && l.includes('.node'))).length
  fs.writeFileSync(process.env.STRATA_NATIVE_MAPS_OUT, String(n))
})
`;

interface Manifest {
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
  overrides?: Record<string, string>;
}

/** A copy of the unpacked package, set up as the project its tests run in. */
function project(work: string, upstream: string, backend: Backend, tarballs: { strata: string; dropIn: string }, stub: string): string {
  const dir = path.join(work, backend);
  fs.cpSync(upstream, dir, { recursive: true });
  const file = path.join(dir, 'package.json');
  const manifest = JSON.parse(fs.readFileSync(file, 'utf8')) as Manifest;
  // What its tests need; the linter (ts-standard) is not run.
  expect(manifest.devDependencies['bedrock-provider']).toBe('file:./');
  delete manifest.devDependencies['ts-standard'];
  delete manifest.devDependencies['leveldb-zlib'];
  if (backend === 'strata') {
    // `npm install STRATA_TGZ DROPIN_TGZ` writes these two; the override reaches any leveldb-zlib below.
    manifest.dependencies['strata-level'] = `file:${tarballs.strata}`;
    manifest.dependencies['leveldb-zlib'] = `file:${tarballs.dropIn}`;
    manifest.overrides = { 'leveldb-zlib': '$leveldb-zlib', 'raknet-native': `file:${stub}` };
  } else {
    manifest.devDependencies['leveldb-zlib'] = '1.2.0';
    manifest.overrides = { 'raknet-native': `file:${stub}` };
  }
  fs.writeFileSync(file, JSON.stringify(manifest, null, 2));
  // The addon picks prebuilds/<platform>-<kernel major>-<arch> and ships linux-5-x64 alone; on
  // another kernel its install script would compile it with cmake-js instead (SKIP_BUILD is its
  // switch against that), so its shipped prebuild is linked under this kernel's name.
  npm(['install', '--prefer-offline'], dir, backend === 'addon' ? { SKIP_BUILD: '1' } : {});
  if (backend === 'addon') {
    const prebuilds = path.join(dir, 'node_modules/leveldb-zlib/prebuilds');
    const here = `${process.platform}-${os.release().split('.')[0]}-${process.arch}`;
    if (!fs.existsSync(path.join(prebuilds, here))) fs.symlinkSync('linux-5-x64', path.join(prebuilds, here));
  }
  fs.writeFileSync(path.join(dir, 'native-hook.cjs'), NATIVE_HOOK);
  for (const version of DISK_VERSIONS) {
    fs.cpSync(path.join(dir, 'test/mctestdb'), path.join(dir, `test/bds-${version}/worlds/Bedrock level/db`), { recursive: true });
  }
  return dir;
}

interface MochaTest {
  fullTitle: string;
  err: { message?: string };
}
interface MochaJson {
  stats: Run['stats'];
  tests: MochaTest[];
  passes: MochaTest[];
  failures: MochaTest[];
  pending: MochaTest[];
}

/** One of bedrock-provider's test files, run as its `npm test` runs them (without --bail). */
function mocha(dir: string, file: string, grep?: string): Run {
  const name = path.basename(file, '.ts') + (grep ? '-grep' : '');
  const report = path.join(dir, `mocha-${name}.json`);
  const maps = path.join(dir, `native-${name}.txt`);
  const args = [
    path.join(dir, 'node_modules/mocha/bin/mocha.js'),
    '--require', './native-hook.cjs', '--require', 'mocha-steps', '--require', 'ts-node/register',
    '--reporter', 'json', '--reporter-option', `output=${report}`,
    ...(grep ? ['--grep', grep] : []),
    file, '--exit',
  ];
  const r = spawnSync(process.execPath, args, { cwd: dir, env: { ...env, STRATA_NATIVE_MAPS_OUT: maps }, encoding: 'utf8', timeout: 300_000 });
  if (r.error || !fs.existsSync(report)) throw new Error(`mocha ${file} in ${dir} wrote no report (${r.error?.message ?? `exit ${r.status}`}):\n${r.stderr}\n${r.stdout}`);
  const json = JSON.parse(fs.readFileSync(report, 'utf8')) as MochaJson;
  // mocha exits with the number of failures: anything else is a crash of the run itself.
  expect(r.status, `mocha ${file} in ${dir}:\n${r.stderr}`).toBe(json.stats.failures);
  const state = (t: MochaTest): State =>
    json.failures.some((f) => f.fullTitle === t.fullTitle) ? 'failed' : json.pending.some((p) => p.fullTitle === t.fullTitle) ? 'pending' : 'passed';
  return {
    stats: { tests: json.stats.tests, passes: json.stats.passes, failures: json.stats.failures, pending: json.stats.pending },
    outcomes: json.tests.map((t) => ({ title: t.fullTitle, state: state(t), message: state(t) === 'failed' ? (t.err.message ?? '') : null })),
    nativeMaps: Number(fs.readFileSync(maps, 'utf8')),
    stdout: r.stdout,
  };
}

const passed = (title: string): Outcome => ({ title, state: 'passed', message: null });
const failed = (title: string, message: string): Outcome => ({ title, state: 'failed', message });

const EXPECTED: Record<'flat' | 'static' | 'disk', { stats: Run['stats']; outcomes: Outcome[] }> = {
  flat: {
    stats: { tests: 3, passes: 3, failures: 0, pending: 0 },
    outcomes: FLAT_VERSIONS.map((v) => passed(`make flat world works on ${v}`)),
  },
  static: {
    stats: { tests: 2, passes: 1, failures: 1, pending: 0 },
    outcomes: [
      failed('static network buffer test works on 1.18', "Cannot read properties of undefined (reading '7180')"),
      passed('static network buffer test works on 1.16'),
    ],
  },
  disk: {
    stats: { tests: 18, passes: 0, failures: 18, pending: 0 },
    outcomes: DISK_VERSIONS.flatMap((v) => [
      failed(`loads from disk ${v} can load from disk`, 'Did not find stone'),
      failed(`loads from disk ${v} found entities and block entities`, 'Did not find any block entities'),
      failed(`loads from disk ${v} can load nether chunks`, 'Did not find any nether chunks'),
    ]),
  },
};

suiteTest(`${PACKAGE}'s own mocha suites give on strata-level's leveldb-zlib drop-in exactly the addon's results`, () => {
  const work = tempDir('bedrock-provider-suites');
  // The two tarballs of the recipe.
  const packed = check(spawnSync('bash', [path.join(repoRoot, 'scripts/pack.sh'), path.join(work, 'pack')], { env, encoding: 'utf8' }), 'scripts/pack.sh')
    .trim()
    .split('\n');
  const strata = packed.find((t) => path.basename(t).startsWith('strata-level-'))!;
  const dropIn = packed.find((t) => path.basename(t).startsWith('leveldb-zlib-'))!;
  expect(path.basename(strata)).toBe('strata-level-0.1.0.tgz');
  expect(path.basename(dropIn)).toBe('leveldb-zlib-1.2.0-strata.tgz');

  // The published package, with the tests it ships.
  const tgz = npm(['pack', PACKAGE, '--pack-destination', work], work).trim().split('\n').pop()!;
  expect(tgz).toBe('bedrock-provider-3.1.0.tgz');
  fs.mkdirSync(path.join(work, 'upstream'));
  check(spawnSync('tar', ['xzf', path.join(work, tgz), '-C', path.join(work, 'upstream')], { encoding: 'utf8' }), 'tar');
  const upstream = path.join(work, 'upstream/package');
  for (const f of ['test/makeFlatWorld.ts', 'test/load.ts', 'test/staticNetworkBuffer.ts', 'test/mctestdb/CURRENT', 'test/util/BlobStore.js', 'test/util/getPort.js']) {
    expect(fs.existsSync(path.join(upstream, f)), f).toBe(true);
  }
  const stub = path.join(work, 'raknet-native-stub');
  fs.mkdirSync(stub);
  fs.writeFileSync(path.join(stub, 'package.json'), JSON.stringify({ name: 'raknet-native', version: '1.2.3-stub', main: 'index.js' }));
  fs.writeFileSync(path.join(stub, 'index.js'), RAKNET_STUB);

  const dirs: Record<Backend, string> = {
    strata: project(work, upstream, 'strata', { strata, dropIn }, stub),
    addon: project(work, upstream, 'addon', { strata, dropIn }, stub),
  };

  // What each project resolves: bedrock-provider is the unpacked package; leveldb-zlib is the
  // drop-in unpacked from its tarball (not a link) on strata, the addon on addon.
  const installed = (dir: string, name: string) => JSON.parse(fs.readFileSync(path.join(dir, 'node_modules', name, 'package.json'), 'utf8')) as { version: string };
  for (const dir of Object.values(dirs)) {
    expect(fs.realpathSync(path.join(dir, 'node_modules/bedrock-provider'))).toBe(fs.realpathSync(dir));
  }
  expect(fs.lstatSync(path.join(dirs.strata, 'node_modules/leveldb-zlib')).isSymbolicLink()).toBe(false);
  expect(installed(dirs.strata, 'leveldb-zlib').version).toBe('1.2.0-strata');
  expect(installed(dirs.strata, 'strata-level').version).toBe('0.1.0');
  expect(installed(dirs.addon, 'leveldb-zlib').version).toBe('1.2.0');
  // No native build at install: on strata no package has an install script; on addon only the addon.
  const withInstallScripts = (dir: string) => {
    const lock = JSON.parse(fs.readFileSync(path.join(dir, 'package-lock.json'), 'utf8')) as { packages: Record<string, { hasInstallScript?: boolean }> };
    return Object.entries(lock.packages).filter(([, p]) => p.hasInstallScript).map(([k]) => k);
  };
  expect(withInstallScripts(dirs.strata)).toEqual([]);
  expect(withInstallScripts(dirs.addon)).toEqual(['node_modules/leveldb-zlib']);

  const runs: Record<Backend, Record<'flat' | 'static' | 'disk', Run>> = {
    strata: {
      flat: mocha(dirs.strata, 'test/makeFlatWorld.ts'),
      static: mocha(dirs.strata, 'test/staticNetworkBuffer.ts'),
      disk: mocha(dirs.strata, 'test/load.ts', '^loads from disk '),
    },
    addon: {
      flat: mocha(dirs.addon, 'test/makeFlatWorld.ts'),
      static: mocha(dirs.addon, 'test/staticNetworkBuffer.ts'),
      disk: mocha(dirs.addon, 'test/load.ts', '^loads from disk '),
    },
  };

  for (const backend of ['strata', 'addon'] as const) {
    for (const file of ['flat', 'static', 'disk'] as const) {
      const run = runs[backend][file];
      expect({ backend, file, stats: run.stats, outcomes: run.outcomes }).toEqual({ backend, file, ...EXPECTED[file] });
    }
  }
  // The same tests with the same outcomes on both backends (titles, states, failure messages),
  // and the disk half printed the same chunks' blocks and entity counts.
  for (const file of ['flat', 'static', 'disk'] as const) {
    expect(runs.strata[file].outcomes).toEqual(runs.addon[file].outcomes);
  }
  const diskOut = runs.strata.disk.stdout;
  expect(diskOut).toBe(runs.addon.disk.stdout);
  expect(diskOut.split('\n').filter((l) => l.startsWith('Blocks: ')).length).toBe(10 * DISK_VERSIONS.length);
  expect(diskOut.split('\n').filter((l) => l === 'Found 2 entities and 0 block entities').length).toBe(DISK_VERSIONS.length);

  // No LevelDB addon in the strata processes; the addon's in the addon processes that use it.
  for (const file of ['flat', 'static', 'disk'] as const) expect({ file, maps: runs.strata[file].nativeMaps }).toEqual({ file, maps: 0 });
  expect(runs.addon.flat.nativeMaps).toBeGreaterThanOrEqual(1);
  expect(runs.addon.disk.nativeMaps).toBeGreaterThanOrEqual(1);
}, 600_000);
