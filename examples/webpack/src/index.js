// Opens a database in the browser's origin-private file system (OPFS) with strata-level's
// browser entry (the engine runs in a dedicated worker the package starts itself), writes
// 1,000 entries, reads them back one by one, iterates them in key order, checks the result
// against the engine's own scan, reopens the database, and writes the figures into the page
// (`<body data-result>`, read by js/test/bundlers.test.ts).
import { destroy, open } from 'strata-level/browser';

const N = 1000;
const LOCATION = 'strata-example';
const keyOf = (i) => `key-${String(i).padStart(4, '0')}`;
const valueOf = (i) => `value-${i}-${'x'.repeat(i % 37)}`;

// CRC-32C (Castagnoli), the checksum db.scan() reports, over each key then its value.
const TABLE = new Uint32Array(256).map((_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0x82f63b78 ^ (c >>> 1) : c >>> 1;
  return c;
});
function crc32c(crc, bytes) {
  let c = ~crc >>> 0;
  for (const b of bytes) c = TABLE[(c ^ b) & 0xff] ^ (c >>> 8);
  return ~c >>> 0;
}

async function run() {
  await destroy(LOCATION); // start from an empty database on every load
  const db = await open(LOCATION); // storage: 'opfs' by default in browsers
  for (let i = 0; i < N; i++) await db.put(keyOf(i), valueOf(i));

  let readBack = 0;
  for (let i = 0; i < N; i++) {
    if ((await db.get(keyOf(i), { valueEncoding: 'utf8' })) === valueOf(i)) readBack++;
  }

  const text = new TextDecoder();
  let count = 0;
  let crc = 0;
  let first;
  let last;
  for await (const [k, v] of db.iterator()) {
    // Keys and values come as Uint8Array by default (keyEncoding/valueEncoding 'view').
    crc = crc32c(crc32c(crc, k), v);
    last = [text.decode(k), text.decode(v)];
    first ??= last;
    count++;
  }
  const scan = await db.scan();
  await db.close();

  const again = await open(LOCATION, { createIfMissing: false });
  const reopened = (await again.scan()).entries;
  await again.close();

  const result = { count, first, last, crc, readBack, scan, reopened };
  document.body.dataset.result = JSON.stringify(result);
  document.querySelector('#out').textContent = JSON.stringify(result, null, 2);
}

run().catch((e) => {
  document.body.dataset.error = String(e);
  document.querySelector('#out').textContent = `failed: ${String(e)}`;
});
