// A page worker unpacking a `.mcworld` (unzip.ts) off the main thread, so the page stays
// responsive and the work can be cancelled by terminating it. Message in: the File; out:
// {type:'progress', files, total}, {type:'done', root, files} (buffers transferred) or
// {type:'error', message}.

import { unzipWorld } from './unzip.js';

const scope = self as unknown as {
  onmessage: ((ev: MessageEvent<Blob>) => void) | null;
  postMessage(msg: unknown, transfer?: Transferable[]): void;
};

scope.onmessage = (ev) => {
  void (async () => {
    try {
      const zip = new Uint8Array(await ev.data.arrayBuffer());
      const out = await unzipWorld(zip, (files, total) => scope.postMessage({ type: 'progress', files, total }));
      scope.postMessage({ type: 'done', ...out }, out.files.map((f) => f.data.buffer as ArrayBuffer));
    } catch (e) {
      scope.postMessage({ type: 'error', message: String((e as Error)?.message ?? e) });
    }
  })();
};
