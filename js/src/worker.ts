// The package's browser worker: runs the engine (worker-engine.ts) and answers the page's
// messages. A message is one request `{id, op, args}` or a batch `{batch: [request, …]}` (the
// calls a page made in one turn of its event loop, browser.ts); requests run one at a time in
// arrival order, and a batch is answered with one message `{batch: [reply, …]}` once all of
// its requests ran. Byte results are transferred, not copied. Errors travel as `{code, message}`.

import { toErrorShape } from './errors.js';
import { WorkerEngine } from './worker-engine.js';

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
  onmessage: ((ev: MessageEvent<Request | { batch: Request[] }>) => void) | null;
  postMessage(msg: unknown, transfer?: Transferable[]): void;
};

const runner = new WorkerEngine();

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

scope.onmessage = (ev) => {
  const msg = ev.data;
  const transfer: Transferable[] = [];
  if ('batch' in msg) {
    // Every request is queued now, in order; the replies go back together.
    void Promise.all(msg.batch.map((r) => answer(r, transfer))).then((batch) => scope.postMessage({ batch }, transfer));
  } else {
    void answer(msg, transfer).then((reply) => scope.postMessage(reply, transfer));
  }
};
