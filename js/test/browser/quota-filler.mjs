// A dedicated worker for the Firefox quota test: fills what is left of the origin's OPFS quota
// with one plain file, writing chunks that halve from 1 MiB down to 1 byte until even one byte
// is refused (Firefox's sync access handle writes nothing and returns 0 for a write that does
// not fit; Chromium throws QuotaExceededError), then gives `leave` bytes back. Answers with
// the bytes the file holds.

onmessage = async ({ data: leave }) => {
  const root = await navigator.storage.getDirectory();
  const handle = await (await root.getFileHandle('filler', { create: true })).createSyncAccessHandle();
  let at = handle.getSize();
  for (let size = 1 << 20; size >= 1; size >>= 1) {
    const chunk = new Uint8Array(size);
    for (;;) {
      let n;
      try {
        n = handle.write(chunk, { at });
      } catch (e) {
        if (e.name !== 'QuotaExceededError') throw e;
        n = 0;
      }
      if (n === 0) break;
      at += n;
    }
  }
  handle.truncate(at - leave);
  handle.flush();
  handle.close();
  postMessage(at - leave);
};
