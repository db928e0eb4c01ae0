// Vite build of the web pages (www/ → www/dist): the viewer (index.html) and bench.html. The pages import the npm package's public
// browser entry (`strata-level/browser`), resolved to js/dist so the worker and the wasm file
// are bundled as assets. No plugins; relative base so dist/ can be served from any path.
import { fileURLToPath } from 'node:url';

export default {
  base: './',
  resolve: {
    alias: { 'strata-level/browser': fileURLToPath(new URL('../js/dist/browser.js', import.meta.url)) },
  },
  worker: { format: 'es' },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    target: 'es2022',
    chunkSizeWarningLimit: 2048,
    rollupOptions: {
      input: {
        index: fileURLToPath(new URL('./index.html', import.meta.url)),
        bench: fileURLToPath(new URL('./bench.html', import.meta.url)),
      },
    },
  },
  logLevel: 'warn',
};
