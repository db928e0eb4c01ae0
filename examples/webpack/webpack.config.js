// webpack 5 resolves strata-level's worker (`new Worker(new URL(...))`) into its own chunk and
// its .wasm (`new URL(...)`) into an asset by default: the only configuration here is the page.
import HtmlWebpackPlugin from 'html-webpack-plugin';

export default {
  entry: './src/index.js',
  plugins: [new HtmlWebpackPlugin({ template: './index.html' })],
};
