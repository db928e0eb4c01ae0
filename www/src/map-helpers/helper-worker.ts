// A map helper: a page worker with its own engine (strata-level's, run inline in this worker)
// reading the same world's files as the page's engine (a picked folder, an unpacked
// `.mcworld`, snapshots of a world in OPFS), read-only. It draws map bands
// and block tiles, and takes ranges of the chunk index's pass, so that a map is drawn on
// several cores (pool.ts). Messages in: {id, op: 'open', files, root}, {id, op: 'map',
// options}, {id, op: 'tiles', dimension, chunks}, {id, op: 'chunkPart', dimension, start,
// end}; out: {id, ok, value} or {id, ok: false, error: {code, message}}. A map's RGBA buffer
// and a chunk part's bytes are transferred, not copied.
//
// Invariant: answers in the order asked (one call at a time: the engine is synchronous).

import { openWorld, type World } from 'strata-level/browser';

type Msg =
  | { id: number; op: 'open'; files: Array<{ path: string; file: Blob }>; root: string }
  | { id: number; op: 'map'; options: Parameters<World['map']>[0] }
  | { id: number; op: 'tiles'; dimension: 0 | 1 | 2; chunks: Array<[number, number]> }
  | { id: number; op: 'chunkPart'; dimension: 0 | 1 | 2; start?: Uint8Array; end?: Uint8Array };

const scope = self as unknown as {
  onmessage: ((ev: MessageEvent<Msg>) => void) | null;
  postMessage(msg: unknown, transfer?: Transferable[]): void;
};

/** File bytes and decoded blocks a helper keeps (the page's engine: 64 MiB and Mojang's 40
 * MiB). A band of rows reads from every table of the world (keys order chunks by x first), so
 * a file cache smaller than the world's tables makes each band read them all again through
 * the browser's process: with 16 MiB the 160,000-chunk world's tables (47 MB) were read about
 * ten times over, and a helper gained 1.26x instead of 1.3-1.45x, and peaked 100 MiB higher
 * (the churned buffers). The cache is a bound, not an allocation: a small world costs its
 * size. */
const HELPER_FILE_CACHE = 64 << 20;
const HELPER_BLOCK_CACHE = 8 << 20;

let world: World | undefined;
let chain: Promise<void> = Promise.resolve();

async function run(m: Msg): Promise<{ value: unknown; transfer: Transferable[] }> {
  if (m.op === 'open') {
    // No decode workers: map bands and tiles are point reads (decode workers serve scans).
    world = await openWorld(m.root, { storage: 'files', files: m.files, decodeWorkers: 0, fileCacheBytes: HELPER_FILE_CACHE, cacheSize: HELPER_BLOCK_CACHE });
    return { value: null, transfer: [] };
  }
  if (!world) throw Object.assign(new Error('the map helper has no world open'), { code: 'LEVEL_DATABASE_NOT_OPEN' });
  if (m.op === 'map') {
    const image = await world.map(m.options);
    return { value: image, transfer: [image.rgba.buffer as ArrayBuffer] };
  }
  if (m.op === 'chunkPart') {
    const part = await world.chunkListPart(m.dimension, { start: m.start, end: m.end });
    return { value: part, transfer: [part.buffer as ArrayBuffer] };
  }
  const tiles = await world.surfaceTiles(m.dimension, m.chunks);
  return { value: tiles, transfer: [] };
}

scope.onmessage = (ev) => {
  const m = ev.data;
  chain = chain.then(async () => {
    try {
      const { value, transfer } = await run(m);
      scope.postMessage({ id: m.id, ok: true, value }, transfer);
    } catch (e) {
      const err = e as { code?: string; message?: string };
      scope.postMessage({ id: m.id, ok: false, error: { code: err?.code ?? 'LEVEL_IO_ERROR', message: String(err?.message ?? e) } });
    }
  });
};
