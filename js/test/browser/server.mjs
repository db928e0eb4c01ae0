// A static server for the browser tests: the package (`/pkg/`), the test pages and shared test
// modules (`/test/`) and the shared worlds (`/worlds/`, plus `/worlds-list/<name>` giving the
// file names of a world's db/, and `/worlds-tree/<name>` every file of the world folder as a
// path relative to it, `db/CURRENT`, sorted). Serves `.wasm` as application/wasm; no COOP/COEP
// headers. `refuse`, a set of paths, makes the server answer those 404 while they are in it.

import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';

const TYPES = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.wasm': 'application/wasm',
  '.json': 'application/json',
};

export function serve({ pkgDir, worldsDir }) {
  // Paths answered 404 while listed (a test's script that must fail to load).
  const refuse = new Set();
  const roots = { pkg: pkgDir, test: path.join(pkgDir, 'test'), worlds: worldsDir };
  const server = http.createServer((req, res) => {
    const url = new URL(req.url, 'http://x');
    const parts = decodeURIComponent(url.pathname).split('/').filter(Boolean);
    if (parts[0] === 'worlds-list' && parts.length === 2) {
      const dir = path.join(worldsDir, parts[1], 'db');
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(fs.readdirSync(dir).filter((n) => fs.statSync(path.join(dir, n)).isFile())));
      return;
    }
    if (parts[0] === 'worlds-tree' && parts.length === 2) {
      const dir = path.join(worldsDir, parts[1]);
      const files = fs.readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((n) => fs.statSync(path.join(dir, n)).isFile());
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(files.map((n) => n.split(path.sep).join('/')).sort()));
      return;
    }
    if (refuse.has(url.pathname)) {
      res.writeHead(404);
      res.end('refused by the test');
      return;
    }
    const root = roots[parts[0]];
    const file = root && path.join(root, ...parts.slice(1));
    if (!file || !file.startsWith(root) || !fs.existsSync(file) || !fs.statSync(file).isFile()) {
      res.writeHead(404);
      res.end('not found');
      return;
    }
    res.writeHead(200, { 'content-type': TYPES[path.extname(file)] ?? 'application/octet-stream', 'cache-control': 'no-store' });
    fs.createReadStream(file).pipe(res);
  });
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => resolve({ server, origin: `http://127.0.0.1:${server.address().port}`, refuse }));
  });
}
