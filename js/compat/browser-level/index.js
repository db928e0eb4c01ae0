// `browser-level` on the Strata engine: re-exports strata-level's drop-in (BrowserLevel), for
// an app or a dependency tree that asks for `browser-level` by name. CommonJS, as
// browser-level's package is; bundlers resolve the require to strata-level's ES module.
//
// Install both as packed tarballs (README, "Drop-ins"): a folder dependency is a symlink, and
// a symlinked package's requires resolve from its real path, where strata-level is not
// installed; a tarball is unpacked into node_modules beside strata-level.
try {
  module.exports = require('strata-level/browser-level');
} catch (e) {
  if (e && e.code === 'MODULE_NOT_FOUND' && String(e.message).includes('strata-level')) {
    throw new Error(
      "browser-level (Strata's drop-in) cannot find strata-level from " + __dirname + ': install both as ' +
        'packed tarballs (npm install strata-level-*.tgz, and "overrides": { "browser-level": ' +
        '"file:browser-level-*-strata.tgz" }), not as folder links',
      { cause: e },
    );
  }
  throw e;
}
