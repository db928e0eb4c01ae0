// Runs the inflate bench built for wasm32-wasip1 under Node's WASI, with the current folder
// and /tmp preopened:  node bench/inflate/wasi.mjs PATH.wasm --blocks FILE [--passes N] [--json]
import { readFile } from 'node:fs/promises';
import { WASI } from 'node:wasi';
import { argv, env } from 'node:process';

const [wasmPath, ...args] = argv.slice(2);
const wasi = new WASI({ version: 'preview1', args: ['inflate-bench', ...args], env, preopens: { '/': '/' } });
const module = await WebAssembly.compile(await readFile(wasmPath));
const instance = await WebAssembly.instantiate(module, wasi.getImportObject());
wasi.start(instance);
