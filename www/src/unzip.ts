// `.mcworld` unpacking for the OPFS import, run in a page worker (unzip-worker.ts): the zip's
// central directory is read, the world's root found the way the engine does (the shallowest
// folder, depth 0 or 1, holding level.dat, else db/CURRENT, else CURRENT) and only the entries
// under it inflated, with the browser's DecompressionStream('deflate-raw') in 64 KiB steps.
// The limits are the engine's ImportLimits defaults (src/bedrock/mcworld.rs) and the messages
// use its wording ("mcworld: … inflates more than 200× …", "mcworld: not a readable zip: …"),
// so the viewer reports both paths the same way. CRC-32 of every entry is checked.

export const LIMITS: { maxEntries: number; maxEntryBytes: number; maxTotalBytes: number; maxRatio: number } = { maxEntries: 10_000, maxEntryBytes: 512 << 20, maxTotalBytes: 2 ** 31, maxRatio: 200 };
/** For the engine's own export (save to a folder): not an untrusted archive, only sizes a
 * browser can hold one entry of. */
export const OWN_EXPORT_LIMITS: typeof LIMITS = { maxEntries: 1_000_000, maxEntryBytes: 2 ** 31, maxTotalBytes: Number.MAX_SAFE_INTEGER, maxRatio: Number.MAX_SAFE_INTEGER };
const STEP = 64 << 10;

export interface Unzipped {
  /** The world's folder inside the zip ('' for the top level). */
  root: string;
  /** Paths relative to `root`. */
  files: Array<{ name: string; data: Uint8Array }>;
}

function refuse(msg: string): Error {
  return new Error(`mcworld: ${msg}`);
}
function unreadable(msg: string): Error {
  return new Error(`mcworld: not a readable zip: ${msg}`);
}

let crcTable: Uint32Array | undefined;
function crc32(data: Uint8Array, crc = 0): number {
  if (!crcTable) {
    crcTable = new Uint32Array(256);
    for (let n = 0; n < 256; n++) {
      let c = n;
      for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
      crcTable[n] = c >>> 0;
    }
  }
  let c = ~crc >>> 0;
  for (let i = 0; i < data.length; i++) c = crcTable[(c ^ data[i]!) & 0xff]! ^ (c >>> 8);
  return ~c >>> 0;
}

function safeName(name: string): string {
  const bad =
    name === '' || name.startsWith('/') || name.includes('\\') || name.includes('\0') || name.charAt(1) === ':' || name.split('/').some((c) => c === '..' || c === '.');
  if (bad) throw refuse(`unsafe entry name ${JSON.stringify(name)}`);
  return name.replace(/\/+$/, '');
}

function findRoot(names: string[]): string {
  const depth = (p: string) => (p === '' ? 0 : p.split('/').length);
  for (const leaf of ['level.dat', 'db/CURRENT', 'CURRENT']) {
    const roots = names
      .filter((n) => n === leaf || n.endsWith(`/${leaf}`))
      .map((n) => n.slice(0, n.length - leaf.length).replace(/\/$/, ''))
      .filter((p) => depth(p) <= 1)
      .sort((a, b) => depth(a) - depth(b) || (a < b ? -1 : a > b ? 1 : 0));
    if (roots.length > 0) return roots[0]!;
  }
  throw refuse('no level.dat or db/CURRENT in the archive');
}

async function inflate(comp: Uint8Array<ArrayBuffer>, name: string, already: number, limits: typeof LIMITS): Promise<Uint8Array> {
  const ds = new DecompressionStream('deflate-raw');
  const writer = ds.writable.getWriter();
  const reader = ds.readable.getReader();
  let fed = 0;
  const feed = (async () => {
    for (let i = 0; i < comp.length; i += STEP) {
      fed = Math.min(comp.length, i + STEP);
      await writer.write(comp.subarray(i, fed));
    }
    await writer.close();
  })();
  feed.catch(() => {});
  const parts: Uint8Array[] = [];
  let out = 0;
  try {
    for (;;) {
      let r: ReadableStreamReadResult<Uint8Array>;
      try {
        r = await reader.read();
      } catch (e) {
        throw unreadable(`${name}: ${String((e as Error)?.message ?? e)}`);
      }
      if (r.done) break;
      out += r.value.length;
      if (out > limits.maxEntryBytes) throw refuse(`${name} inflates to more than ${limits.maxEntryBytes} bytes`);
      if (already + out > limits.maxTotalBytes) throw refuse(`the archive inflates to more than ${limits.maxTotalBytes} bytes`);
      if (out > 1 << 20 && out > limits.maxRatio * Math.max(fed, 1)) throw refuse(`${name} inflates more than ${limits.maxRatio}× its compressed size`);
      parts.push(r.value);
    }
  } catch (e) {
    await reader.cancel().catch(() => {});
    throw e;
  }
  const data = new Uint8Array(out);
  let at = 0;
  for (const p of parts) {
    data.set(p, at);
    at += p.length;
  }
  return data;
}

/** Where a zip's bytes come from: bytes in memory, or a Blob (an OPFS file) read in slices, so
 * an archive larger than memory is unpacked one entry at a time. */
export interface ZipSource {
  size: number;
  read(at: number, length: number): Promise<Uint8Array<ArrayBuffer>>;
}

export function bytesSource(zip: Uint8Array<ArrayBuffer>): ZipSource {
  // Copies: each entry's bytes get a buffer of their own (the unzip worker transfers them).
  return { size: zip.length, read: async (at, length) => zip.slice(at, Math.min(zip.length, at + length)) };
}

export function blobSource(blob: Blob): ZipSource {
  return { size: blob.size, read: async (at, length) => new Uint8Array(await blob.slice(at, at + length).arrayBuffer()) };
}

/** Unpacks the world inside `zip`. */
export async function unzipWorld(zip: Uint8Array<ArrayBuffer>, progress?: (files: number, total: number) => void): Promise<Unzipped> {
  const files: Unzipped['files'] = [];
  const { root } = await unzipEach(bytesSource(zip), async (name, data, n, total) => {
    files.push({ name, data });
    progress?.(n, total);
  });
  return { root, files };
}

/** Unpacks the world inside the zip of `src` one entry at a time: `onFile(name relative to the
 * world's root, its bytes, entries done, entries in all)` (awaited before the next entry is
 * read). Only the central directory and one entry are in memory at once. */
export async function unzipEach(
  src: ZipSource,
  onFile: (name: string, data: Uint8Array, n: number, total: number) => Promise<void>,
  limits: typeof LIMITS = LIMITS,
): Promise<{ root: string; files: number; bytes: number }> {
  const tailAt = Math.max(0, src.size - 22 - 65_535);
  const tail = await src.read(tailAt, src.size - tailAt);
  const tv = new DataView(tail.buffer, tail.byteOffset, tail.byteLength);
  let eocd = -1;
  for (let i = tail.length - 22; i >= 0; i--) {
    if (tv.getUint32(i, true) === 0x06054b50) {
      eocd = i;
      break;
    }
  }
  if (eocd < 0) throw unreadable('no end of central directory record (truncated?)');
  const count = tv.getUint16(eocd + 10, true);
  if (count === 0xffff) throw unreadable('zip64 archives are not supported');
  if (count > limits.maxEntries) throw refuse(`${count} entries (at most ${limits.maxEntries})`);
  const cdSize = tv.getUint32(eocd + 12, true);
  const cdAt = tv.getUint32(eocd + 16, true);
  if (cdAt + cdSize > src.size) throw unreadable('bad central directory');
  const cd = await src.read(cdAt, cdSize);
  const v = new DataView(cd.buffer, cd.byteOffset, cd.byteLength);
  let p = 0;
  const dec = new TextDecoder();
  const entries: Array<{ name: string; method: number; flags: number; crc: number; comp: number; local: number }> = [];
  for (let k = 0; k < count; k++) {
    if (p + 46 > cd.length || v.getUint32(p, true) !== 0x02014b50) throw unreadable('bad central directory');
    const nameLen = v.getUint16(p + 28, true);
    const raw = dec.decode(cd.subarray(p + 46, p + 46 + nameLen));
    entries.push({
      name: safeName(raw),
      method: v.getUint16(p + 10, true),
      flags: v.getUint16(p + 8, true),
      crc: v.getUint32(p + 16, true),
      comp: v.getUint32(p + 20, true),
      local: v.getUint32(p + 42, true),
    });
    if (raw.endsWith('/')) entries.pop();
    p += 46 + nameLen + v.getUint16(p + 30, true) + v.getUint16(p + 32, true);
  }
  const root = findRoot(entries.map((e) => e.name));
  const mine = entries.filter((e) => root === '' || e.name.startsWith(`${root}/`));
  let total = 0;
  let n = 0;
  for (const e of mine) {
    if (e.flags & 1) throw refuse(`${e.name} is encrypted`);
    if (e.local + 30 > src.size) throw unreadable(`${e.name}: bad local header`);
    const head = await src.read(e.local, 30);
    const hv = new DataView(head.buffer, head.byteOffset, head.byteLength);
    if (hv.getUint32(0, true) !== 0x04034b50) throw unreadable(`${e.name}: bad local header`);
    const start = e.local + 30 + hv.getUint16(26, true) + hv.getUint16(28, true);
    if (start + e.comp > src.size) throw unreadable(`${e.name}: truncated`);
    if (e.method !== 8 && e.comp > limits.maxEntryBytes) throw refuse(`${e.name} is larger than ${limits.maxEntryBytes} bytes`);
    const comp = await src.read(start, e.comp);
    let data: Uint8Array;
    if (e.method === 0) data = comp;
    else if (e.method === 8) data = await inflate(comp, e.name, total, limits);
    else throw refuse(`${e.name}: compression method ${e.method} is not supported`);
    if (crc32(data) !== e.crc) throw unreadable(`${e.name}: CRC-32 mismatch`);
    total += data.length;
    if (total > limits.maxTotalBytes) throw refuse(`the archive inflates to more than ${limits.maxTotalBytes} bytes`);
    n++;
    await onFile(root === '' ? e.name : e.name.slice(root.length + 1), data, n, mine.length);
  }
  return { root, files: n, bytes: total };
}
