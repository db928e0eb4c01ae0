// Many promises in flight on one database, checked against a model. Shared by the Node tests
// (mem, fs) and the browser test (opfs, mem).
//
// Operations are issued without awaiting them, in waves. The package promises that calls on a
// database take effect in the order they were issued (the engine runs them one at a time), so
// every read is compared with the model as it stood when the read was issued: `get`, `getMany`,
// an iterator over a range (its view is pinned when `iterator()` is called) and reads through
// snapshots taken mid-wave (pinned when `snapshot()` is called). Writes are puts, deletes and
// multi-key batches, some synced, with flushes and compactions in flight among them. At the end the database, and the database reopened, equal the model exactly.
// Throws on the first mismatch; returns counts.

const dec = new TextDecoder();

function rng(seed) {
  let s = seed >>> 0 || 1;
  return (n) => {
    s ^= s << 13;
    s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5;
    s >>>= 0;
    return s % n;
  };
}

const KEYS = 240;
const key = (i) => `key-${String(i).padStart(4, '0')}`;

function rangeOf(model, lo, hi) {
  return [...model.entries()].filter(([k]) => k >= lo && k < hi).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

export async function inflight(open, location, extraOptions = {}, { waves = 12, perWave = 400, seed = 7 } = {}) {
  const rand = rng(seed);
  const model = new Map();
  const counts = { writes: 0, reads: 0, iterators: 0, flushes: 0, snapshotReads: 0, checks: 0 };
  const options = { writeBufferSize: 64 * 1024, ...extraOptions };
  let db = await open(location, options);
  const text = (v) => (v === undefined ? undefined : dec.decode(v));
  const mismatch = (what, expected, actual) => {
    throw new Error(`${what}: expected ${JSON.stringify(expected)}, got ${JSON.stringify(actual)}`);
  };

  for (let wave = 0; wave < waves; wave++) {
    const pending = [];
    const snapshots = [];
    for (let i = 0; i < perWave; i++) {
      const roll = rand(100);
      const k = key(rand(KEYS));
      const v = `v${wave}.${i}.${'x'.repeat(rand(200))}`;
      if (roll < 35) {
        model.set(k, v);
        counts.writes++;
        pending.push(db.put(k, v, { sync: rand(10) === 0 }));
      } else if (roll < 45) {
        model.delete(k);
        counts.writes++;
        pending.push(db.del(k));
      } else if (roll < 55) {
        const ops = [];
        for (let j = 0, n = 1 + rand(8); j < n; j++) {
          const bk = key(rand(KEYS));
          if (rand(4) === 0) {
            ops.push({ type: 'del', key: bk });
            model.delete(bk);
          } else {
            const bv = `b${wave}.${i}.${j}`;
            ops.push({ type: 'put', key: bk, value: bv });
            model.set(bk, bv);
          }
        }
        counts.writes++;
        pending.push(db.batch(ops, { sync: rand(10) === 0 }));
      } else if (roll < 75) {
        const expected = model.get(k);
        counts.reads++;
        pending.push(
          db.get(k).then((got) => {
            counts.checks++;
            if (text(got) !== expected) mismatch(`get ${k} (wave ${wave}, op ${i})`, expected, text(got));
          }),
        );
      } else if (roll < 83) {
        const ks = Array.from({ length: 1 + rand(6) }, () => key(rand(KEYS)));
        const expected = ks.map((x) => model.get(x));
        counts.reads++;
        pending.push(
          db.getMany(ks).then((got) => {
            counts.checks++;
            const g = got.map(text);
            if (JSON.stringify(g) !== JSON.stringify(expected)) mismatch(`getMany (wave ${wave}, op ${i})`, expected, g);
          }),
        );
      } else if (roll < 93) {
        const a = rand(KEYS);
        const lo = key(a);
        const hi = key(a + 1 + rand(40));
        const reverse = rand(2) === 0;
        const expected = rangeOf(model, lo, hi);
        if (reverse) expected.reverse();
        counts.iterators++;
        const it = db.iterator({ gte: lo, lt: hi, reverse, keyEncoding: 'utf8', valueEncoding: 'utf8' });
        pending.push(
          it.all().then((got) => {
            counts.checks++;
            if (JSON.stringify(got) !== JSON.stringify(expected)) mismatch(`iterator [${lo}, ${hi}) reverse=${reverse}`, expected, got);
          }),
        );
      } else if (roll < 95) {
        counts.flushes++;
        pending.push(rand(3) === 0 ? db.compactRange() : db.flush());
      } else {
        const frozen = new Map(model);
        snapshots.push({ promise: db.snapshot(), frozen });
      }
    }
    // Read through every snapshot of the wave now that later writes have landed.
    for (const { promise, frozen } of snapshots) {
      const snap = await promise;
      const probes = Array.from({ length: 20 }, () => key(rand(KEYS)));
      for (const p of probes) {
        const got = text(await db.get(p, { snapshot: snap }));
        counts.snapshotReads++;
        counts.checks++;
        if (got !== frozen.get(p)) mismatch(`snapshot get ${p} (wave ${wave})`, frozen.get(p), got);
      }
      const all = await db.iterator({ snapshot: snap, keyEncoding: 'utf8', valueEncoding: 'utf8' }).all();
      counts.checks++;
      const expected = rangeOf(frozen, '', '\uffff');
      if (JSON.stringify(all) !== JSON.stringify(expected)) mismatch(`snapshot iterator (wave ${wave})`, expected.length, all.length);
      await snap.release();
    }
    await Promise.all(pending);
  }

  const whole = async (what) => {
    const all = await db.iterator({ keyEncoding: 'utf8', valueEncoding: 'utf8' }).all();
    counts.checks++;
    const expected = rangeOf(model, '', '\uffff');
    if (JSON.stringify(all) !== JSON.stringify(expected)) mismatch(what, expected.length, all.length);
    return all.length;
  };
  await whole('final state');
  await db.close();
  db = await open(location, options);
  const entries = await whole('after reopen');
  await db.close();
  return { ...counts, entries };
}
