// A static server for the built web pages (www/dist): 127.0.0.1 only, `/` is index.html,
// `.wasm` as application/wasm, no COOP/COEP (none is needed), paths confined to the folder.
// Extra files can be mounted at fixed paths (the demo world at `/demo.mcworld`, from
// $STRATA_DEMO_MCWORLD). Run: `node scripts/serve-www.mjs [DIR]` (port $PORT, default 8080);
// tests import serveDir.

import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const TYPES = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.wasm': 'application/wasm',
  '.json': 'application/json',
  '.png': 'image/png',
  '.svg': 'image/svg+xml',
};

/** Serves `dir` on 127.0.0.1:`port` (0: any free port), plus `extras` (URL path → file);
 * resolves to {server, origin}. */
export function serveDir(dir, port = 0, extras = {}) {
  const root = path.resolve(dir);
  const server = http.createServer((req, res) => {
    let rel;
    try {
      rel = decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname);
    } catch {
      res.writeHead(400).end('bad request');
      return;
    }
    if (rel.endsWith('/')) rel += 'index.html';
    const extra = Object.hasOwn(extras, rel) ? extras[rel] : undefined;
    const file = extra ?? path.join(root, rel);
    if ((!extra && !file.startsWith(root + path.sep)) || !fs.existsSync(file) || !fs.statSync(file).isFile()) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
      return;
    }
    res.writeHead(200, { 'content-type': TYPES[path.extname(file)] ?? 'application/octet-stream', 'cache-control': 'no-cache' });
    fs.createReadStream(file).pipe(res);
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolve({ server, origin: `http://127.0.0.1:${server.address().port}` }));
  });
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const here = path.dirname(fileURLToPath(import.meta.url));
  const dir = process.argv[2] ?? path.join(here, '..', 'www', 'dist');
  const demo = process.env.STRATA_DEMO_MCWORLD;
  const { origin } = await serveDir(dir, Number(process.env.PORT ?? 8080), demo ? { '/demo.mcworld': demo } : {});
  console.log(`Strata world viewer: ${origin}/  (serving ${path.relative(process.cwd(), dir) || '.'}; Ctrl-C to stop)`);
}
