// The package's browser worker: runs the engine (worker-engine.ts) and answers the page's
// messages. A message is one request `{id, op, args}` or a batch `{batch: [request, …]}` (the
// calls a page made in one turn of its event loop, browser.ts); requests run one at a time in
// arrival order, and a batch is answered with one message `{batch: [reply, …]}` once all of
// its requests ran; `{decoderPorts, failed}` answers the worker's `{decoders: n}` (decode
// workers the page started for it) and `{decoderGone}` says one of them failed. Byte results are transferred, not copied. Errors travel as `{code, message}`.
// Consecutive puts and dels of a batch on one database, with one sync flag, are written as one
// write batch (LevelDB's group commit: one log record, so over OPFS one storage write, for the
// calls that crossed together); each of them gets that write's outcome, as LevelDB's writers of
// one group do. A group holds at most GROUP_BYTES of packed operations (LevelDB caps at 1 MiB).

import { packOps } from './codec.js';
import { toErrorShape } from './errors.js';
import { WorkerEngine, decodeWorkerGone, setDecodePortSource, supplyDecodePorts } from './worker-engine.js';

interface Request {
  id: number;
  op: string;
  args: unknown[];
}

interface Reply {
  id: number;
  ok: boolean;
  value?: unknown;
  error?: ReturnType<typeof toErrorShape>;
}

const scope = self as unknown as {
  onmessage: ((ev: MessageEvent<Request | { batch: Request[] } | { decoderPorts: MessagePort[]; failed: number } | { decoderGone: number; why: string }>) => void) | null;
  postMessage(msg: unknown, transfer?: Transferable[]): void;
};

const runner = new WorkerEngine();
// Decode workers come from the page (`{ decoders: n }` asks, `{ decoderPorts }` answers): a
// worker started from this one can block it in Firefox under automation (worker-engine.ts).
setDecodePortSource((count) => scope.postMessage({ decoders: count }));

/** Runs one request; the reply, and the buffer to transfer with it (if any). */
async function answer(req: Request, transfer: Transferable[]): Promise<Reply> {
  try {
    const value = await runner.run(req.op, req.args);
    if (value instanceof Uint8Array && value.byteOffset === 0 && value.byteLength === value.buffer.byteLength) {
      if (!transfer.includes(value.buffer)) transfer.push(value.buffer);
    }
    return { id: req.id, ok: true, value };
  } catch (e) {
    return { id: req.id, ok: false, error: toErrorShape(e) };
  }
}

const GROUP_BYTES = 1 << 20;

interface GroupWrite {
  h: number;
  sync: boolean;
  op: { type: 'put' | 'del'; key: Uint8Array; value?: Uint8Array };
  /** Its size packed (codec.ts packOps). */
  bytes: number;
}

/** A put `[h, key, value, sync]` or del `[h, key, sync]` that may join a group, or undefined
 * (another op, or arguments of other types: those run alone and fail alone). */
function groupWrite(req: Request): GroupWrite | undefined {
  const a = req.args;
  if (!Array.isArray(a) || typeof a[0] !== 'number' || !(a[1] instanceof Uint8Array)) return undefined;
  if (req.op === 'put' && a.length === 4 && a[2] instanceof Uint8Array && typeof a[3] === 'boolean') {
    return { h: a[0], sync: a[3], op: { type: 'put', key: a[1], value: a[2] }, bytes: 9 + a[1].length + a[2].length };
  }
  if (req.op === 'del' && a.length === 3 && typeof a[2] === 'boolean') {
    return { h: a[0], sync: a[2], op: { type: 'del', key: a[1] }, bytes: 5 + a[1].length };
  }
  return undefined;
}

/** Runs a batch's requests in order, consecutive writes to one database as one group. */
function answerAll(batch: Request[], transfer: Transferable[]): Promise<Reply[]> {
  const replies: Array<Promise<Reply> | Promise<Reply[]>> = [];
  let i = 0;
  while (i < batch.length) {
    const first = groupWrite(batch[i]!);
    const group = first ? [first] : [];
    let bytes = first?.bytes ?? 0;
    for (let j = i + 1; first && j < batch.length; j++) {
      const w = groupWrite(batch[j]!);
      if (!w || w.h !== first.h || w.sync !== first.sync || bytes + w.bytes > GROUP_BYTES) break;
      group.push(w);
      bytes += w.bytes;
    }
    if (group.length < 2) {
      replies.push(answer(batch[i]!, transfer));
      i++;
      continue;
    }
    const ids = batch.slice(i, i + group.length).map((r) => r.id);
    replies.push(
      runner.run('write', [first!.h, packOps(group.map((w) => w.op)), first!.sync]).then(
        () => ids.map((id) => ({ id, ok: true, value: undefined })),
        (e: unknown) => ids.map((id) => ({ id, ok: false, error: toErrorShape(e) })),
      ),
    );
    i += group.length;
  }
  return Promise.all(replies).then((rs) => rs.flat());
}

scope.onmessage = (ev) => {
  const msg = ev.data;
  if ('decoderPorts' in msg) {
    supplyDecodePorts(msg.decoderPorts, msg.failed);
    return;
  }
  if ('decoderGone' in msg) {
    decodeWorkerGone(msg.decoderGone, msg.why);
    return;
  }
  const transfer: Transferable[] = [];
  if ('batch' in msg) {
    // Every request (or group of writes) is queued now, in order; the replies go back together.
    void answerAll(msg.batch, transfer).then((batch) => scope.postMessage({ batch }, transfer));
  } else {
    void answer(msg, transfer).then((reply) => scope.postMessage(reply, transfer));
  }
};
