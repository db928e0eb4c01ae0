// Keys and values at the boundary: user values (strings or bytes) to bytes, and the packed
// byte layouts the wasm facade speaks (src/wasm/mod.rs): batches of operations going in,
// batches of entries coming out. Entries coming out are views into one buffer per batch.

import { invalidArgument } from './errors.js';

/** How keys or values are returned: bytes (`view`, the default), strings, or Node Buffers. */
export type Encoding = 'view' | 'utf8' | 'buffer';

export type Bytes = Uint8Array;
export type Input = string | Uint8Array;

const encoder = new TextEncoder();
const decoder = new TextDecoder('utf-8');

/** Bytes of a key or value given by the user. */
export function toBytes(value: unknown, what: string): Uint8Array {
  if (value instanceof Uint8Array) return value;
  if (typeof value === 'string') return encoder.encode(value);
  if (value instanceof ArrayBuffer) return new Uint8Array(value);
  throw invalidArgument(`${what} must be a string or a Uint8Array, got ${describe(value)}`);
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value;
}

export function checkEncoding(value: unknown, what: string): Encoding {
  if (value === undefined) return 'view';
  if (value === 'view' || value === 'utf8' || value === 'buffer') return value;
  throw invalidArgument(`${what} must be 'view', 'utf8' or 'buffer'`);
}

type BufferLike = { from(data: ArrayBuffer, offset: number, length: number): Uint8Array };

/** Bytes as the caller asked to see them. */
export function decode(bytes: Uint8Array, encoding: Encoding): Uint8Array | string {
  if (encoding === 'utf8') return decoder.decode(bytes);
  if (encoding === 'buffer') {
    const B = (globalThis as { Buffer?: BufferLike }).Buffer;
    if (B) return B.from(bytes.buffer as ArrayBuffer, bytes.byteOffset, bytes.byteLength);
  }
  return bytes;
}

/** One write in a batch. */
export type BatchOp =
  | { type: 'put'; key: Input; value: Input }
  | { type: 'del'; key: Input };

/** `[kind u8][klen u32][key]` and, for puts, `[vlen u32][value]` per operation. */
export function packOps(ops: ReadonlyArray<{ type: string; key: unknown; value?: unknown }>): Uint8Array {
  if (!Array.isArray(ops)) throw invalidArgument('batch operations must be an array');
  const parts: Array<{ put: boolean; key: Uint8Array; value?: Uint8Array }> = [];
  let size = 0;
  for (const op of ops) {
    if (typeof op !== 'object' || op === null) throw invalidArgument('a batch operation must be an object');
    if (op.type === 'put') {
      if (op.value === undefined || op.value === null) throw invalidArgument('a put needs a value');
      const key = toBytes(op.key, 'key');
      const value = toBytes(op.value, 'value');
      parts.push({ put: true, key, value });
      size += 9 + key.length + value.length;
    } else if (op.type === 'del') {
      const key = toBytes(op.key, 'key');
      parts.push({ put: false, key });
      size += 5 + key.length;
    } else {
      throw invalidArgument(`unknown batch operation type ${JSON.stringify(op.type)}`);
    }
  }
  const out = new Uint8Array(size);
  const view = new DataView(out.buffer);
  let pos = 0;
  for (const p of parts) {
    out[pos++] = p.put ? 1 : 0;
    view.setUint32(pos, p.key.length, true);
    out.set(p.key, pos + 4);
    pos += 4 + p.key.length;
    if (p.value) {
      view.setUint32(pos, p.value.length, true);
      out.set(p.value, pos + 4);
      pos += 4 + p.value.length;
    }
  }
  return out;
}

/** `[klen u32][key]...` for getMany. */
export function packKeys(keys: Uint8Array[]): Uint8Array {
  let size = 0;
  for (const k of keys) size += 4 + k.length;
  const out = new Uint8Array(size);
  const view = new DataView(out.buffer);
  let pos = 0;
  for (const k of keys) {
    view.setUint32(pos, k.length, true);
    out.set(k, pos + 4);
    pos += 4 + k.length;
  }
  return out;
}

/** Values from getMany's `[count u32]` then `[present u8][vlen u32][value]` per key. */
export function unpackValues(buf: Uint8Array): Array<Uint8Array | undefined> {
  const view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  const count = view.getUint32(0, true);
  const out: Array<Uint8Array | undefined> = [];
  let pos = 4;
  for (let i = 0; i < count; i++) {
    if (buf[pos++] === 0) {
      out.push(undefined);
      continue;
    }
    const len = view.getUint32(pos, true);
    out.push(buf.subarray(pos + 4, pos + 4 + len));
    pos += 4 + len;
  }
  return out;
}

/** A batch of entries from `Cursor.nextv`. */
export interface EntryBatch {
  keys: Uint8Array[];
  values: Uint8Array[];
  count: number;
  ended: boolean;
}

export function unpackEntries(buf: Uint8Array, keys: boolean, values: boolean): EntryBatch {
  const view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  const count = view.getUint32(0, true);
  const ended = view.getUint32(4, true) === 1;
  const ks: Uint8Array[] = [];
  const vs: Uint8Array[] = [];
  let pos = 8;
  for (let i = 0; i < count; i++) {
    if (keys) {
      const len = view.getUint32(pos, true);
      ks.push(buf.subarray(pos + 4, pos + 4 + len));
      pos += 4 + len;
    }
    if (values) {
      const len = view.getUint32(pos, true);
      vs.push(buf.subarray(pos + 4, pos + 4 + len));
      pos += 4 + len;
    }
  }
  return { keys: ks, values: vs, count, ended };
}
