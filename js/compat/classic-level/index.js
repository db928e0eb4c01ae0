// `classic-level` on the Strata engine: re-exports strata-level's drop-in (ClassicLevel), for
// an app or a dependency tree that asks for `classic-level` by name. CommonJS, as the addon's
// package is; strata-level is an ES module without top-level await, which Node's require()
// loads (Node >= 20.19).
//
// Install both as packed tarballs (README, "Drop-ins"): a folder dependency is a symlink, and
// Node resolves a symlinked package's requires from its real path, where strata-level is not
// installed; a tarball is unpacked into node_modules beside strata-level.
try {
  module.exports = require('strata-level/classic-level');
} catch (e) {
  if (e && e.code === 'MODULE_NOT_FOUND' && String(e.message).includes('strata-level')) {
    throw new Error(
      "classic-level (Strata's drop-in) cannot find strata-level from " + __dirname + ': install both as ' +
        'packed tarballs (npm install strata-level-*.tgz, and "overrides": { "classic-level": ' +
        '"file:classic-level-*-strata.tgz" }), not as folder links',
      { cause: e },
    );
  }
  throw e;
}
