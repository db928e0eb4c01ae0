// Storage-backend conformance through the public JS API, shared by the Node tests (mem, fs)
// and the browser test (mem, opfs). `open(location, options)` is the package's `open`.
// Throws on the first failed check; returns the number of checks made.

const enc = new TextEncoder();
const dec = new TextDecoder();

export async function conformance(open, location, extraOptions = {}) {
  let checks = 0;
  const eq = (actual, expected, what) => {
    checks++;
    const a = JSON.stringify(actual);
    const e = JSON.stringify(expected);
    if (a !== e) throw new Error(`${what}: expected ${e}, got ${a}`);
  };
  const code = async (promise, expected, what) => {
    try {
      await promise;
    } catch (e) {
      eq(e.code, expected, what);
      return;
    }
    throw new Error(`${what}: expected ${expected}, nothing was thrown`);
  };

  let db = await open(location, { ...extraOptions });
  // Point operations and encodings.
  await db.put('k1', 'v1');
  await db.put(enc.encode('k2'), Uint8Array.of(0, 1, 2, 255));
  eq(dec.decode(await db.get('k1')), 'v1', 'get as view');
  eq(await db.get('k1', { valueEncoding: 'utf8' }), 'v1', 'get as utf8');
  eq(Array.from(await db.get('k2')), [0, 1, 2, 255], 'binary value');
  eq(await db.get('missing'), undefined, 'missing key');
  await db.del('k1');
  eq(await db.get('k1'), undefined, 'deleted key');
  await db.put('', 'empty key');
  eq(await db.get('', { valueEncoding: 'utf8' }), 'empty key', 'empty key');
  await db.put('empty-value', '');
  eq((await db.get('empty-value')).length, 0, 'empty value');

  // Atomic batches and getMany.
  const ops = [];
  for (let i = 0; i < 500; i++) ops.push({ type: 'put', key: `b${String(i).padStart(4, '0')}`, value: `value-${i}`.repeat(i % 7) });
  ops.push({ type: 'del', key: 'b0003' });
  await db.batch(ops);
  const many = await db.getMany(['b0001', 'b0003', 'b0499', 'nope'], { valueEncoding: 'utf8' });
  eq(many, ['value-1', undefined, 'value-499'.repeat(499 % 7), undefined], 'getMany');

  // Ranges, both directions, limits.
  const keys = async (o) => (await db.iterator({ ...o, keyEncoding: 'utf8', values: false }).all()).map((e) => e[0]);
  eq(await keys({ gte: 'b0010', lt: 'b0014' }), ['b0010', 'b0011', 'b0012', 'b0013'], 'gte/lt');
  eq(await keys({ gt: 'b0010', lte: 'b0014', reverse: true }), ['b0014', 'b0013', 'b0012', 'b0011'], 'gt/lte reverse');
  eq(await keys({ gte: 'b0001', limit: 3 }), ['b0001', 'b0002', 'b0004'], 'limit skips deleted');
  eq((await keys({})).length, 500 - 1 + 3, 'all keys');
  eq((await keys({ reverse: true }))[0], 'k2', 'last key');

  // nextv batches and seek.
  const it = db.iterator({ gte: 'b', lt: 'c', keyEncoding: 'utf8', valueEncoding: 'utf8' });
  const first = await it.nextv(100);
  eq(first.length, 100, 'nextv size');
  eq(first[99][0], 'b0100', 'nextv order');
  await it.seek('b0450');
  eq((await it.next())[0], 'b0450', 'seek');
  let rest = 0;
  for await (const _ of it) rest++;
  eq(rest, 49, 'for await after seek');

  // An iterator sees the database as of its creation, not of its first read.
  const early = db.iterator({ gte: 'b0002', lt: 'b0003', keyEncoding: 'utf8', valueEncoding: 'utf8' });
  const overwrite = db.put('b0002', 'overwritten');
  eq(await early.all(), [['b0002', 'value-2'.repeat(2)]], 'iterator view pinned at creation');
  await overwrite;
  eq(await db.get('b0002', { valueEncoding: 'utf8' }), 'overwritten', 'write after iterator');

  // Snapshots.
  const snap = await db.snapshot();
  await db.put('b0001', 'changed');
  eq(await db.get('b0001', { snapshot: snap, valueEncoding: 'utf8' }), 'value-1', 'snapshot get');
  eq(await db.get('b0001', { valueEncoding: 'utf8' }), 'changed', 'latest get');
  await snap.release();

  // Large values cross the boundary intact.
  const big = new Uint8Array(3 * 1024 * 1024);
  for (let i = 0; i < big.length; i++) big[i] = (i * 2654435761) >>> 24;
  await db.put('big', big);
  const back = await db.get('big');
  eq([back.length, back[12345], back[big.length - 1]], [big.length, big[12345], big[big.length - 1]], 'big value');

  // Enough writes to flush and compact, then reopen: everything is still there.
  for (let round = 0; round < 4; round++) {
    const batch = [];
    for (let i = 0; i < 2000; i++) batch.push({ type: 'put', key: `f${round}-${String(i).padStart(5, '0')}`, value: 'x'.repeat(200) });
    await db.batch(batch);
  }
  await db.flush();
  await db.compactRange();
  await db.close();
  await code(db.get('k2'), 'LEVEL_DATABASE_NOT_OPEN', 'closed handle');

  db = await open(location, { ...extraOptions });
  eq(Array.from(await db.get('k2')), [0, 1, 2, 255], 'after reopen');
  eq((await db.get('big')).length, big.length, 'big after reopen');
  eq((await keys({ gte: 'f', lt: 'g' })).length, 8000, 'flushed keys after reopen');
  const props = await db.properties();
  eq(props.filesPerLevel.reduce((a, b) => a + b, 0) > 0, true, 'tables exist');
  await db.close();
  return checks;
}
