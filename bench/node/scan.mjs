// The scan workload (DESIGN.md §2) through the npm package in Node: the wasm engine (with its
// default decode workers, cores - 1), files through node:fs, opened read-only in place. Prints one JSON line:
//   {"entries":..,"key_bytes":..,"value_bytes":..,"crc32c":..,"seconds":..,"open_seconds":..}
// "seconds" covers open + scan (the wasm module is compiled before the clock starts).
//   node bench/node/scan.mjs DB_DIR
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const { open } = await import(path.join(repo, 'js/dist/node.js'));
const dir = process.argv[2];
// Compile and instantiate the module outside the timing: open and close a scratch database.
const warm = await open('warm-up', { storage: 'mem' });
await warm.close();
const t0 = performance.now();
const db = await open(dir, { readOnly: true, createIfMissing: false });
const t1 = performance.now();
const s = await db.scan();
const t2 = performance.now();
await db.close();
console.log(JSON.stringify({
  entries: Number(s.entries), key_bytes: Number(s.keyBytes), value_bytes: Number(s.valueBytes),
  crc32c: Number(s.crc32c), seconds: +((t2 - t0) / 1000).toFixed(4), open_seconds: +((t1 - t0) / 1000).toFixed(4),
}));
