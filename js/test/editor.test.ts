// The world editor through the package's World API in Node (wasm engine, node:fs), on copies
// of shared worlds: deleteChunks/prune give the native CLI's exact figures and the same
// contents as the CLI's edit when both are read by Mojang's LevelDB (amulet-leveldb);
// snbt/setNbt/setLevelDat round-trip and change exactly one tag (amulet-nbt); the SNBT tree
// (snbtTree/printSnbtTree) prints every NBT record of every shared world back byte-identical
// and its edits change exactly the edited tags; exportMcworld bytes unzip into a world
// Mojang's LevelDB reads; exportMcworldTo (streamed through a temporary folder) writes the same
// bytes with monotone progress, and an abort leaves nothing; read-only worlds, hostile input
// and malformed staged edits are refused with the documented codes and nothing is written.

import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, test } from 'vitest';

import { emptyNode, leafFromInput, leafLiteral, leafText, openMcworld, openWorld, printSnbtTree, StrataError, type SnbtNode } from '../dist/node.js';
import { cli, copyDir, repoRoot, tempDir, worlds, worldsDir } from './helpers.js';

/** Mojang's LevelDB (tests/peers/dump_db.py) reads a copy of `dbDir`; the dump's bytes. */
function mojangDump(dbDir: string): Buffer {
  const tmp = tempDir('mojang');
  copyDir(dbDir, path.join(tmp, 'db'));
  execFileSync('python3', [path.join(repoRoot, 'tests/peers/dump_db.py'), 'amulet', path.join(tmp, 'db'), path.join(tmp, 'dump')]);
  return fs.readFileSync(path.join(tmp, 'dump'));
}

function nbtDiff(a: string, b: string, skip: number): string[] {
  const out = execFileSync('python3', [path.join(repoRoot, 'tests/peers/nbt_diff.py'), a, b, String(skip)], { encoding: 'utf8' });
  return out.split('\n').filter((l) => l !== '');
}

function unzip(zip: string, dest: string): void {
  execFileSync('python3', ['-c', 'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])', zip, dest]);
}

/** CRC-32 (zip's), for exact figures of a whole file. */
function crc32(data: Uint8Array): number {
  let c = ~0;
  for (const b of data) {
    c ^= b;
    for (let k = 0; k < 8; k++) c = (c >>> 1) ^ (0xedb88320 & -(c & 1));
  }
  return ~c >>> 0;
}

function worldCopy(name: string): string {
  const dir = path.join(tempDir('edit'), name);
  copyDir(path.join(worldsDir, name), dir);
  return dir;
}

async function rejects(p: Promise<unknown>, code: string, says: string): Promise<void> {
  const e = await p.then(
    () => undefined,
    (err: unknown) => err,
  );
  expect(e).toBeInstanceOf(StrataError);
  expect((e as StrataError).code).toBe(code);
  expect((e as StrataError).message).toContain(says);
}

describe('World editor (Node)', () => {
  test('deleteChunks and prune equal the native CLI, read by Mojang', async () => {
    const viaJs = worldCopy('rbedrock_example2_2025');
    const viaCli = worldCopy('rbedrock_example2_2025');
    const w = await openWorld(viaJs, { writable: true });
    expect(w.writable).toBe(true);
    const del = await w.deleteChunks(0, [
      [0, 0, 3, 3],
      [-4, -4],
    ]);
    // Positions, and the stubs among them (records but no Version record): 5 chunks as the map
    // counts them and 2 stubs.
    expect(del).toEqual({ chunks: 7, stubs: 2, records: 109, bytes: 197316, entities: 7, recordsRewritten: 0, chunksLeft: 56, stubsLeft: 5 });
    const pruned = await w.prune(0, '-2,-2:2,2');
    expect(pruned).toEqual({ chunks: 48, stubs: 5, records: 897, bytes: 1780680, entities: 47, recordsRewritten: 0, chunksLeft: 8, stubsLeft: 0 });
    await w.close();
    expect(cli('world', 'delete-chunks', viaCli, '--dimension', '0', '--area', '0,0:3,3;-4,-4')).toContain(
      '5 chunks and 2 stubs (positions with records but no Version record) of dimension 0 deleted (109 records, 197316 bytes, 7 entities), 51 chunks and 5 stubs left',
    );
    expect(cli('world', 'prune', viaCli, '--dimension', '0', '--keep', '-2,-2:2,2')).toContain(
      '43 chunks and 5 stubs (positions with records but no Version record) of dimension 0 deleted (897 records, 1780680 bytes, 47 entities), 8 chunks and 0 stubs left',
    );
    const a = mojangDump(path.join(viaJs, 'db'));
    expect(a.equals(mojangDump(path.join(viaCli, 'db')))).toBe(true);
  });

  test('SNBT: round trip, one-tag edits, level.dat, export', async () => {
    const dir = worldCopy('amulet_1_18_vanilla');
    const tmp = tempDir('snbt');
    fs.copyFileSync(path.join(dir, 'level.dat'), path.join(tmp, 'level.dat.orig'));
    const w = await openWorld(dir, { writable: true });
    const key = '~local_player';
    const before = (await w.db.get(key))!;
    const text = (await w.snbt(key))!;
    expect(text).toContain('Pos: [');
    expect(await w.setNbt(key, text)).toEqual({ changed: false, bytes: before.length });
    const edited = text.replace(/Pos: \[[^\]]*\]/, 'Pos: [1.5f, 70.0f, -2.25f]');
    expect(await w.setNbt(key, edited)).toEqual({ changed: true, bytes: before.length });
    const after = (await w.db.get(key))!;
    fs.writeFileSync(path.join(tmp, 'a.nbt'), before);
    fs.writeFileSync(path.join(tmp, 'b.nbt'), after);
    const diff = nbtDiff(path.join(tmp, 'a.nbt'), path.join(tmp, 'b.nbt'), 0);
    expect(diff.length).toBeGreaterThan(0);
    expect(diff.every((p) => p.startsWith('/Pos/'))).toBe(true);
    expect(await w.snbt('no such key')).toBeUndefined();

    const dat = await w.levelDatSnbt();
    expect((await w.setLevelDat(dat)).changed).toBe(false);
    const renamed = dat.replace(/LevelName: "[^"]*"/, 'LevelName: "Edited in Node"');
    expect((await w.setLevelDat(renamed)).changed).toBe(true);
    expect((await w.summary()).levelDat!.name).toBe('Edited in Node');
    expect(nbtDiff(path.join(tmp, 'level.dat.orig'), path.join(dir, 'level.dat'), 8)).toEqual(['/LevelName']);

    // Export: compacted copy zipped; the world folder keeps its files.
    const files = fs.readdirSync(path.join(dir, 'db')).sort();
    const zip = await w.exportMcworld();
    expect(fs.readdirSync(path.join(dir, 'db')).sort()).toEqual(files);
    fs.writeFileSync(path.join(tmp, 'w.mcworld'), zip);
    unzip(path.join(tmp, 'w.mcworld'), path.join(tmp, 'u'));
    await w.close();
    expect(mojangDump(path.join(tmp, 'u/db')).equals(mojangDump(path.join(dir, 'db')))).toBe(true);
    expect(nbtDiff(path.join(dir, 'level.dat'), path.join(tmp, 'u/level.dat'), 8)).toEqual([]);

    // The exported bytes open as a .mcworld; a writable one edits its in-memory copy.
    const m = await openMcworld(zip, { writable: true });
    expect((await m.summary()).levelDat!.name).toBe('Edited in Node');
    const r = await m.prune(0, '0,0:7,7');
    const left = await m.chunks(0);
    expect(left.length).toBeGreaterThan(0);
    expect(left.every(([x, z]) => x >= 0 && x <= 7 && z >= 0 && z <= 7)).toBe(true);
    expect(r.chunks).toBe(6156);
    const again = await openMcworld(await m.exportMcworld());
    expect(await again.chunks(0)).toEqual(left);
    await again.close();
    await m.close();
  });

  test('SNBT tree: every NBT record of every shared world printed back from its tree is byte-identical', async () => {
    const counts: Record<string, number> = {};
    const notNbt = new Map<string, number>();
    for (const { name } of worlds()) {
      const w = await openWorld(worldCopy(name), { writable: true });
      counts[name] = 0;
      for await (const [key, value] of w.db.iterator()) {
        const k = key as Uint8Array;
        const v = value as Uint8Array;
        // Chunk records other than block entities, entities and ticks are not NBT; nor are
        // empty values (old worlds keep thousands of empty Entity records).
        const tag = k.length === 9 || k.length === 10 ? k[8] : k.length === 13 || k.length === 14 ? k[12] : undefined;
        if ((tag !== undefined && ![49, 50, 51, 58].includes(tag)) || v.length === 0) continue;
        let text: string | undefined;
        try {
          text = await w.snbt(k);
        } catch (e) {
          expect((e as StrataError).code).toBe('LEVEL_CORRUPTION');
          const kind = new TextDecoder().decode(k.slice(0, 4)).replace(/[^ -~]/g, '?');
          notNbt.set(kind, (notNbt.get(kind) ?? 0) + 1);
          continue;
        }
        const printed = printSnbtTree(await w.snbtTree(text!));
        expect(printed).toBe(text);
        expect(await w.setNbt(k, printed)).toEqual({ changed: false, bytes: v.length });
        counts[name]++;
      }
      if (fs.existsSync(path.join(worldsDir, name, 'level.dat'))) {
        const dat = await w.levelDatSnbt();
        expect(printSnbtTree(await w.snbtTree(dat))).toBe(dat);
        expect((await w.setLevelDat(printSnbtTree(await w.snbtTree(dat)))).changed).toBe(false);
      }
      await w.close();
    }
    console.log(`SNBT tree round trips: ${JSON.stringify(counts)}; not NBT: ${JSON.stringify([...notNbt])}`);
    expect(counts).toEqual({
      amulet_1_16: 138,
      amulet_1_17_20_caves_and_cliffs: 54,
      amulet_1_17_20_vanilla: 14,
      amulet_1_17_40_superflat: 6,
      amulet_1_17_40_vanilla: 88,
      amulet_1_18_superflat: 6,
      amulet_1_18_updated_superflat: 4,
      amulet_1_18_vanilla: 743,
      bedrock_provider_mctestdb: 4,
      mcpe_0_11_mcedit_testdb: 48,
      minet_testworld: 421,
      rbedrock_example1: 39,
      rbedrock_example2_2022: 4,
      rbedrock_example2_2025: 91,
      rbedrock_example3: 21,
      bds_26_0_featherdev: 2074,
    });
    // The non-empty values here that are not shown as SNBT: digp lists of entity ids,
    // LevelChunkMetaDataDictionary (a binary dictionary) and RealmsStoriesData, which are not
    // NBT; and in bds_26_0_featherdev (1.26) the 1,389 NBT records holding an actor's 8-byte
    // StorageKey as a string that is not UTF-8 (1,370 actorprefix records, 14 players, 4 bee
    // nests' block entities under chunk keys, AutonomousEntities), refused rather than changed
    // (docs/design.md, known limits).
    expect([...notNbt]).toEqual([
      ['Leve', 3],
      ['digp', 791],
      ['Auto', 1],
      ['Real', 1],
      ['Y???', 1],
      ['acto', 1370],
      ['play', 14],
      ['????', 3],
    ]);
  }, 600_000);

  test('SNBT tree edits (a value, a rename, an added and a removed tag, a list element): exactly those tags change (amulet-nbt)', async () => {
    const dir = worldCopy('amulet_1_18_vanilla');
    const tmp = tempDir('tree');
    fs.copyFileSync(path.join(dir, 'level.dat'), path.join(tmp, 'level.dat.orig'));
    const w = await openWorld(dir, { writable: true });
    const roots = await w.snbtTree(await w.levelDatSnbt());
    const top = roots[0]!.tag as Extract<SnbtNode, { t: 'compound' }>;
    const entry = (name: string) => top.v.find(([n]) => n === name)!;
    expect(entry('commandblockoutput')[1]).toEqual({ t: 'byte', s: '1b' });
    entry('commandblockoutput')[1] = leafFromInput('byte', '0');
    entry('LevelName')[1] = leafFromInput('string', 'Tree "edited"\n');
    entry('SpawnX')[0] = 'SpawnXRenamed';
    top.v.splice(top.v.indexOf(entry('bonusChestSpawned')), 1);
    top.v.push(['addedByTree', leafFromInput('long', '-9223372036854775808')]);
    const version = entry('MinimumCompatibleClientVersion')[1] as Extract<SnbtNode, { t: 'list' }>;
    expect(version.e).toBe('int');
    version.v[4] = leafFromInput('int', '7');
    const abilities = entry('abilities')[1] as Extract<SnbtNode, { t: 'compound' }>;
    const walk = abilities.v.find(([n]) => n === 'walkSpeed')!;
    expect(leafText(walk[1] as Extract<SnbtNode, { s: string }>)).toBe('0.1');
    walk[1] = leafFromInput('float', '0.25');
    expect(await w.setLevelDat(printSnbtTree(roots))).toMatchObject({ changed: true });
    expect(nbtDiff(path.join(tmp, 'level.dat.orig'), path.join(dir, 'level.dat'), 8).sort()).toEqual(
      ['/LevelName', '/MinimumCompatibleClientVersion/4', '/SpawnX', '/SpawnXRenamed', '/abilities/walkSpeed', '/addedByTree', '/bonusChestSpawned', '/commandblockoutput'].sort(),
    );
    const back = await w.snbtTree(await w.levelDatSnbt());
    const after = (back[0]!.tag as Extract<SnbtNode, { t: 'compound' }>).v;
    const get = (n: string) => after.find(([k]) => k === n)![1];
    expect([get('LevelName'), get('addedByTree'), get('commandblockoutput')]).toEqual([
      { t: 'string', s: '"Tree \\"edited\\"\\n"', v: 'Tree "edited"\n' },
      { t: 'long', s: '-9223372036854775808L' },
      { t: 'byte', s: '0b' },
    ]);
    await w.close();

    // Input that does not fit its type is refused before anything is printed.
    expect(() => leafLiteral('byte', '128')).toThrow('byte: 128 is outside -128..127');
    expect(() => leafLiteral('long', '9223372036854775808')).toThrow('outside');
    expect(() => leafLiteral('int', '1.5')).toThrow('not a whole number');
    expect(() => leafLiteral('float', '1e39')).toThrow("beyond a float's range");
    expect(() => leafLiteral('double', 'abc')).toThrow('not a number');
    expect(() => leafLiteral('int_array', '1, x')).toThrow('not a whole number');
    expect([leafLiteral('byte_array', '1, -1'), leafLiteral('long_array', ''), leafLiteral('double', 'NaN'), leafLiteral('string', 'a\tb')]).toEqual([
      '[B; 1b, -1b]',
      '[L;]',
      'NaNd',
      '"a\\tb"',
    ]);
    expect(printSnbtTree([{ name: '', tag: { t: 'list', e: 'compound', v: [] } }, { name: 'n m', tag: emptyNode('compound') }])).toBe('[compound;]\n"n m": {}\n');
  });

  test('exportMcworldTo refuses writes to the world while it copies it (a flush could reuse files not yet read); after the copy they go through, and the zip holds the world as it was', async () => {
    const dir = worldCopy('amulet_1_16');
    const w = await openWorld(dir, { writable: true });
    const ref = await w.db.scan();
    const out = path.join(tempDir('export-writes'), 'w.mcworld');
    const tries: Array<[string, string]> = [];
    const pending: Array<Promise<void>> = [];
    const attempt = (phase: string, fn: () => Promise<unknown>) => {
      pending.push(
        fn().then(
          () => void tries.push([phase, 'ok']),
          (e: unknown) => void tries.push([phase, (e as StrataError).code]),
        ),
      );
    };
    let n = 0;
    await w.exportMcworldTo({
      path: out,
      stepBytes: 256 << 10,
      onProgress: (p) => {
        if (p.phase === 'copy' && n++ === 1) {
          attempt('copy', () => w.db.put('written-during-export', 'x'));
          attempt('copy', () => w.setNbt('~local_player', '{}'));
          attempt('copy', () => w.deleteChunks(0, '0,0'));
          attempt('copy', () => w.db.compactRange());
          attempt('copy', () => w.applyEdits([{ kind: 'delete', dimension: 0, areas: '0,0' }], { dryRun: true }));
        }
        if (p.phase === 'zip' && tries.length === 5 && pending.length === 5) attempt('zip', () => w.db.put('written-after-the-copy', 'y'));
      },
    });
    await Promise.all(pending);
    // The dry run reads only; everything else waits for the copy to end.
    expect(tries).toEqual([
      ['copy', 'LEVEL_LOCKED'],
      ['copy', 'LEVEL_LOCKED'],
      ['copy', 'LEVEL_LOCKED'],
      ['copy', 'LEVEL_LOCKED'],
      ['copy', 'ok'],
      ['zip', 'ok'],
    ]);
    expect(await w.db.get('written-after-the-copy', { valueEncoding: 'utf8' })).toBe('y');
    await w.close();
    const m = await openMcworld(new Uint8Array(fs.readFileSync(out)));
    expect(await m.db.scan()).toEqual(ref);
    await m.close();
  });

  test('exportMcworldTo: streamed through a temporary folder, the same bytes, progress, abort', async () => {
    const dir = worldCopy('amulet_1_16');
    const tree = () =>
      fs
        .readdirSync(dir, { recursive: true, encoding: 'utf8' })
        .sort()
        .map((f) => {
          const p = path.join(dir, f);
          return [f, fs.statSync(p).isFile() ? fs.statSync(p).size : null, fs.statSync(p).isFile() ? crc32(fs.readFileSync(p)) : null] as const;
        });
    const before = tree();
    expect(before.length).toBe(10); // 9 files and db/
    const w = await openWorld(dir);
    const out = path.join(tempDir('export'), 'w.mcworld');
    const events: Array<{ phase: string; done: number; total: number; files: number; bytes: number }> = [];
    const r = await w.exportMcworldTo({ path: out, onProgress: (p) => events.push(p), stepBytes: 256 << 10 });
    const zip = fs.readFileSync(out);
    // The in-memory export's bytes, and the native CLI's (tests/export_stream.rs: 1,596,286
    // bytes, CRC-32 0x1871bd91).
    expect(zip.equals(Buffer.from(await w.exportMcworld()))).toBe(true);
    expect(zip.length).toBe(1_596_286);
    expect(crc32(zip)).toBe(0x1871bd91);
    expect(r).toMatchObject({ files: 9, size: 1_596_286, path: out });
    expect(r.bytes).toBe(events.at(-1)!.bytes);
    // Nothing left beside it: the temporary folder is gone.
    expect(fs.readdirSync(path.dirname(out))).toEqual(['w.mcworld']);
    // Progress: phases in order, done monotone within one, never past total, ending done.
    const order = ['copy', 'compact', 'zip', 'done'];
    for (let i = 1; i < events.length; i++) {
      const [a, b] = [events[i - 1]!, events[i]!];
      expect(order.indexOf(b.phase)).toBeGreaterThanOrEqual(order.indexOf(a.phase));
      if (a.phase === b.phase) expect(b.done).toBeGreaterThanOrEqual(a.done);
      expect(b.done).toBeLessThanOrEqual(b.total);
    }
    expect(new Set(events.map((e) => e.phase))).toEqual(new Set(order));
    const copy = events.filter((e) => e.phase === 'copy');
    // The world's bytes, 256 KiB a step.
    const worldBytes = before.filter(([f, n]) => n !== null && !['LOCK', 'LOCK.owner'].includes(path.basename(f))).reduce((sum, [, n]) => sum + n!, 0);
    expect(copy.at(-1)).toMatchObject({ done: worldBytes, total: worldBytes });
    expect(copy.length).toBe(Math.ceil(worldBytes / (256 << 10)));
    const last = events.at(-1)!;
    expect(last.phase).toBe('done');
    expect(last.done).toBe(last.total);
    expect(last.files).toBe(9);

    // Abort during the compaction: rejects with the reason, nothing written, nothing left.
    const out2 = path.join(tempDir('export'), 'aborted.mcworld');
    const ac = new AbortController();
    const seen: string[] = [];
    const err = await w
      .exportMcworldTo({
        path: out2,
        signal: ac.signal,
        onProgress: (p) => {
          seen.push(p.phase);
          if (p.phase === 'compact') ac.abort();
        },
      })
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect((err as Error).name).toBe('AbortError');
    expect(seen.at(-1)).toBe('compact');
    expect(seen.includes('zip')).toBe(false);
    expect(fs.readdirSync(path.dirname(out2))).toEqual([]);
    // Aborted before it starts: nothing either.
    await expect(w.exportMcworldTo({ path: out2, signal: AbortSignal.abort() })).rejects.toMatchObject({ name: 'AbortError' });
    expect(fs.readdirSync(path.dirname(out2))).toEqual([]);
    await rejects(w.exportMcworldTo({ path: out2, stepBytes: 1000 }), 'LEVEL_INVALID_ARGUMENT', 'stepBytes');
    await rejects(w.exportMcworldTo({}), 'LEVEL_INVALID_ARGUMENT', 'path');
    // A temporary folder inside the world is refused before anything is written.
    await rejects(w.exportMcworldTo({ path: path.join(dir, 'x.mcworld') }), 'LEVEL_INVALID_ARGUMENT', 'outside the world');
    await w.close();
    expect(tree()).toEqual(before);
  });

  test('read-only worlds and hostile input: refused, nothing written', async () => {
    const dir = worldCopy('rbedrock_example3');
    const snapshot = () => fs.readdirSync(path.join(dir, 'db')).map((f) => [f, fs.readFileSync(path.join(dir, 'db', f))] as const);
    const before = snapshot();
    const ro = await openWorld(dir);
    expect(ro.writable).toBe(false);
    await rejects(ro.deleteChunks(0, '-100,-100:100,100'), 'LEVEL_NOT_SUPPORTED', 'read-only');
    await rejects(ro.prune(0, '0,0'), 'LEVEL_NOT_SUPPORTED', 'read-only');
    await rejects(ro.setNbt('~local_player', '{}'), 'LEVEL_NOT_SUPPORTED', 'read-only');
    await rejects(ro.setLevelDat('{}'), 'LEVEL_NOT_SUPPORTED', 'read-only');
    await ro.close();
    expect(snapshot()).toEqual(before);
    const levelDat = fs.readFileSync(path.join(dir, 'level.dat'));

    const w = await openWorld(dir, { writable: true });
    await rejects(w.deleteChunks(0, '0,0:1'), 'LEVEL_INVALID_ARGUMENT', '"1" is not a corner `x,z`');
    await rejects(w.deleteChunks(0, '500,500:600,600'), 'LEVEL_INVALID_ARGUMENT', 'no chunk of dimension 0 in the selection 500,500:600,600');
    await rejects(w.prune(0, '500,500:600,600'), 'LEVEL_INVALID_ARGUMENT', 'pruning would delete every chunk');
    await rejects(w.setNbt('~local_player', '{Pos: [1f, 2]}'), 'LEVEL_INVALID_ARGUMENT', 'snbt: line 1, column 12 (offset 11): list element 2 is a int, the list holds float');
    await rejects(w.setLevelDat('{LevelName: "x"'), 'LEVEL_INVALID_ARGUMENT', "expected ',' or '}' after a compound entry");
    // Staged entity edits: a malformed one is refused before the engine, one naming no entity
    // by the engine; neither writes anything.
    const beforeEdits = (await w.db.scan()).crc32c;
    await rejects(w.applyEdits([{ kind: 'entity', dimension: 0, key: 'xyz', root: 0 }]), 'LEVEL_INVALID_ARGUMENT', 'entity must be { key: hex string');
    await rejects(w.applyEdits([{ kind: 'entities', dimension: 0, areas: '0,0', identifier: 'a\nb' }]), 'LEVEL_INVALID_ARGUMENT', 'identifier must be a non-empty string without spaces');
    // Spaces inside string areas mean what they say (a selection text allows them).
    const spaced = await w.applyEdits(
      [
        { kind: 'delete', dimension: 0, areas: ' -2 , -2 : 1 , 1 ' },
        { kind: 'entities', dimension: 0, areas: '-100000,-100000 : 100000,100000 ; 7,7' },
      ],
      { dryRun: true },
    );
    const tight = await w.applyEdits(
      [
        { kind: 'delete', dimension: 0, areas: '-2,-2:1,1' },
        { kind: 'entities', dimension: 0, areas: '-100000,-100000:100000,100000;7,7' },
      ],
      { dryRun: true },
    );
    expect(spaced).toEqual(tight);
    expect([tight.chunks > 0, tight.entities > 0]).toEqual([true, true]);
    await rejects(w.applyEdits([{ kind: 'entity', dimension: 0, key: '00', root: 0 }]), 'LEVEL_NOT_FOUND', 'no entity at compound 0 of key 00 in dimension 0');
    await rejects(w.applyEdits([{ kind: 'entities', dimension: 0, areas: '0,0' }, { kind: 'entity', dimension: 0, key: '00', root: 0 }]), 'LEVEL_NOT_FOUND', 'no entity');
    expect((await w.db.scan()).crc32c).toBe(beforeEdits);
    await rejects(w.deleteChunks(0, [[1, 2, 3]] as never), 'LEVEL_INVALID_ARGUMENT', 'each area must be');
    const scan = await w.db.scan();
    await w.close();
    expect(fs.readFileSync(path.join(dir, 'level.dat')).equals(levelDat)).toBe(true);
    const again = await openWorld(dir);
    expect(await again.db.scan()).toEqual(scan);
    expect(scan.entries).toBe(376);
    await again.close();
  });
});
