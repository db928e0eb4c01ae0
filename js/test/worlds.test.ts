// Every shared Bedrock world, opened through the npm package (wasm, node:fs) and iterated to
// the end in JS: MANIFEST.tsv's entries, key bytes, value bytes and CRC-32C, exactly.

import path from 'node:path';
import { describe, expect, test } from 'vitest';

import { open } from '../dist/node.js';
import { Crc, worlds, worldsDir } from './helpers.js';

describe('shared worlds through the npm package', () => {
  for (const w of worlds()) {
    test(w.name, async () => {
      const db = await open(path.join(worldsDir, w.name, 'db'), { readOnly: true, profile: 'bedrock' });
      try {
        const crc = new Crc();
        let entries = 0;
        let keyBytes = 0;
        let valueBytes = 0;
        const it = db.iterator();
        for (;;) {
          const batch = await it.nextv(1000);
          if (batch.length === 0) break;
          for (const [k, v] of batch as Array<[Uint8Array, Uint8Array]>) {
            crc.update(k);
            crc.update(v);
            keyBytes += k.length;
            valueBytes += v.length;
          }
          entries += batch.length;
        }
        await it.close();
        expect({ entries, keyBytes, valueBytes, crc32c: crc.value }).toEqual({
          entries: w.entries,
          keyBytes: w.keyBytes,
          valueBytes: w.valueBytes,
          crc32c: w.crc32c,
        });
        // The engine-side scan agrees.
        expect(await db.scan()).toEqual({
          entries: w.entries,
          keyBytes: w.keyBytes,
          valueBytes: w.valueBytes,
          crc32c: w.crc32c,
        });
        // Reverse iteration yields the same number of entries, last key first.
        const rev = await db.iterator({ reverse: true, values: false, limit: 3 }).all();
        const fwd = await db.iterator({ values: false }).all();
        expect(rev.map((e) => Array.from(e[0] as Uint8Array))).toEqual(
          fwd.slice(-3).reverse().map((e) => Array.from(e[0] as Uint8Array)),
        );
      } finally {
        await db.close();
      }
    });
  }
});
